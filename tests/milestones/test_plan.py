"""The decisions around the gate: `/gate`'s arguments, when a closure's gate is due and what to do with it,
the coalescing slots, and what the periodic job schedules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.forge import Milestone
from handlers.milestones.plan import (
    SeenDashboard,
    UsageError,
    closed_since,
    closure_decision,
    dashboard_key,
    gate_delay,
    parse_gate,
    refresh_run_at,
    watch_plan,
)
from handlers.milestones.render import dashboard_title
from handlers.milestones.state import DashboardData, Override

NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
CLOSED_AT = "2026-12-01T11:59:30Z"  # 30 s ago


def test_gate_arguments() -> None:
    assert parse_gate((), "").action == "check"
    request = parse_gate(("override", "abandoned:"), "override abandoned: moved\n  to v2  ")
    assert (request.action, request.reason) == ("override", "abandoned: moved to v2")
    assert parse_gate(("OVERRIDE", "x"), "OVERRIDE x").reason == "x"
    assert len(parse_gate(("override", "x"), "override " + "x" * 1000).reason) == 300
    with pytest.raises(UsageError, match="needs a reason"):
        parse_gate(("override",), "override")
    with pytest.raises(UsageError, match="unknown argument"):
        parse_gate(("now",), "now")


def test_a_dashboard_is_named_by_its_hidden_marker_only_at_the_top() -> None:
    assert dashboard_key("<!-- steward:milestone-dashboard:42 -->\n## Milestone") == 42
    assert dashboard_key("text\n<!-- steward:milestone-dashboard:42 -->") is None
    assert dashboard_key("<!-- steward:milestone-dashboard:x -->") is None
    assert dashboard_key("") is None


def test_the_grace_period_on_each_forge() -> None:
    # GitHub: the milestone.closed webhook schedules the gate for the end of the grace period ...
    assert gate_delay("github", CLOSED_AT, 60, NOW, webhook=True) == 30
    # ... and anyone else only once the webhook was evidently missed.
    assert gate_delay("github", CLOSED_AT, 60, NOW) is None
    assert gate_delay("github", CLOSED_AT, 60, NOW + timedelta(seconds=100)) == 0
    # Gitea has no webhook: whoever notices the closure schedules it.
    assert gate_delay("gitea", CLOSED_AT, 60, NOW) == 30
    assert gate_delay("gitea", CLOSED_AT, 10, NOW) == 0
    assert gate_delay("gitea", None, 60, NOW) == 60, "no closed_at: a grace period from now"


@pytest.mark.parametrize(
    ("state", "data", "passed", "now", "decision"),
    [
        ("open", DashboardData(1), False, NOW, "none"),
        ("closed", DashboardData(1, "closed", CLOSED_AT), False, NOW, "none"),
        ("closed", DashboardData(1), False, NOW, "wait"),
        ("closed", DashboardData(1), False, NOW + timedelta(seconds=28), "reopen"),  # a little early is fine
        ("closed", DashboardData(1), True, NOW + timedelta(seconds=60), "accept-pass"),
        (
            "closed",
            DashboardData(1, override=Override("m", "t", "why")),
            False,
            NOW + timedelta(seconds=60),
            "accept-override",
        ),
        # A different, earlier closure was settled; this one was not.
        (
            "closed",
            DashboardData(1, "closed", "2026-11-01T00:00:00Z"),
            False,
            NOW + timedelta(seconds=60),
            "reopen",
        ),
    ],
)
def test_what_the_gate_check_does(
    state: str, data: DashboardData, passed: bool, now: datetime, decision: str
) -> None:
    got = closure_decision(state=state, closed_at=CLOSED_AT, data=data, passed=passed, grace=60, now=now)
    assert got == decision


def test_a_burst_shares_one_refresh_slot_and_a_later_request_gets_the_next() -> None:
    start = 1_000_000.3
    slots = {refresh_run_at(start + i * 0.01, 2.0) for i in range(100)}
    assert slots == {1_000_004.0}
    assert refresh_run_at(1_000_004.0, 2.0) == 1_000_006.0, "a request once the slot is due gets a new one"
    for now in (start, 1_000_001.99, 1_000_003.5):
        assert 2.0 <= refresh_run_at(now, 2.0) - now <= 4.0
    assert refresh_run_at(start, 0) == start


def ms(
    key: int,
    state: str = "open",
    *,
    closed_at: str | None = None,
    counts: tuple[int, int] = (1, 0),
    title: str = "v1",
) -> Milestone:
    return Milestone(key, title, state, "", counts[0], counts[1], closed_at)  # type: ignore[arg-type]


def seen(key: int, data: DashboardData | None, *, state: str = "open", title: str = "v1") -> SeenDashboard:
    return SeenDashboard(100 + key, dashboard_title(title), state, data)


def plan(
    milestones: list[Milestone], dashboards: dict[int, SeenDashboard], forge: str = "gitea", **kw: object
) -> list[tuple[str, int, float]]:
    actions = watch_plan(milestones, dashboards, forge=forge, now=NOW, grace=60, internal={}, **kw)  # type: ignore[arg-type]
    return [(a.what, a.key, a.delay) for a in actions]


def test_the_periodic_job_notices_a_closure_it_has_not_settled() -> None:
    data = DashboardData(1, counts=(1, 0), internal=False)
    assert plan([ms(1, "closed", closed_at=CLOSED_AT)], {1: seen(1, data)}) == [("gate", 1, 30.0)]
    # Settled already: nothing (the dashboard is closed with the milestone).
    settled = DashboardData(1, "closed", CLOSED_AT, counts=(1, 0), internal=False)
    assert plan([ms(1, "closed", closed_at=CLOSED_AT)], {1: seen(1, settled, state="closed")}) == []
    # On GitHub the webhook's job has it, until well past the grace period.
    assert plan([ms(1, "closed", closed_at=CLOSED_AT)], {1: seen(1, data)}, forge="github") == []
    old = "2026-12-01T11:50:00Z"
    assert plan([ms(1, "closed", closed_at=old)], {1: seen(1, data)}, forge="github") == [("gate", 1, 0.0)]


def test_steward_never_reopens_history() -> None:
    """A closed milestone without a dashboard was never tracked, and one whose data block a person destroyed
    is refreshed, not gated."""
    assert plan([ms(1, "closed", closed_at=CLOSED_AT)], {}) == []
    assert plan([ms(1, "closed", closed_at=CLOSED_AT)], {1: seen(1, None)}) == [("refresh", 1, 0.0)]


def test_a_closure_since_steward_last_looked_is_checked_even_without_a_dashboard() -> None:
    """Issue 27: a milestone closed before Steward's first look (or while it was not running) is checked —
    one closed after the last poll, less one period of overlap; before it, it is history. An empty one
    was never tracked."""
    closed = ms(1, "closed", closed_at=CLOSED_AT)
    assert plan([closed], {}, since=NOW - timedelta(minutes=5)) == [("gate", 1, 30.0)]
    assert plan([closed], {}, since=NOW + timedelta(seconds=20)) == [("gate", 1, 30.0)], "the overlap"
    assert plan([closed], {}, since=NOW + timedelta(minutes=5)) == [], "closed before Steward looked"
    empty = ms(1, "closed", closed_at=CLOSED_AT, counts=(0, 0))
    assert plan([empty], {}, since=NOW - timedelta(minutes=5)) == []
    assert plan([ms(1, "closed", closed_at=None)], {}, since=NOW - timedelta(minutes=5)) == []
    # On GitHub the webhook has it (the periodic job steps in only well past the grace period).
    assert plan([closed], {}, forge="github", since=NOW - timedelta(minutes=5)) == []
    assert closed_since(CLOSED_AT, NOW) and not closed_since(CLOSED_AT, None)


def test_the_periodic_job_refreshes_dashboards_that_fell_behind() -> None:
    current = DashboardData(1, counts=(1, 0), internal=False)
    assert plan([ms(1)], {1: seen(1, current)}) == [], "up to date: nothing"
    assert plan([ms(1, counts=(0, 1))], {1: seen(1, current)}) == [("refresh", 1, 0.0)], "counts moved"
    assert plan([ms(1, title="v1.1")], {1: seen(1, current)}) == [("refresh", 1, 0.0)], "renamed"
    assert plan(
        [ms(1)], {1: seen(1, DashboardData(1, "closed", CLOSED_AT, counts=(1, 0), internal=False))}
    ) == [("refresh", 1, 0.0)], "reopened"
    assert plan([ms(1)], {1: seen(1, current, state="closed")}) == [("refresh", 1, 0.0)], "dashboard closed"
    settled = DashboardData(1, "closed", CLOSED_AT, counts=(1, 0), internal=False)
    reopened_board = seen(1, settled, state="open")
    assert plan([ms(1, "closed", closed_at=CLOSED_AT)], {1: reopened_board}) == [("refresh", 1, 0.0)], (
        "a person reopened the dashboard of a closed milestone"
    )
    assert plan([ms(2, counts=(3, 1))], {}) == [("refresh", 2, 0.0)], "items but no dashboard yet"
    assert plan([ms(2, counts=(0, 0))], {}) == [], "no items, no dashboard"
    assert plan([], {1: seen(1, current)}, gone=[1]) == [("refresh", 1, 0.0)], "milestone deleted"
    internal = watch_plan(
        [ms(1)], {1: seen(1, current)}, forge="gitea", now=NOW, grace=60, internal={1: True}
    )
    assert [(a.what, a.key) for a in internal] == [("refresh", 1)], "description now says internal"


def test_gate_promise_arguments() -> None:
    """Issue 36 §6: `/gate promise add <text> — #<scenario>` (an em dash, `--`, `-` or nothing before the
    scenario) and `/gate promise remove <n>`; anything else is a usage error naming both forms."""

    def parse(text: str) -> tuple[str, str, int]:
        request = parse_gate(tuple(text.split()), text)
        return request.action, request.reason, request.number

    assert parse("promise add Orders export as CSV — #12") == ("promise-add", "Orders export as CSV", 12)
    assert parse("PROMISE add Export\n  works -- #3") == ("promise-add", "Export works", 3)
    assert parse("promise add Import #1 then #7") == ("promise-add", "Import #1 then", 7)
    assert parse("promise remove 2") == ("promise-remove", "", 2)
    assert parse("promise remove #2") == ("promise-remove", "", 2)
    assert len(parse("promise add " + "x" * 1000 + " — #4")[1]) == 200
    for wrong in (
        "promise",
        "promise list",
        "promise add — #4",
        "promise add no scenario",
        "promise add x #0",
    ):
        with pytest.raises(UsageError, match="promise add <text>"):
            parse(wrong)
    for wrong in ("promise remove", "promise remove two", "promise remove 0", "promise remove 1 2"):
        with pytest.raises(UsageError, match="promise's number"):
            parse(wrong)


def test_a_promise_list_survives_its_record_and_a_mangled_one_is_dropped_item_by_item() -> None:
    from handlers.milestones.state import Promise

    kept = Promise("Export works", 12, "maintainer", "2026-12-02T10:00:00Z", 77, "ab" * 32)
    data = DashboardData(4, promises=(kept,))
    assert DashboardData.from_json(data.to_json(), 4).promises == (kept,)
    assert DashboardData.from_json(DashboardData(4).to_json(), 4).promises is None, "no list: today's rule"
    raw = data.to_json() | {"promises": [kept.to_json(), {"text": "no scenario"}, "junk"]}
    assert DashboardData.from_json(raw, 4).promises == (kept,)
