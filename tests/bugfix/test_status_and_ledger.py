"""The `steward/regression-first` status as a pure function, and the review ledger's state machine
(rounds, dispositions, budgets) — issue 13."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.config.settings import BugfixSettings
from bot.forge import ChangedFile, CIOutcome
from handlers.bugfix.effects import ledger_data
from handlers.bugfix.gate import UsageError
from handlers.bugfix.ledger import (
    Budgets,
    DispositionRecord,
    Finding,
    Gap,
    Ledger,
    RedProof,
    Round,
    event_from_json,
    event_to_json,
    fold,
    parse_disposition,
    parse_review,
)
from handlers.bugfix.render import exhausted_note, ledger_text
from handlers.bugfix.status import BranchCommit, RegressionStatus, StatusInput, committers_after_red, evaluate

GLOBS = BugfixSettings().test_globs
TEST = "tests/test_cart.py"


def commit(sha: str, *paths: str, parents: int = 1, author: str = "dev") -> BranchCommit:
    return BranchCommit(
        sha, tuple(f"p{i}" for i in range(parents)), tuple(ChangedFile(p, "modified") for p in paths), author
    )


RED = commit("r", TEST, author="steward-bot")
FIX = commit("f", "src/cart.py")
CASES = frozenset({"test_a", "test_b"})


def given_status(
    commits: list[BranchCommit] | None = None,
    red_ci: CIOutcome | None = "red",
    head_ci: CIOutcome | None = "green",
    ledger: Ledger | None = None,
    head_cases: frozenset[str] | None = CASES,
    **changes: object,
) -> StatusInput:
    value = StatusInput(
        commits=[RED, FIX] if commits is None else commits,
        test_globs=GLOBS,
        test_path=TEST,
        red_ci=red_ci,
        head_ci=head_ci,
        red_cases=CASES,
        head_cases=head_cases,
        max_commits_after_red=2,
        ledger=ledger or Ledger(),
    )
    return replace(value, **changes)  # type: ignore[arg-type]


CLEAN_ON_F = Ledger().apply(Round(1, "rev", "f", "clean"))


def test_the_whole_sequence() -> None:
    assert evaluate(given_status([RED], red_ci="pending")).code == "AWAITING_RED"
    assert evaluate(given_status([RED], red_ci="red")).code == "AWAITING_FIX"
    assert evaluate(given_status(head_ci="pending")).code == "AWAITING_GREEN_HEAD"
    assert evaluate(given_status(head_ci="red")).code == "AWAITING_GREEN_HEAD"
    awaiting = evaluate(given_status())
    assert (awaiting.state, awaiting.code) == ("pending", "AWAITING_REVIEW")
    done = evaluate(given_status(ledger=CLEAN_ON_F))
    assert (done.state, done.code, done.description) == ("success", "SUCCESS", "proof in order, review clean")


def test_failures() -> None:
    mixed = commit("r", TEST, "src/cart.py")
    assert evaluate(given_status([mixed, FIX])).code == "RED_TOUCHES_CODE"
    assert evaluate(given_status(head_cases=None)).code == "TEST_FILE_DELETED"
    removed = evaluate(given_status(head_cases=frozenset({"test_a", "test_c"})))
    assert (removed.state, removed.code) == (
        "failure",
        "TEST_CASES_REMOVED",
    ) and "test_b" in removed.description
    green_first = evaluate(given_status([RED], red_ci="green"))
    assert green_first.state == "failure"
    assert green_first.description == "the test passes before the fix — it does not reproduce the bug"
    other_test = commit("r2", "tests/test_other.py")
    assert evaluate(given_status([other_test, FIX])).code == "RED_WITHOUT_TEST"
    many = [RED, FIX, commit("g", "src/cart.py"), commit("h", "src/cart.py")]
    assert evaluate(given_status(many)).code == "TOO_MANY_COMMITS"


def test_inconclusive_ci_on_the_red_commit_waits_with_a_note_to_rerun() -> None:
    status = evaluate(given_status([RED], red_ci="inconclusive"))
    assert (status.state, status.code) == ("pending", "AWAITING_RED") and "re-run" in status.description


def test_a_disclosed_gap_stands_in_for_red_proof() -> None:
    ledger = Ledger().apply(Gap(5, "maint", "needs a browser"))
    assert evaluate(given_status([RED, FIX], red_ci="green", ledger=ledger)).code == "AWAITING_REVIEW"


def test_merge_commits_from_the_base_are_ignored() -> None:
    merge = commit("m", "src/other.py", "docs/x.md", parents=2)
    status = evaluate(given_status([RED, merge, FIX, commit("z", "docs/y.md", parents=2)]))
    assert status.code == "AWAITING_REVIEW"
    assert evaluate(given_status([RED, merge], red_ci="red")).code == "AWAITING_FIX"


def test_root_cause_not_evidenced_comes_right_after_rule_1() -> None:
    status = evaluate(given_status(root_cause_evidenced=False, ledger=CLEAN_ON_F))
    assert (status.state, status.description) == ("pending", "pending: root cause not evidenced")
    mixed = commit("r", TEST, "src/cart.py")
    assert evaluate(given_status([mixed, FIX], root_cause_evidenced=False)).code == "RED_TOUCHES_CODE"


def test_forks_the_juror_cannot_check_keep_the_status_pending_with_infra_error() -> None:
    """Issue 36 §8: a juror that cannot check (the forge will not say who may decide) fails closed — pending,
    even over a clean review and an undecided fork elsewhere; the code `INFRA_ERROR` is for the record (the
    ledger's data and its folded part), people read who must act."""
    url = "https://forge.example/o/r/issues/12"
    unchecked = given_status(ledger=CLEAN_ON_F, unchecked=(("#12", url),), decisions=(("F1 on #13", ""),))
    status = evaluate(unchecked)
    assert (status.state, status.code) == ("pending", "INFRA_ERROR")
    assert status.description == (
        "pending: a repository admin must let Steward read who may decide — decisions on #12 cannot be "
        "checked"
    )
    assert "INFRA_ERROR" not in status.description + status.detail and url in status.detail
    data = ledger_data(12, CLEAN_ON_F, status=status)
    assert data is not None and data["status"] == {"state": "pending", "code": "INFRA_ERROR"}
    assert "status" not in (ledger_data(12, CLEAN_ON_F) or {}), "the bug's copy carries no status"
    text = ledger_text(
        number=12, status=status, ledger=CLEAN_ON_F, red_sha="r", head_sha="f", red_ci="red", head_ci="green"
    )
    shown, folded = text.split("<details><summary>Status record</summary>")
    assert "INFRA_ERROR" not in shown
    assert "by the rule `INFRA_ERROR` — a check Steward could not make" in folded
    assert evaluate(replace(unchecked, unchecked=())).code == "DECISION_PENDING"


def test_an_exhausted_budget_fails_the_status() -> None:
    ledger = Ledger(Budgets(review_rounds=1)).apply(
        Round(1, "rev", "f", "findings", (Finding("F1", "high", "a.py:1", "x"),))
    )
    assert evaluate(given_status(ledger=ledger)).code == "BUDGET_EXHAUSTED"


def test_who_committed_after_the_red_commit() -> None:
    assert committers_after_red(
        [RED, commit("f", "a.py", author="Ann"), commit("m", "b", parents=2, author="bob")]
    ) == {"ann"}


outcomes = st.sampled_from(["green", "red", "inconclusive", "pending", None])
paths = st.sampled_from([TEST, "tests/test_other.py", "src/cart.py", "README.md"])
commits_strategy = st.lists(
    st.builds(
        lambda i, ps, merge: commit(f"c{i}", *ps, parents=2 if merge else 1),
        st.integers(0, 10**6),
        st.lists(paths, min_size=1, max_size=3, unique=True),
        st.booleans(),
    ),
    max_size=6,
)


@given(commits_strategy, outcomes, outcomes, st.booleans())
def test_the_status_is_always_one_of_three_and_fits_github(
    commits: list[BranchCommit], red_ci: CIOutcome | None, head_ci: CIOutcome | None, evidenced: bool
) -> None:
    status = evaluate(given_status(commits, red_ci, head_ci, root_cause_evidenced=evidenced))
    assert status.state in ("pending", "success", "failure")
    assert 0 < len(status.description) <= 140
    if status.state == "success":
        assert red_ci == "red" and head_ci == "green"


# --- the ledger ---------------------------------------------------------------------------------------------

F1 = Finding("F1", "high", "src/cart.py:10", "promotions dropped")
F2 = Finding("F2", "low", "src/cart.py:20", "naming")


def test_a_round_with_findings_needs_a_disposition_for_each_before_the_next() -> None:
    ledger = Ledger().apply(Round(1, "rev", "h1", "findings", (F1, F2)))
    assert ledger.review_state("h1") == "awaiting dispositions of F1, F2"
    refused = ledger.check_review(head="h2", actor="rev", committers=())
    assert refused is not None and refused.code == "DISPOSITIONS_MISSING" and "`F1`, `F2`" in refused.message
    n, problem = ledger.check_disposition("F1", "low")
    assert n == 1 and problem is not None and problem.code == "SEVERITY_LOWERED"
    assert ledger.check_disposition("F2", "low") == (1, None)
    assert ledger.check_disposition("F9", "fix")[1] is not None
    ledger = ledger.apply(DispositionRecord(2, "dev", "F1", "fix", "will fix", 1))
    ledger = ledger.apply(DispositionRecord(3, "dev", "F2", "low", "cosmetic", 1))
    assert ledger.review_state("h1") == "awaiting the fix of F1: push a new head"
    assert ledger.check_review(head="h2", actor="rev", committers=()) is None
    ledger = ledger.apply(Round(4, "rev", "h2", "clean"))
    assert ledger.fix_cycles_used == 1 and ledger.review_state("h2") == "complete"
    assert ledger.completion() == "CLEAN_WITH_RESIDUALS"
    [residual] = ledger.residuals()
    assert (residual.finding.id, residual.disposition, residual.reason) == ("F2", "low", "cosmetic")


def test_the_same_head_is_never_reviewed_twice_except_once_after_inconclusive() -> None:
    ledger = Ledger().apply(Round(1, "rev", "h1", "clean"))
    refused = ledger.check_review(head="h1", actor="rev", committers=())
    assert refused is not None and refused.code == "SAME_HEAD_REVIEWED"
    ledger = Ledger().apply(Round(1, "rev", "h1", "inconclusive", reason="CI flaked"))
    assert ledger.check_review(head="h1", actor="rev", committers=()) is None
    ledger = ledger.apply(Round(2, "rev", "h1", "inconclusive", reason="again"))
    assert ledger.retries_used == 1
    refused = ledger.check_review(head="h1", actor="rev", committers=())
    assert refused is not None and refused.code in ("RETRY_SPENT", "BUDGET_EXHAUSTED")


def test_whoever_committed_after_red_does_not_review() -> None:
    refused = Ledger().check_review(head="h1", actor="Dev", committers={"dev"})
    assert refused is not None and refused.code == "REVIEWER_COMMITTED"


def test_a_severity_is_never_lowered_in_a_later_round() -> None:
    ledger = Ledger().apply(Round(1, "rev", "h1", "findings", (F1,)))
    ledger = ledger.apply(DispositionRecord(2, "dev", "F1", "fix", "ok", 1))
    refused = ledger.check_review(
        head="h2", actor="rev", committers=(), findings=(replace(F1, severity="low"),)
    )
    assert refused is not None and refused.code == "SEVERITY_LOWERED"


def _findings_rounds(n: int, budgets: Budgets | None = None) -> Ledger:
    ledger = Ledger(budgets or Budgets())
    for i in range(n):
        ledger = ledger.apply(Round(10 * i + 1, "rev", f"h{i}", "findings", (F1,)))
        if i < n - 1:
            ledger = ledger.apply(DispositionRecord(10 * i + 2, "dev", "F1", "fix", "ok", i + 1))
    return ledger


def test_the_fifth_round_with_findings_exhausts_the_budget() -> None:
    four = _findings_rounds(4)
    assert not four.exhausted and four.fix_cycles_used == 3
    five = _findings_rounds(5)
    assert five.exhausted and five.fix_cycles_used == 4 and "5 review rounds" in five.exhaustion_reason
    refused = five.check_review(head="h9", actor="rev", committers=())
    assert refused is not None and refused.code == "BUDGET_EXHAUSTED"


def test_fix_cycles_run_out_before_rounds_when_the_budget_says_so() -> None:
    ledger = _findings_rounds(2, Budgets(review_rounds=5, fix_cycles=1))
    assert ledger.exhausted and "fix cycles" in ledger.exhaustion_reason


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["h1", "h2", "h3", "h4"]), st.sampled_from(["clean", "inconclusive", "findings"])
        ),
        max_size=12,
    )
)
def test_nothing_goes_past_the_budget(rounds: list[tuple[str, str]]) -> None:
    """Whatever reviewers try, a round is recorded only when ``check_review`` allows it, and then the counters
    never pass their budgets."""
    budgets = Budgets()
    ledger = Ledger(budgets)
    for i, (head, verdict) in enumerate(rounds):
        findings = (F1,) if verdict == "findings" else ()
        if ledger.check_review(head=head, actor="rev", committers=(), findings=findings) is not None:
            continue
        ledger = ledger.apply(Round(10 * i, "rev", head, verdict, findings))  # type: ignore[arg-type]
        if findings:
            ledger = ledger.apply(DispositionRecord(10 * i + 1, "dev", "F1", "fix", "ok", ledger.rounds_used))
        assert ledger.rounds_used <= budgets.review_rounds
        assert len(ledger.rounds) <= budgets.review_rounds + budgets.no_verdict_retries
        assert ledger.fix_cycles_used <= budgets.fix_cycles
        assert ledger.retries_used <= budgets.no_verdict_retries
        heads = [r.head for r in ledger.rounds]
        for j in range(1, len(heads)):
            if heads[j] == heads[j - 1]:
                assert ledger.rounds[j - 1].verdict == "inconclusive"


