"""The review loop stops for a product decision (issue 36 §5, seed 001), end to end on both forges: a design
fork opened on the bug after `/bugfix` keeps `steward/regression-first` pending with `DECISION_PENDING`,
naming the fork and linking where it is, until it is decided; the same for a fork opened on the pull
request."""

from __future__ import annotations

from tests.e2e.conftest import Steward
from tests.e2e.test_bugfix_e2e import FIX, RED_SAYS, opened, play_ci, push, repo_with_ci, state_of, sticky_of

FORK = "\n\n## Open forks\n\n- [ ] F1: Round the discount before or after the currency conversion?\n"


def test_a_fork_opened_after_bugfix_stops_the_loop_until_decided(steward: Steward) -> None:
    m = steward.maintainer
    repo = repo_with_ci(steward)
    number, pr, branch, red = opened(steward, repo)
    play_ci(steward, repo, red, "failure", says=RED_SAYS)
    fix = push(steward, repo, branch, "src/cart/total.py", FIX)
    assert state_of(steward, repo, pr)[1].startswith("awaiting green CI on the head")

    m.edit_issue(repo, number, body=m.issue(repo, number)["body"] + FORK)
    steward.settle()
    expected = f"a product decision is pending: F1 on #{number} — the loop stops until it is decided"
    assert state_of(steward, repo, pr) == ("pending", expected)
    ledger = sticky_of(steward, repo, pr, "bugfix-ledger")
    assert ledger is not None and f"/issues/{number}" in ledger["body"], "the fork is linked"

    m.comment(repo, number, "/decide F1 after the conversion, as the price list does")
    steward.settle()
    play_ci(steward, repo, fix, "success")
    assert state_of(steward, repo, pr)[1].startswith("awaiting a review round on the head")

    # A fork on the pull request itself stops it the same way.
    m.edit_issue(repo, pr, body=m.issue(repo, pr)["body"] + FORK.replace("F1", "F2"))
    steward.settle()
    assert state_of(steward, repo, pr)[1].startswith(f"a product decision is pending: F2 on #{pr}")
