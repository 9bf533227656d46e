"""What CI says of a commit (bot.forge.ci): pure rules over commit statuses and check runs, no I/O."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.forge import CheckRun, CIOutcome, CommitStatus
from bot.forge.ci import SEVERITY, check_outcome, ci_state, status_outcome


def status(context: str, state: str, *, at: str = "2026-01-01T00:00:00Z", ident: int = 1) -> CommitStatus:
    return CommitStatus(context=context, state=state, updated_at=at, id=ident)


def check(name: str, conclusion: str | None, *, status: str = "completed", ident: int = 1) -> CheckRun:
    return CheckRun(name=name, status=status, conclusion=conclusion, id=ident)


@pytest.mark.parametrize(
    ("state", "outcome"),
    [("success", "green"), ("failure", "red"), ("error", "inconclusive"), ("pending", "pending")],
)
def test_a_status_state_has_one_outcome(state: str, outcome: CIOutcome) -> None:
    assert status_outcome(state, required=False) == outcome
    assert status_outcome(state, required=True) == outcome


@pytest.mark.parametrize(
    ("conclusion", "optional", "required"),
    [
        ("success", "green", "green"),
        ("failure", "red", "red"),
        ("neutral", "green", "inconclusive"),
        ("skipped", "green", "inconclusive"),
        ("cancelled", "inconclusive", "inconclusive"),
        ("timed_out", "inconclusive", "inconclusive"),
        ("action_required", "inconclusive", "inconclusive"),
        ("stale", "inconclusive", "inconclusive"),
        ("something_new", "inconclusive", "inconclusive"),
    ],
)
def test_a_check_run_conclusion_counts_by_whether_the_context_is_required(
    conclusion: str, optional: CIOutcome, required: CIOutcome
) -> None:
    assert check_outcome("completed", conclusion, required=False) == optional
    assert check_outcome("completed", conclusion, required=True) == required


@pytest.mark.parametrize("status_word", ["queued", "in_progress", "waiting", "requested", "pending"])
def test_a_check_run_that_has_not_completed_is_pending(status_word: str) -> None:
    assert check_outcome(status_word, None, required=True) == "pending"


def test_giteas_extra_states_warning_and_skipped() -> None:
    assert status_outcome("warning", required=False) == "inconclusive"
    assert status_outcome("skipped", required=False) == "green"
    assert status_outcome("skipped", required=True) == "inconclusive"


def test_statuses_and_check_runs_are_read_together() -> None:
    """FORGE-FACTS: GitHub Actions results are check runs, not statuses; "CI is green" must read both."""
    state = ci_state("abc", [status("ci/legacy", "success")], [check("build", "failure")])
    assert state.contexts == {"ci/legacy": "green", "build": "red"}
    assert state.verdict == "red"


def test_a_missing_required_context_is_pending() -> None:
    state = ci_state("abc", [status("ci/unit", "success")], [], required_contexts=["ci/unit", "ci/e2e"])
    assert state.contexts == {"ci/unit": "green", "ci/e2e": "pending"}
    assert state.verdict == "pending" and state.outcome("ci/e2e") == "pending"


def test_steward_never_counts_its_own_contexts() -> None:
    state = ci_state(
        "abc",
        [status("steward/refinement", "failure"), status("ci", "success")],
        [check("Steward/Bugfix", "failure")],
        required_contexts=["steward/refinement"],
    )
    assert state.contexts == {"ci": "green"} and state.verdict == "green"


def test_the_latest_report_of_a_context_wins() -> None:
    state = ci_state(
        "abc",
        [
            status("ci", "success", at="2026-01-01T00:00:02Z", ident=2),
            status("ci", "failure", at="2026-01-01T00:00:01Z", ident=1),
        ],
        [check("build", "failure", ident=7), check("build", "success", ident=9)],
    )
    assert state.contexts == {"ci": "green", "build": "green"}


def test_a_context_reported_both_ways_takes_the_worse() -> None:
    state = ci_state("abc", [status("build", "success")], [check("build", None, status="in_progress")])
    assert state.contexts == {"build": "pending"}


def test_nothing_reported_is_pending() -> None:
    assert ci_state("abc", [], []).verdict == "pending"


def test_red_beats_pending_and_pending_beats_inconclusive() -> None:
    assert ci_state("s", [status("a", "failure"), status("b", "pending")]).verdict == "red"
    assert ci_state("s", [status("a", "error"), status("b", "pending")]).verdict == "pending"
    assert ci_state("s", [status("a", "error"), status("b", "success")]).verdict == "inconclusive"
    assert ci_state("s", [status("a", "success"), status("b", "success")]).verdict == "green"


STATES = st.sampled_from(["success", "failure", "error", "pending"])


@given(st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), STATES, min_size=1))
def test_the_verdict_is_the_worst_context(found: dict[str, str]) -> None:
    state = ci_state("s", [status(c, s) for c, s in found.items()])
    assert state.verdict == min(state.contexts.values(), key=SEVERITY.index)