def test_a_no_verdict_retry_reuses_its_round_s_number() -> None:
    """Issue 24 §5 (seed: the retry "reuses its numbered batch"): it spends a retry, not a round."""
    ledger = Ledger().apply(Round(1, "rev", "h1", "inconclusive", reason="CI flaked"))
    ledger = ledger.apply(Round(2, "rev", "h1", "findings", (F1,)))
    assert [ledger.number_of(i) for i in (1, 2)] == [1, 1] and ledger.rounds_used == 1
    assert ledger.retries_used == 1
    assert ledger.check_disposition("F1", "fix") == (1, None)
    ledger = ledger.apply(DispositionRecord(3, "dev", "F1", "fix", "ok", 1))
    ledger = ledger.apply(Round(4, "rev", "h2", "clean"))
    assert ledger.number_of(3) == 2 and ledger.rounds_used == 2 and ledger.review_state("h2") == "complete"
    text = ledger_text(
        number=1, status=RegressionStatus("success", "SUCCESS", "ok"), ledger=ledger, red_sha="r",
        head_sha="h2", red_ci="red", head_ci="green",
    )  # fmt: skip
    assert "review rounds 2/5" in text and "| 1 | `h1` | @rev | inconclusive" in text
    assert "| 1 | `h1` | @rev | findings" in text and "| 2 | `h2` | @rev | clean" in text


