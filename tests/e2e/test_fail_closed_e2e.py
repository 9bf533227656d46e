"""Paths that must fail closed (issue 36 §8), end to end on both forges: when the forge will not say what a
gate needs, the gate does not open.

- the branch's push history cannot be read: `/review` is refused (`PUSH_HISTORY_UNREADABLE`) — nobody can be
  shown not to have pushed — and the status stays where it was;
- permissions the forge will not show: a command that needs them is refused and runs nothing (`/bugfix`
  opens no branch);
- the decision juror cannot check a fork (the forge will not say who may decide): the fork counts as
  undecided, and the fix's status stays pending (`DECISION_PENDING`).
"""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import Steward
from tests.e2e.test_bugfix_e2e import (
    FIX,
    RED_SAYS,
    branches,
    opened,
    play_ci,
    pulls,
    push,
    refined_bug,
    repo_with_ci,
    run,
    state_of,
)


def refuse(repo: str, what: str) -> dict[str, Any]:
    """The forge answers the bot 403 on ``what`` (a path pattern), as it does to a token without the right."""
    return {"path": rf"/repos/{repo}/{what}", "status": 403, "times": 500, "login": "steward-bot"}


def awaiting_review(steward: Steward) -> tuple[str, int, int]:
    """A bugfix pull request with its red proof and a green fix, awaiting a review: (repo, bug, pr)."""
    repo = repo_with_ci(steward)
    steward.maintainer.add_collaborator(repo, "outsider", "push")
    number, pr, branch, red = opened(steward, repo)
    play_ci(steward, repo, red, "failure", says=RED_SAYS)
    fix = push(steward, repo, branch, "src/cart/total.py", FIX)
    play_ci(steward, repo, fix, "success")
    assert state_of(steward, repo, pr)[1].startswith("awaiting a review round on the head")
    return repo, number, pr


def test_an_unreadable_push_history_refuses_the_review(steward: Steward) -> None:
    repo, _, pr = awaiting_review(steward)
    steward.faults(refuse(repo, "activit"))  # GitHub's /activity, Gitea's /activities/feeds
    reply = run(steward, repo, pr, "/review clean", by="outsider")
    assert "PUSH_HISTORY_UNREADABLE" in reply and "push history could not be read" in reply
    assert "Recorded review round" not in reply
    assert state_of(steward, repo, pr)[1].startswith("awaiting a review round on the head")


def test_permissions_the_forge_will_not_show_run_nothing(steward: Steward) -> None:
    repo = repo_with_ci(steward)
    number = refined_bug(steward, repo)
    steward.faults(refuse(repo, r"collaborators/[^/]+/permission"))
    reply = run(steward, repo, number, "/bugfix")
    assert "Steward cannot read permissions on this repository" in reply
    assert pulls(steward, repo) == [] and branches(steward, repo) == ["main"]


def test_a_juror_that_cannot_check_keeps_the_decision_pending(steward: Steward) -> None:
    m = steward.maintainer
    repo, number, pr = awaiting_review(steward)
    fork = "\n\n## Open forks\n\n- [ ] F1: Round the discount before or after the currency conversion?\n"
    m.edit_issue(repo, number, body=m.issue(repo, number)["body"] + fork)
    steward.settle()
    m.comment(repo, number, "/decide F1 after the conversion")
    steward.settle()
    head = m.call("GET", f"/repos/{repo}/pulls/{pr}")["head"]["sha"]
    play_ci(steward, repo, head, "success")
    assert state_of(steward, repo, pr)[1].startswith("awaiting a review round on the head"), "decided"

    # Now the forge will not say who may decide: the decision cannot be checked, so it is not taken as made.
    steward.faults(refuse(repo, r"collaborators/[^/]+/permission"))
    play_ci(steward, repo, head, "success", context="ci/other")
    state = state_of(steward, repo, pr)
    assert state[0] == "pending" and "(who may decide cannot be read)" in state[1], state
