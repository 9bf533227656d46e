"""A writer's own `steward/*` status does not stand (issue 35 item 7), on both forges.

Before: Steward ignored every `steward/*` status event, whoever posted it, so a writer who posted
`steward/regression-first` = success on a bugfix pull request's head made a required status check pass (the
forge keeps the latest status of a context, whoever set it). Now Steward posts its own state again at once and
says so in the pull request's thread; on a commit it never judged, a forged `steward/*` status is answered
with a failure.
"""

from __future__ import annotations

from tests.e2e.conftest import Steward
from tests.e2e.stack import wait_for
from tests.e2e.test_bugfix_e2e import CONTEXT, head_of, opened, repo_with_ci, state_of


def test_a_writer_s_steward_status_is_overwritten_with_steward_s_own(steward: Steward) -> None:
    repo = repo_with_ci(steward)
    steward.maintainer.add_collaborator(repo, "outsider", "push" if steward.forge == "github" else "write")
    _, pr, _, red = opened(steward, repo)
    head = head_of(steward, repo, pr)
    before = state_of(steward, repo, pr)
    assert before[0] == "pending"
    forged = {"state": "success", "context": CONTEXT, "description": "all good"}
    steward.outsider.call("POST", f"/repos/{repo}/statuses/{head}", forged)
    steward.settle()
    wait_for(lambda: state_of(steward, repo, pr) == before or None, what="Steward's own state again")
    [note] = [
        c["body"]
        for c in steward.bot_comments(repo, pr)
        if c["body"].startswith("<!-- steward:status-restored:")
    ]
    assert f"`{CONTEXT}` on `{head[:10]}` was set to success by @outsider" in note
    # A steward/* context on a commit Steward never judged: answered with a failure.
    other = {"state": "success", "context": "steward/config", "description": "valid"}
    steward.outsider.call("POST", f"/repos/{repo}/statuses/{red}", other)
    steward.settle()
    latest = next(s for s in steward.maintainer.statuses(repo, red) if s["context"] == "steward/config")
    assert (latest.get("state") or latest["status"]) == "failure"
    assert latest["creator"]["login"] == "steward-bot"
