"""Locked conversations on both forges: who may lock, what a lock shows and announces, and who may still
comment, edit comments, react and label there."""

from __future__ import annotations

import httpx2

from bot.sandbox.server import SandboxServer

from .helpers import (
    CaptureServer,
    OpenApiCheck,
    client,
    collaborate,
    gitea_client,
    idle,
    recorded,
    schema_errors,
)
from .test_sandbox_gitea import GiteaApiCheck
from .test_sandbox_records import _app_token
from .test_sandbox_webhooks import _hook

LOCKED = "Unable to create comment because issue is locked."


def test_github_locks_answer_204_show_the_reason_and_announce_it(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, capture: CaptureServer, openapi: OpenApiCheck
) -> None:
    """FORGE-FACTS "Locks": `PUT /issues/{n}/lock` (optional `lock_reason`: off-topic, too heated, resolved,
    spam) and `DELETE …/lock` answer 204 (octokit/fixtures `lock-issue`, recorded); the issue carries
    `locked` and `active_lock_reason`; `issues.locked` / `issues.unlocked` are sent (octokit/webhooks
    schemas). Locking needs push access; another reason is refused."""
    assert [r["status"] for r in recorded("lock-issue")] == [204, 204]
    _hook(alice, repo, capture)
    n = alice.post(repo + "/issues", json={"title": "Heated"}).json()["number"]
    assert (
        openapi(alice.put(f"{repo}/issues/{n}/lock", json={"lock_reason": "too heated"})).status_code == 204
    )
    shown = openapi(alice.get(f"{repo}/issues/{n}")).json()
    assert (shown["locked"], shown["active_lock_reason"]) == (True, "too heated")
    assert alice.put(f"{repo}/issues/{n}/lock", json={"lock_reason": "boring"}).status_code == 422
    with client(sandbox, "bob-token") as bob:
        assert bob.delete(f"{repo}/issues/{n}/lock").status_code == 403
    assert openapi(alice.delete(f"{repo}/issues/{n}/lock")).status_code == 204
    shown = alice.get(f"{repo}/issues/{n}").json()
    assert (shown["locked"], shown["active_lock_reason"]) == (False, None)
    idle(sandbox)
    said = [(r.payload["action"], r.payload) for r in capture.capture.received if r.event == "issues"]
    assert [a for a, _ in said] == ["opened", "locked", "unlocked"]
    assert said[1][1]["issue"]["active_lock_reason"] == "too heated"
    for action, payload in said:
        assert schema_errors("issues", action, payload) == []


def test_github_locked_threads_take_comments_from_writers_only_and_never_from_apps(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str
) -> None:
    """docs.github.com "Locking conversations": while locked, only people with write access add, hide and
    delete comments, and reactions are disabled for all users. A GitHub App's installation token is refused
    whatever its permission: 403 "Unable to create comment because issue is locked." (probot/stale#25,
    renovatebot/renovate#6215). The sandbox refuses the App's edits of its own comments there too (no
    source says GitHub allows them); labels and state changes are not part of the conversation and still
    work for the App."""
    n = alice.post(repo + "/issues", json={"title": "Old news"}).json()["number"]
    with client(sandbox, _app_token(sandbox, "alice", "demo")) as app:
        before = app.post(f"{repo}/issues/{n}/comments", json={"body": "before the lock"})
        assert before.status_code == 201
        alice.put(f"{repo}/issues/{n}/lock", json={"lock_reason": "resolved"}).raise_for_status()
        refused = app.post(f"{repo}/issues/{n}/comments", json={"body": "after"})
        assert (refused.status_code, refused.json()["message"]) == (403, LOCKED)
        edit = app.patch(f"{repo}/issues/comments/{before.json()['id']}", json={"body": "edited"})
        assert (edit.status_code, edit.json()["message"]) == (403, LOCKED)
        assert app.post(f"{repo}/issues/{n}/labels", json={"labels": ["bug"]}).status_code == 200
        assert app.patch(f"{repo}/issues/{n}", json={"state": "closed"}).json()["state"] == "closed"
        assert app.post(f"{repo}/issues/{n}/reactions", json={"content": "eyes"}).status_code == 403
    with client(sandbox, "carol-token") as carol:
        assert carol.post(f"{repo}/issues/{n}/comments", json={"body": "me too"}).json()["message"] == LOCKED
    collaborate(alice, repo, "bob", "push")
    with client(sandbox, "bob-token") as bob:
        assert bob.post(f"{repo}/issues/{n}/comments", json={"body": "a writer"}).status_code == 201
        assert bob.post(f"{repo}/issues/{n}/reactions", json={"content": "+1"}).status_code == 403
    assert alice.get(f"{repo}/issues/{n}").json()["labels"][0]["name"] == "bug"


