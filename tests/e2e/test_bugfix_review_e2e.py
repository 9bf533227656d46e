"""Independent review of a bugfix, end to end on both forges (issue 24 §4): whoever pushed to the branch —
read from the forge's own push history, whatever the commits say about their authors — does not review;
a reviewer who later pushes has their round voided; a `/review` without a sha written before the branch's
latest push is refused with the head to review."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.demo.threads import ThreadedWorker
from tests.e2e.conftest import Steward
from tests.e2e.stack import wait_for
from tests.e2e.test_bugfix_e2e import (
    FIX,
    RED_SAYS,
    head_of,
    opened,
    play_ci,
    repo_with_ci,
    run,
    state_of,
    sticky_of,
)


def _proven(steward: Steward) -> tuple[str, int, str]:
    """A bugfix pull request with red proof and the outsider and the triager as writers."""
    repo = repo_with_ci(steward)
    steward.maintainer.add_collaborator(repo, "outsider", "push")
    steward.maintainer.add_collaborator(repo, "triager", "push")
    _, pr, branch, red = opened(steward, repo)
    play_ci(steward, repo, red, "failure", says=RED_SAYS)
    return repo, pr, branch


def test_a_writer_who_pushed_a_commit_credited_to_someone_else_may_not_review_it(steward: Steward) -> None:
    """The outsider pushes a commit whose author and committer are the triager (the forge links it to the
    triager): only the forge's push history shows who pushed it, and the outsider's review is refused."""
    repo, pr, branch = _proven(steward)
    fix = steward.outsider.put_file(repo, "src/cart/total.py", FIX, branch=branch, as_user="triager")
    steward.settle()
    play_ci(steward, repo, fix, "success")
    reply = run(steward, repo, pr, "/review clean", by="outsider")
    assert "REVIEWER_COMMITTED" in reply, reply
    assert f"You pushed `{fix[:10]}` to the branch" in reply, "the refusal says why"
    # The triager, credited with the commit by the forge, is excluded as its author and committer too.
    reply = run(steward, repo, pr, "/review clean", by="triager")
    assert "REVIEWER_COMMITTED" in reply and f"authored commit `{fix[:10]}`" in reply, reply
    assert state_of(steward, repo, pr)[1].startswith("awaiting a review round on the head")


def test_a_reviewer_who_later_pushes_has_their_round_voided(steward: Steward) -> None:
    repo, pr, branch = _proven(steward)
    fix = steward.maintainer.put_file(repo, "src/cart/total.py", FIX, branch=branch)
    steward.settle()
    play_ci(steward, repo, fix, "success")
    assert "Recorded review round 1 of 5" in run(steward, repo, pr, "/review clean", by="triager")
    assert state_of(steward, repo, pr)[0] == "success"

    # The reviewer now changes the fix (the commit credited to the maintainer): the round settles nothing.
    later = steward.triager.put_file(
        repo, "src/cart/total.py", FIX + "RATE = 0.9\n", branch=branch, as_user="maintainer"
    )
    steward.settle()
    play_ci(steward, repo, later, "success")
    state, description = state_of(steward, repo, pr)
    assert state == "pending" and description.startswith("awaiting a review round on the head"), description
    ledger = sticky_of(steward, repo, pr, "bugfix-ledger")
    assert ledger is not None
    # The table names the reviewer without mentioning them (a word joiner after the @).
    assert (
        f"| @triager | clean — **void**: @\u2060triager pushed `{later[:10]}` to the branch |"
        in ledger["body"]
    )
    assert "review rounds 1/5" in ledger["body"], "a void round still counts against the budget"
    reply = run(steward, repo, pr, "/review clean", by="triager")
    assert "REVIEWER_COMMITTED" in reply
    assert "Recorded review round 2 of 5" in run(steward, repo, pr, "/review clean", by="outsider")
    assert state_of(steward, repo, pr)[0] == "success"


def test_a_review_written_before_the_latest_push_is_refused_with_the_head_to_review(steward: Steward) -> None:
    """Steward is busy (its worker stopped) while the triager writes `/review clean` and, a second later,
    the maintainer pushes: when the review is read, the branch has moved since it was written."""
    repo, pr, branch = _proven(steward)
    fix = steward.maintainer.put_file(repo, "src/cart/total.py", FIX, branch=branch)
    steward.settle()
    play_ci(steward, repo, fix, "success")
    for worker in steward.workers:
        worker.stop()
    comment = steward.triager.comment(repo, pr, "/review clean")
    written = steward.triager.call("GET", f"/repos/{repo}/issues/comments/{comment}")["created_at"]
    # Forges keep whole seconds: the push is made in a later second than the comment.
    wait_for(
        lambda: datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S") > written[:19],
        timeout=5,
        what="the clock to pass the comment's second",
    )
    second = steward.maintainer.put_file(repo, "src/cart/total.py", FIX + "RATE = 0.9\n", branch=branch)
    steward.workers = [ThreadedWorker(steward.settings).start()]
    steward.settle()
    assert head_of(steward, repo, pr) == second
    reply = next(
        c["body"] for c in steward.bot_comments(repo, pr) if f"steward:reply:{comment}-" in c["body"]
    )
    assert "HEAD_MOVED" in reply and f"The branch moved after your review; review `{second[:10]}`" in reply
    # Named explicitly, the new head is reviewed (once).
    play_ci(steward, repo, second, "success")
    assert "Recorded review round 1 of 5" in run(
        steward, repo, pr, f"/review {second[:10]} clean", by="triager"
    )
    assert "SAME_HEAD_REVIEWED" in run(steward, repo, pr, "/review clean", by="outsider")
