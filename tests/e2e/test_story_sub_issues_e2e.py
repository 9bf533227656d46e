"""Issue 36 §4, a sub-issue attached to a bug after it was refined: it is one of the bug's stories from then
on, as a story the bug lists is — stamped `refinement:pending` with its own story comment while the bug is not
approved (refined with it once it is), once however often the delivery comes, and work on it waits for its own
verdict (`STORY_NOT_REFINED`).

GitHub only: Gitea has no sub-issues (its stories are the ones a bug's `## Stories` list names, which
tests/e2e/test_bug_refinement_e2e.py covers on both forges). Before this, nothing listened to GitHub's
`sub_issues` webhook and the sandbox sent none: the story stayed unstamped until the bug was next edited, and
`/bugfix` on it was not refused as a story's."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from tests.e2e.conftest import Steward
from tests.e2e.stack import reconcile, wait_for
from tests.e2e.test_bug_refinement_e2e import APPROVED, REJECTED, STORY, refinement_labels, verdict_comments
from tests.e2e.test_bugfix_e2e import run, sticky_of

pytestmark = pytest.mark.parametrize("steward", ["github"], indirect=True)


def _attach(steward: Steward, repo: str, parent: int, child: int) -> None:
    child_id = steward.maintainer.call("GET", f"/repos/{repo}/issues/{child}")["id"]
    steward.maintainer.call("POST", f"/repos/{repo}/issues/{parent}/sub_issues", {"sub_issue_id": child_id})


def while_steward_is_down(steward: Steward, repo: str, change: Callable[[], None]) -> None:
    """The day's full catch-up pass, then ``change`` made while no receiver or worker runs (its deliveries
    fail; the bot has no admin access here, so GitHub shows it none to redeliver)."""
    from tests.e2e.test_catchup_edited import _delivered
    from tests.e2e.test_reconcile_e2e import _steward_down

    first = reconcile(steward.settings, "--repo", f"{steward.forge}:{repo}")
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    with _steward_down(steward):
        change()
        _delivered(steward)


def catch_up(steward: Steward, repo: str) -> None:
    """The next catch-up (incremental), and what it queued, done."""
    again = reconcile(steward.settings, "--repo", f"{steward.forge}:{repo}")
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    steward.settle()


def _delivery(steward: Steward, repo: str, action: str) -> dict[str, Any]:
    """The sandbox's delivery of ``sub_issues``.``action`` on ``repo`` (its payload and headers)."""
    url = f"{steward.sandbox.url}/_sandbox/deliveries"

    def found() -> dict[str, Any] | None:
        for summary in steward.maintainer.call("GET", url):
            if (summary["event"], summary["action"], summary["repository"]) == ("sub_issues", action, repo):
                return dict(steward.maintainer.call("GET", f"{url}/{summary['id']}"))
        return None

    return wait_for(found, what=f"the sub_issues.{action} delivery")


def _writes(steward: Steward) -> list[dict[str, Any]]:
    log = steward.maintainer.call("GET", f"{steward.sandbox.url}/_sandbox/requests")
    return [r for r in log if r["login"] == "steward-bot" and r["method"] not in ("GET", "HEAD")]


def test_a_sub_issue_attached_to_a_refined_bug_is_stamped_once_and_gated(steward: Steward) -> None:
    repo = steward.new_repo()
    m = steward.maintainer
    bug = m.open_issue(repo, "Cart total ignores discount", REJECTED, labels=["bug", "refine"])
    story = m.open_issue(repo, "Keep promotions when the currency changes", "Keep the applied promotions.")
    steward.settle()
    assert refinement_labels(steward, repo, bug) == ["refinement:needs-info"], "the bug is refined"
    assert refinement_labels(steward, repo, story) == []
    assert sticky_of(steward, repo, story, "ra9-story") is None

    _attach(steward, repo, bug, story)
    steward.settle()
    assert refinement_labels(steward, repo, story) == ["refinement:pending"], "stamped as a listed story is"
    stamp = sticky_of(steward, repo, story, "ra9-story")
    assert stamp is not None and "## ⏳ Story waiting for its bug" in stamp["body"]
    assert f"this issue is a story of #{bug}" in stamp["body"] and "status: pending" in stamp["body"]
    [verdict] = verdict_comments(steward, repo, bug)

    # The same delivery again — GitHub's redelivery (same delivery id) and a copy under a new id, which the
    # receiver's de-duplication does not stop — writes nothing: the story has its record.
    delivered = _delivery(steward, repo, "sub_issue_added")
    steward.clear_requests()
    m.call("POST", f"{steward.sandbox.url}/_sandbox/deliveries/{delivered['id']}/redeliver")
    body = json.dumps(delivered["payload"]).encode()
    assert steward.deliver("sub_issues", body, delivery=str(uuid.uuid4())).status_code == 202
    steward.settle()
    assert _writes(steward) == [], "a replay writes nothing"
    assert sticky_of(steward, repo, story, "ra9-story") == stamp
    assert verdict_comments(steward, repo, bug) == [verdict]

    reply = run(steward, repo, story, "/bugfix")
    assert "`STORY_NOT_REFINED`" in reply and f"a story of #{bug}" in reply, reply
    assert f"#{bug} is not yet" in reply, reply
    assert sticky_of(steward, repo, story, "debug-board") is None