def test_a_disposition_stands_and_only_moves_to_a_stricter_one() -> None:
    ledger = Ledger().apply(Round(1, "rev", "h1", "findings", (F2,)))
    ledger = ledger.apply(DispositionRecord(2, "dev", "F2", "low", "cosmetic", 1))
    _, refused = ledger.check_disposition("F2", "out-of-scope")
    assert refused is not None and refused.code == "DISPOSITION_STANDS" and "`fix`" in refused.message
    assert ledger.check_disposition("F2", "fix") == (1, None)
    # An event that got past the check anyway (written into a copy by hand) does not loosen it.
    looser = ledger.apply(DispositionRecord(3, "dev", "F2", "out-of-scope", "meh", 1))
    record = looser.disposition_of(1, "F2")
    assert record is not None and record.disposition == "low"
    stricter = looser.apply(DispositionRecord(4, "dev", "F2", "fix", "after all", 1))
    record = stricter.disposition_of(1, "F2")
    assert record is not None and record.disposition == "fix" and not stricter.residuals()


def test_a_committer_cannot_put_a_critical_finding_out_of_scope() -> None:
    critical = Finding("C1", "critical", "src/cart.py:9", "drops the discount for EUR")
    ledger = Ledger().apply(Round(1, "rev", "h1", "findings", (critical,)))
    _, refused = ledger.check_disposition("C1", "out-of-scope", actor="Dev", committers={"dev"})
    assert refused is not None and refused.code == "CRITICAL_OUT_OF_SCOPE_BY_COMMITTER"
    assert ledger.check_disposition("C1", "out-of-scope", actor="lead", committers={"dev"}) == (1, None)


