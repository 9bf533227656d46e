"""What Steward writes on a bug issue: the verdict comment, the short notice that asks the author to act,
and the RA9 template pre-filled with what the author already wrote. Pure: values in, markdown out.

DESIGN §8: the reader's next action first; the machine-readable verdict block and the template folded
into ``<details>``; blocker codes shown after the words that explain them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from bot.records import neutralise
from handlers.bug_refinement import sections
from handlers.bug_refinement.document import (
    BUG_SECTION_NAMES,
    RECIPE_SUBSECTION_NAMES,
    Document,
    find_sections,
    find_subsections,
    parse_document,
    strip_html_comments,
)
from handlers.bug_refinement.formats import read_report
from handlers.bug_refinement.rules import (
    REPORTER_SECTIONS,
    Blocker,
    BugVerdict,
    StoryVerdict,
    blockers_for,
    document_language,
    render_verdict_block,
    section_of,
)
from handlers.bug_refinement.sections import Language

__all__ = [
    "RESOLVED_TEXT",
    "StoryNote",
    "notice_text",
    "ready_text",
    "render_bug_comment",
    "render_story_comment",
    "template",
    "verdict_notice_line",
]

_ICON: Final = {"approved": "✅", "rejected": "❌", "pending": "⏳"}
# The template repeats what the author wrote; bounded so the comment stays far below GitHub's limit.
SECTION_CHARS: Final = 2_000
TEMPLATE_CHARS: Final = 16_000
_BACKTICKS: Final = re.compile(r"`+")


@dataclass(frozen=True)
class StoryNote:
    """A story of the bug: refined (with its verdict) or skipped (with why)."""

    number: int
    verdict: str | None = None
    skipped: str | None = None

    def line(self) -> str:
        if self.number <= 0:  # a summary line ("… and 12 more")
            return f"- {self.skipped}"
        if self.skipped is not None:
            return f"- #{self.number} was not refined as a story: {self.skipped}."
        return f"- #{self.number}: {_ICON.get(self.verdict or '', '')} {self.verdict} (see its comment)"


def _fence(text: str, info: str = "") -> str:
    longest = max((len(m.group()) for m in _BACKTICKS.finditer(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text.rstrip()}\n{fence}"


def _details(summary: str, body: str) -> list[str]:
    # A blank line after <summary> lets the body render (and parse) as markdown.
    return [f"<details><summary>{summary}</summary>", "", body, "", "</details>"]


# With this many sections missing, they are one line, and the template is the quickest way forward.
MANY_MISSING: Final = 3


def _missing_sections(verdict: BugVerdict) -> list[int]:
    """The reporter's sections that are missing altogether (then the template is the quickest way)."""
    return [
        n
        for b in blockers_for(verdict, "reporter")
        if b.code.startswith("MISSING_SECTION_") and (n := section_of(b.code))
    ]


def _blocker_lines(blockers: Sequence[Blocker], language: Language) -> list[str]:
    out = []
    missing = [n for b in blockers if b.code.startswith("MISSING_SECTION_") and (n := section_of(b.code))]
    if len(missing) >= MANY_MISSING:
        headings = ", ".join(f"`{sections.heading(n, language)}`" for n in missing)
        codes = ", ".join(f"`MISSING_SECTION_{n}`" for n in missing)
        out.append(
            f"- **Missing sections** — add these level-2 headings and fill them in: {headings}. "
            f"<sub>{codes}</sub>"
        )
    for blocker in blockers:
        if len(missing) >= MANY_MISSING and blocker.code.startswith("MISSING_SECTION_"):
            continue
        n = section_of(blocker.code)
        where = f"**{n}. {sections.name(n, language)}** — " if n is not None else ""
        out.append(f"- {where}{neutralise.inert(blocker.message)} <sub>`{blocker.code}`</sub>")
    return out


def _things(n: int) -> str:
    return f"{n} thing{'s' if n != 1 else ''}"


