"""The RA9 refinement rules: a bug (or story) document in, a verdict out. Pure: no I/O, no clock.

The caller supplies `refined_at`; the same text, id and time always give the same verdict and hash.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, cast, get_args

import yaml

from . import sections
from .document import (
    _HTML_COMMENT,
    BUG_SECTION_NAMES,
    RECIPE_SUBSECTION_NAMES,
    STORY_SECTION_NAMES,
    Document,
    Section,
    find_sections,
    find_subsections,
    fold,
    parse_document,
    strip_html_comments,
)
from .forms import from_issue_form
from .sections import Language

__all__ = [
    "BLOCKER_CODES",
    "STORY_BLOCKER_CODES",
    "VERDICT_HEADING",
    "WARNING_CODES",
    "Blocker",
    "BugVerdict",
    "RecordedVerdict",
    "RefinementWarning",
    "StoryVerdict",
    "Verdict",
    "apply_verdict",
    "blocker_for",
    "format_refined_at",
    "is_locked",
    "is_refined",
    "next_verdict",
    "read_verdict_block",
    "refine_bug",
    "refine_story",
    "render_verdict_block",
    "same_outcome",
    "section_of",
    "story_verdict_hash",
    "verdict_hash",
    "warning_for",
]

Verdict = Literal["pending", "rejected", "approved"]
_VERDICTS: frozenset[str] = frozenset(get_args(Verdict))

VERDICT_HEADING = "Refinement Verdict"


@dataclass(frozen=True, slots=True)
class Blocker:
    code: str
    message: str  # one line: what to write, and where


@dataclass(frozen=True, slots=True)
class RefinementWarning:
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class BugVerdict:
    bug_id: str
    verdict: Verdict  # "approved" or "rejected": the engine never computes "pending"
    verdict_hash: str
    refined_at: str  # YYYY-MM-DDTHH:MM:SSZ
    blockers: tuple[Blocker, ...]
    warnings: tuple[RefinementWarning, ...]

    @property
    def blocker_codes(self) -> tuple[str, ...]:
        return tuple(b.code for b in self.blockers)

    @property
    def warning_codes(self) -> tuple[str, ...]:
        return tuple(w.code for w in self.warnings)


@dataclass(frozen=True, slots=True)
class StoryVerdict:
    bug_id: str
    story: str  # the story's name: its file name without `.md` (or, on a forge, its reference)
    verdict: Verdict
    verdict_hash: str
    refined_at: str
    blockers: tuple[Blocker, ...]

    @property
    def blocker_codes(self) -> tuple[str, ...]:
        return tuple(b.code for b in self.blockers)


@dataclass(frozen=True, slots=True)
class RecordedVerdict:
    """A `## Refinement Verdict` block as found in a file or a comment."""

    status: Verdict
    verdict_hash: str
    refined_at: str
    blockers: tuple[str, ...]


# --- blocker and warning codes ----------------------------------------------------------------------------


def _bug_messages(lang: Language) -> dict[str, str]:
    """What each bug blocker asks for, naming sections in the document's language."""
    h = {n: f"`{sections.heading(n, lang)}`" for n in sections.BUG_SECTIONS}
    sub = {key: f"`{sections.subsection(key, lang)}`" for key in sections.RECIPE_SUBSECTIONS}
    f = {key: sections.field(key, lang) for key in sections.FIELDS}
    other: Language = "en" if lang == "pt" else "pt"
    g = {key: sections.field(key, other) for key in ("given", "when", "then")}
    return {
        **{
            f"MISSING_SECTION_{n}": f"Add a level-2 heading {sections.label(n, lang)} and fill it in."
            for n in sections.BUG_SECTIONS
        },
        "VISION_EMPTY": f"Under {h[1]}, write at least one line: who is affected and what goes wrong.",
        "AC_MISSING_GHERKIN": (
            f"Under {h[4]}, write a scenario with a `{f['given']}` line, then a `{f['when']}` line, "
            f"then a `{f['then']}` line (`{g['given']}`/`{g['when']}`/`{g['then']}` work too)."
        ),
        "RECIPE_MISSING_ENV": f"Under {h[5]}, add {sub['5.1']} with the version, OS and runtime.",
        "RECIPE_MISSING_STEPS": (
            f"Under {h[5]}, add {sub['5.2']} with at least two numbered steps (`1.`, `2.`)."
        ),
        "RECIPE_MISSING_OBSERVED_EXPECTED": (
            f"Under {h[5]}, add {sub['5.3']} with an `{f['observed']}:` line and an `{f['expected']}:` "
            "line, both filled in."
        ),
        "RECIPE_MISSING_ARTIFACTS": (
            f"Under {h[5]}, add {sub['5.4']} with a log path, link, screenshot or attachment."
        ),
        "ROOT_CAUSE_TOO_SHORT": f"Under {h[6]}, write at least 10 characters on what you suspect is wrong.",
        "REGRESSION_SLOT_MISSING": (
            f"Under {h[7]}, name the test file (such as `tests/test_cart.py`) or write `TBD`."
        ),
        "STATUS_LINE_MISSING": "Add a `**Status:** Pendente` line near the top of the body.",
    }