def test_the_exhausted_note_does_not_suggest_ruling_findings_out_of_scope() -> None:
    note = exhausted_note(["marta"], _findings_rounds(5), "https://x/1", 7)
    assert "out-of-scope" not in note and "bugfix:merged-unproven" in note


# --- commands and records -----------------------------------------------------------------------------------


def test_parse_review() -> None:
    assert parse_review("clean").verdict == "clean"
    assert parse_review("inconclusive CI flaked").reason == "CI flaked"
    request = parse_review(
        "findings\nF1 high src/cart.py:10 promotions dropped\n- F2 info src/a.py:3 typo here"
    )
    assert request.findings == (F1, Finding("F2", "info", "src/a.py:3", "typo here"))
    for bad in ("", "maybe", "inconclusive", "findings", "findings\nF1 severe a.py:1 x",
                "findings\nF1 high a.py x y",
                "findings\nF1 high a.py:1 x\nF1 low a.py:2 y"):  # fmt: skip
        with pytest.raises(UsageError):
            parse_review(bad)


def test_parse_disposition() -> None:
    assert parse_disposition((), "F1 out-of-scope belongs to #12") == ("F1", "out-of-scope", "belongs to #12")
    for bad in ("F1 fix", "F1 ignore because", ""):
        with pytest.raises(UsageError):
            parse_disposition((), bad)


