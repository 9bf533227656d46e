"""Independent review (issue 24 §4): who may not review a bugfix branch, the rounds a later push voids, and
the lease of a `/review` to the head it was written on. Pure rules over the branch's commits and the
forge's own push history (``Forge.branch_pushes``), not only the push deliveries Steward received.

- Excluded: whoever ran `/bugfix`, every commit's author and committer (the forge accounts the commits are
  linked to) and everyone who pushed to the branch.
- A round whose reviewer is, or later became, one of them is void ("never let a reviewer modify the
  bugfix"): it settles nothing, and it still counts against the budget (voiding never gives a round back).
- A `/review` without a sha is leased to the head when it was written: a push after the comment's
  ``created_at`` refuses it ("the branch moved after your review").
- The history must account for the head (``unaccounted``): walking back from it, every move down to
  Steward's own push must be there. Gitea's feed leaves out people who keep their activity private (and a
  day too long to read): a move nobody is shown to have made means nobody can be shown independent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from bot.forge import Push
from handlers.bugfix.ledger import Ledger
from handlers.bugfix.status import BranchCommit, own_commits


def modifiers(
    commits: Sequence[BranchCommit], pushes: Iterable[Push], opened_by: str, me: str = ""
) -> dict[str, str]:
    """Everyone who made or moved the branch (casefolded login) and why, in a few words: ran `/bugfix`,
    authored or committed a commit, pushed. Steward itself (``me``, which pushed the red commit) is left
    out."""
    found: dict[str, str] = {}

    def add(login: str, why: str) -> None:
        key = login.casefold()
        if key and key != me.casefold():
            found.setdefault(key, why)

    add(opened_by, "ran `/bugfix`")
    for c in own_commits(commits):
        add(c.author, f"authored commit `{c.sha[:10]}`")
        add(c.committer, f"committed `{c.sha[:10]}`")
    for p in sorted(pushes, key=lambda p: p.at):
        if p.kind != "branch_deletion":
            add(p.actor, f"pushed {f'`{p.after[:10]}` ' if p.after else ''}to the branch")
    return found


def void_rounds(ledger: Ledger, excluded: Mapping[str, str]) -> Ledger:
    """The ledger with each round of someone in ``excluded`` marked void, with the reason."""
    rounds = tuple(
        replace(r, void=f"@{r.actor} {excluded[r.actor.casefold()]}")
        if r.actor.casefold() in excluded and not r.void
        else r
        for r in ledger.rounds
    )
    return replace(ledger, rounds=rounds)


def _when(stamp: str) -> datetime | None:
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")) if stamp else None
    except ValueError:
        return None


def moved_after(pushes: Iterable[Push], written_at: str) -> Push | None:
    """The latest push made after a comment written at ``written_at`` (None: the branch did not move since;
    also when the time is unknown). Forges keep whole seconds: a push in the comment's own second is not
    counted as after it."""
    written = _when(written_at)
    if written is None:
        return None
    later = [p for p in pushes if p.kind != "branch_deletion" and (at := _when(p.at)) and at > written]
    return max(later, key=lambda p: p.at) if later else None


def unaccounted(pushes: Iterable[Push], head: str, me: str) -> str | None:
    """The commit the branch was moved to by a push its history does not show, walking back from ``head``
    along each push's ``before``, down to Steward's own push (``me``: the branch and its red commit) or one
    that made the branch (no ``before``); None when every move is shown."""
    by_after: dict[str, Push] = {}
    for one in sorted(pushes, key=lambda p: p.at, reverse=True):
        if one.kind != "branch_deletion" and one.after:
            by_after.setdefault(one.after, one)
    current, seen = head, set()
    while current and current not in seen:
        seen.add(current)
        push = by_after.get(current)
        if push is None:
            return current
        if push.actor.casefold() == me.casefold() or not push.before:
            return None
        current = push.before
    return None
