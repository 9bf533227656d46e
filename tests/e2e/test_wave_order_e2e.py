"""The investigation finishes before the fix (issue 36 §3, seed 004's wave order), end to end on both forges:
`/bugfix` is refused with `HYPOTHESES_PENDING` while a hypothesis on the board is still pending, even with
one confirmed; the board says so; once every hypothesis is decided the branch opens."""

from __future__ import annotations

from tests.e2e.conftest import Steward
from tests.e2e.test_bugfix_e2e import TITLE, pulls, refined_bug, repo_with_ci, run, sticky_of


def test_bugfix_waits_until_every_hypothesis_is_decided(steward: Steward) -> None:
    repo = repo_with_ci(steward)
    number = refined_bug(steward, repo)  # H1 confirmed at src/cart/total.py:42
    steward.maintainer.comment(repo, number, "/hypothesis Rounding: the total is rounded twice")
    steward.settle()

    reply = run(steward, repo, number, "/bugfix")
    assert "HYPOTHESES_PENDING" in reply and "H2 is still pending on the hypotheses board" in reply
    assert "`/steward refute H2 <evidence>`" in reply and "ROOT_CAUSE_NOT_EVIDENCED" not in reply
    assert pulls(steward, repo) == []
    board = sticky_of(steward, repo, number, "debug-board")
    assert (
        board is not None
        and "but H2 is still pending: the investigation finishes before the fix" in board["body"]
    )

    steward.maintainer.comment(repo, number, "/refute H2 the total is rounded once, at src/cart/total.py:42")
    steward.settle()
    steward.maintainer.comment(repo, number, "/bugfix")
    steward.settle()
    assert len(pulls(steward, repo)) == 1


def test_the_pull_request_title_keeps_one_prefix(steward: Steward) -> None:
    """`Bugfix for #N: …` (no closing keyword), without the bug title's own `[Bug]:` (issue 36, docs)."""
    repo = repo_with_ci(steward)
    number = refined_bug(steward, repo)
    steward.maintainer.edit_issue(repo, number, title=f"[Bug]: {TITLE}")
    steward.settle()
    steward.maintainer.comment(repo, number, "/bugfix")
    steward.settle()
    [pr] = pulls(steward, repo)
    expected = f"Bugfix for #{number}: {TITLE}"
    assert pr["title"] == ("WIP: " + expected if steward.forge == "gitea" else expected)