def test_events_read_back_and_fold_in_comment_order_once() -> None:
    events = [
        Round(7, "rev", "h1", "findings", (F1, F2)),
        DispositionRecord(9, "dev", "F1", "fix", "ok", 1),
        Gap(3, "maint", "no browser in CI"),
    ]
    back = [event_from_json(event_to_json(e)) for e in events]
    assert back == events
    ledger = fold(Budgets(), [*back, back[0]])  # type: ignore[list-item]
    assert [r.comment_id for r in ledger.rounds] == [7] and ledger.gaps[0].comment_id == 3
    assert event_from_json({"type": "review", "comment": "x"}) is None and event_from_json([1]) is None


def test_a_finding_reported_again_stops_the_review() -> None:
    ledger = Ledger().apply(Round(1, "rev", "h1", "findings", (F1,)))
    assert ledger.stop_reason == ""
    ledger = ledger.apply(DispositionRecord(2, "dev", "F1", "fix", "ok", 1))
    again = ledger.apply(Round(3, "rev", "h2", "findings", (replace(F1, id="G7"),)))
    assert "reported again in round 2 (first in round 1)" in again.stop_reason, "the same path:line"
    status = evaluate(given_status(ledger=again.apply(DispositionRecord(4, "dev", "G7", "fix", "ok", 2))))
    assert status.code == "REVIEW_STOPPED"


def test_review_names_the_head_it_reviewed() -> None:
    request = parse_review("abc1234def clean looks right")
    assert (request.sha, request.verdict) == ("abc1234def", "clean")
    assert parse_review("clean").sha == ""


def test_a_red_commit_whose_failure_names_no_test_waits_for_a_writer_to_confirm() -> None:
    unnamed = evaluate(given_status(red_named=False))
    assert (unnamed.state, unnamed.description) == ("pending", "red, but CI did not say which test failed")
    assert "`/red-proof ok`" in unnamed.detail
    assert evaluate(given_status(red_named=False, red_confirmed_by="lead")).code != "RED_UNNAMED"
    assert evaluate(given_status(red_named=True)).code != "RED_UNNAMED"
    proof = RedProof(7, "lead", "r")
    assert event_from_json(event_to_json(proof)) == proof
    assert fold(Budgets(), [proof]).red_confirmed_by("r") == "lead"
    assert fold(Budgets(), [proof]).red_confirmed_by("other") == ""