def _story_messages(lang: Language) -> dict[str, str]:
    h = {n: f"`{sections.heading(n, lang, story=True)}`" for n in sections.STORY_SECTIONS}
    f = {key: sections.field(key, lang) for key in sections.FIELDS}
    return {
        "STORY_VISION_EMPTY": f"In the story, add {h[1]} with at least one line on what the story delivers.",
        "STORY_AC_MISSING_GHERKIN": (
            f"In the story, add {h[4]} with a `{f['given']}` line, then a `{f['when']}` line, "
            f"then a `{f['then']}` line."
        ),
        "STORY_RECIPE_INCOMPLETE": (
            f"In the story, add {h[5]} with the sub-sections `{sections.subsection('5.1', lang)}` "
            f"and `{sections.subsection('5.3', lang)}`."
        ),
        "STORY_DEPS_MISSING": (
            f"In the story, add {h[7]} with a `**Blocked By:**` line naming the blocker, or `—` for none."
        ),
    }


_BUG_MESSAGES: dict[Language, dict[str, str]] = {lang: _bug_messages(lang) for lang in ("en", "pt")}
_STORY_MESSAGES: dict[Language, dict[str, str]] = {lang: _story_messages(lang) for lang in ("en", "pt")}

_WARNING_MESSAGES: dict[str, str] = {
    "SEVERITY_MISSING": "Set `severity:` in the front matter or add a `**Severity:**` line (not required).",
    "SCOPE_MISSING": "Set `scope:` in the front matter or add a `**Scope:**` line (not required).",
}

BLOCKER_CODES: tuple[str, ...] = tuple(_BUG_MESSAGES["en"])
STORY_BLOCKER_CODES: tuple[str, ...] = tuple(_STORY_MESSAGES["en"])
WARNING_CODES: tuple[str, ...] = tuple(_WARNING_MESSAGES)

_SECTION_OF: dict[str, int] = {
    **{f"MISSING_SECTION_{n}": n for n in BUG_SECTION_NAMES},
    "VISION_EMPTY": 1,
    "AC_MISSING_GHERKIN": 4,
    "RECIPE_MISSING_ENV": 5,
    "RECIPE_MISSING_STEPS": 5,
    "RECIPE_MISSING_OBSERVED_EXPECTED": 5,
    "RECIPE_MISSING_ARTIFACTS": 5,
    "ROOT_CAUSE_TOO_SHORT": 6,
    "REGRESSION_SLOT_MISSING": 7,
    "STORY_VISION_EMPTY": 1,
    "STORY_AC_MISSING_GHERKIN": 4,
    "STORY_RECIPE_INCOMPLETE": 5,
    "STORY_DEPS_MISSING": 7,
}


def blocker_for(code: str, language: Language = "en") -> Blocker:
    """The blocker with `code` and its standard message (also for codes read back from a verdict block),
    naming sections in `language`."""
    message = _BUG_MESSAGES[language].get(code) or _STORY_MESSAGES[language].get(code) or f"Fix `{code}`."
    return Blocker(code, message)


def document_language(doc: Document) -> Language:
    """The language the document's RA9 headings are written in (English when it has none)."""
    found = find_sections(doc, BUG_SECTION_NAMES)
    return sections.language_of(section.title for section in found.values())


def section_of(code: str) -> int | None:
    """The section a blocker code is about; None for codes about the whole document."""
    return _SECTION_OF.get(code)


def warning_for(code: str) -> RefinementWarning:
    """The warning with `code` and its message (also for codes read back from a verdict comment)."""
    return RefinementWarning(code, _WARNING_MESSAGES.get(code, f"Consider `{code}`."))


# --- content checks ---------------------------------------------------------------------------------------

