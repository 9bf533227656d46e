"""The bug as its verdict reads it, as one RA9 document (issue 34 §1). Pure: values in, a document out.

The verdict reads the report (``report.Report``: the description read with the repository's templates
and forms) and the reporter's answers in comments (``reading.read``). Whatever else shows the bug — the
bugfix pull request's "Observed vs expected", the hypothesis it quotes, the fix's summary, the RA9 document
the verdict offers the maintainers — reads this document, so an answer given only in a comment reaches
them: each item the report lacks and a reply gives is written where RA9 keeps it (what goes wrong under
section 1; the environment, the steps, what happened, what was expected and the artifacts under section
5's sub-sections), followed by a line that names the comment it came from. Only the reporter's items are
read from comments: the maintainers' sections, section 7's test code among them, are the description's
alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from . import sections
from .checks import EXPECTED, OBSERVED
from .document import (
    BUG_SECTION_NAMES,
    RECIPE_SUBSECTION_NAMES,
    Document,
    Section,
    find_sections,
    find_subsections,
    parse_document,
    strip_html_comments,
)
from .reading import Reading, Reply
from .report import Report
from .sections import Language
from .text import fold

__all__ = ["ANSWER_CHARS", "answer_lines", "merged_document", "observed_text"]

# A reply quoted whole (it gives an item without a label RA9 reads) is quoted up to this many characters.
ANSWER_CHARS: Final = 4_000
_FIELDS: Final = {"5.3o": (OBSERVED, EXPECTED, "observed"), "5.3e": (EXPECTED, OBSERVED, "expected")}
_RULE: Final = re.compile(r"^ {0,3}([-*_])(?:[ \t]*+\1){2,}+[ \t]*+$")
_FROM: Final[dict[Language, str]] = {
    "en": "_(from @{who}'s [comment]({url}))_",
    "pt": "_(do [comentário]({url}) de @{who})_",
}


def _trimmed(text: str) -> list[str]:
    lines = strip_html_comments(text).split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and (not lines[-1].strip() or _RULE.match(lines[-1])):
        lines.pop()
    return lines


def _field(text: str, item: str) -> str:
    """The lines of 5.3's field for ``item`` (what happened, or what was expected), up to the other field."""
    mine, other, _ = _FIELDS[item]
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if mine.match(fold(line))), None)
    if start is None:
        return ""
    end = next((j for j in range(start + 1, len(lines)) if other.match(fold(lines[j]))), len(lines))
    return "\n".join(lines[start:end])


def observed_text(report: Report) -> str:
    """What the report says happened — the symptom: 5.3's observed field as RA9 reads it (a common format's
    "Actual behaviour", an issue form's field, mapped there by ``report_of``), without its label; "" when it
    says none."""
    doc = report.document
    found = find_sections(doc, BUG_SECTION_NAMES)
    sub = find_subsections(doc, found[5], RECIPE_SUBSECTION_NAMES).get("5.3") if 5 in found else None
    if sub is None:
        return ""
    lines = _trimmed(_field(doc.section_text(sub), "5.3o"))
    label = OBSERVED.match(fold(lines[0])) if lines else None
    if label is not None:
        lines[0] = label.group("value").lstrip("*_ \t")
    return "\n".join(lines).strip()


def answer_lines(reply: Reply, item: str, language: Language = "en") -> list[str]:
    """What ``reply`` says for ``item``: the part the common formats read under that item's label (for 5.3,
    only that field's lines); a reply that gives it without such a label, whole (at most ``ANSWER_CHARS``),
    under 5.3's field name where the item is one of 5.3's fields."""
    doc = reply.report.document
    found = find_sections(doc, BUG_SECTION_NAMES)
    text = ""
    if item == "1" and 1 in found:
        text = doc.section_text(found[1])
    elif item != "1" and 5 in found:
        sub = find_subsections(doc, found[5], RECIPE_SUBSECTION_NAMES).get(item[:3])
        text = doc.section_text(sub) if sub is not None else ""
        if item in _FIELDS:
            text = _field(text, item)
    lines = _trimmed(text)
    if lines:
        return lines
    whole = strip_html_comments(reply.body).strip()
    if len(whole) > ANSWER_CHARS:
        cut = whole.rfind("\n", 0, ANSWER_CHARS)
        whole = whole[: cut if cut > 0 else ANSWER_CHARS].rstrip() + "\n…"
    lines = _trimmed(whole)
    if item in _FIELDS and lines:
        lines[0] = f"**{sections.field(_FIELDS[item][2], language)}:** {lines[0]}"
    return lines


