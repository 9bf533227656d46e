"""A bug report in one of the common formats, read as the RA9 document it amounts to. Pure: text in, text out.

Most reporters do not write RA9. They fill in GitHub's default bug template (``**Describe the bug**``,
``**To Reproduce**``, ``**Expected behavior**``, ``**Screenshots**``, ``**Desktop (…)**``,
``**Smartphone (…)**``, ``**Additional context**``), an issue form (GitHub renders each field as
``### <label>``), or plain prose (``Steps to reproduce:`` / ``Expected:`` / ``Actual:``). Where such a
section has an RA9 counterpart, ``from_common_format`` moves its text there:

- the description (and any text before the first label) → ``## 1. Vision``; additional context too, under
  its own label;
- the environment (Desktop, Smartphone, Version, OS…) → ``### 5.1 Environment``, each under its label;
- the steps → ``### 5.2 Steps to Reproduce``;
- the actual and the expected behaviour → ``### 5.3 Observed vs Expected``, as ``**Observed:**`` and
  ``**Expected:**`` fields;
- screenshots and logs → ``### 5.4 Artifacts``.

Nothing is lost: every line that is not one of those labels is kept, in order, under the section its label
maps to (a heading the mapping does not know is kept as a level-4 heading, so it closes no RA9 section). A
body that already has RA9's section 1 or 5, or has none of these labels, is returned as it is, so reading a
document twice gives what reading it once did. The sections a maintainer writes (persona, value, acceptance
criteria, root cause, regression slot, dependencies, decisions) have no counterpart in these formats and stay
missing: the verdict asks the maintainers for them; once they add them below the report (as RA9 headings),
those are kept as written and the report above them is still read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from . import sections
from .document import BUG_SECTION_NAMES, Document, clip_report, find_sections, parse_document
from .forms import from_issue_form
from .placeholders import strip_placeholders
from .sections import Language
from .text import fold

__all__ = [
    "ReportLabel",
    "common_format_text",
    "from_common_format",
    "is_common_bug_report",
    "read_report",
    "report_labels",
]

# Where a label's text goes: "1" the description, "1+" more context (kept under its label), "5.1" …
# "5.4" the recipe's sub-sections, with "5.3o"/"5.3e" the observed and the expected behaviour.
_LABELS: Final[Mapping[str, tuple[str, ...]]] = {
    "1": (
        "describe the bug", "bug description", "description", "describe the issue", "issue description",
        "summary", "what is the bug", "the bug", "problem", "describe the problem", "bug",
        "descricao", "descreva o bug", "descricao do bug", "resumo", "problema",
        "what is the problem", "what's the problem", "issue", "bug report", "details", "overview",
    ),
    "1+": (
        "additional context", "additional information", "additional info", "context", "notes",
        "anything else", "other", "contexto adicional", "informacoes adicionais", "contexto", "observacoes",
    ),
    "5.1": (
        "environment", "your environment", "desktop", "smartphone", "device", "device information",
        "version", "versions", "version & os", "version and os", "os", "operating system", "platform",
        "system info", "system information", "browser", "software version", "ambiente", "versao",
        "sistema operacional", "dispositivo", "navegador",
        "meta", "build", "build id", "user agent", "app version", "os version", "package version",
        "what version are you using", "what version of go are you using", "what version",
        "which version", "what operating system and processor architecture are you using",
        "what operating system are you using", "gitea version", "git version", "node version",
        "node js version", "nodejs version", "python version", "runtime", "output of checks", "setup",
        "environment details", "versions", "output of npx envinfo", "envinfo", "system", "so", "plataforma",
    ),
    "5.2": (
        "to reproduce", "steps to reproduce", "reproduction", "reproduction steps", "how to reproduce",
        "steps", "repro", "repro steps",
        "passos para reproduzir", "como reproduzir", "passos", "passos de reproducao",
        "what did you do", "i tried this", "i tried this code", "minimal reproduction",
        "minimal reproduction of the problem with instructions", "minimum reproduction code",
        "reproduction code", "code to reproduce", "how can we reproduce it", "steps to reproduce the bug",
        "para reproduzir", "o que voce fez",
    ),
    "5.3o": (
        "actual behavior", "actual behaviour", "actual result", "actual results", "actual", "observed",
        "observed behavior", "observed behaviour", "current behavior", "current behaviour",
        "what happened", "what actually happened", "comportamento atual", "resultado atual", "observado",
        "o que aconteceu",
        "what did you see instead", "what happened instead", "instead this happened", "instead",
        "what is the current bug behavior", "current bug behavior", "current result", "error",
        "error message", "the error", "atual", "o que aconteceu em vez disso",
    ),
    "5.3e": (
        "expected behavior", "expected behaviour", "expected result", "expected results", "expected",
        "what did you expect", "what did you expect to happen", "what you expected",
        "comportamento esperado", "resultado esperado", "esperado",
        "what did you expect to see", "i expected", "i expected to see this happen", "what i expected",
        "what is the expected correct behavior", "expected correct behavior", "what should happen",
        "what should have happened", "o que voce esperava",
    ),
    "5.4": (
        "screenshots", "screenshot", "screenshots/gifs", "logs", "log output", "relevant log output",
        "log", "stack trace", "stacktrace", "error log", "error output", "artifacts", "attachments",
        "capturas de tela", "captura de tela", "anexos", "artefatos",
        "relevant logs and or screenshots", "relevant logs", "log gist", "stacktrace or logs",
        "backtrace", "traceback", "exception or error", "logs and screenshots", "video", "recording",
    ),
}  # fmt: skip
_PORTUGUESE: Final = frozenset(
    fold(label)
    for label in (
        "descrição", "descreva o bug", "descrição do bug", "resumo", "problema", "contexto adicional",
        "informações adicionais", "contexto", "observações", "ambiente", "versão", "sistema operacional",
        "dispositivo", "navegador", "passos para reproduzir", "como reproduzir", "passos",
        "passos de reprodução", "comportamento atual", "resultado atual", "observado", "o que aconteceu",
        "comportamento esperado", "resultado esperado", "esperado", "capturas de tela", "captura de tela",
        "anexos", "artefatos",
    )
)  # fmt: skip
_TARGET: Final[dict[str, str]] = {label: target for target, labels in _LABELS.items() for label in labels}
# Prose lines (`Expected: it saves`) that are a field, not only a label, when they carry text.
_FIELD_TARGETS: Final = frozenset({"5.2", "5.3o", "5.3e"})

_BOLD_LINE: Final = re.compile(r"^ {0,3}(\*\*|__)(?P<label>[^*_\n]+?)(?::[ \t]*+)?\1[ \t]*+:?[ \t]*+$")
_BOLD_FIELD: Final = re.compile(
    r"^ {0,3}(\*\*|__)(?P<label>[^*_\n:]+?)(?::\1|\1[ \t]*:)[ \t]*(?P<rest>\S.*)$"
)
_PROSE_LINE: Final = re.compile(r"^ {0,3}(?P<label>[^\W\d_][^:\n]{0,40}?)[ \t]*+:[ \t]*+(?P<rest>.*)$")
_PARENTHESIS: Final = re.compile(r"\([^)]*\)")
_NOT_WORD: Final = re.compile(r"[^\w&/ ]+")
_SPACES: Final = re.compile(r"\s+")
_NO_RESPONSE: Final = "_No response_"
_LOW_HEADING: Final = re.compile(r"^ {0,3}#{1,3}(?=[ \t]|$)")


def _normal(label: str) -> str:
    """A label as the table spells it: folded, without a parenthesis, punctuation or a trailing colon."""
    text = _PARENTHESIS.sub(" ", fold(label))
    return _SPACES.sub(" ", _NOT_WORD.sub(" ", text)).strip()


def _target(label: str, *, exact: bool) -> str | None:
    key = _normal(label)
    if key in _TARGET:
        return _TARGET[key]
    if exact:
        return None
    # `Steps to reproduce the behavior`, `Screenshots/Gifs`: a known label followed by more words.
    words = key.split(" ")
    for n in range(len(words) - 1, 0, -1):
        found = _TARGET.get(" ".join(words[:n]))
        if found is not None and n >= 2:
            return found
    return None


@dataclass(frozen=True, slots=True)
class ReportLabel:
    start: int  # the label's first line
    end: int  # the line after it
    target: str
    text: str  # the label as written, without markup
    field: str | None  # the whole line, when the label carries text on its line (`Expected: it saves`)
    rest: str = ""  # that text


def _labels(doc: Document) -> tuple[list[str], int, list[ReportLabel], dict[int, int]]:
    """The document's lines, where its body starts, its labels, and the unknown level 1-3 headings (their
    first line → the line after them)."""
    lines = list(doc.lines)
    found: dict[int, ReportLabel] = {}
    unknown: dict[int, int] = {}
    for h in doc.headings:
        if not h.top_level:
            continue
        target = _target(h.text, exact=False)
        if target is not None:
            found[h.line] = ReportLabel(h.line, h.end_line, target, h.text.strip("*_ :"), None)
        elif h.level <= 3:
            unknown[h.line] = h.end_line
    heading_lines = {i for h in doc.headings for i in range(h.line, h.end_line)}
    for i in range(doc.body_start, len(lines)):
        line = lines[i]
        if i in heading_lines or doc.is_hidden(i) or not line.strip():
            continue
        if (m := _BOLD_LINE.match(line)) is not None:
            if (target := _target(m.group("label"), exact=False)) is not None:
                found[i] = ReportLabel(i, i + 1, target, m.group("label").strip(), None)
            continue
        m = _BOLD_FIELD.match(line) or _PROSE_LINE.match(line)
        if m is None or (target := _target(m.group("label"), exact=True)) is None:
            continue
        if not m.group("rest").strip():
            found[i] = ReportLabel(i, i + 1, target, m.group("label").strip(), None)
        elif target in _FIELD_TARGETS:
            found[i] = ReportLabel(i, i + 1, target, m.group("label").strip(), line, m.group("rest").strip())
    return lines, doc.body_start, [found[k] for k in sorted(found)], unknown


def _content(lines: list[str], start: int, end: int, unknown: dict[int, int]) -> list[str]:
    """Lines `start`..`end`, with headings the mapping does not know demoted to level 4 (a setext one's
    underline dropped) and GitHub's `_No response_` for an empty form field left out."""
    out: list[str] = []
    i = start
    while i < end:
        line = lines[i]
        heading_end = unknown.get(i)
        if line.strip() == _NO_RESPONSE:
            i += 1
        elif heading_end is None:
            out.append(line)
            i += 1
        elif _LOW_HEADING.match(line):
            out.append(_LOW_HEADING.sub("####", line, count=1))
            i += 1
        else:  # a setext heading: its text lines, then the underline
            out.append("#### " + " ".join(x.strip() for x in lines[i : heading_end - 1]))
            i = heading_end
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return out


