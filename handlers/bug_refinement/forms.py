"""A bug report opened from a GitHub issue form, read as the RA9 document its author wrote. Pure.

GitHub renders every field of an issue form as a level-3 heading with the field's label, a blank line and
the answer — ``_No response_`` for a field left empty (the format GitHub's own github/issue-parser and
stefanbuck/github-issue-parser read back). So a form whose fields are labelled ``1. Vision`` … ``9. Decision
History`` gives ``### 1. Vision`` headings where RA9 reads ``## 1. Vision``, and a ``Status`` field gives
``### Status`` / ``Pendente`` where RA9 reads ``**Status:** Pendente``.

``from_issue_form`` rewrites such a body into the markdown RA9 reads: the numbered section headings become
level 2 (the ``### 5.1 Environment`` … ``### 5.4 Artifacts`` fields stay level 3, the recipe's sub-sections),
the ``Status``/``Severity``/``Scope`` fields become field lines, and ``_No response_`` becomes nothing (an
empty field is not content). A body that already has RA9's section 1 or 5 at level 2, or fewer than two form
section headings, is returned as it is: only form bodies are rewritten (the maintainers' sections, added at
level 2 below a form's answers, are kept as they are).
"""

from __future__ import annotations

import re
from typing import Final

from .document import BUG_SECTION_NAMES, Document, find_sections, parse_document
from .text import fold

__all__ = ["NO_RESPONSE", "from_issue_form"]

NO_RESPONSE: Final = "_No response_"
_SECTION: Final = re.compile(r"^ {0,3}###[ \t]++(\d)[.)][ \t]++(.+)$")  # the name is read by its start
_FIELD: Final = re.compile(
    r"^ {0,3}###[ \t]++(Status|Severity|Severidade|Scope|Escopo)[ \t]*+#*+[ \t]*+$", re.IGNORECASE
)
_FENCE: Final = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _section_number(line: str) -> int | None:
    m = _SECTION.match(line)
    if m is None:
        return None
    number, name = int(m.group(1)), fold(m.group(2))
    names = BUG_SECTION_NAMES.get(number, ())
    return number if any(name.startswith(fold(candidate)) for candidate in names) else None


def _outside_fences(lines: list[str]) -> list[bool]:
    """Whether each line is outside fenced code (a field's answer may hold a fence)."""
    out: list[bool] = []
    fence: str | None = None
    for line in lines:
        m = _FENCE.match(line)
        if fence is None:
            out.append(m is None)
            if m is not None:
                fence = m.group(1)[0] * len(m.group(1))
        else:
            out.append(False)
            if m is not None and m.group(1).startswith(fence):
                fence = None
    return out


def from_issue_form(text: str, doc: Document | None = None) -> str:
    """``text`` as RA9 reads it, when GitHub rendered it from an issue form; otherwise ``text`` itself.
    ``doc``: ``text`` parsed already (it is parsed here only when needed)."""
    if "###" not in text:
        return text
    lines = text.replace("\r\n", "\n").split("\n")
    outside = _outside_fences(lines)
    numbered = {n for i, line in enumerate(lines) if outside[i] and (n := _section_number(line)) is not None}
    # A body that has RA9's reporter sections at level 2 is RA9 already; the maintainers' sections added at
    # level 2 below a form's answers (Steward's form asks only for 1 and 5) do not stop the form's reading.
    if len(numbered) < 2 or set(find_sections(doc or parse_document(text), BUG_SECTION_NAMES)) & {1, 5}:
        return text
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not outside[i]:
            out.append(line)
        elif _section_number(line) is not None:
            out.append(line.replace("###", "##", 1))
        elif (field := _FIELD.match(line)) is not None:
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            value = lines[j].strip() if j < len(lines) else ""
            # A fence is not a value: taking it would change which lines are code on a second reading.
            fenced = j < len(lines) and (not outside[j] or _FENCE.match(lines[j]) is not None)
            if value and value != NO_RESPONSE and not value.startswith("#") and not fenced:
                out.append(f"**{field.group(1)}:** {value}")
                i = j
            # a field left empty says nothing
        elif line.strip() == NO_RESPONSE:
            out.append("")
        else:
            out.append(line)
        i += 1
    return "\n".join(out)
