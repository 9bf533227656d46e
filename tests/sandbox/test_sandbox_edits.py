"""Routes independent clients tripped over (issue 22 items 2–7): editing pull requests on both forges (and
Gitea's draft as the WIP title prefix), Gitea's single-file contents writes with their whole commit and
`new_branch`."""

from __future__ import annotations

import base64

import httpx2

from bot.sandbox.server import SandboxServer

from .helpers import CaptureServer, OpenApiCheck, client, idle
from .test_sandbox_gitea import GiteaApiCheck
from .test_sandbox_records import github_pull


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def github_edit_pull(check: OpenApiCheck, alice: httpx2.Client, repo: str) -> None:
    n, _ = github_pull(alice, repo, "edited")
    head = alice.get(repo + "/git/ref/heads/main").json()["object"]["sha"]
    alice.post(repo + "/git/refs", json={"ref": "refs/heads/next", "sha": head}).raise_for_status()
    edited = check(alice.patch(f"{repo}/pulls/{n}", json={"title": "Fix it", "body": "why", "base": "next"}))
    assert (edited.json()["title"], edited.json()["body"], edited.json()["base"]["ref"]) == (
        "Fix it",
        "why",
        "next",
    )
    closed = check(alice.patch(f"{repo}/pulls/{n}", json={"state": "closed"})).json()
    assert (closed["state"], closed["merged"]) == ("closed", False)
    assert check(alice.patch(f"{repo}/pulls/{n}", json={"state": "open"})).json()["state"] == "open"
    bad = check(alice.patch(f"{repo}/pulls/{n}", json={"base": "nowhere"}))
    assert (bad.status_code, bad.json()["errors"][0]["field"]) == (422, "base")


def test_github_pull_requests_can_be_edited(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, openapi: OpenApiCheck, capture: CaptureServer
) -> None:
    """GitHub `PATCH /repos/{o}/{r}/pulls/{n}` — docs.github.com REST "Update a pull request": 200 with the
    pull request (title, body, state, base; a base that does not exist 422); only its author or a writer
    may (403 otherwise); `pull_request` edited / closed / reopened webhooks."""
    hook = {"config": {"url": capture.hook_url, "content_type": "json"}, "events": ["pull_request"]}
    alice.post(repo + "/hooks", json=hook).raise_for_status()
    github_edit_pull(openapi, alice, repo)
    with client(sandbox, "bob-token") as bob:
        assert bob.patch(f"{repo}/pulls/1", json={"title": "mine now"}).status_code == 403
    idle(sandbox)
    actions = [r.payload["action"] for r in capture.capture.received if r.event == "pull_request"]
    assert actions == ["opened", "edited", "closed", "reopened"]


def gitea_edit_pull(check: GiteaApiCheck, g: httpx2.Client, repo: str) -> None:
    g.post(repo + "/branches", json={"new_branch_name": "wip", "old_ref_name": "main"}).raise_for_status()
    g.post(
        f"{repo}/contents/w.txt", json={"message": "w", "content": _b64("w"), "branch": "wip"}
    ).raise_for_status()
    made = g.post(repo + "/pulls", json={"title": "WIP: Fix", "head": "wip", "base": "main"}).json()
    assert made["draft"] is True
    ready = check(g.patch(f"{repo}/pulls/{made['number']}", json={"title": "Fix"}))
    assert (ready.status_code, ready.json()["title"], ready.json()["draft"]) == (201, "Fix", False)
    closed = check(g.patch(f"{repo}/pulls/{made['number']}", json={"state": "closed"}))
    assert closed.json()["state"] == "closed"


def test_gitea_pull_requests_can_be_edited_and_made_ready(sandbox: SandboxServer, g: httpx2.Client) -> None:
    """Gitea `PATCH /api/v1/repos/{o}/{r}/pulls/{index}` — routers/api/v1/repo/pull.go EditPullRequest:
    201 with the pull request. Gitea has no draft field: dropping the WIP prefix from the title
    (`WORK_IN_PROGRESS_PREFIXES`, default "WIP:", "[WIP]"; models/issues/pull.go) makes it ready."""
    g.post("/user/repos", json={"name": "gedit"}).raise_for_status()
    gitea_edit_pull(GiteaApiCheck.load(), g, "/repos/alice/gedit")
    missing = g.patch("/repos/alice/gedit/pulls/1", json={"base": "nowhere"})
    assert missing.status_code == 404


def gitea_single_file(check: GiteaApiCheck, g: httpx2.Client, repo: str) -> None:
    made = check(
        g.post(
            f"{repo}/contents/fix.txt",
            json={"message": "fix", "content": _b64("1"), "branch": "main", "new_branch": "fix-1"},
        )
    ).json()
    commit = made["commit"]
    assert {"sha", "url", "html_url", "author", "committer", "tree", "parents", "message"} <= set(commit)
    assert commit["author"]["name"] == "alice" and commit["tree"]["sha"] and len(commit["parents"]) == 1
    assert check(g.get(f"{repo}/branches/fix-1")).json()["commit"]["id"] == commit["sha"]
    assert "fix.txt" not in {e["name"] for e in g.get(f"{repo}/contents").json()}
    pull = check(g.post(repo + "/pulls", json={"title": "Fix", "head": "fix-1", "base": "main"}))
    assert pull.status_code == 201
    sha = made["content"]["sha"]
    updated = check(
        g.put(
            f"{repo}/contents/fix.txt",
            json={"message": "again", "content": _b64("2"), "sha": sha, "branch": "fix-1"},
        )
    ).json()
    assert updated["commit"]["parents"][0]["sha"] == commit["sha"]
    again = g.post(
        f"{repo}/contents/other.txt", json={"message": "x", "content": _b64("x"), "new_branch": "fix-1"}
    )
    assert (again.status_code, again.json()["message"]) == (422, "branch already exists [name: fix-1]")


def test_gitea_single_file_writes_answer_the_whole_commit_and_honour_new_branch(
    sandbox: SandboxServer, g: httpx2.Client
) -> None:
    """Gitea `POST|PUT /api/v1/repos/{o}/{r}/contents/{path}` (swagger
    `CreateFileOptions`/`UpdateFileOptions`):
    the answer's `commit` is services/repository/files/file.go GetFileCommitResponse — `html_url`, `author`,
    `committer`, `tree`, `parents` besides `sha`, `message`, `url`; `new_branch` makes that branch from
    `branch` and commits there (an existing one: 422, routers/api/v1/repo/file.go)."""
    g.post("/user/repos", json={"name": "gfile"}).raise_for_status()
    gitea_single_file(GiteaApiCheck.load(), g, "/repos/alice/gfile")
