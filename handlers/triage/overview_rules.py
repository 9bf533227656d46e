"""What the overview issue lists, decided from what one refresh read (pure: issues in, ``Overview`` out).

The overview is an index of the repository's open work by who must act next, read from the forge's own
facts: the labels Steward keeps on issues and pull requests (the RA9 states, `forks:open`, `bugfix:*`,
`needs-human`, the hold label), who is assigned, which pull requests are drafts, the open milestones and
their dashboards' signed records, and the claims Steward recorded. It grants nothing: every line links to
the thread where the decision and its record live. So one listing of the open issues and pull requests is
read per refresh, never each thread (docs/overview.md, "What a refresh costs").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, get_args

from bot.forge import Issue, Milestone
from handlers.bugfix.api import bug_of_pull_title


@dataclass(frozen=True)
class OverviewLabels:
    """The label names the overview reads, from the repository's settings."""

    needs_info: str
    needs_triage: str
    old_rejected: str
    approved: str
    forks_open: str
    bugfix_open: str
    bugfix_exhausted: str
    hold: str
    needs_human: str
    claimed: str
    overview: str
    dashboard: str


@dataclass(frozen=True)
class Claim:
    """A `/claim` Steward recorded on an issue: who, and when they were last active there."""

    number: int
    login: str
    last_active: str


@dataclass(frozen=True)
class Gate:
    """A milestone's dashboard as its signed record says (None fields: its record did not verify)."""

    dashboard: Issue
    verdict: Literal["pass", "blocked"] | None = None
    blockers: int = 0


@dataclass(frozen=True)
class Line:
    """One issue or pull request in the overview."""

    number: int
    title: str
    url: str
    # People shown (never mentioned): the reporter, the assignees, the claimant.
    people: tuple[str, ...] = ()
    # Days since anything happened on it (None: the forge did not say).
    idle_days: int | None = None
    note: str = ""


@dataclass(frozen=True)
class MilestoneLine:
    title: str
    url: str
    open_items: int
    closed_items: int
    due_on: str | None = None
    dashboard: int | None = None
    dashboard_url: str = ""
    verdict: Literal["pass", "blocked"] | None = None
    blockers: int = 0


# The reader's next action first (DESIGN §8): what waits on the maintainers, then what someone may take,
# then what waits on others. SECTIONS keeps this order.
Section = Literal[
    "waiting_maintainers",
    "escalated",
    "in_review",
    "held",
    "forks_open",
    "stale_claims",
    "unclaimed",
    "red_proof",
    "waiting_reporter",
]
SECTIONS: tuple[Section, ...] = get_args(Section)
# The sections that wait on the maintainers (the headline counts them).
ON_MAINTAINERS: frozenset[Section] = frozenset(
    {"waiting_maintainers", "escalated", "in_review", "held", "forks_open", "stale_claims"}
)


@dataclass(frozen=True)
class Overview:
    sections: Mapping[Section, tuple[Line, ...]] = field(default_factory=dict)
    milestones: tuple[MilestoneLine, ...] = ()

    def lines(self, section: Section) -> tuple[Line, ...]:
        return self.sections.get(section, ())

    def counts(self) -> dict[str, int]:
        found: dict[str, int] = {name: len(self.lines(name)) for name in SECTIONS}
        found["milestones"] = len(self.milestones)
        return found

    def on_maintainers(self) -> int:
        return sum(len(self.lines(name)) for name in SECTIONS if name in ON_MAINTAINERS)


def idle_days(updated_at: str, now: datetime) -> int | None:
    try:
        then = datetime.fromisoformat(updated_at.replace("Z", "+00:00"))
    except ValueError:
        return None
    if then.tzinfo is None:
        return None
    return max(0, (now - then).days)


def _line(item: Issue, now: datetime, people: Iterable[str] = (), note: str = "") -> Line:
    return Line(
        item.number,
        item.title,
        item.html_url,
        tuple(dict.fromkeys(p for p in people if p)),
        idle_days(item.updated_at, now),
        note,
    )


def _oldest_first(lines: Iterable[Line]) -> tuple[Line, ...]:
    return tuple(sorted(lines, key=lambda ln: (-(ln.idle_days or 0), ln.number)))


def classify(
    items: Sequence[Issue],
    milestones: Sequence[Milestone],
    gates: Mapping[int, Gate],
    claims: Sequence[Claim],
    labels: OverviewLabels,
    *,
    bot_login: str,
    now: datetime,
    stale_after_days: int,
) -> Overview:
    """The overview of ``items`` (the repository's open issues and pull requests, in one listing)."""
    me = bot_login.casefold()
    claimed = {c.number: c for c in claims}
    found: dict[Section, list[Line]] = {name: [] for name in SECTIONS}
    for item in items:
        if item.state != "open":
            continue
        own = item.author.casefold() == me
        if own and (item.has_label(labels.overview) or item.has_label(labels.dashboard)):
            continue  # Steward's own boards are not work
        if item.is_pull_request:
            if own and bug_of_pull_title(item.title) is not None:
                _bugfix(found, item, labels, now)
            continue
        claim = claimed.get(item.number)
        people = (*item.assignees, *([claim.login] if claim else ()))
        if item.has_label(labels.needs_triage) or item.has_label(labels.old_rejected):
            found["waiting_maintainers"].append(_line(item, now, (item.author,)))
        if item.has_label(labels.needs_info):
            found["waiting_reporter"].append(_line(item, now, (item.author,)))
        if item.has_label(labels.needs_human):
            found["escalated"].append(_line(item, now, people))
        if item.has_label(labels.forks_open):
            found["forks_open"].append(_line(item, now, people))
        if (
            item.has_label(labels.approved)
            and not item.assignees
            and claim is None
            and not item.has_label(labels.claimed)
            and not item.has_label(labels.bugfix_open)
        ):
            found["unclaimed"].append(_line(item, now))
        if claim is not None:
            days = idle_days(claim.last_active, now)
            if days is not None and days >= stale_after_days:
                note = f"claimed by {claim.login}, no activity from them for {days} days"
                found["stale_claims"].append(
                    Line(item.number, item.title, item.html_url, (claim.login,), days, note)
                )
    return Overview(
        {name: _oldest_first(lines) for name, lines in found.items()},
        _milestones(milestones, gates),
    )


def _bugfix(found: dict[Section, list[Line]], pull: Issue, labels: OverviewLabels, now: datetime) -> None:
    held = [name for name in (labels.hold, labels.bugfix_exhausted) if pull.has_label(name)]
    if held:
        found["held"].append(_line(pull, now, pull.assignees, note=", ".join(f"`{name}`" for name in held)))
    elif pull.draft:
        found["red_proof"].append(_line(pull, now, pull.assignees))
    else:
        found["in_review"].append(_line(pull, now, pull.assignees))


def _milestones(milestones: Sequence[Milestone], gates: Mapping[int, Gate]) -> tuple[MilestoneLine, ...]:
    shown = []
    for ms in sorted(milestones, key=lambda m: (m.due_on or "9999", m.title.casefold())):
        if ms.state != "open":
            continue
        gate = gates.get(ms.key)
        shown.append(
            MilestoneLine(
                ms.title,
                ms.html_url,
                ms.open_issues,
                ms.closed_issues,
                ms.due_on,
                gate.dashboard.number if gate else None,
                gate.dashboard.html_url if gate else "",
                gate.verdict if gate else None,
                gate.blockers if gate else 0,
            )
        )
    return tuple(shown)