def _end_of(doc: Document, section: Section) -> int:
    """Where text added to ``section`` goes: after its last line that says something (not a rule or blank)."""
    last = section.start
    for i in range(section.start, section.end):
        if doc.lines[i].strip() and not _RULE.match(doc.lines[i]):
            last = i + 1
    return last


def _start_of(doc: Document, section: Section) -> int:
    """Where text put first in ``section`` goes: at its first line that is not blank."""
    return next((i for i in range(section.start, section.end) if doc.lines[i].strip()), section.start)


def merged_document(report: Report, reading: Reading) -> Document:
    """``report``'s RA9 document with the items ``reading`` took from replies (``reading.sources``) written
    in (see the module docstring); the document itself when no reply gave anything."""
    doc = report.document
    if not reading.sources:
        return doc
    found = find_sections(doc, BUG_SECTION_NAMES)
    language: Language = sections.language_of(s.title for s in found.values()) if found else reading.language
    said = _FROM[reading.language]

    def given(item: str) -> list[str]:
        reply = reading.sources[item]
        return [*answer_lines(reply, item, language), said.format(who=reply.author, url=reply.url)]

    inserts: list[tuple[int, list[str]]] = []
    if "1" in reading.sources:
        if 1 in found:
            inserts.append((_end_of(doc, found[1]), ["", *given("1")]))
        else:
            at = min((s.heading_line for s in found.values()), default=len(doc.lines))
            inserts.append((at, ["", sections.heading(1, language), "", *given("1"), ""]))
    recipe = found.get(5)
    subs = find_subsections(doc, recipe, RECIPE_SUBSECTION_NAMES) if recipe is not None else {}
    new: list[str] = []  # the recipe's sub-sections no reply could go into, written after those it has
    for key in sections.RECIPE_SUBSECTIONS:
        items = [i for i in (("5.3o", "5.3e") if key == "5.3" else (key,)) if i in reading.sources]
        if not items:
            continue
        sub = subs.get(key)
        if sub is None:
            block = [sections.subsection(key, language), ""]
            for item in items:
                block += [*given(item), ""]
            later = [s.heading_line for k, s in subs.items() if k > key]
            if later:
                inserts.append((min(later), block))
            else:
                new += block
        elif key == "5.3" and "5.3o" in items:
            inserts.append((_start_of(doc, sub), [*given("5.3o"), ""]))
            if "5.3e" in items:
                inserts.append((_end_of(doc, sub), ["", *given("5.3e")]))
        else:
            inserts.append((_end_of(doc, sub), ["", *given(items[0])]))
    if new and recipe is not None:
        inserts.append((_end_of(doc, recipe), ["", *new]))
    elif new:
        after = [s.heading_line for n, s in found.items() if n > 5]
        block = [sections.heading(5, language), "", *new]
        inserts.append((min(after), block) if after else (len(doc.lines), ["", *block]))
    return parse_document(_with(doc.lines, inserts))


def _with(lines: Sequence[str], inserts: list[tuple[int, list[str]]]) -> str:
    """``lines`` with each insert's lines before the line it names (in the order given, at the same line)."""
    at: dict[int, list[str]] = {}
    for where, block in inserts:
        at.setdefault(where, []).extend(block)
    out: list[str] = []
    for i, line in enumerate(lines):
        out += at.get(i, [])
        out.append(line)
    out += at.get(len(lines), [])
    return "\n".join(out)
