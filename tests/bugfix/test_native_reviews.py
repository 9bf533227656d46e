"""Native reviews beside the ledger and reviewers in conflict (issue 24 §4): pure rules, no I/O."""

from __future__ import annotations

from bot.forge import Review
from handlers.bugfix.ledger import Finding, Ledger, Round
from handlers.bugfix.native_reviews import Conflict, blocking, changes_requested, judge, shown, verdicts
from handlers.bugfix.render import ledger_text
from handlers.bugfix.status import evaluate
from tests.bugfix.test_status_and_ledger import CLEAN_ON_F, given_status

F1 = Finding("F1", "high", "src/cart.py:1", "the rate is hard-coded")
NIT = Finding("N1", "low", "src/cart.py:2", "naming")


def plain(text: str) -> str:
    """Steward's status text with its neutralised mentions (a word joiner after `@`) read plainly."""
    return text.replace("@\u2060", "@")


def review(user: str, state: str, commit: str | None = "f", rid: int = 1) -> Review:
    return Review(rid, user, state, commit)  # type: ignore[arg-type]


def test_an_approval_spends_no_round_and_changes_nothing() -> None:
    approved = evaluate(given_status(native=(review("amy", "approved"),)))
    assert (approved.state, approved.code) == ("pending", "AWAITING_REVIEW")
    assert approved == evaluate(given_status())
    clean = evaluate(given_status(ledger=CLEAN_ON_F, native=(review("amy", "approved"),)))
    assert clean.state == "success"


def test_a_request_for_changes_on_the_head_keeps_the_status_pending_until_a_round_settles_it() -> None:
    asking = (review("amy", "changes_requested"),)
    waiting = evaluate(given_status(native=asking))
    assert (waiting.state, waiting.code) == ("pending", "CHANGES_REQUESTED")
    assert "@amy requested changes on the head" in plain(waiting.description)
    inconclusive = Ledger().apply(Round(1, "rev", "f", "inconclusive", reason="ran out of time"))
    assert evaluate(given_status(ledger=inconclusive, native=asking)).code == "CHANGES_REQUESTED"
    findings = Ledger().apply(Round(1, "rev", "f", "findings", (F1,)))
    agreed = evaluate(given_status(ledger=findings, native=asking))
    assert agreed.code == "AWAITING_REVIEW" and "dispositions of F1" in agreed.description


def test_only_each_reviewer_s_latest_verdict_on_the_head_counts() -> None:
    older_head = (review("amy", "changes_requested", commit="r"),)
    assert evaluate(given_status(native=older_head)).code == "AWAITING_REVIEW"
    withdrawn = (review("amy", "changes_requested", rid=1), review("amy", "approved", rid=2))
    assert changes_requested(withdrawn, "f") == []
    # A comment-only review changes no verdict (on both forges).
    kept = (review("amy", "changes_requested", rid=1), review("amy", "commented", rid=2))
    assert [r.id for r in changes_requested(kept, "f")] == [1]
    assert [r.id for r in verdicts(kept)] == [1]
    # A review the forge does not place on a commit is read as being on the head.
    assert changes_requested((review("amy", "changes_requested", commit=None),), "f")


def test_a_request_for_changes_against_a_clean_round_stops_the_review_and_names_whom_to_ask() -> None:
    status = evaluate(
        given_status(
            ledger=CLEAN_ON_F,
            native=(review("amy", "changes_requested"),),
            escalate_to=("lead",),
            bug_author="reporter",
        )
    )
    assert (status.state, status.code) == ("failure", "REVIEWERS_IN_CONFLICT")
    assert "@rev reviewed f clean in round 1 and @amy requested changes" in plain(status.description)
    assert "@lead @reporter" in plain(status.detail) and "`debug.escalate_to`" in status.detail


def test_two_review_rounds_in_conflict_stop_the_review() -> None:
    conflict = Conflict(9, "amy", "f", (F1,))
    status = evaluate(given_status(ledger=CLEAN_ON_F, conflicts=(conflict,), bug_author="reporter"))
    assert (status.state, status.code) == ("failure", "REVIEWERS_IN_CONFLICT")
    assert "@amy reports blocking findings on it (F1)" in plain(status.description)
    # On a new head the conflict is history: a new round decides.
    assert judge(CLEAN_ON_F, (), (conflict,), "g").state == "none"
    assert Conflict.from_json(conflict.to_json()) == conflict
    assert Conflict.from_json({"type": "review"}) is None and Conflict.from_json([]) is None
    assert blocking((F1, NIT)) == (F1,)


def test_the_ledger_shows_native_reviews_with_their_head() -> None:
    reviews = (review("amy", "approved", commit="r" * 40, rid=1), review("bob", "changes_requested", rid=2))
    status = evaluate(given_status(native=reviews))
    text = ledger_text(
        number=1, status=status, ledger=Ledger(), red_sha="r", head_sha="f", red_ci="red", head_ci="green",
        native=reviews,
    )  # fmt: skip
    assert "**Native reviews** (they spend no review round" in text
    assert "| @bob | requested changes | `f` | yes |" in text
    assert "| @amy | approved | `rrrrrrrrrr` | no (an earlier head) |" in text
    assert "review rounds 0/5" in text
    assert shown((review("amy", "commented"),), "f") == []
