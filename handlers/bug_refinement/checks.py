"""The content checks behind the RA9 rules: does a section say something, hold a Gherkin scenario, a field
with a value, a test path. Pure: text in, booleans out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .document import _HTML_COMMENT, Document, Section, fold, strip_html_comments
from .verdict import STATUS_LINE

_HR_LINE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*+\1){2,}+[ \t]*+$", re.M)
_GHERKIN_PREFIX = r"^[ \t]*+(?:(?:[-*+>]|\d{1,9}[.)])[ \t]++)*+(?:[*_]{1,3}[ \t]*+)?"
_GIVEN = re.compile(_GHERKIN_PREFIX + r"(?:given|dad[oa]s?)\b", re.M)
_WHEN = re.compile(_GHERKIN_PREFIX + r"(?:when|quando)\b", re.M)
_THEN = re.compile(_GHERKIN_PREFIX + r"(?:then|entao)\b", re.M)
NUMBERED_STEP = re.compile(r"^[ \t]*\d{1,9}[.)][ \t]+\S", re.M)
_TBD = re.compile(r"\bTBD\b", re.I)
_PATH_TOKEN = re.compile(r"[\w.\-/\\]+")
_EXTENSION = re.compile(r"[^./\\]\.[A-Za-z0-9]{1,10}$")
_TEST_WORD = re.compile(r"test|spec", re.I)
_EMPHASIS_ONLY = re.compile(r"[\s*_`|]+")


def meaningful(text: str) -> str:
    """`text` without HTML comments and thematic breaks (a template's separators are not content)."""
    return _HR_LINE.sub("", strip_html_comments(text))


def has_content(text: str) -> bool:
    return bool(meaningful(text).strip())


def has_gherkin(text: str) -> bool:
    folded = fold(strip_html_comments(text))
    given = _GIVEN.search(folded)
    if given is None:
        return False
    when = _WHEN.search(folded, given.end())
    return when is not None and _THEN.search(folded, when.end()) is not None


def field_pattern(labels: Iterable[str]) -> re.Pattern[str]:
    names = "|".join(re.escape(fold(label)) for label in labels)
    # `Label: value`, `**Label:** value`, `**Label**: value`, `- **Label:** value`, `| **Label** | value |`
    return re.compile(
        r"^[ \t]*+(?:[-*+>][ \t]++)?(?P<table>\|[ \t]*+)?[*_]{0,2}(?:" + names + r")[ \t]*+[*_]{0,2}[ \t]*+"
        r"(?(table)[:]?[ \t]*+[*_]{0,2}[ \t]*+\||:)(?P<value>.*)$",
        re.M,
    )


# Besides RA9's own `Observed:`/`Expected:` lines, the words common bug reports use for the same two things.
OBSERVED = field_pattern(
    [
        "Observed",
        "Observado",
        "Actual",
        "Actual behavior",
        "Actual behaviour",
        "Actual result",
        "Actual results",
    ]
)
EXPECTED = field_pattern(
    ["Expected", "Esperado", "Expected behavior", "Expected behaviour", "Expected result", "Expected results"]
)
SEVERITY = field_pattern(["Severity", "Severidade"])
SCOPE = field_pattern(["Scope", "Escopo"])
BLOCKED_BY = field_pattern(["Blocked By", "Bloqueado Por"])
_ANY_LABEL = re.compile(r"^[ \t]*(?:[-*+>][ \t]+)?[*_]{0,2}[^\s:*_|#][^:*_|]{0,40}[*_]{0,2}[ \t]*:", re.M)


def field_in(pattern: re.Pattern[str], folded: str) -> Iterable[re.Match[str]]:
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


def mask_comments(text: str) -> str:
    """`text` with each HTML comment replaced by its newlines, so line numbers still hold."""
    return _HTML_COMMENT.sub(lambda m: "\n" * m.group().count("\n"), text) if "<!--" in text else text


def field_value(pattern: re.Pattern[str], text: str) -> bool:
    return next(iter(field_in(pattern, fold(mask_comments(text)))), None) is not None


def names_test_path(text: str) -> bool:
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


def hypothesis_length(doc: Document, section: Section) -> int:
    heading_lines = {h.line for h in doc.headings if section.start <= h.line < section.end}
    body = "\n".join(doc.lines[i] for i in range(section.start, section.end) if i not in heading_lines)
    return sum(1 for ch in meaningful(body) if not ch.isspace())


def body_field(doc: Document, pattern: re.Pattern[str]) -> bool:
    """A field line with a value in the body, outside code and raw HTML."""
    folded = fold(mask_comments(doc.text(doc.body_start, len(doc.lines))))
    line, last = doc.body_start, 0
    for m in field_in(pattern, folded):
        line += folded.count("\n", last, m.start())
        last = m.start()
        if not doc.is_hidden(line):
            return True
    return False


def status_value(doc: Document) -> str | None:
    text = doc.text(doc.body_start, len(doc.lines))
    base = doc.body_start
    for m in STATUS_LINE.finditer(text):
        line = base + text.count("\n", 0, m.start())
        if doc.is_hidden(line):
            continue
        value = _EMPHASIS_ONLY.sub(" ", strip_html_comments(m.group(1))).strip()
        if value:
            return value
    return None


# Seed 000's status values: `Pendente` / `Pending` until the bug is approved (then `Refinada` / `Refined`,
# written by the approval itself). Any other value (`Em Investigação`, `Refined` before approval) blocks.
_PENDING_VALUE = re.compile(r"(?:pendente|pending)[ \t.]*+", re.I)


def status_before_approval(value: str) -> bool:
    """Whether ``value`` (a status line's, as ``status_value`` reads it) is one seed 000 allows before
    approval."""
    return _PENDING_VALUE.fullmatch(value.strip()) is not None


def front_matter_value(doc: Document, key: str) -> bool:
    for k, v in doc.front_matter.items():
        if k.strip().lower() == key and v is not None and str(v).strip():
            return True
    return False
