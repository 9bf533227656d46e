"""`/close`, `/reopen` and `/duplicate` end to end, on both forges (issue 39): who may, as the forge itself
would let them; what a person sees (the issue's state, its reason or label, Steward's reply and the link
back); refusals that say who may; and replays that write nothing twice."""

from __future__ import annotations

import json
import uuid

from tests.e2e.conftest import Steward
from tests.e2e.stack import TEST_CONFIG_PATHS


def bodies(steward: Steward, repo: str, number: int) -> list[str]:
    return [c["body"] for c in steward.bot_comments(repo, number)]


def last_reply(steward: Steward, repo: str, number: int) -> str:
    found = bodies(steward, repo, number)
    assert found, "Steward said nothing"
    return found[-1]


def test_the_author_closes_with_a_reason_and_a_stranger_is_told_who_may(steward: Steward) -> None:
    repo = steward.new_repo()
    theirs = steward.maintainer.open_issue(repo, "The maintainer's plan")
    steward.outsider.comment(repo, theirs, "/steward close")
    steward.settle()
    refusal = last_reply(steward, repo, theirs)
    assert "@outsider" in refusal and "can only be run by the author of this issue" in refusal
    who = "triage access or more" if steward.forge == "github" else "write access or more"
    assert who in refusal
    assert steward.maintainer.issue(repo, theirs)["state"] == "open"

    mine = steward.outsider.open_issue(repo, "Export to CSV")
    steward.outsider.comment(repo, mine, "/steward close not-planned we moved to the API instead")
    steward.settle()
    issue = steward.maintainer.issue(repo, mine)
    assert issue["state"] == "closed"
    if steward.forge == "github":
        assert issue["state_reason"] == "not_planned"
    reply = last_reply(steward, repo, mine)
    assert "Closed as not planned at outsider's request (we moved to the API instead)" in reply
    assert "`/steward reopen`" in reply


def test_the_author_reopens_only_where_the_forge_would_let_them(steward: Steward) -> None:
    """GitHub: an author reopens what they closed, or what Steward closed, not what a maintainer closed
    (triage may); Gitea: the poster may whoever closed it."""
    repo = steward.new_repo()
    number = steward.outsider.open_issue(repo, "Crash on start")
    steward.maintainer.edit_issue(repo, number, state="closed")
    steward.settle()
    steward.outsider.comment(repo, number, "/steward reopen")
    steward.settle()
    if steward.forge == "github":
        refusal = last_reply(steward, repo, number)
        assert "@maintainer closed it" in refusal and "triage access or more may reopen it" in refusal
        assert steward.maintainer.issue(repo, number)["state"] == "closed"
        steward.triager.comment(repo, number, "/steward reopen")
        steward.settle()
    assert steward.maintainer.issue(repo, number)["state"] == "open"
    assert "Reopened at" in last_reply(steward, repo, number)

    # Closed by Steward at a maintainer's request: on GitHub that is the maintainer's closing.
    steward.maintainer.comment(repo, number, "/steward close not-planned")
    steward.settle()
    steward.outsider.comment(repo, number, "/steward reopen")
    steward.settle()
    if steward.forge == "github":
        assert "@maintainer closed it" in last_reply(steward, repo, number)
        steward.triager.comment(repo, number, "/steward reopen")
        steward.settle()
    assert steward.maintainer.issue(repo, number)["state"] == "open"

    # Closed by Steward of its own accord (as a report left without an answer is): its author may reopen it
    # on either forge. (Steward tells its closings apart by the forge's closed_at, to the second: the clock
    # leaves the second of the one before.)
    steward.settle(then_next_second=True)
    steward.bot.edit_issue(repo, number, state="closed")
    steward.settle()
    steward.outsider.comment(repo, number, "/steward reopen")
    steward.settle()
    assert steward.maintainer.issue(repo, number)["state"] == "open"
    assert "Reopened at outsider's request" in last_reply(steward, repo, number)


def assert_closed_as_duplicate(steward: Steward, repo: str, number: int) -> None:
    """Closed as each forge marks a duplicate: GitHub's `state_reason`, Gitea's `duplicate` label."""
    issue = steward.maintainer.issue(repo, number)
    assert issue["state"] == "closed"
    if steward.forge == "github":
        assert issue["state_reason"] == "duplicate"
    else:
        assert "duplicate" in steward.maintainer.labels_of(repo, number)


def test_a_duplicate_is_closed_with_a_link_both_ways_once(steward: Steward) -> None:
    repo = steward.new_repo()
    original = steward.maintainer.open_issue(repo, "Login fails with SSO")
    again = steward.outsider.open_issue(repo, "Cannot log in (SSO)")
    steward.outsider.comment(repo, again, f"/steward duplicate #{original}")
    steward.settle()

    assert_closed_as_duplicate(steward, repo, again)
    assert f"Closed as a duplicate of #{original}" in last_reply(steward, repo, again)
    [backlink] = bodies(steward, repo, original)
    assert f"#{again} was closed as a duplicate of this issue" in backlink
    assert steward.maintainer.issue(repo, original)["state"] == "open"

    # A replay of the command — even under a new delivery id, as after a Redis flush — writes nothing new.
    before = {n: steward.bot_comments(repo, n) for n in (original, again)}
    sandbox = steward.sandbox.url
    deliveries = steward.maintainer.call("GET", f"{sandbox}/_sandbox/deliveries?event=issue_comment")
    mine = [d for d in deliveries if d["action"] == "created"][-1]
    payload = steward.maintainer.call("GET", f"{sandbox}/_sandbox/deliveries/{mine['id']}")["payload"]
    steward.deliver("issue_comment", json.dumps(payload).encode(), delivery=str(uuid.uuid4()))
    steward.settle()
    after = {n: steward.bot_comments(repo, n) for n in (original, again)}
    assert {n: [(c["id"], c["body"]) for c in cs] for n, cs in after.items()} == {
        n: [(c["id"], c["body"]) for c in cs] for n, cs in before.items()
    }