def test_gitea_locks_and_who_may_comment_there(sandbox: SandboxServer, g: httpx2.Client) -> None:
    """Gitea — `PUT/DELETE /repos/{o}/{r}/issues/{index}/lock` (routers/api/v1/repo/issue_lock.go, added in
    2025 by go-gitea/gitea#34165): 204; already so 208; a reason outside `[repository.issue] LOCK_REASONS`
    400 "reason not valid"; without write access 403. `is_locked` shows it; no webhook. A locked issue takes
    comments only from those who may write its issues (issue_comment.go CreateIssueComment: 403 "You cannot
    comment on a locked issue."), and reactions likewise (issue_reaction.go: "no permission to change
    reaction"); its poster may still edit a comment (editIssueComment does not look at the lock)."""
    check = GiteaApiCheck.load()
    g.post("/user/repos", json={"name": "glock"}).raise_for_status()
    repo = "/repos/alice/glock"
    n = g.post(repo + "/issues", json={"title": "Heated"}).json()["number"]
    with gitea_client(sandbox, "bob-token") as gbob:
        mine = gbob.post(f"{repo}/issues/{n}/comments", json={"body": "first"}).json()["id"]
        assert gbob.put(f"{repo}/issues/{n}/lock", json={}).status_code == 403
        assert check(g.put(f"{repo}/issues/{n}/lock", json={"lock_reason": "Too heated"})).status_code == 204
        assert g.put(f"{repo}/issues/{n}/lock", json={}).status_code == 208
        assert g.put(f"{repo}/issues/{n}/lock", json={"lock_reason": "boring"}).status_code == 400
        assert check(g.get(f"{repo}/issues/{n}")).json()["is_locked"] is True
        refused = gbob.post(f"{repo}/issues/{n}/comments", json={"body": "again"})
        assert (refused.status_code, refused.json()["message"]) == (
            403,
            "You cannot comment on a locked issue.",
        )
        assert gbob.patch(f"{repo}/issues/comments/{mine}", json={"body": "edited"}).status_code == 200
        reacted = gbob.post(f"{repo}/issues/{n}/reactions", json={"content": "+1"})
        assert (reacted.status_code, reacted.json()["message"]) == (403, "no permission to change reaction")
        assert g.post(f"{repo}/issues/{n}/comments", json={"body": "the owner"}).status_code == 201
        assert check(g.delete(f"{repo}/issues/{n}/lock")).status_code == 204
        assert g.delete(f"{repo}/issues/{n}/lock").status_code == 208
        assert gbob.post(f"{repo}/issues/{n}/comments", json={"body": "open again"}).status_code == 201
    idle(sandbox)


def github_lock_routes(check: OpenApiCheck, alice: httpx2.Client) -> None:
    """This module's GitHub routes, for the every-operation test (test_sandbox_openapi.py)."""
    alice.post("/user/repos", json={"name": "locks"}).raise_for_status()
    n = alice.post("/repos/alice/locks/issues", json={"title": "t"}).json()["number"]
    check(alice.put(f"/repos/alice/locks/issues/{n}/lock", json={"lock_reason": "spam"}))
    check(alice.delete(f"/repos/alice/locks/issues/{n}/lock"))


def gitea_lock_routes(check: GiteaApiCheck, g: httpx2.Client) -> None:
    """This module's Gitea routes, for the every-operation test (test_sandbox_gitea.py)."""
    g.post("/user/repos", json={"name": "glocks"}).raise_for_status()
    n = g.post("/repos/alice/glocks/issues", json={"title": "t"}).json()["number"]
    check(g.put(f"/repos/alice/glocks/issues/{n}/lock", json={"lock_reason": "spam"}))
    check(g.delete(f"/repos/alice/glocks/issues/{n}/lock"))
