"""The decisions around the gate, without I/O: what `/gate` asks, when a closure's gate is due, what to do
with a closure, when a coalesced refresh runs, and what the periodic job schedules."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from bot.forge import ForgeKind, Milestone
from bot.records import neutralise
from handlers.milestones.render import dashboard_title
from handlers.milestones.state import MAX_PROMISE, DashboardData

KIND = "milestone-dashboard"
# Steward's notice on a dashboard that it reopened the milestone (one per closure).
NOTICE_KIND = "milestone-notice"
_DASHBOARD_MARKER = re.compile(rf"\A\s*<!-- steward:{KIND}:(\d{{1,18}}) -->")
# On GitHub the `milestone.closed` webhook schedules the gate; the periodic safety net steps in only when
# the closure is this much past its grace period (the webhook was evidently missed).
WEBHOOK_MARGIN_SECONDS = 60.0
# A gate job that runs a little early (clocks differ between the forge and the worker) still decides.
EARLY_TOLERANCE_SECONDS = 5.0
MAX_OVERRIDE_REASON = 300
# A closure this long before Steward's last look (or its first) still counts as one it has not looked at:
# one period of the periodic job, and room for clocks that differ between the forge and the worker.
WATCH_OVERLAP_SECONDS = 60.0


class UsageError(ValueError):
    """`/gate` with arguments it does not take."""


@dataclass(frozen=True)
class GateRequest:
    action: Literal["check", "override", "internal", "internal-off", "promise-add", "promise-remove"]
    reason: str = ""
    # `promise add`: the scenario issue that demonstrates the promise (``reason`` is its text);
    # `promise remove`: the promise's number on the list (1-based).
    number: int = 0


# `/gate promise add <text> — #<scenario>`: the scenario is the last `#N`, after an em dash, `--` or `-`
# (or nothing); the text before it is the promise.
# What may stand between a promise's text and its scenario: `Users can export — #12`.
_PROMISE_SEPARATORS = ("—", "--", "-", ":")
PROMISE_USAGE = "`promise add <text> — #<scenario issue>` or `promise remove <number>`"


def _parse_promise(args: Sequence[str], text: str) -> GateRequest:
    verb = args[1].casefold() if len(args) > 1 else ""
    if verb == "remove":
        if len(args) == 3 and args[2].lstrip("#").isdigit() and 0 < int(args[2].lstrip("#")) < 10_000:
            return GateRequest("promise-remove", number=int(args[2].lstrip("#")))
        raise UsageError(f"`promise remove` takes the promise's number on the list; {PROMISE_USAGE}")
    if verb != "add":
        raise UsageError(f"`promise` takes {PROMISE_USAGE}")
    rest = text.split(None, 2)
    found = _promise_add(" ".join(rest[2].split()) if len(rest) > 2 else "")
    if found is None:
        raise UsageError(
            f"a promise needs its text and the scenario issue that demonstrates it: {PROMISE_USAGE}"
        )
    return GateRequest("promise-add", found[0][:MAX_PROMISE], found[1])


def _promise_add(line: str) -> tuple[str, int] | None:
    """``<text> [— | -- | - | :] #<n>`` split by a scan from the end (no expression that could backtrack on
    someone's text): the text and the scenario's number, or None."""
    head, hash_, number = line.rpartition("#")
    number = number.rstrip()
    if not hash_ or not (number.isascii() and number.isdigit()) or len(number) > 9 or int(number) == 0:
        return None
    text = head.rstrip()
    for separator in _PROMISE_SEPARATORS:
        if text.endswith(separator):
            text = text[: -len(separator)]
            break
    return (text.strip(), int(number)) if text.strip() else None


def parse_gate(args: Sequence[str], text: str) -> GateRequest:
    """``/gate`` (check now), ``/gate override <reason>``, ``/gate internal [off]`` or ``/gate promise add
    <text> — #<scenario>`` / ``/gate promise remove <n>``; ``text`` is the command's text (the reason may
    continue on the next lines: it is folded into one line and bounded)."""
    if not args:
        return GateRequest("check")
    if args[0].casefold() == "internal":
        if len(args) == 1:
            return GateRequest("internal")
        if len(args) == 2 and args[1].casefold() == "off":
            return GateRequest("internal-off")
        raise UsageError("`internal` takes nothing, or `off`")
    if args[0].casefold() == "promise":
        return _parse_promise(args, text)
    if args[0].casefold() != "override":
        raise UsageError(f"unknown argument {neutralise.code(args[0], 40)}")
    rest = text.split(None, 1)
    reason = " ".join(rest[1].split()) if len(rest) > 1 else ""
    if not reason:
        raise UsageError("an override needs a reason")
    return GateRequest("override", reason[:MAX_OVERRIDE_REASON])


def dashboard_key(body: str) -> int | None:
    """The milestone key a dashboard body's hidden marker names (the caller checks who wrote it)."""
    found = _DASHBOARD_MARKER.match(body or "")
    return int(found.group(1)) if found else None


def parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        found = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return found if found.tzinfo is not None else found.replace(tzinfo=UTC)


def iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def closed_since(closed_at: str | None, since: datetime | None) -> bool:
    """Whether a closure happened while Steward watched (at or after ``since``, less the overlap): one to
    check even without a dashboard. Without ``since`` (nothing remembered) or ``closed_at``: no."""
    when = parse_time(closed_at)
    if since is None or when is None:
        return False
    return when >= since - timedelta(seconds=WATCH_OVERLAP_SECONDS)


def gate_due(closed_at: str | None, grace: float, now: datetime) -> datetime:
    """When a closure's gate is checked: its grace period after it closed (after now, when the forge did not
    say when)."""
    return (parse_time(closed_at) or now) + timedelta(seconds=grace)


def gate_delay(
    forge: ForgeKind, closed_at: str | None, grace: float, now: datetime, *, webhook: bool = False
) -> float | None:
    """Seconds until the gate job for a closure should run, or None when it is not this caller's to
    schedule: on GitHub the `milestone.closed` webhook (``webhook=True``) schedules it, and anyone else only
    once the closure is well past its grace period (the webhook was missed)."""
    due = gate_due(closed_at, grace, now)
    if forge == "github" and not webhook:
        return 0.0 if now >= due + timedelta(seconds=WEBHOOK_MARGIN_SECONDS) else None
    return max(0.0, (due - now).total_seconds())


Decision = Literal["none", "wait", "accept-pass", "accept-override", "reopen"]


def closure_decision(
    *, state: str, closed_at: str | None, data: DashboardData, passed: bool, grace: float, now: datetime
) -> Decision:
    """What the gate job does with the milestone as it is now (level-triggered: it never trusts the event).

    ``none``: open, or this closure is settled already; ``wait``: the grace period is not over;
    ``accept-*``: the closure stands (recorded on the dashboard, which is closed); ``reopen``: blocked."""
    if state != "closed" or data.settled_closed(closed_at):
        return "none"
    if now + timedelta(seconds=EARLY_TOLERANCE_SECONDS) < gate_due(closed_at, grace, now):
        return "wait"
    if data.override is not None:
        return "accept-override"
    return "accept-pass" if passed else "reopen"


def refresh_run_at(now: float, debounce: float) -> float:
    """When a coalesced refresh asked for at ``now`` (epoch seconds) runs: the end of the debounce, rounded up
    to a slot boundary, so every request of the same slot names the same job."""
    if debounce <= 0:
        return now
    return math.ceil((now + debounce) / debounce) * debounce


@dataclass(frozen=True)
class SeenDashboard:
    """A dashboard issue as the periodic job sees it."""

    number: int
    title: str
    state: str
    # None: its data block is missing or unreadable (a person edited the body): refreshed, never gated.
    data: DashboardData | None


@dataclass(frozen=True)
class Action:
    what: Literal["refresh", "gate"]
    key: int
    delay: float = 0.0
    closed_at: str | None = None


def _counts(ms: Milestone) -> tuple[int, int]:
    return (ms.open_issues, ms.closed_issues)


def watch_plan(
    milestones: Sequence[Milestone],
    dashboards: Mapping[int, SeenDashboard],
    *,
    gone: Sequence[int] = (),
    forge: ForgeKind,
    now: datetime,
    grace: float,
    internal: Mapping[int, bool],
    since: datetime | None = None,
) -> list[Action]:
    """What the periodic job schedules for one repository: a gate for each closure not yet settled (when it
    is its to schedule), a refresh for each dashboard that fell behind its milestone (state, counts, title,
    internal marker), for each open milestone with items and no dashboard, and for each dashboard whose
    milestone is ``gone`` (deleted). A closed milestone without a dashboard is checked only when it closed
    ``since`` Steward last looked (``closed_since``): one closed before Steward watched is history, never
    reopened."""
    actions: list[Action] = []
    for ms in milestones:
        seen = dashboards.get(ms.key)
        if seen is None:
            if ms.state == "open" and sum(_counts(ms)) > 0:
                actions.append(Action("refresh", ms.key))
            elif ms.state == "closed" and sum(_counts(ms)) > 0 and closed_since(ms.closed_at, since):
                delay = gate_delay(forge, ms.closed_at, grace, now)
                if delay is not None:
                    actions.append(Action("gate", ms.key, delay, ms.closed_at))
            continue
        data = seen.data
        if data is None:
            actions.append(Action("refresh", ms.key))
            continue
        if ms.state == "closed" and not data.settled_closed(ms.closed_at):
            delay = gate_delay(forge, ms.closed_at, grace, now)
            if delay is not None:
                actions.append(Action("gate", ms.key, delay, ms.closed_at))
            continue
        # The dashboard is closed exactly while its milestone's closure stands (settled above).
        wanted_state = "closed" if ms.state == "closed" else "open"
        behind = (
            (ms.state == "open" and data.state == "closed")
            or seen.state != wanted_state
            or data.counts != _counts(ms)
            or seen.title != dashboard_title(ms.title)
            or data.internal != internal.get(ms.key, False)
        )
        if behind:
            actions.append(Action("refresh", ms.key))
    for key in gone:
        seen = dashboards.get(key)
        if seen is not None and seen.state == "open":
            actions.append(Action("refresh", key))
    return actions
