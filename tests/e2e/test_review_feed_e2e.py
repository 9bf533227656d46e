"""Review independence when the forge's push history does not show every move (issue 35, "Also"), end to
end on both forges.

Gitea's activity feed leaves out the actions of people who keep their activity private (models/activities/
action.go ActivityQueryCondition, for anyone but themselves and site admins). A writer who hides theirs,
pushes a commit to a bugfix branch credited to someone else, and runs `/review clean` was taken as
independent on main: Steward saw no push of theirs. Now the history must account for the branch's head
(every move back to Steward's own push), and a move it does not show refuses the review, saying what
Steward could not verify. GitHub's repository activity shows every push, so there the writer's push
excludes them as before."""

from __future__ import annotations

from tests.e2e.conftest import Steward
from tests.e2e.test_bugfix_e2e import head_of, play_ci, run, state_of
from tests.e2e.test_fail_closed_e2e import awaiting_review

OTHER_FIX = "def total_after_switch():\n    return 76.50\n"


def test_a_push_the_feed_does_not_show_leaves_nobody_independent(steward: Steward) -> None:
    repo, _, pr = awaiting_review(steward)
    writer = steward.outsider  # write access
    branch = steward.maintainer.call("GET", f"/repos/{repo}/pulls/{pr}")["head"]["ref"]
    if steward.forge == "gitea":
        writer.call("PATCH", "/user/settings", {"hide_activity": True})
    sha = writer.put_file(repo, "src/cart/total.py", OTHER_FIX, branch=branch, as_user="maintainer")
    steward.settle()
    assert head_of(steward, repo, pr) == sha
    play_ci(steward, repo, sha, "success")
    reply = run(steward, repo, pr, "/review clean", by="outsider")
    assert "Recorded review round" not in reply
    if steward.forge == "gitea":
        assert "PUSH_HISTORY_UNREADABLE" in reply
        assert f"The branch's move to `{sha[:10]}` is not in the forge's activity feed" in reply
        assert "cannot verify who pushed it — nor that you did not modify the fix" in reply
    else:
        assert "REVIEWER_COMMITTED" in reply and f"pushed `{sha[:10]}` to the branch" in reply
    assert state_of(steward, repo, pr)[1].startswith("awaiting a review round on the head")

    # Once the writer's activity shows again, the history accounts for the head: they are excluded by name.
    if steward.forge == "gitea":
        writer.call("PATCH", "/user/settings", {"hide_activity": False})
        reply = run(steward, repo, pr, "/review clean", by="outsider")
        assert "REVIEWER_COMMITTED" in reply and f"pushed `{sha[:10]}` to the branch" in reply