def test_a_duplicate_of_itself_of_a_duplicate_or_of_what_steward_cannot_read_is_refused(
    steward: Steward,
) -> None:
    repo = steward.new_repo()
    original = steward.maintainer.open_issue(repo, "Slow search")
    dup = steward.maintainer.open_issue(repo, "Search is slow")
    steward.maintainer.comment(repo, dup, f"/steward duplicate #{original}")
    third = steward.outsider.open_issue(repo, "Searching takes ages")
    steward.settle()

    steward.outsider.comment(repo, third, f"/steward duplicate #{third}")
    steward.settle()
    assert "cannot be a duplicate of itself" in last_reply(steward, repo, third)
    steward.outsider.comment(repo, third, f"/steward duplicate #{dup}")
    steward.settle()
    chain = last_reply(steward, repo, third)
    assert f"#{dup} is itself closed as a duplicate, of #{original}: mark this one a duplicate of" in chain
    steward.outsider.comment(repo, third, "/steward duplicate someone/elsewhere#4")
    steward.settle()
    assert "I cannot read someone/elsewhere#4" in last_reply(steward, repo, third)
    steward.outsider.comment(repo, third, "/steward duplicate soon")
    steward.settle()
    assert "write `/steward duplicate #123`" in last_reply(steward, repo, third)
    assert steward.maintainer.issue(repo, third)["state"] == "open"


def test_a_duplicate_of_another_repositorys_issue_is_closed_and_linked_back_by_the_forge(
    steward: Steward,
) -> None:
    repo, other = steward.new_repo(), steward.new_repo()
    original = steward.maintainer.open_issue(other, "Login fails with SSO")
    again = steward.outsider.open_issue(repo, "Cannot log in (SSO)")
    steward.outsider.comment(repo, again, f"/steward duplicate {other}#{original}")
    steward.settle()

    assert_closed_as_duplicate(steward, repo, again)
    assert f"Closed as a duplicate of {other}#{original} at outsider's request" in last_reply(
        steward, repo, again
    )
    # Nothing from Steward on the other repository's issue: the forge's own cross-reference (a mention in that
    # issue's timeline, on both forges) is the link back. The sandbox does not model that mention.
    assert bodies(steward, other, original) == []
    assert steward.maintainer.issue(other, original)["state"] == "open"


def test_a_public_issue_is_not_marked_a_duplicate_of_a_private_repositorys_issue(steward: Steward) -> None:
    repo, hidden = steward.new_repo(), steward.new_repo()
    # Made private after new_repo(), so Steward stays a collaborator there and can read its issues.
    steward.maintainer.call("PATCH", f"/repos/{hidden}", {"private": True})
    original = steward.maintainer.open_issue(hidden, "Login fails with SSO")
    again = steward.outsider.open_issue(repo, "Cannot log in (SSO)")
    steward.outsider.comment(repo, again, f"/steward duplicate {hidden}#{original}")
    steward.settle()

    refusal = last_reply(steward, repo, again)
    assert "The issue you named is in a private repository and this one is public" in refusal
    assert hidden not in refusal, "the reply does not repeat the private repository's name"
    assert "Close this issue with `close` and a reason instead" in refusal
    assert steward.maintainer.issue(repo, again)["state"] == "open"
    assert "duplicate" not in steward.maintainer.labels_of(repo, again)
    assert bodies(steward, hidden, original) == []


def test_the_bare_forms_run_only_where_the_repository_switched_them_on(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.outsider.open_issue(repo, "Typo in the README")
    steward.outsider.comment(repo, number, "/close")
    steward.settle()
    assert bodies(steward, repo, number) == [] and steward.maintainer.issue(repo, number)["state"] == "open"

    steward.maintainer.put_file(repo, TEST_CONFIG_PATHS[steward.forge], "triage:\n  short_commands: true\n")
    steward.settle()
    steward.outsider.comment(repo, number, "/close fixed in the docs")
    steward.settle()
    assert steward.maintainer.issue(repo, number)["state"] == "closed"
    assert "Closed at outsider's request (fixed in the docs)" in last_reply(steward, repo, number)


def test_a_pull_request_closes_too_and_a_repository_may_ask_for_more_than_the_forge(steward: Steward) -> None:
    """`/close` works on a pull request (no state reason there); `commands.close.permission: triage` narrows
    it, and the author is then told who may."""
    repo = steward.new_repo()
    pull = steward.maintainer.open_pull(repo, "Tidy the notes", "tidy")
    steward.maintainer.comment(repo, pull, "/steward close superseded by a bigger change")
    steward.settle()
    assert steward.maintainer.issue(repo, pull)["state"] == "closed"
    assert "Closed at maintainer's request (superseded by a bigger change)" in last_reply(steward, repo, pull)

    steward.maintainer.put_file(
        repo, TEST_CONFIG_PATHS[steward.forge], "commands:\n  close:\n    permission: triage\n"
    )
    steward.settle()
    number = steward.outsider.open_issue(repo, "Please add a dark theme")
    steward.outsider.comment(repo, number, "/steward close")
    steward.settle()
    refusal = last_reply(steward, repo, number)
    who = "triage access or more" if steward.forge == "github" else "write access or more"
    assert f"can only be run by people with {who}" in refusal
    assert steward.maintainer.issue(repo, number)["state"] == "open"
