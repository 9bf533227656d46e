"""Native reviews (GitHub Approve / Request changes, Gitea APPROVED / REQUEST_CHANGES) beside the review
ledger, and reviewers in conflict. Pure: the forge's review list and the ledger in, a verdict out.

- Native reviews are shown in the ledger and never spend the review budget: an Approve carries no findings,
  and counting it would let a drive-by approval spend a round.
- Each reviewer's verdict is their latest Approve or Request changes (a later comment-only review changes
  nothing, as on both forges); only verdicts on the current head count.
- A Request changes on the head keeps `steward/regression-first` pending until a `/review` round on that head
  settles it: a round with findings agrees that changes are needed and the ledger goes on from there; an
  inconclusive round settles nothing.
- A Request changes on a head that a `/review clean` round passed is two reviewers in conflict, in whichever
  order they came (the head cannot be reviewed again): the review stops and a person decides — the
  reviewer who asked for changes approves or dismisses their review, or a new head is pushed for a new round.
- Two `/review` rounds in conflict: a second reviewer's blocking findings on a head another reviewer passed
  clean (``Conflict``, recorded instead of a round: it spends no budget) stop the review the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from bot.forge import Review
from handlers.bugfix.ledger import SEVERITIES, Finding, Ledger, Round, Severity

# Findings that block: anything a reviewer would not accept as a residual without saying so.
BLOCKING: frozenset[Severity] = frozenset({"critical", "high", "medium"})
MAX_SHOWN = 20


@dataclass(frozen=True)
class Conflict:
    """`/review findings` with blocking findings on a head another reviewer already passed clean: recorded
    (it is not a round, so it spends no budget) and the review stops."""

    comment_id: int
    actor: str
    head: str
    findings: tuple[Finding, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "conflict",
            "comment": self.comment_id,
            "actor": self.actor,
            "head": self.head,
            "findings": [[f.id, f.severity, f.location, f.text] for f in self.findings],
        }

    @classmethod
    def from_json(cls, raw: Any) -> Conflict | None:
        """The conflict a reply records, or None for anything else (never raises)."""
        if not isinstance(raw, dict) or raw.get("type") != "conflict":
            return None
        try:
            findings = tuple(
                Finding(str(f[0]), f[1], str(f[2]), str(f[3]))
                for f in raw.get("findings") or ()
                if isinstance(f, list) and len(f) == 4 and f[1] in SEVERITIES
            )
            return cls(int(raw["comment"]), str(raw["actor"]), str(raw["head"]), findings)
        except (KeyError, TypeError, ValueError):
            return None


def blocking(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    return tuple(f for f in findings if f.severity in BLOCKING)


def verdicts(reviews: Sequence[Review]) -> list[Review]:
    """Each reviewer's latest Approve or Request changes (the forges list reviews oldest first)."""
    latest: dict[str, Review] = {}
    for review in reviews:
        if review.state in ("approved", "changes_requested"):
            latest[review.user.casefold()] = review
    return list(latest.values())


def on_head(review: Review, head: str) -> bool:
    # A review the forge does not place on a commit is taken to be on the head (the cautious reading).
    return review.commit_id is None or review.commit_id == head


def changes_requested(reviews: Sequence[Review], head: str) -> list[Review]:
    return [r for r in verdicts(reviews) if r.state == "changes_requested" and on_head(r, head)]


def clean_round(ledger: Ledger, head: str) -> tuple[int, Round] | None:
    """The `/review clean` round on ``head`` (its number and the round), if the head's last round that counts
    (not void) is one."""
    found = [(i, r) for i, r in enumerate(ledger.rounds, start=1) if r.head == head and not r.void]
    if not found or found[-1][1].verdict != "clean":
        return None
    position, rnd = found[-1]
    return ledger.number_of(position), rnd


NativeState = Literal["none", "pending", "conflict"]


@dataclass(frozen=True)
class NativeVerdict:
    state: NativeState
    reason: str = ""


def _who(reviews: Iterable[Review]) -> str:
    return ", ".join(f"@{r.user}" for r in reviews)


def judge(
    ledger: Ledger, reviews: Sequence[Review], conflicts: Sequence[Conflict], head: str
) -> NativeVerdict:
    """What native reviews and recorded conflicts say of ``head``: nothing, pending (a Request changes no
    round settled yet) or a conflict between reviewers (the review stops)."""
    passed = clean_round(ledger, head)
    for conflict in conflicts:
        if conflict.head == head and passed is not None:
            n, rnd = passed
            ids = ", ".join(f.id for f in conflict.findings)
            return NativeVerdict(
                "conflict",
                f"@{rnd.actor} reviewed `{head[:10]}` clean in round {n} and @{conflict.actor} reports "
                f"blocking findings on it ({ids})",
            )
    asking = changes_requested(reviews, head)
    if not asking:
        return NativeVerdict("none")
    if passed is not None:
        n, rnd = passed
        return NativeVerdict(
            "conflict",
            f"@{rnd.actor} reviewed `{head[:10]}` clean in round {n} and {_who(asking)} requested changes "
            "on it (native review)",
        )
    rounds = [r for r in ledger.rounds if r.head == head]
    if rounds and rounds[-1].verdict == "findings":
        return NativeVerdict("none")  # the round agrees that changes are needed: the ledger goes on
    return NativeVerdict(
        "pending",
        f"{_who(asking)} requested changes on the head (native review): a /review round on it settles that",
    )


def shown(reviews: Sequence[Review], head: str) -> list[str]:
    """The ledger's rows of native reviews (newest first): reviewer, verdict, commit, and whether it is on
    the head. Comment-only reviews carry no verdict and are left out."""
    rows = []
    for review in [r for r in reviews if r.state != "commented"][::-1][:MAX_SHOWN]:
        word = "approved" if review.state == "approved" else "requested changes"
        where = f"`{review.commit_id[:10]}`" if review.commit_id else "—"
        current = "yes" if on_head(review, head) else "no (an earlier head)"
        rows.append(f"| @{review.user} | {word} | {where} | {current} |")
    return rows
