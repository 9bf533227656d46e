"""Native reviews and reviewers in conflict on bugfix pull requests (issue 24 §4), end to end on both forges:
reviews submitted through the forge's own review API reach Steward as the forge's webhooks
(`pull_request_review` on GitHub; `pull_request_approved` / `pull_request_rejected` on Gitea)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Steward
from tests.e2e.test_bugfix_e2e import (
    FINDINGS,
    FIX,
    RED_SAYS,
    opened,
    play_ci,
    push,
    repo_with_ci,
    run,
    state_of,
    sticky_of,
)

FINDING = "F1 high src/cart.py:1 the rate is hard-coded"


def plain(text: str) -> str:
    """Steward's text with its neutralised mentions (a word joiner after `@`) read plainly."""
    return text.replace("@\u2060", "@")


def native_review(steward: Steward, by: str, repo: str, pr: int, verdict: str, body: str = "") -> None:
    """A review through the forge's own API: GitHub `event` APPROVE / REQUEST_CHANGES, Gitea APPROVED /
    REQUEST_CHANGES (a request for changes needs a body on both)."""
    event = {"approve": "APPROVE" if steward.forge == "github" else "APPROVED", "changes": "REQUEST_CHANGES"}
    getattr(steward, by).call(
        "POST", f"/repos/{repo}/pulls/{pr}/reviews", {"event": event[verdict], "body": body or verdict}
    )
    steward.settle()


def ready_for_review(steward: Steward, *, escalate_to: str = "") -> tuple[str, int, int, str, str]:
    """A bugfix pull request with its red proof named by CI and a green fix at the head, awaiting a review:
    (repository, bug, pull request, branch, head)."""
    repo = repo_with_ci(steward)
    if escalate_to:
        folder = ".github" if steward.forge == "github" else ".gitea"
        steward.maintainer.put_file(
            repo, f"{folder}/steward.yml", f"debug:\n  escalate_to:\n    - {escalate_to}\n"
        )
    steward.maintainer.add_collaborator(repo, "outsider", "push")
    steward.maintainer.add_collaborator(repo, "triager", "push")
    number, pr, branch, red = opened(steward, repo)
    play_ci(steward, repo, red, "failure", says=RED_SAYS)
    fix = push(steward, repo, branch, "src/cart/total.py", FIX)
    play_ci(steward, repo, fix, "success")
    assert state_of(steward, repo, pr)[1].startswith("awaiting a review round on the head")
    return repo, number, pr, branch, fix


def test_a_native_request_for_changes_keeps_the_status_pending_and_an_approval_spends_no_round(
    steward: Steward,
) -> None:
    repo, _, pr, _, fix = ready_for_review(steward)

    native_review(steward, "triager", repo, pr, "approve")
    state, description = state_of(steward, repo, pr)
    assert (state, description.split(":")[0]) == ("pending", "awaiting a review round on the head")
    ledger = sticky_of(steward, repo, pr, "bugfix-ledger")
    assert ledger is not None and "review rounds 0/5" in ledger["body"], "an approval spends no round"
    assert f"| @triager | approved | `{fix[:10]}` | yes |" in plain(ledger["body"])

    native_review(steward, "outsider", repo, pr, "changes", "the rate is hard-coded")
    assert plain(state_of(steward, repo, pr)[1]) == (
        "@outsider requested changes on the head (native review): a /review round on it settles that"
    )
    ledger = sticky_of(steward, repo, pr, "bugfix-ledger")
    assert ledger is not None and f"| @outsider | requested changes | `{fix[:10]}` | yes |" in plain(
        ledger["body"]
    )
    assert "review rounds 0/5" in ledger["body"]

    # A `/review` round with findings on the head settles it: the ledger goes on from there.
    assert "Recorded review round 1 of 5" in run(steward, repo, pr, FINDINGS, by="triager")
    assert state_of(steward, repo, pr) == ("pending", "awaiting dispositions of F1, F2")


def test_reviewers_in_conflict_stop_the_review_and_name_whom_to_ask(steward: Steward) -> None:
    repo, number, pr, _, fix = ready_for_review(steward, escalate_to="lead-dev")
    author = steward.maintainer.issue(repo, number)["user"]["login"]
    assert "Recorded review round 1 of 5" in run(steward, repo, pr, "/review clean", by="triager")
    assert state_of(steward, repo, pr)[0] == "success"

    # A native request for changes against the clean round: two reviewers disagree about one head.
    native_review(steward, "outsider", repo, pr, "changes", "the rate is hard-coded")
    state, description = state_of(steward, repo, pr)
    assert state == "failure" and plain(description).startswith(
        f"the review stopped: reviewers disagree — @triager reviewed {fix[:10]} clean in round 1 and "
        "@outsider requested changes"
    )
    note = sticky_of(steward, repo, pr, "bugfix-exhausted")
    assert note is not None and note["body"].split("-->")[-1].lstrip().startswith(f"@lead-dev @{author}:")
    assert "Two reviewers disagree about the same head" in note["body"]
    assert "`debug.escalate_to`" in note["body"]

    # The reviewer who asked for changes approves: the conflict is over, the clean round stands.
    native_review(steward, "outsider", repo, pr, "approve")
    assert state_of(steward, repo, pr)[0] == "success"

    # A second reviewer's blocking findings on the head another passed clean: recorded as a conflict, not a
    # round (no budget spent), and the review stops.
    reply = run(steward, repo, pr, f"/review findings\n{FINDING}", by="outsider")
    assert reply.split("-->")[-1].lstrip().startswith(f"@lead-dev @{author}: reviewers disagree about")
    assert (
        "@triager reviewed it clean in round 1 and @outsider reports blocking findings: `F1` (high)" in reply
    )
    assert "`debug.escalate_to`" in reply and "it spends no review budget" in reply
    state, description = state_of(steward, repo, pr)
    assert state == "failure" and "@outsider reports blocking findings on it (F1)" in plain(description)
    ledger = sticky_of(steward, repo, pr, "bugfix-ledger")
    assert ledger is not None and "review rounds 1/5" in ledger["body"]


# Gitea sends no webhook when a review is dismissed (services/webhook/notifier.go has no PullReviewDismiss):
# there the next sync (a push, a command, CI, the one-minute bugfix-ci job) sees it.
@pytest.mark.parametrize("steward", ["github"], indirect=True)
def test_a_dismissed_request_for_changes_no_longer_holds_the_status(steward: Steward) -> None:
    repo, _, pr, _, _ = ready_for_review(steward)
    native_review(steward, "outsider", repo, pr, "changes", "the rate is hard-coded")
    assert state_of(steward, repo, pr)[0] == "pending"
    [asked] = steward.maintainer.call("GET", f"/repos/{repo}/pulls/{pr}/reviews")
    path = f"/repos/{repo}/pulls/{pr}/reviews/{asked['id']}/dismissals"
    steward.maintainer.call("PUT", path, {"message": "answered in the thread"})
    steward.settle()
    assert state_of(steward, repo, pr)[1].startswith("awaiting a review round on the head")
    ledger = sticky_of(steward, repo, pr, "bugfix-ledger")
    assert ledger is not None and "requested changes" not in ledger["body"]