_HR_LINE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$", re.M)
_GHERKIN_PREFIX = r"^[ \t]*(?:(?:[-*+>]|\d{1,9}[.)])[ \t]+)*(?:[*_]{1,3}[ \t]*)?"
_GIVEN = re.compile(_GHERKIN_PREFIX + r"(?:given|dad[oa]s?)\b", re.M)
_WHEN = re.compile(_GHERKIN_PREFIX + r"(?:when|quando)\b", re.M)
_THEN = re.compile(_GHERKIN_PREFIX + r"(?:then|entao)\b", re.M)
_NUMBERED_STEP = re.compile(r"^[ \t]*\d{1,9}[.)][ \t]+\S", re.M)
_TBD = re.compile(r"\bTBD\b", re.I)
_PATH_TOKEN = re.compile(r"[\w.\-/\\]+")
_EXTENSION = re.compile(r"[^./\\]\.[A-Za-z0-9]{1,10}$")
_TEST_WORD = re.compile(r"test|spec", re.I)
_STATUS = re.compile(r"^[ \t]{0,3}(?:[-*+][ \t]+)?\*\*Status(?::\*\*|\*\*[ \t]*:)[ \t]*(.*)$", re.M)
_EMPHASIS_ONLY = re.compile(r"[\s*_`|]+")


def _meaningful(text: str) -> str:
    """`text` without HTML comments and thematic breaks (a template's separators are not content)."""
    return _HR_LINE.sub("", strip_html_comments(text))


def _has_content(text: str) -> bool:
    return bool(_meaningful(text).strip())


def _has_gherkin(text: str) -> bool:
    folded = fold(strip_html_comments(text))
    given = _GIVEN.search(folded)
    if given is None:
        return False
    when = _WHEN.search(folded, given.end())
    return when is not None and _THEN.search(folded, when.end()) is not None


def _field_pattern(labels: Iterable[str]) -> re.Pattern[str]:
    names = "|".join(re.escape(fold(label)) for label in labels)
    # `Label: value`, `**Label:** value`, `**Label**: value`, `- **Label:** value`, `| **Label** | value |`
    return re.compile(
        r"^[ \t]*(?:[-*+>][ \t]+)?(?P<table>\|[ \t]*)?[*_]{0,2}(?:" + names + r")[ \t]*[*_]{0,2}[ \t]*"
        r"(?(table)[:]?[ \t]*[*_]{0,2}[ \t]*\||:)(?P<value>.*)$",
        re.M,
    )


_OBSERVED = _field_pattern(["Observed", "Observado"])
_EXPECTED = _field_pattern(["Expected", "Esperado"])
_SEVERITY = _field_pattern(["Severity", "Severidade"])
_SCOPE = _field_pattern(["Scope", "Escopo"])
_BLOCKED_BY = _field_pattern(["Blocked By", "Bloqueado Por"])
_ANY_LABEL = re.compile(r"^[ \t]*(?:[-*+>][ \t]+)?[*_]{0,2}[^\s:*_|#][^:*_|]{0,40}[*_]{0,2}[ \t]*:", re.M)


def _field_in(pattern: re.Pattern[str], folded: str) -> Iterable[re.Match[str]]:
    """The matches of `pattern` in `folded` text whose field has a value, on its line or alone on the next."""
    for m in pattern.finditer(folded):
        if _EMPHASIS_ONLY.sub("", m.group("value")):
            yield m
        elif m.group("table") is None:
            nxt = folded[m.end() + 1 :].lstrip("\n").split("\n", 1)[0]
            if (
                nxt.strip()
                and not nxt.lstrip().startswith("#")
                and not _ANY_LABEL.match(nxt)
                and _EMPHASIS_ONLY.sub("", nxt)
            ):
                yield m


def _mask_comments(text: str) -> str:
    """`text` with each HTML comment replaced by its newlines, so line numbers still hold."""
    return _HTML_COMMENT.sub(lambda m: "\n" * m.group().count("\n"), text) if "<!--" in text else text


def _field_value(pattern: re.Pattern[str], text: str) -> bool:
    return next(iter(_field_in(pattern, fold(_mask_comments(text)))), None) is not None


def _names_test_path(text: str) -> bool:
    cleaned = strip_html_comments(text)
    if _TBD.search(cleaned):
        return True
    for token in _PATH_TOKEN.findall(cleaned):
        token = token.rstrip(".")
        if not _EXTENSION.search(token):
            continue
        parts = [p for p in re.split(r"[/\\]", token) if p]
        if any(_TEST_WORD.search(p) for p in parts):
            return True
    return False


