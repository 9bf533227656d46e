"""The pure rules of the catch-up: which deliveries failed for good, which issues are Steward's to
re-derive, and `--since` durations."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.catchup.reconcile import concerns_steward
from bot.catchup.redeliver import failed_deliveries
from bot.cli.operator import parse_duration
from bot.config.settings import HandlerSettings
from bot.forge import HookDelivery, Issue


def _delivery(n: int, guid: str, status: int, redelivery: bool = False) -> HookDelivery:
    return HookDelivery(n, guid, f"2026-11-30T10:00:{n:02d}Z", status, "issues", "labeled", redelivery)


def test_a_delivery_that_arrived_on_any_attempt_is_not_redelivered() -> None:
    deliveries = [
        _delivery(5, "a", 200, redelivery=True),  # newest first, as GitHub lists them
        _delivery(4, "b", 503),
        _delivery(3, "a", 503),
        _delivery(2, "c", 0),  # never connected
        _delivery(1, "b", 502),
    ]
    failed = failed_deliveries(deliveries)
    assert [d.guid for d in failed] == ["b", "c"]
    assert [d.id for d in failed] == [4, 2], "the latest attempt of each is the one redelivered"


@given(st.lists(st.tuples(st.sampled_from("abcdef"), st.sampled_from([0, 200, 202, 404, 500, 503]))))
def test_failed_deliveries_are_unique_and_never_arrived(attempts: list[tuple[str, int]]) -> None:
    deliveries = [_delivery(i, guid, status) for i, (guid, status) in enumerate(attempts)]
    failed = failed_deliveries(deliveries)
    assert len({d.guid for d in failed}) == len(failed)
    arrived = {g for g, s in attempts if 200 <= s < 300}
    assert {d.guid for d in failed} == {g for g, _ in attempts} - arrived


@pytest.mark.parametrize(
    ("labels", "concerned"),
    [
        ((), False),
        (("good first issue",), False),
        (("refine",), True),
        (("Refine",), True),
        (("refinement:rejected",), True),
        (("forks:open",), True),
        (("steward:config-error",), True),
        (("milestone-dashboard",), True),
        (("bugfix:red",), True),
    ],
)
def test_which_issues_are_stewards(labels: tuple[str, ...], concerned: bool) -> None:
    issue = Issue(1, "t", "", "open", "someone", labels)
    assert concerns_steward(issue, HandlerSettings()) is concerned


def test_a_renamed_trigger_label_is_followed() -> None:
    settings = HandlerSettings.model_validate({"backlog": {"refine_label": "needs-spec"}})
    assert concerns_steward(Issue(1, "t", "", "open", "x", ("needs-spec",)), settings)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90", 90), ("90s", 90), ("30m", 1800), ("6h", 21600), ("2d", 172800), ("1w", 604800), (" 1.5H ", 5400)],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "h", "-1h", "1y", "1h30m", "soon"])
def test_bad_durations_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration(text)
