"""`/steward cc @x` on a pull request (issue 39), on both forges: the forge requests a review from @x; the
author is refused, and so — on a bugfix pull request — is whoever made or moved the fix; someone the forge
will not ask is refused with the forge's words; each person may ask for `triage.cc_per_minute` reviews a
minute."""

from __future__ import annotations

from tests.e2e.conftest import Steward
from tests.e2e.stack import TEST_CONFIG_PATHS
from tests.e2e.test_bugfix_e2e import opened


def requested(steward: Steward, repo: str, number: int) -> list[str]:
    pull = steward.maintainer.call("GET", f"/repos/{repo}/pulls/{number}")
    return [u["login"] for u in pull["requested_reviewers"]]


def reply_to(steward: Steward, repo: str, number: int, comment: int) -> str:
    [body] = [
        c["body"] for c in steward.bot_comments(repo, number) if f"steward:reply:{comment}-" in c["body"]
    ]
    return body


def test_cc_asks_the_forge_for_a_review_and_refuses_the_author_and_strangers(steward: Steward) -> None:
    repo = steward.new_repo()
    steward.maintainer.add_collaborator(repo, "outsider", "pull" if steward.forge == "github" else "read")
    pr = steward.maintainer.open_pull(repo, "Add export", "export")
    asked = steward.triager.comment(repo, pr, "/steward cc @outsider")
    steward.settle()
    assert requested(steward, repo, pr) == ["outsider"]
    assert "Asked @outsider to review this pull request." in reply_to(steward, repo, pr, asked)
    own = steward.triager.comment(repo, pr, "/steward cc @maintainer")
    stranger = steward.triager.comment(repo, pr, "/steward cc @nobody-here")
    steward.settle()
    assert "@maintainer opened this pull request: an author does not review their own." in reply_to(
        steward, repo, pr, own
    )
    assert "the forge would not ask @nobody-here to review" in reply_to(steward, repo, pr, stranger)
    assert requested(steward, repo, pr) == ["outsider"]
    # Who may: an outsider's /cc is refused with who may run it.
    tried = steward.outsider.comment(repo, pr, "/steward cc @triager")
    steward.settle()
    assert "can only be run by" in reply_to(steward, repo, pr, tried)
    assert requested(steward, repo, pr) == ["outsider"]


def test_cc_is_limited_per_person_and_minute(steward: Steward) -> None:
    repo = steward.new_repo()
    steward.maintainer.put_file(repo, TEST_CONFIG_PATHS[steward.forge], "triage:\n  cc_per_minute: 1\n")
    steward.maintainer.add_collaborator(repo, "outsider", "pull" if steward.forge == "github" else "read")
    steward.settle()
    pr = steward.maintainer.open_pull(repo, "Add import", "import")
    steward.maintainer.comment(repo, pr, "/steward cc @outsider")
    steward.settle()
    second = steward.maintainer.comment(repo, pr, "/steward cc @triager")
    steward.settle()
    assert "you may ask for at most 1 review a minute here (`triage.cc_per_minute`)" in reply_to(
        steward, repo, pr, second
    )
    assert requested(steward, repo, pr) == ["outsider"]


def test_cc_on_a_bugfix_refuses_whoever_made_or_moved_the_fix(steward: Steward) -> None:
    repo = steward.new_repo()
    _, pr, _, _ = opened(steward, repo)
    said = steward.triager.comment(repo, pr, "/steward cc @maintainer")
    steward.settle()
    text = reply_to(steward, repo, pr, said)
    assert (
        "@maintainer ran `/bugfix`: on a bugfix pull request whoever made or moved the fix does not" in text
    )
    assert requested(steward, repo, pr) == []
    fine = steward.maintainer.comment(repo, pr, "/steward cc @triager")
    steward.settle()
    assert "Asked @triager to review" in reply_to(steward, repo, pr, fine)
    assert requested(steward, repo, pr) == ["triager"]