def _hypothesis_length(doc: Document, section: Section) -> int:
    heading_lines = {h.line for h in doc.headings if section.start <= h.line < section.end}
    body = "\n".join(doc.lines[i] for i in range(section.start, section.end) if i not in heading_lines)
    return sum(1 for ch in _meaningful(body) if not ch.isspace())


def _body_field(doc: Document, pattern: re.Pattern[str]) -> bool:
    """A field line with a value in the body, outside code and raw HTML."""
    folded = fold(_mask_comments(doc.text(doc.body_start, len(doc.lines))))
    line, last = doc.body_start, 0
    for m in _field_in(pattern, folded):
        line += folded.count("\n", last, m.start())
        last = m.start()
        if not doc.is_hidden(line):
            return True
    return False


def _status_value(doc: Document) -> str | None:
    text = doc.text(doc.body_start, len(doc.lines))
    base = doc.body_start
    for m in _STATUS.finditer(text):
        line = base + text.count("\n", 0, m.start())
        if doc.is_hidden(line):
            continue
        value = _EMPHASIS_ONLY.sub(" ", strip_html_comments(m.group(1))).strip()
        if value:
            return value
    return None


def _front_matter_value(doc: Document, key: str) -> bool:
    for k, v in doc.front_matter.items():
        if k.strip().lower() == key and v is not None and str(v).strip():
            return True
    return False


# --- the bug ----------------------------------------------------------------------------------------------


def format_refined_at(refined_at: datetime | str) -> str:
    """`YYYY-MM-DDTHH:MM:SSZ` in UTC; a naive datetime is taken to be UTC, a string is kept as given."""
    if isinstance(refined_at, str):
        return refined_at
    if refined_at.tzinfo is None:
        refined_at = refined_at.replace(tzinfo=UTC)
    return refined_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def verdict_hash(bug_id: str, verdict: str, refined_at: datetime | str) -> str:
    """Hex SHA-256 of `"<bugId>:<verdict>:<refinedAt>\\n"` (what `echo … | sha256sum` gives)."""
    payload = f"{bug_id}:{verdict}:{format_refined_at(refined_at)}\n"
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def story_verdict_hash(bug_id: str, story: str, verdict: str, refined_at: datetime | str) -> str:
    """Hex SHA-256 of `"<bugId>:<story name without .md>:<verdict>:<refinedAt>\\n"`."""
    name = story[:-3] if story.endswith(".md") else story
    payload = f"{bug_id}:{name}:{verdict}:{format_refined_at(refined_at)}\n"
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _bug_blockers(doc: Document) -> list[str]:
    sections = find_sections(doc, BUG_SECTION_NAMES)
    codes: list[str] = []
    for n in BUG_SECTION_NAMES:
        section = sections.get(n)
        if section is None:
            codes.append(f"MISSING_SECTION_{n}")
            continue
        text = doc.section_text(section)
        if n == 1 and not _has_content(text):
            codes.append("VISION_EMPTY")
        elif n == 4 and not _has_gherkin(text):
            codes.append("AC_MISSING_GHERKIN")
        elif n == 5:
            subs = find_subsections(doc, section, RECIPE_SUBSECTION_NAMES)
            env, steps, obs, art = (subs.get(k) for k in ("5.1", "5.2", "5.3", "5.4"))
            if env is None or not _has_content(doc.section_text(env)):
                codes.append("RECIPE_MISSING_ENV")
            if steps is None or len(_NUMBERED_STEP.findall(strip_html_comments(doc.section_text(steps)))) < 2:
                codes.append("RECIPE_MISSING_STEPS")
            if obs is None or not (
                _field_value(_OBSERVED, doc.section_text(obs))
                and _field_value(_EXPECTED, doc.section_text(obs))
            ):
                codes.append("RECIPE_MISSING_OBSERVED_EXPECTED")
            if art is None or not _has_content(doc.section_text(art)):
                codes.append("RECIPE_MISSING_ARTIFACTS")
        elif n == 6 and _hypothesis_length(doc, section) < 10:
            codes.append("ROOT_CAUSE_TOO_SHORT")
        elif n == 7 and not _names_test_path(text):
            codes.append("REGRESSION_SLOT_MISSING")
    if _status_value(doc) is None:
        codes.append("STATUS_LINE_MISSING")
    return codes