def _not_ready(verdict: BugVerdict, language: Language, template_text: str | None) -> list[str]:
    """What a rejected verdict asks, split by who can supply it: the reporter is asked only for what they
    saw and how to reproduce it; the sections a maintainer writes are listed for the maintainers."""
    reporter = blockers_for(verdict, "reporter")
    maintainers = blockers_for(verdict, "maintainers")
    if reporter and maintainers:
        title = f"{_things(len(reporter))} for the reporter, {len(maintainers)} for the maintainers"
    elif reporter:
        title = f"{_things(len(reporter))} to fix"
    else:
        title = f"{_things(len(maintainers))} for the maintainers"
    lines = [f"## {_ICON['rejected']} Bug report not ready: {title}", ""]
    if reporter:
        paste = template_text and _missing_sections(verdict)
        how = (
            "the quickest way is to paste the template folded at the end of this comment (it already holds "
            "what you wrote) into the issue description and fill in your part"
            if paste
            else "edit the issue description and add what is listed under *From the reporter*"
        )
        lines += [f"**Next step for the reporter:** {how}; I check it again each time it is saved.", ""]
    else:
        lines += [
            "**Nothing more is needed from the reporter:** what they saw and how to reproduce it are here.",
            "",
        ]
    if maintainers:
        lead = "Next step" if not reporter else "Then"
        lines += [
            f"**{lead}, for the maintainers:** once you have looked at the bug, add the sections listed "
            "under *For the maintainers* to the issue description. The bug is ready for work when every "
            "section checks out.",
            "",
        ]
    if reporter:
        lines += ["### From the reporter: how to reproduce it, and what you saw", ""]
        lines += _blocker_lines(reporter, language)
    if maintainers:
        if reporter:
            lines += [""]
        lines += ["### For the maintainers", ""]
        lines += _blocker_lines(maintainers, language)
    return lines


def render_bug_comment(
    verdict: BugVerdict,
    *,
    language: Language = "en",
    template_text: str | None = None,
    changed_after_approval: bool = False,
    stories: Sequence[StoryNote] = (),
) -> str:
    """The sticky verdict comment (without its marker)."""
    lines: list[str] = []
    if verdict.cut is not None:
        read, total = verdict.cut
        lines += [
            "> [!NOTE]",
            f"> This report is {total:,} characters long: I read only its first {read:,} (up to the end of a "
            "line), and checked nothing after that. Shorten the description, or move long logs into an "
            "attachment or a linked file.",
            "",
        ]
    if verdict.verdict == "approved":
        lines += [
            f"## {_ICON['approved']} Bug report refined: approved",
            "",
            "Nothing to do: every RA9 section checks out, so work on this bug can start. The verdict is "
            "locked — later edits to the description do not change it.",
        ]
    else:
        lines += _not_ready(verdict, language, template_text)
    if verdict.warnings:
        lines += ["", "### Worth adding (not required)", ""]
        lines += [f"- {neutralise.inert(w.message)} <sub>`{w.code}`</sub>" for w in verdict.warnings]
    if stories:
        lines += ["", "### Stories", ""]
        lines += [note.line() for note in stories]
    if changed_after_approval:
        lines += [
            "",
            "> [!NOTE]",
            "> The description changed after approval. The approved verdict stands; open a new bug report "
            "to change an approved one.",
        ]
    if template_text:
        lines += [""]
        lines += _details(
            "A template to paste into the description: the RA9 document built from what you wrote",
            _fence(template_text, "markdown"),
        )
    record = render_verdict_block(verdict.verdict, verdict.verdict_hash, verdict.refined_at, verdict.blockers)
    lines += [""]
    lines += _details(
        f"Verdict record (refined at {verdict.refined_at}; read by tools and CI)",
        record,
    )
    return "\n".join(lines)


def render_story_comment(verdict: StoryVerdict, bug_ref: str, language: Language = "en") -> str:
    if verdict.verdict == "approved":
        lines = [
            f"## {_ICON['approved']} Story refined: approved",
            "",
            f"Nothing to do: this story of the approved bug {bug_ref} checks out.",
        ]
    else:
        lines = [
            f"## {_ICON['rejected']} Story not ready: {len(verdict.blockers)} thing(s) to fix",
            "",
            f"**Next step:** this issue is a story of the approved bug {bug_ref}; edit its description "
            "and fix what is listed below.",
            "",
        ]
        lines += [f"- {neutralise.inert(b.message)} <sub>`{b.code}`</sub>" for b in verdict.blockers]
    record = render_verdict_block(verdict.verdict, verdict.verdict_hash, verdict.refined_at, verdict.blockers)
    lines += [""]
    lines += _details(f"Verdict record (refined at {verdict.refined_at})", record)
    return "\n".join(lines)


def notice_text(author: str, verdict: BugVerdict, link: str) -> str:
    """The short new comment that tells the reporter what the verdict asks of them (an edit notifies
    nobody). Only the reporter's part is counted: the maintainers' sections are not theirs to write."""
    where = f"[the refinement verdict]({link})" if link else "the refinement verdict above"
    return _ask(author, verdict, where)