def test_a_sub_issue_attached_to_an_approved_bug_gets_its_own_verdict(steward: Steward) -> None:
    repo = steward.new_repo()
    m = steward.maintainer
    bug = m.open_issue(repo, "Cart total ignores discount", APPROVED, labels=["bug", "refine"])
    story = m.open_issue(repo, "Story: keep promotions", STORY)
    steward.settle()
    assert refinement_labels(steward, repo, bug) == ["refinement:approved"]

    _attach(steward, repo, bug, story)
    steward.settle()
    assert refinement_labels(steward, repo, story) == ["refinement:approved"]
    own = sticky_of(steward, repo, story, "ra9-story")
    assert own is not None and "status: approved" in own["body"] and f"#{bug}" in own["body"]
    [verdict] = verdict_comments(steward, repo, bug)
    assert f"- #{story}: ✅ approved (see its comment)" in str(verdict["body"]), "the bug lists its new story"


def test_a_sub_issue_attached_while_steward_was_down_is_stamped_by_the_catch_up(steward: Steward) -> None:
    """Attaching a sub-issue leaves its parent's `updated_at` as it was (neomjs/neo#7947), so the catch-up's
    incremental pass, which re-derives the issues updated since its window, does not list the bug; the
    refinement's own reconciler looks at each refined bug's sub-issues. (The bot has no admin access here:
    GitHub shows it no failed delivery to redeliver.)"""
    repo = steward.new_repo()
    m = steward.maintainer
    bug = m.open_issue(repo, "Cart total ignores discount", REJECTED, labels=["bug", "refine"])
    story = m.open_issue(repo, "Keep promotions when the currency changes", "Keep the applied promotions.")
    steward.settle(then_next_second=True)
    while_steward_is_down(steward, repo, lambda: _attach(steward, repo, bug, story))
    assert refinement_labels(steward, repo, story) == [], "Steward heard nothing"
    catch_up(steward, repo)
    assert refinement_labels(steward, repo, story) == ["refinement:pending"]
    stamp = sticky_of(steward, repo, story, "ra9-story")
    assert stamp is not None and f"this issue is a story of #{bug}" in stamp["body"]


def _detach(steward: Steward, repo: str, parent: int, child: int) -> None:
    child_id = steward.maintainer.call("GET", f"/repos/{repo}/issues/{child}")["id"]
    steward.maintainer.call("DELETE", f"/repos/{repo}/issues/{parent}/sub_issue", {"sub_issue_id": child_id})


def test_a_sub_issue_removed_from_its_bug_is_released_once(steward: Steward) -> None:
    """GitHub's `sub_issue_removed`: the story no longer waits for the bug. Before, nothing listened: it kept
    `refinement:pending` and its story comment, and `/bugfix` on it was refused as a story's for as long as
    the bug was not approved. Now its labels go, its story comment says it was released (and how to have it
    refined on its own), and a replay writes nothing."""
    repo = steward.new_repo()
    m = steward.maintainer
    bug = m.open_issue(repo, "Cart total ignores discount", REJECTED, labels=["bug", "refine"])
    story = m.open_issue(repo, "Keep promotions when the currency changes", "Keep the applied promotions.")
    _attach(steward, repo, bug, story)
    steward.settle()
    assert refinement_labels(steward, repo, story) == ["refinement:pending"]
    stamp = sticky_of(steward, repo, story, "ra9-story")
    assert stamp is not None

    _detach(steward, repo, bug, story)
    steward.settle()
    assert refinement_labels(steward, repo, story) == [], "its refinement label is gone"
    assert sticky_of(steward, repo, story, "ra9-story") is None, "no story record is left"
    note = sticky_of(steward, repo, story, "ra9-story-released")
    assert note is not None and note["id"] == stamp["id"], "the story comment became the note"
    assert "## Story released" in note["body"]
    assert f"no longer a story of #{bug} (it was removed from #{bug}'s sub-issues)" in note["body"]
    assert "add the `refine` label" in note["body"]

    delivered = _delivery(steward, repo, "sub_issue_removed")
    steward.clear_requests()
    body = json.dumps(delivered["payload"]).encode()
    assert steward.deliver("sub_issues", body, delivery=str(uuid.uuid4())).status_code == 202
    steward.settle()
    assert _writes(steward) == [], "a replay writes nothing"

    reply = run(steward, repo, story, "/bugfix")
    assert "`STORY_NOT_REFINED`" not in reply and f"a story of #{bug}" not in reply, reply
    assert "`BUG_NOT_REFINED`" in reply, "gated as an issue of its own: it has no verdict of its own yet"


