"""Who each forge lets be assigned (FORGE-FACTS "Assignees"; bot/sandbox/shared/assignee_ops.py cites the
sources): GitHub assigns collaborators and whoever commented on the issue and drops the others without an
error (`POST …/issues/{n}/assignees` answers 201 with the issue; `GET …/issues/{n}/assignees/{login}` 204
or 404); Gitea assigns only people with write access (models/perm/access/repo_permission.go
``CanBeAssigned``), lists them at `GET /repos/{o}/{r}/assignees`, and an edit naming anyone else fails whole
with 500 (services/issue/assignee.go ``validateAssignee``, routers/api/v1/repo/issue.go ``EditIssue``)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2

from bot.sandbox.server import SandboxServer

from .helpers import CaptureServer, OpenApiCheck, client, collaborate, idle, schema_errors
from .test_sandbox_gitea import GiteaApiCheck


def github_assignee_routes(check: OpenApiCheck, alice: httpx2.Client) -> None:
    """This module's GitHub routes, for the every-operation test (test_sandbox_openapi.py)."""
    alice.post("/user/repos", json={"name": "assigning"}).raise_for_status()
    repo = "/repos/alice/assigning"
    n = alice.post(repo + "/issues", json={"title": "t"}).json()["number"]
    check(alice.get(f"{repo}/issues/{n}/assignees/alice"))
    check(alice.post(f"{repo}/issues/{n}/assignees", json={"assignees": ["alice"]}))
    check(alice.request("DELETE", f"{repo}/issues/{n}/assignees", json={"assignees": ["alice"]}))


def gitea_assignee_routes(check: GiteaApiCheck, g: httpx2.Client) -> None:
    """This module's Gitea routes, for the every-operation test (test_sandbox_gitea.py)."""
    g.post("/user/repos", json={"name": "gassigning"}).raise_for_status()
    check(g.get("/repos/alice/gassigning/assignees"))


def test_github_assigns_collaborators_and_commenters_and_drops_the_others(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str
) -> None:
    collaborate(alice, repo, "bob", "pull")  # a collaborator with read access
    number = alice.post(repo + "/issues", json={"title": "t"}).json()["number"]
    with client(sandbox, "dave-token") as dave:
        assert dave.post(f"{repo}/issues/{number}/comments", json={"body": "mine?"}).status_code == 201
    assignees = f"{repo}/issues/{number}/assignees"
    assert alice.get(assignees + "/carol").status_code == 404  # neither collaborator nor commenter
    assert alice.get(assignees + "/dave").status_code == 204
    answer = alice.post(assignees, json={"assignees": ["bob", "carol", "dave"]})
    assert answer.status_code == 201
    assert [a["login"] for a in answer.json()["assignees"]] == ["bob", "dave"]
    gone = alice.request("DELETE", assignees, json={"assignees": ["bob"]})
    assert gone.status_code == 200 and [a["login"] for a in gone.json()["assignees"]] == ["dave"]
    # Someone without triage access changes nothing.
    with client(sandbox, "dave-token") as dave:
        assert dave.post(assignees, json={"assignees": ["bob"]}).json()["assignees"][0]["login"] == "dave"


def test_gitea_assigns_only_people_with_write_access_and_fails_the_whole_edit_otherwise(
    alice: httpx2.Client, g: httpx2.Client
) -> None:
    assert g.post("/user/repos", json={"name": "assign"}).status_code == 201
    repo = "/repos/alice/assign"
    collaborate(alice, repo, "bob", "write")
    collaborate(alice, repo, "carol", "read")
    assert {u["login"] for u in g.get(repo + "/assignees").json()} == {"alice", "bob"}
    number = g.post(repo + "/issues", json={"title": "t"}).json()["number"]
    assert g.post(f"{repo}/issues/{number}/comments", json={"body": "x"}).status_code == 201
    refused = g.patch(f"{repo}/issues/{number}", json={"assignees": ["bob", "carol"]})
    assert refused.status_code == 500
    assert g.get(f"{repo}/issues/{number}").json()["assignees"] is None  # nobody was assigned
    assert g.post(repo + "/issues", json={"title": "u", "assignees": ["carol"]}).status_code == 422
    done = g.patch(f"{repo}/issues/{number}", json={"assignees": ["bob"]})
    assert done.status_code == 201 and [a["login"] for a in done.json()["assignees"]] == ["bob"]