def verdict_notice_line(author: str, verdict: BugVerdict) -> str:
    """The same ask as ``notice_text``, as the first line of a verdict comment being created: a mention in a
    new comment notifies the person mentioned (on both forges), so a new verdict needs no separate notice."""
    return _ask(author, verdict, "this verdict")


def _ask(author: str, verdict: BugVerdict, where: str) -> str:
    count = len(blockers_for(verdict, "reporter"))
    return (
        f"@{author}: this bug report needs {count} change{'s' if count != 1 else ''} from you before work "
        f"on it can start — {where} lists them under *From the reporter*. Edit the description; I check it "
        "again when you save."
    )


RESOLVED_TEXT: Final = "✅ Resolved: the changes asked for here are in."


def ready_text(author: str, verdict: BugVerdict | None) -> str:
    """The one new comment that tells the reporter their part is done (``verdict`` None: approved and
    locked)."""
    if verdict is None or verdict.verdict == "approved":
        return f"@{author}: thank you — this bug report is complete and approved; work on it can start."
    return (
        f"@{author}: thank you — the reproduction is complete; nothing more is needed from you. The "
        "maintainers add their sections before work on it starts."
    )


# --- the template ---------------------------------------------------------------------------------------

_HINTS: Final[dict[int, str]] = {
    1: "What goes wrong, and for whom?",
    2: "Who runs into this, and while doing what?",
    3: "What is worth it once this is fixed?",
    4: "{given} …\n{when} …\n{then} …",
    6: "What do you suspect is wrong, and where?",
    7: "tests/test_<area>.py — or TBD",
    8: "**Blocked By:** —",
    9: "- (date) what was decided, and why",
}
_RECIPE_HINTS: Final[dict[str, str]] = {
    "5.1": "Version, operating system, browser or runtime.",
    "5.2": "1. \n2. ",
    "5.3": "{observed}: \n{expected}: ",
    "5.4": "A log path, a link, a screenshot or an attachment.",
}


def _clip(text: str, limit: int = SECTION_CHARS) -> str:
    text = text.strip("\n")
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + "\n… (cut here: the rest is in your description)"


def _text(doc: Document, start: int, end: int) -> str:
    return strip_html_comments(doc.text(start, end)).strip("\n")


def _hint(text: str, language: Language) -> str:
    return text.format(**{key: sections.field(key, language) for key in sections.FIELDS})


def template(body: str, title: str = "") -> str:
    """An RA9 bug report with every section, pre-filled with what ``body`` already has: its RA9 sections
    (and recipe sub-sections) as written, and any text outside them under 1. Vision. Empty sections carry
    a short hint. Headings follow the document's language (English for a casual report)."""
    doc = parse_document(read_report(body))
    language = document_language(doc)
    found = find_sections(doc, BUG_SECTION_NAMES)
    first = min((s.heading_line for s in found.values()), default=len(doc.lines))
    loose = _text(doc, doc.body_start, first)
    out = [f"**Status:** {'Pendente' if language == 'pt' else 'Pending'}", ""]
    for n in sections.BUG_SECTIONS:
        out.append(sections.heading(n, language))
        section = found.get(n)
        if n == 5:
            subs = find_subsections(doc, section, RECIPE_SUBSECTION_NAMES) if section else {}
            for key in sections.RECIPE_SUBSECTIONS:
                out.append(sections.subsection(key, language))
                sub = subs.get(key)
                written = _text(doc, sub.start, sub.end) if sub else ""
                out.append(_clip(written) if written else _hint(_RECIPE_HINTS[key], language))
            out.append("")
            continue
        written = _text(doc, section.start, section.end) if section else ""
        if n == 1 and loose:
            written = "\n\n".join(part for part in (written, loose) if part)
        if n == 1 and not written and title:
            written = title
        hint = _hint(_HINTS[n], language)
        if n not in REPORTER_SECTIONS:
            hint = f"For the maintainers: {hint}"
        out.append(_clip(written) if written else f"<!-- {hint} -->")
        out.append("")
    text = "\n".join(out).rstrip() + "\n"
    if len(text) > TEMPLATE_CHARS:
        text = text[:TEMPLATE_CHARS].rstrip() + "\n… (cut: the template is longer than a comment can hold)\n"
    return text
