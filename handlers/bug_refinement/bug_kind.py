"""What counts as a bug report: the one rule both refinement engines (and the router) use to tell a bug
from a backlog item. Pure; the backlog reads it through ``handlers.bug_refinement.api``."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from handlers.backlog.api import fold, words
from handlers.bug_refinement.document import BUG_SECTION_NAMES, MAX_REPORT_CHARS, STORY_SECTION_NAMES
from handlers.bug_refinement.formats import is_common_bug_report

__all__ = ["RA9_SECTIONS", "is_bug_report"]

# RA9's numbered sections, bug and story documents together (a story's section 7 is its dependencies).
RA9_SECTIONS: Final[dict[int, tuple[str, ...]]] = {
    n: tuple(dict.fromkeys((*BUG_SECTION_NAMES.get(n, ()), *STORY_SECTION_NAMES.get(n, ()))))
    for n in range(1, 10)
}
_NUMBERED_HEADING: Final = re.compile(r"^ {0,3}#{1,6}[ \t]++(\d)[.)][ \t]*+(.+)$", re.MULTILINE)
_NAMES: Final = {n: {" ".join(words(name)) for name in names} for n, names in RA9_SECTIONS.items()}


def is_bug_report(labels: Iterable[str], body: str, *, bug_label: str = "bug") -> bool:
    """A bug report: labelled ``bug_label``, a body with at least two RA9 numbered section headings
    (``## 1. Vision`` / ``## 1. Visão`` … ``## 4. Acceptance Criteria``: number and name both match), or a
    report in a common bug format (GitHub's default template's ``To Reproduce`` and ``Expected behavior``,
    an issue form's ``### Steps to reproduce``, ``Steps to reproduce:`` / ``Expected:`` prose)."""
    if any(fold(label) == fold(bug_label) for label in labels):
        return True
    found: set[int] = set()
    text = (body or "")[:MAX_REPORT_CHARS]
    for match in _NUMBERED_HEADING.finditer(text):
        number = int(match.group(1))
        name = match.group(2).rstrip(" \t").rstrip("#").rstrip(" \t")  # without a closing sequence
        if " ".join(words(name)) in _NAMES.get(number, set()):
            found.add(number)
    return len(found) >= 2 or is_common_bug_report(text)