def _bug_warnings(doc: Document) -> list[str]:
    codes: list[str] = []
    if not (_front_matter_value(doc, "severity") or _body_field(doc, _SEVERITY)):
        codes.append("SEVERITY_MISSING")
    if not (_front_matter_value(doc, "scope") or _body_field(doc, _SCOPE)):
        codes.append("SCOPE_MISSING")
    return codes


def refine_bug(text: str, *, bug_id: str, refined_at: datetime | str) -> BugVerdict:
    """Check a bug document against the RA9 rules: `approved` when nothing blocks it, else `rejected`.
    A body GitHub rendered from an issue form is read as the document its fields spell (``forms``)."""
    doc = parse_document(from_issue_form(text))
    language = document_language(doc)
    blockers = tuple(blocker_for(code, language) for code in _bug_blockers(doc))
    warnings = tuple(warning_for(code) for code in _bug_warnings(doc))
    verdict: Verdict = "rejected" if blockers else "approved"
    at = format_refined_at(refined_at)
    return BugVerdict(bug_id, verdict, verdict_hash(bug_id, verdict, at), at, blockers, warnings)


# --- stories ----------------------------------------------------------------------------------------------


def refine_story(text: str, *, bug_id: str, story: str, refined_at: datetime | str) -> StoryVerdict:
    """Check one story of an approved bug; `story` is its name (a file name's `.md` is dropped)."""
    name = story[:-3] if story.endswith(".md") else story
    doc = parse_document(text)
    sections = find_sections(doc, STORY_SECTION_NAMES, number_suffices=frozenset({4, 5}))
    codes: list[str] = []
    vision = sections.get(1)
    if vision is None or not _has_content(doc.section_text(vision)):
        codes.append("STORY_VISION_EMPTY")
    criteria = sections.get(4)
    if criteria is None or not _has_gherkin(doc.section_text(criteria)):
        codes.append("STORY_AC_MISSING_GHERKIN")
    recipe = sections.get(5)
    subs = find_subsections(doc, recipe, RECIPE_SUBSECTION_NAMES) if recipe is not None else {}
    if "5.1" not in subs or "5.3" not in subs:
        codes.append("STORY_RECIPE_INCOMPLETE")
    deps = sections.get(7)
    if deps is None or not _field_value(_BLOCKED_BY, doc.section_text(deps)):
        codes.append("STORY_DEPS_MISSING")
    verdict: Verdict = "rejected" if codes else "approved"
    at = format_refined_at(refined_at)
    return StoryVerdict(
        bug_id,
        name,
        verdict,
        story_verdict_hash(bug_id, name, verdict, at),
        at,
        tuple(blocker_for(code, document_language(doc)) for code in codes),
    )


# --- lifecycle --------------------------------------------------------------------------------------------

# pending → rejected | approved; rejected → approved (or rejected again); approved is locked.
_TRANSITIONS: Mapping[str | None, frozenset[str]] = {
    None: frozenset({"rejected", "approved"}),
    "pending": frozenset({"rejected", "approved"}),
    "rejected": frozenset({"rejected", "approved"}),
    "approved": frozenset(),
}


def is_locked(recorded: RecordedVerdict | None) -> bool:
    """An approved verdict never changes: refining again writes nothing."""
    return recorded is not None and recorded.status == "approved"


def next_verdict(current: Verdict | None, outcome: Verdict) -> Verdict:
    """The verdict after refining: `outcome`, unless `current` is approved (locked)."""
    if current is not None and outcome not in _TRANSITIONS[current]:
        return current
    return outcome


def is_refined(*verdicts: RecordedVerdict | None) -> bool:
    """The gate other capabilities ask: every verdict given (the bug's, and the story's where one is named)
    is recorded and approved."""
    return bool(verdicts) and all(v is not None and v.status == "approved" for v in verdicts)


def same_outcome(recorded: RecordedVerdict | None, verdict: BugVerdict | StoryVerdict) -> bool:
    """Whether re-refining changed nothing that matters (status, blockers): then nothing is written."""
    return (
        recorded is not None
        and recorded.status == verdict.verdict
        and recorded.blockers == verdict.blocker_codes
    )


# --- the verdict block ------------------------------------------------------------------------------------


