"""Webhooks Steward does not act on are answered quietly, on both forges (issue 39's leftovers): a review
requested and withdrawn (GitHub `pull_request` `review_requested` / `review_request_removed`; Gitea
`pull_request` of type `pull_request_review_request`) — delivered by the sandbox as each forge sends them,
acknowledged with 202, and nothing written back; and an issue's assignees changed (both forges' `issues`
`assigned` / `unassigned`), accepted and handled (the overview refreshes on them where it is switched on) —
without it, nothing written either."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import Steward


def deliveries(steward: Steward, repo: str, event: str, actions: set[str]) -> list[dict[str, Any]]:
    found = steward.maintainer.call("GET", f"{steward.sandbox.url}/_sandbox/deliveries?event={event}")
    return [d for d in found if d["repository"] == repo and d["action"] in actions]


def test_a_review_requested_and_withdrawn_is_acknowledged_and_nothing_is_written(steward: Steward) -> None:
    repo = steward.new_repo()
    steward.maintainer.add_collaborator(repo, "triager", "triage" if steward.forge == "github" else "write")
    pr = steward.maintainer.open_pull(repo, "Add export", "export")
    steward.settle()
    steward.clear_requests()
    before = len(steward.bot_comments(repo, pr))
    url = f"/repos/{repo}/pulls/{pr}/requested_reviewers"
    steward.maintainer.call("POST", url, {"reviewers": ["triager"]})
    steward.maintainer.call("DELETE", url, {"reviewers": ["triager"]})
    steward.settle()
    got = deliveries(steward, repo, "pull_request", {"review_requested", "review_request_removed"})
    assert [(d["action"], d["status_code"]) for d in got] == [
        ("review_requested", 202),
        ("review_request_removed", 202),
    ]
    assert all("ignored" in str(d["response_body"]) for d in got)
    assert len(steward.bot_comments(repo, pr)) == before
    assert [r for r in steward.bot_requests(repo) if r["method"] != "GET"] == []


def test_an_assignee_added_and_removed_is_handled_quietly(steward: Steward) -> None:
    repo = steward.new_repo()
    steward.maintainer.add_collaborator(repo, "triager", "triage" if steward.forge == "github" else "write")
    number = steward.maintainer.open_issue(repo, "Export the report as CSV")
    steward.settle()
    steward.clear_requests()
    before = len(steward.bot_comments(repo, number))
    steward.maintainer.call("PATCH", f"/repos/{repo}/issues/{number}", {"assignees": ["triager"]})
    steward.maintainer.call("PATCH", f"/repos/{repo}/issues/{number}", {"assignees": []})
    steward.settle()
    got = deliveries(steward, repo, "issues", {"assigned", "unassigned"})
    assert [(d["action"], d["status_code"]) for d in got] == [("assigned", 202), ("unassigned", 202)]
    assert not any("ignored" in str(d["response_body"]) or "error" in str(d["response_body"]) for d in got)
    assert len(steward.bot_comments(repo, number)) == before
    assert [r for r in steward.bot_requests(repo) if r["method"] != "GET"] == []
