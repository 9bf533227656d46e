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
  a changed fixture in it): adding new tests beside it needs nothing.

An acceptance covers the items it named when it was written; a later commit that changes other files needs
another.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Final

from handlers.bugfix.regression_slot import is_test_path

FIX_OUT_OF_SCOPE: Final = "FIX_OUT_OF_SCOPE"
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

    def items(self) -> tuple[str, ...]:
        """Everything that needs acceptance, each once."""
        extra = (self.test_edited,) if self.test_edited else ()
        return tuple(dict.fromkeys((*self.outside, *self.sensitive, *extra)))

    def waiting(self, accepted: Collection[str]) -> ScopeCheck:
        """This check without what an acceptance already covers."""
        return ScopeCheck(
            tuple(f for f in self.outside if f not in accepted),
            tuple(f for f in self.sensitive if f not in accepted),
            self.test_edited if self.test_edited not in accepted else "",
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
        return "; ".join(parts)


def check_scope(
    fix_files: Iterable[str],
    evidence_files: Collection[str],
    *,
    test_globs: Iterable[str],
    scope_globs: Iterable[str],
    test_path: str,
    test_edited: bool,
) -> ScopeCheck:
    """What in the fix (``fix_files``: the files the commits after the red one change) needs acceptance."""
    tests, sensitive = tuple(test_globs), tuple(scope_globs)
    files = sorted(dict.fromkeys(f.strip().lstrip("/") for f in fix_files if f.strip()))
    named = {f.strip().lstrip("/") for f in evidence_files}
    flagged = tuple(f for f in files if is_test_path(f, sensitive))
    outside = tuple(f for f in files if f not in named and f not in flagged and not is_test_path(f, tests))
    return ScopeCheck(outside, flagged, test_path if test_edited else "")


def regression_test_edited(vouched: str, head_text: str | None) -> bool:
    """Whether the head's test file no longer holds the test the red commit added, character for character
    (blank lines at its ends aside). A deleted file is the status's own failure, not an edit."""
    if not vouched.strip() or head_text is None:
        return False
    return vouched.strip("\n") not in head_text