def render_verdict_block(
    status: Verdict, verdict_hash: str, refined_at: datetime | str, blockers: Iterable[str | Blocker]
) -> str:
    """The `## Refinement Verdict` heading and its YAML fence, without a trailing newline."""
    codes = [b.code if isinstance(b, Blocker) else b for b in blockers]
    lines = [
        f"## {VERDICT_HEADING}",
        "",
        "```yaml",
        f"status: {status}",
        f'verdictHash: "{verdict_hash}"',
        f'refinedAt: "{format_refined_at(refined_at)}"',
    ]
    if codes:
        lines.append("blockers:")
        lines.extend(f"  - {code}" for code in codes)
    else:
        lines.append("blockers: []")
    lines.append("```")
    return "\n".join(lines)


def _render(verdict: BugVerdict | StoryVerdict) -> str:
    return render_verdict_block(verdict.verdict, verdict.verdict_hash, verdict.refined_at, verdict.blockers)


def _verdict_span(doc: Document) -> tuple[int, int, int, int] | None:
    """(heading line, block end, fence start, fence end) of the first top-level verdict block."""
    target = fold(VERDICT_HEADING)
    top = [h for h in doc.headings if h.top_level and h.level <= 2]
    for idx, h in enumerate(top):
        if h.level != 2 or fold(h.text.strip("*_ ")) != target:
            continue
        end = top[idx + 1].line if idx + 1 < len(top) else len(doc.lines)
        for b in doc.blocks:
            if b.kind == "fence" and b.top_level and h.end_line <= b.start < end:
                if b.info.split(maxsplit=1)[:1] in (["yaml"], ["yml"]):
                    return h.line, b.end, b.start, b.end
                break
        return h.line, h.end_line, -1, -1
    return None


def read_verdict_block(text: str) -> RecordedVerdict | None:
    """The verdict recorded in `text` (a bug file, a story file or a bot comment), if it has a valid one."""
    doc = parse_document(text)
    span = _verdict_span(doc)
    if span is None or span[2] < 0:
        return None
    _, _, fence_start, fence_end = span
    closed = fence_end - 1 > fence_start and doc.lines[fence_end - 1].strip().startswith(("```", "~~~"))
    body = doc.text(fence_start + 1, fence_end - 1 if closed else fence_end)
    try:
        data = yaml.safe_load(body)
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict):
        return None
    status = data.get("status")
    if not isinstance(status, str) or status.strip().lower() not in _VERDICTS:
        return None
    raw_blockers = data.get("blockers") or []
    if not isinstance(raw_blockers, list):
        raw_blockers = [raw_blockers]
    refined = data.get("refinedAt")
    return RecordedVerdict(
        status=cast(Verdict, status.strip().lower()),
        verdict_hash=str(data.get("verdictHash") or ""),
        refined_at=format_refined_at(refined) if isinstance(refined, datetime) else str(refined or ""),
        blockers=tuple(str(b) for b in raw_blockers if b is not None),
    )


_PENDENTE = re.compile(r"^([ \t]{0,3}(?:[-*+][ \t]+)?\*\*Status(?::\*\*|\*\*[ \t]*:)[ \t]*)Pendente\b", re.I)


def _transition_status(doc: Document, lines: list[str]) -> bool:
    for i in range(doc.body_start, len(lines)):
        if "Status" in lines[i] and not doc.is_hidden(i):
            m = _STATUS.match(lines[i])
            if m is None:
                continue
            new, n = _PENDENTE.subn(r"\1Refinada", lines[i], count=1)
            if n:
                lines[i] = new
                return True
            return False  # the first Status line decides
    return False


def apply_verdict(text: str, verdict: BugVerdict | StoryVerdict) -> tuple[str, str | None]:
    """`text` with its verdict block replaced (or appended) and, for an approved bug, `**Status:** Pendente`
    turned into `**Status:** Refinada`. Returns the new text (with `\\n` newlines) and the status transition
    (`"Pendente→Refinada"` or None). Extra verdict blocks after the first are left alone.
    """
    doc = parse_document(text)
    lines = list(doc.lines)
    block = _render(verdict).split("\n")
    span = _verdict_span(doc)
    transition = None
    if isinstance(verdict, BugVerdict) and verdict.verdict == "approved" and _transition_status(doc, lines):
        transition = "Pendente→Refinada"
    if span is not None:
        start, end = span[0], span[1]
        lines[start:end] = block
        return "\n".join(lines), transition
    while lines and not lines[-1].strip():
        lines.pop()
    if lines:
        lines.append("")
    lines.extend(block)
    lines.append("")
    return "\n".join(lines), transition
