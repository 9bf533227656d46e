"""The investigation finishes before the fix (issue 36 §3, seed 004's wave order), end to end on both forges:
`/bugfix` is refused with `HYPOTHESES_PENDING` while a hypothesis on the board is still pending, even with
one confirmed; the board says so; once every hypothesis is decided the branch opens."""

from __future__ import annotations

from tests.e2e.conftest import Steward
from tests.e2e.test_bugfix_e2e import (
    FIX,
    RED_SAYS,
    TITLE,
    play_ci,
    pulls,
    push,
    refined_bug,
    repo_with_ci,
    run,
    sticky_of,
)


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


def test_the_closing_summary_lists_refuted_hypotheses_and_reviewer_conflicts(steward: Steward) -> None:
    """Seed 001's closing summary (issue 36 §5): the hypotheses refuted on the way, with why, and the
    reviewers' conflicts, beside the accepted residuals and gaps it lists already."""
    m = steward.maintainer
    repo = repo_with_ci(steward)
    m.add_collaborator(repo, "outsider", "push")
    m.add_collaborator(repo, "triager", "push")
    number = refined_bug(steward, repo)
    m.comment(repo, number, "/hypothesis Rounding: the total is rounded twice")
    steward.settle()
    m.comment(repo, number, "/refute H2 the total is rounded once, at src/cart/total.py:42")
    steward.settle()
    m.comment(repo, number, "/bugfix")
    steward.settle()
    [pr] = pulls(steward, repo)
    branch, red = pr["head"]["ref"], pr["head"]["sha"]
    play_ci(steward, repo, red, "failure", says=RED_SAYS)
    fix = push(steward, repo, branch, "src/cart/total.py", FIX)
    play_ci(steward, repo, fix, "success")
    run(steward, repo, pr["number"], "/review clean", by="outsider")
    run(steward, repo, pr["number"], "/review findings\nF1 high src/cart/total.py:1 the rate is hard-coded",
        by="triager")  # fmt: skip
    m.merge_pull(repo, pr["number"])
    steward.settle()
    summary = sticky_of(steward, repo, number, "bugfix-summary")
    assert summary is not None
    text = summary["body"]
    assert "**Refuted on the way:**" in text and "H2 Rounding — the total is rounded once" in text
    assert "### Reviewer conflicts" in text and "@triager reported blocking findings (F1 (high))" in text