GITEA_HOOKS = Path(__file__).resolve().parents[1] / "fixtures" / "gitea" / "webhooks"


def test_an_assignee_added_or_removed_sends_its_webhook_on_both_forges(
    sandbox: SandboxServer, alice: httpx2.Client, g: httpx2.Client, repo: str, capture: CaptureServer
) -> None:
    """One webhook per person assigned or no longer assigned. GitHub: `issues` `assigned` / `unassigned`
    with `assignee` (octokit webhook schemas), whichever route changed them. Gitea
    (services/webhook/notifier.go IssueChangeAssignee; modules/webhook/type.go): X-Gitea-Event `issues`,
    type `issue_assign`, an IssuePayload without the assignee (the recorded go-playground fixture's keys).
    Assigning someone already assigned sends nothing."""
    hook = {"config": {"url": capture.hook_url, "content_type": "json", "secret": "s"}, "events": ["issues"]}
    alice.post(repo + "/hooks", json=hook).raise_for_status()
    collaborate(alice, repo, "bob", "push")
    number = alice.post(repo + "/issues", json={"title": "t"}).json()["number"]
    assignees = f"{repo}/issues/{number}/assignees"
    alice.post(assignees, json={"assignees": ["bob"]}).raise_for_status()
    alice.post(assignees, json={"assignees": ["bob"]}).raise_for_status()
    alice.request("DELETE", assignees, json={"assignees": ["bob"]}).raise_for_status()
    alice.patch(f"{repo}/issues/{number}", json={"assignees": ["alice"]}).raise_for_status()
    idle(sandbox)
    got = [r for r in capture.capture.received if r.payload.get("action") in ("assigned", "unassigned")]
    assert [(r.payload["action"], r.payload["assignee"]["login"]) for r in got] == [
        ("assigned", "bob"),
        ("unassigned", "bob"),
        ("assigned", "alice"),
    ]
    for r in got:
        assert r.headers["x-github-event"] == "issues"
        assert schema_errors("issues", r.payload["action"], r.payload) == []
    capture.capture.received.clear()
    assert g.post("/user/repos", json={"name": "assigned"}).status_code == 201
    grepo = "/repos/alice/assigned"
    collaborate(alice, grepo, "bob", "write")
    g.post(
        grepo + "/hooks",
        json={"type": "gitea", "config": {"url": capture.hook_url, "content_type": "json", "secret": "s"},
              "events": ["issue_assign"], "active": True},
    ).raise_for_status()  # fmt: skip
    n = g.post(grepo + "/issues", json={"title": "t"}).json()["number"]
    g.patch(f"{grepo}/issues/{n}", json={"assignees": ["bob"]}).raise_for_status()
    g.patch(f"{grepo}/issues/{n}", json={"assignees": ["bob"]}).raise_for_status()
    g.patch(f"{grepo}/issues/{n}", json={"assignees": ["alice"]}).raise_for_status()
    idle(sandbox)
    seen = [
        (r.headers["x-gitea-event"], r.headers["x-gitea-event-type"], r.payload["action"],
         [a["login"] for a in r.payload["issue"]["assignees"] or []])
        for r in capture.capture.received
    ]  # fmt: skip
    assert seen == [
        ("issues", "issue_assign", "assigned", ["bob"]),
        ("issues", "issue_assign", "unassigned", ["alice"]),
        ("issues", "issue_assign", "assigned", ["alice"]),
    ]
    recorded = json.loads((GITEA_HOOKS / "go-playground" / "issue-assign-event.json").read_text())
    assert set(recorded) <= set(capture.capture.received[0].payload)
