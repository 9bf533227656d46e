"""Closing and reopening on both forges (docs/forge-port.md "Closing, reopening, duplicates"): who may, the
state reasons GitHub takes (`duplicate` and its `duplicate_issue_id`), and who opened what (the listings
Steward's welcome reads)."""

from __future__ import annotations

import httpx2

from bot.sandbox.server import SandboxServer

from .helpers import OpenApiCheck, client, collaborate, gitea_client
from .test_sandbox_gitea import GiteaApiCheck


def test_github_author_reopens_only_what_they_closed(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, openapi: OpenApiCheck
) -> None:
    """GitHub: an issue's author may close it; without triage access they may reopen it only when they
    closed it themselves (isaacs/github#583, slapperwan/gh4a#467) — otherwise 422 "Validation Failed" with
    no errors (GitHawkApp/GitHawk#1992). Triage may reopen anything; a stranger may do neither."""
    collaborate(alice, repo, "bob", "triage")
    with client(sandbox, "carol-token") as carol, client(sandbox, "dave-token") as dave:
        n = carol.post(repo + "/issues", json={"title": "mine"}).json()["number"]
        assert dave.patch(f"{repo}/issues/{n}", json={"state": "closed"}).status_code == 403
        assert (
            openapi(carol.patch(f"{repo}/issues/{n}", json={"state": "closed"})).json()["state"] == "closed"
        )
        assert alice.get(f"{repo}/issues/{n}").json()["closed_by"]["login"] == "carol"
        assert carol.patch(f"{repo}/issues/{n}", json={"state": "open"}).json()["state"] == "open"
        # closed by someone else: the author may not reopen it
        assert alice.patch(f"{repo}/issues/{n}", json={"state": "closed"}).status_code == 200
        refused = carol.patch(f"{repo}/issues/{n}", json={"state": "open"})
        assert (refused.status_code, refused.json()["message"], refused.json().get("errors")) == (
            422,
            "Validation Failed",
            [],
        )
        assert alice.get(f"{repo}/issues/{n}").json()["state"] == "closed"
    with client(sandbox, "bob-token") as bob:
        answer = bob.patch(f"{repo}/issues/{n}", json={"state": "open"}).json()
        assert (answer["state"], answer["state_reason"]) == ("open", "reopened")


def test_github_state_reasons_and_duplicate_of(
    alice: httpx2.Client, repo: str, openapi: OpenApiCheck
) -> None:
    """`state_reason` is one of completed, not_planned, duplicate, reopened (another: 422); with `duplicate`,
    `duplicate_issue_id` names an issue by its global id, which must exist, be readable and not be the issue
    itself (422 on that field otherwise)."""
    first = alice.post(repo + "/issues", json={"title": "first"}).json()
    n = alice.post(repo + "/issues", json={"title": "again"}).json()["number"]
    bad = alice.patch(f"{repo}/issues/{n}", json={"state": "closed", "state_reason": "wontfix"})
    assert (bad.status_code, bad.json()["errors"][0]["field"]) == (422, "state_reason")
    for wrong in (first["id"] + 10_000, alice.get(f"{repo}/issues/{n}").json()["id"]):
        refused = alice.patch(
            f"{repo}/issues/{n}",
            json={"state": "closed", "state_reason": "duplicate", "duplicate_issue_id": wrong},
        )
        assert (refused.status_code, refused.json()["errors"][0]["field"]) == (422, "duplicate_issue_id")
    assert alice.get(f"{repo}/issues/{n}").json()["state"] == "open"
    closed = openapi(
        alice.patch(
            f"{repo}/issues/{n}",
            json={"state": "closed", "state_reason": "duplicate", "duplicate_issue_id": first["id"]},
        )
    ).json()
    assert (closed["state"], closed["state_reason"]) == ("closed", "duplicate")


def test_github_lists_who_opened_what(sandbox: SandboxServer, alice: httpx2.Client, repo: str) -> None:
    """`GET /issues?creator=&state=all&sort=created&direction=asc` lists a person's issues and pull requests,
    oldest first (the first-time contributor's check)."""
    with client(sandbox, "carol-token") as carol:
        for title in ("one", "two"):
            carol.post(repo + "/issues", json={"title": title})
    alice.post(repo + "/issues", json={"title": "alice's"})
    oldest = alice.get(repo + "/issues?creator=carol&state=all&sort=created&direction=asc&per_page=1").json()
    assert [i["title"] for i in oldest] == ["one"]


def test_gitea_author_closes_and_reopens_whoever_closed_it(sandbox: SandboxServer, g: httpx2.Client) -> None:
    """Gitea (routers/api/v1/repo/issue.go EditIssue): its poster or a writer may edit an issue, and
    closeOrReopenIssue changes its state either way whoever closed it; a stranger gets 403. It has no state
    reason. `created_by` lists a person's issues and pull requests, newest first (SortByCreatedDesc); a login
    that names nobody is 404 (getUserIDForFilter)."""
    check = GiteaApiCheck.load()
    g.post("/user/repos", json={"name": "gclose"}).raise_for_status()
    repo = "/repos/alice/gclose"
    with gitea_client(sandbox, "carol-token") as carol, gitea_client(sandbox, "dave-token") as dave:
        n = carol.post(repo + "/issues", json={"title": "mine"}).json()["number"]
        carol.post(repo + "/issues", json={"title": "later"})
        assert dave.patch(f"{repo}/issues/{n}", json={"state": "closed"}).status_code == 403
        assert check(g.patch(f"{repo}/issues/{n}", json={"state": "closed"})).json()["state"] == "closed"
        assert check(carol.patch(f"{repo}/issues/{n}", json={"state": "open"})).json()["state"] == "open"
        listed = check(g.get(repo + "/issues", params={"created_by": "carol", "state": "all"})).json()
        assert [i["title"] for i in listed] == ["later", "mine"]
        nobody = g.get(repo + "/issues", params={"created_by": "nobody-here", "state": "all"})
        assert nobody.status_code == 404
