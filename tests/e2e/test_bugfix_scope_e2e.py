"""The fix stays in scope (issue 36 §2), end to end on both forges: a fix commit that changes a file the
confirmed hypothesis's evidence does not name, a sensitive file (a lockfile), or the regression test as the
red commit added it keeps `steward/regression-first` pending with `FIX_OUT_OF_SCOPE` until someone with
maintain access who did not make or move the branch accepts it with `/scope <reason>` (recorded in the
ledger), or the evidence on the bug is extended to name the file."""

from __future__ import annotations

import pytest

from tests.bugfix.bodies import TEST_CODE
from tests.e2e.conftest import Steward
from tests.e2e.test_bugfix_e2e import (
    FIX,
    RED_SAYS,
    file_text,
    opened,
    play_ci,
    push,
    repo_with_ci,
    run,
    state_of,
    sticky_of,
)

RATES = "def convert(total, rate):\n    return total * rate\n"


def red_proven(steward: Steward) -> tuple[str, int, int, str]:
    """A bugfix pull request whose red commit failed naming the regression test: (repo, bug, pr, branch).
    The triager may maintain the repository (admin: Gitea has no maintain level)."""
    repo = repo_with_ci(steward)
    steward.maintainer.add_collaborator(repo, "triager", "admin")
    number, pr, branch, red = opened(steward, repo)
    play_ci(steward, repo, red, "failure", says=RED_SAYS)
    assert state_of(steward, repo, pr) == ("pending", "awaiting the fix: push a commit that changes the code")
    return repo, number, pr, branch


def test_a_fix_beyond_its_evidence_waits_for_an_independent_maintainer(steward: Steward) -> None:
    repo, _, pr, branch = red_proven(steward)
    steward.maintainer.put_file(repo, "src/cart/rates.py", RATES)  # on the default branch
    steward.settle()

    fix = push(
        steward, repo, branch, "src/cart/rates.py", RATES.replace("total * rate", "total * rate * 0.9")
    )
    assert state_of(steward, repo, pr) == (
        "pending",
        "fix out of scope: files the evidence does not name: src/cart/rates.py",
    )
    ledger = sticky_of(steward, repo, pr, "bugfix-ledger")
    assert (
        ledger is not None
        and "`/scope <reason>`" in ledger["body"]
        and "`src/cart/rates.py`" in ledger["body"]
    )

    reply = run(steward, repo, pr, "/scope the rate is where the discount is lost")
    assert "SCOPE_BY_COMMITTER" in reply, "whoever made or moved the fix does not widen it"
    reply = run(steward, repo, pr, "/scope trust me", by="outsider")
    assert "can only be run by" in reply
    reply = run(steward, repo, pr, "/scope", by="triager")
    assert "say why the fix may go beyond its evidence" in reply
    reply = run(steward, repo, pr, "/scope the rate conversion is where the discount is lost", by="triager")
    assert (
        "Recorded: the fix may go beyond its evidence for `src/cart/rates.py` — accepted by @triager" in reply
    )
    assert state_of(steward, repo, pr)[1].startswith("awaiting green CI on the head")
    ledger = sticky_of(steward, repo, pr, "bugfix-ledger")
    assert ledger is not None and "**Scope accepted**" in ledger["body"]
    assert "the rate conversion is where the discount is lost — @triager" in ledger["body"]

    # A later commit that changes a lockfile needs acceptance again, even though the first was accepted.
    push(steward, repo, branch, "poetry.lock", "# locked\n")
    state = state_of(steward, repo, pr)
    assert state == ("pending", "fix out of scope: sensitive files: poetry.lock")
    run(steward, repo, pr, "/scope the lockfile pins the fixed rates library", by="triager")
    assert state_of(steward, repo, pr)[1].startswith("awaiting green CI on the head")
    assert fix


def test_evidence_extended_to_the_file_brings_the_fix_in_scope(steward: Steward) -> None:
    repo, number, pr, branch = red_proven(steward)
    steward.maintainer.put_file(repo, "src/cart/rates.py", RATES)
    steward.settle()
    fix = push(
        steward, repo, branch, "src/cart/rates.py", RATES.replace("total * rate", "total * rate * 0.9")
    )
    assert state_of(steward, repo, pr)[1].startswith("fix out of scope")

    steward.maintainer.comment(repo, number, "/evidence H1 for src/cart/rates.py:2 converts after the drop")
    steward.settle()
    play_ci(steward, repo, fix, "success")  # the next sync of the pull request reads the evidence again
    assert state_of(steward, repo, pr)[1].startswith("awaiting a review round on the head")


@pytest.mark.handler_settings(bugfix={"max_commits_after_red": 3})
def test_an_edit_to_the_regression_test_needs_acceptance_new_tests_do_not(steward: Steward) -> None:
    repo, _, pr, branch = red_proven(steward)
    push(steward, repo, branch, "src/cart/total.py", FIX)
    assert state_of(steward, repo, pr)[1].startswith("awaiting green CI on the head"), "the evidence's file"

    test_path = "tests/test_currency_switch.py"
    text = file_text(steward, repo, test_path, branch)
    assert text is not None and TEST_CODE in text
    added = text + "\n\ndef test_rates_are_positive():\n    assert 0.9 > 0\n"
    second = push(steward, repo, branch, test_path, added)
    assert state_of(steward, repo, pr)[1].startswith("awaiting green CI on the head"), "a new test is fine"

    # The test's own body edited in place (its assertion kept: only the edit is at stake here).
    kept = "    assert total_after_switch() == 76.5\n"
    edited = added.replace(kept, "    rate = 1\n" + kept)
    steward.maintainer.put_file(repo, test_path, edited, branch=branch)
    steward.settle()
    state = state_of(steward, repo, pr)
    assert state == ("pending", "fix out of scope: the regression test as committed"), state
    run(steward, repo, pr, "/scope the test needed the rate fixture", by="triager")
    assert state_of(steward, repo, pr)[1].startswith("awaiting green CI on the head")
    assert second


@pytest.mark.handler_settings(bugfix={"max_fix_lines": 40})
def test_a_fix_over_its_size_budget_waits_for_acceptance(steward: Steward) -> None:
    repo, _, pr, branch = red_proven(steward)
    # The evidence's own file, rewritten: its 43 lines go, 2 come (45 changed lines, over a budget of 40).
    fix = push(steward, repo, branch, "src/cart/total.py", FIX)
    assert state_of(steward, repo, pr) == ("pending", "fix out of scope: 45 changed lines (at most 40)")
    reply = run(steward, repo, pr, "/scope the module is rewritten on purpose", by="triager")
    assert "for the fix's size (45 changed lines) — accepted by @triager" in reply
    assert state_of(steward, repo, pr)[1].startswith("awaiting green CI on the head")
    ledger = sticky_of(steward, repo, pr, "bugfix-ledger")
    assert (
        ledger is not None and "the fix's size (45 changed lines): the module is rewritten" in ledger["body"]
    )
    assert fix