def from_common_format(text: str) -> str:
    """``text`` as the RA9 document its common-format sections spell; ``text`` itself when it already has
    RA9's section 1 or 5, or none of the common labels. RA9 sections the maintainers added below the report
    are kept, after the reporter's part."""
    return common_format_text(parse_document(text))


def common_format_text(doc: Document) -> str:
    """``from_common_format`` of a parsed text: ``doc.source`` itself when there is nothing to map."""
    text = doc.source
    found = find_sections(doc, BUG_SECTION_NAMES)
    if 1 in found or 5 in found:
        return text
    # The maintainers' sections, added below the report, are kept as they are after the reporter's part.
    ra9_start = min((section.heading_line for section in found.values()), default=len(doc.lines))
    lines, body_start, labels, unknown = _labels(doc)
    labels = [label for label in labels if label.start < ra9_start]
    if not labels:
        return text
    language: Language = (
        "pt" if 2 * sum(_normal(label.text) in _PORTUGUESE for label in labels) > len(labels) else "en"
    )
    buckets: dict[str, list[str]] = {key: [] for key in ("1", "5.1", "5.2", "5.3o", "5.3e", "5.4")}

    def put(key: str, part: list[str]) -> None:
        if not part:
            return
        if buckets[key]:
            buckets[key].append("")
        buckets[key].extend(part)

    put("1", _content(lines, body_start, labels[0].start, unknown))
    for k, label in enumerate(labels):
        end = labels[k + 1].start if k + 1 < len(labels) else ra9_start
        content = _content(lines, label.end, end, unknown)
        key = "1" if label.target == "1+" else label.target
        if label.field is not None and key in ("5.3o", "5.3e"):
            name = sections.field("observed" if key == "5.3o" else "expected", language)
            put(key, [f"**{name}:** {label.rest}", *content])
        elif label.field is not None:
            put(key, [label.field, *content])
        elif label.target in ("1+", "5.1", "5.4") and _normal(label.text) not in ("environment", "ambiente"):
            put(key, [f"**{label.text.rstrip(':').strip()}:**", *content])
        elif label.target == "5.3o":
            put(key, [f"**{sections.field('observed', language)}:**", *content])
        elif label.target == "5.3e":
            put(key, [f"**{sections.field('expected', language)}:**", *content])
        else:
            put(key, content)

    out = lines[:body_start]
    out += [sections.heading(1, language), "", *buckets["1"], ""]
    recipe = [
        (key, part)
        for key, part in (
            ("5.1", buckets["5.1"]),
            ("5.2", buckets["5.2"]),
            ("5.3", [*buckets["5.3o"], *([""] if buckets["5.3o"] else []), *buckets["5.3e"]]),
            ("5.4", buckets["5.4"]),
        )
        if part
    ]
    if recipe:
        out += [sections.heading(5, language), ""]
        for key, part in recipe:
            out += [sections.subsection(key, language), "", *part, ""]
    out += lines[ra9_start:]
    return "\n".join(out).rstrip("\n") + "\n"


def report_labels(doc: Document) -> list[ReportLabel]:
    """The common-format labels in ``doc``, in order (``_labels``)."""
    return _labels(doc)[2]


def is_common_bug_report(text: str) -> bool:
    """Whether ``text`` is a bug report in a common format: at least two different labels, one of them for
    the steps, the observed or the expected behaviour (``To Reproduce`` + ``Expected behavior``, say)."""
    if not text or ("*" not in text and "#" not in text and ":" not in text and "_" not in text):
        return False
    targets = {label.target for label in _labels(parse_document(text))[2]}
    return len(targets) >= 2 and bool(targets & {"5.2", "5.3o", "5.3e"})


def read_report(text: str) -> str:
    """A bug report as RA9 reads it: an RA9 issue form's fields as sections (``forms``), then a common
    format's sections as RA9's (``from_common_format``); an RA9 document as it is. A template's placeholders
    are not kept (``placeholders``); only the first ``MAX_REPORT_CHARS`` characters are read. (A job reads
    its report once, parsed, through ``report.report_of``; this is the same reading as text.)"""
    return from_common_format(strip_placeholders(from_issue_form(clip_report(text)[0])))