def test_a_removed_sub_issue_the_bug_still_lists_stays_its_story(steward: Steward) -> None:
    """A bug whose `## Stories` list (by its author) names the issue keeps it as a story when the sub-issue
    link goes: nothing is released, and the approved bug's verdict still lists it."""
    repo = steward.new_repo()
    m = steward.maintainer
    story = m.open_issue(repo, "Story: keep promotions", STORY)
    listed = f"{APPROVED.rstrip()}\n\n## Stories\n\n- [ ] #{story}\n"
    bug = m.open_issue(repo, "Cart total ignores discount", listed, labels=["bug", "refine"])
    _attach(steward, repo, bug, story)
    steward.settle()
    assert refinement_labels(steward, repo, story) == ["refinement:approved"]
    own = sticky_of(steward, repo, story, "ra9-story")

    _detach(steward, repo, bug, story)
    steward.settle()
    assert refinement_labels(steward, repo, story) == ["refinement:approved"]
    assert sticky_of(steward, repo, story, "ra9-story") == own
    assert sticky_of(steward, repo, story, "ra9-story-released") is None
    [verdict] = verdict_comments(steward, repo, bug)
    assert f"- #{story}: ✅ approved (see its comment)" in str(verdict["body"])


def test_a_released_story_of_an_approved_bug_leaves_the_bugs_verdict(steward: Steward) -> None:
    repo = steward.new_repo()
    m = steward.maintainer
    bug = m.open_issue(repo, "Cart total ignores discount", APPROVED, labels=["bug", "refine"])
    story = m.open_issue(repo, "Story: keep promotions", STORY)
    _attach(steward, repo, bug, story)
    steward.settle()
    assert refinement_labels(steward, repo, story) == ["refinement:approved"]

    _detach(steward, repo, bug, story)
    steward.settle()
    assert refinement_labels(steward, repo, story) == []
    assert refinement_labels(steward, repo, bug) == ["refinement:approved"], "the bug keeps its verdict"
    [verdict] = verdict_comments(steward, repo, bug)
    assert f"#{story}" not in str(verdict["body"]), "its verdict no longer lists the story"


def test_a_sub_issue_removed_while_steward_was_down_is_released_by_the_catch_up(steward: Steward) -> None:
    """Removing a sub-issue leaves its parent's `updated_at` as it was, as attaching one does: the
    refinement's reconciler reads each story still stamped pending, and releases one whose bug no longer has
    it."""
    repo = steward.new_repo()
    m = steward.maintainer
    bug = m.open_issue(repo, "Cart total ignores discount", REJECTED, labels=["bug", "refine"])
    story = m.open_issue(repo, "Keep promotions when the currency changes", "Keep the applied promotions.")
    kept = m.open_issue(repo, "Keep coupons when the cart is shared", "Keep the coupons.")
    _attach(steward, repo, bug, story)
    _attach(steward, repo, bug, kept)
    steward.settle(then_next_second=True)
    assert (
        refinement_labels(steward, repo, story)
        == refinement_labels(steward, repo, kept)
        == ["refinement:pending"]
    )
    while_steward_is_down(steward, repo, lambda: _detach(steward, repo, bug, story))
    assert refinement_labels(steward, repo, story) == ["refinement:pending"], "Steward heard nothing"
    catch_up(steward, repo)
    assert refinement_labels(steward, repo, story) == [], "released"
    assert sticky_of(steward, repo, story, "ra9-story-released") is not None
    assert refinement_labels(steward, repo, kept) == ["refinement:pending"], "still attached: still a story"
    assert sticky_of(steward, repo, kept, "ra9-story") is not None
