"""Whether a fix stays in scope (seeds 001 and 004: "the fix touches only files the evidence implicates").
Pure, no I/O.

The files the fix commits change (every commit after the red one) are compared with the files the confirmed
hypothesis's evidence names; test files (``bugfix.test_globs``) are in scope. What needs a maintainer's
explicit acceptance (`/scope <reason>`, recorded in the ledger) before the status can pass:

- a changed file the evidence does not name (a fix that touches none of the evidence's files touches only
  such files);
- a changed file matching ``bugfix.scope_globs`` (CI configuration, lockfiles, generated files, files that
  look like secrets), even one the evidence names;
- the regression test as the red commit added it, changed by a fix commit (an edited assertion, a new skip,
  a changed fixture in it): adding new tests beside it needs nothing;
- a fix that changes more than ``bugfix.max_fix_lines`` lines (added plus removed, between the red commit
  and the head, test files aside).

An acceptance covers the items it named when it was written; a later commit that changes other files needs
another.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Final

from handlers.bugfix.regression_slot import is_test_path

FIX_OUT_OF_SCOPE: Final = "FIX_OUT_OF_SCOPE"
SIZE_ITEM: Final = "size:"
"""An acceptance of the fix's size is recorded as ``size:<lines>`` (five characters, then the number)."""
MAX_DIFF_LINES: Final = 20_000
"""Files longer than this (both versions together) are not compared line by line: all their lines count."""
MAX_ITEMS: Final = 50
"""Items one acceptance records at most (the ledger's data block stays bounded)."""


@dataclass(frozen=True)
class ScopeAcceptance:
    """`/scope <reason>`: someone with maintain access who did not make or move the branch accepted what in
    the fix goes beyond the evidence (``files``: the items ``ScopeCheck.items`` listed then). An event of the
    review ledger (``handlers.bugfix.ledger``)."""

    comment_id: int
    actor: str
    reason: str
    files: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScopeCheck:
    """What in the fix needs acceptance, by reason. Each entry is a file path."""

    outside: tuple[str, ...] = ()  # changed files the evidence does not name (tests and sensitive ones aside)
    sensitive: tuple[str, ...] = ()  # changed files matching ``bugfix.scope_globs``, named or not
    test_edited: str = ""  # the regression test's path, when a fix commit changed the test it added
    oversize: int = 0  # the lines the fix changes, when more than ``bugfix.max_fix_lines``
    budget: int = 0  # ``bugfix.max_fix_lines``

    def items(self) -> tuple[str, ...]:
        """Everything that needs acceptance, each once (the size as ``size:<lines>``)."""
        extra = (self.test_edited,) if self.test_edited else ()
        size = (f"{SIZE_ITEM}{self.oversize}",) if self.oversize else ()
        return tuple(dict.fromkeys((*self.outside, *self.sensitive, *extra, *size)))

    def waiting(self, accepted: Collection[str]) -> ScopeCheck:
        """This check without what an acceptance already covers (an accepted size covers any size up to
        it)."""
        sizes = [int(a[5:]) for a in accepted if a.startswith(SIZE_ITEM) and a[5:].isdigit()]
        return ScopeCheck(
            tuple(f for f in self.outside if f not in accepted),
            tuple(f for f in self.sensitive if f not in accepted),
            self.test_edited if self.test_edited not in accepted else "",
            self.oversize if self.oversize > max(sizes, default=0) else 0,
            self.budget,
        )

    def describe(self) -> str:
        """One line for the status (at most 140 characters with its prefix)."""
        parts: list[str] = []
        if self.outside:
            parts.append("files the evidence does not name: " + ", ".join(self.outside))
        if self.sensitive:
            parts.append("sensitive files: " + ", ".join(self.sensitive))
        if self.test_edited:
            parts.append("the regression test as committed")
        if self.oversize:
            parts.append(f"{self.oversize} changed lines (at most {self.budget})")
        return "; ".join(parts)


def check_scope(
    fix_files: Iterable[str],
    evidence_files: Collection[str],
    *,
    test_globs: Iterable[str],
    scope_globs: Iterable[str],
    test_path: str,
    test_edited: bool,
    lines: int = 0,
    max_lines: int = 0,
) -> ScopeCheck:
    """What in the fix (``fix_files``: the files the commits after the red one change; ``lines``: the lines
    it changes, against ``max_lines``, 0: not checked) needs acceptance."""
    tests, sensitive = tuple(test_globs), tuple(scope_globs)
    files = sorted(dict.fromkeys(f.strip().lstrip("/") for f in fix_files if f.strip()))
    named = {f.strip().lstrip("/") for f in evidence_files}
    flagged = tuple(f for f in files if is_test_path(f, sensitive))
    outside = tuple(f for f in files if f not in named and f not in flagged and not is_test_path(f, tests))
    over = lines if max_lines and lines > max_lines else 0
    return ScopeCheck(outside, flagged, test_path if test_edited else "", over, max_lines)


def item_words(item: str) -> str:
    """An item as people read it: a file in backticks, a size as "the fix's size (N changed lines)"."""
    if item.startswith(SIZE_ITEM):
        return f"the fix's size ({item[len(SIZE_ITEM) :]} changed lines)"
    return f"`{item}`"


def changed_lines(before: str | None, after: str | None) -> int:
    """Lines added plus lines removed between two versions of a file (None: the file is not there). A file
    too large to compare line by line counts all its lines."""
    old, new = (before or "").splitlines(), (after or "").splitlines()
    if len(old) + len(new) > MAX_DIFF_LINES:
        return len(old) + len(new)
    return sum(
        1
        for line in difflib.unified_diff(old, new, n=0, lineterm="")
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    )


def regression_test_edited(vouched: str, head_text: str | None) -> bool:
    """Whether the head's test file no longer holds the test the red commit added, character for character
    (blank lines at its ends aside). A deleted file is the status's own failure, not an edit."""
    if not vouched.strip() or head_text is None:
        return False
    return vouched.strip("\n") not in head_text
