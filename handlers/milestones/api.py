"""What other capabilities ask of the milestone gate: each milestone's dashboard and the gate's verdict as
its signed record says (the overview issue lists the milestones and their gates)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bot.commands.context import EventContext
from bot.forge import Issue
from handlers.milestones.boards import dashboard_of
from handlers.milestones.plan import KIND
from handlers.milestones.state import DashboardData


@dataclass(frozen=True)
class DashboardGate:
    """A milestone's dashboard issue, and the verdict and blocker count its record holds — None when the
    record does not verify (then nothing of it is believed) or predates the verdict being kept."""

    dashboard: Issue
    verdict: Literal["pass", "blocked"] | None = None
    blockers: int = 0


async def dashboard_gates(ctx: EventContext, issues: Sequence[Issue]) -> dict[int, DashboardGate]:
    """The dashboards among ``issues`` (a listing the caller already read: no request here but the
    repository's id, which is cached), by milestone key. A milestone is bound to its dashboard by the
    dashboard's signed record; should two of Steward's issues carry one milestone's marker, the one whose
    record verifies is its dashboard (``find_dashboards``' rule), else the oldest, with no verdict."""
    found: dict[int, DashboardGate] = {}
    verified: set[int] = set()
    label = ctx.settings.milestones.labels.dashboard
    for issue in sorted(issues, key=lambda i: i.number):
        key = dashboard_of(issue, ctx.me.login)
        if key is None or not issue.has_label(label) or key in verified:
            continue
        record = await ctx.record_of_issue(issue, KIND, str(key))
        if not isinstance(record.trusted, dict):
            found.setdefault(key, DashboardGate(issue))
            continue
        verified.add(key)
        gate = DashboardData.from_json(record.trusted, key).gate
        found[key] = DashboardGate(issue, *gate) if gate is not None else DashboardGate(issue)
    return found
