"""Pull requests from forks on both forges: a fork owned by another user, a pull request whose head
repository is the fork, and one whose fork was deleted (head repository null), with their webhooks."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import httpx2
import pytest

from bot.sandbox.server import SandboxServer

from .helpers import CaptureServer, OpenApiCheck, client, gitea_client, idle, schema_errors
from .test_sandbox_gitea import SECRET, GiteaApiCheck


@pytest.fixture
def bob(sandbox: SandboxServer) -> Iterator[httpx2.Client]:
    with client(sandbox, "bob-token") as c:
        yield c


@pytest.fixture
def gbob(sandbox: SandboxServer) -> Iterator[httpx2.Client]:
    with gitea_client(sandbox, "bob-token") as c:
        yield c


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


# --- pull requests from forks ----------------------------------------------------------------------------


def github_fork_pull(check: OpenApiCheck, alice: httpx2.Client, bob: httpx2.Client, repo: str) -> int:
    """bob forks alice's `repo`, commits on a branch of his fork and opens a pull request from it."""
    name = repo.rsplit("/", 1)[1]
    made = check(bob.post(repo + "/forks", json={}))
    assert made.status_code == 202
    assert (made.json()["full_name"], made.json()["fork"], made.json()["parent"]["full_name"]) == (
        f"bob/{name}",
        True,
        repo.removeprefix("/repos/"),
    )
    fork = f"/repos/bob/{name}"
    head = bob.get(fork + "/git/ref/heads/main").json()["object"]["sha"]
    bob.post(fork + "/git/refs", json={"ref": "refs/heads/fix", "sha": head}).raise_for_status()
    bob.put(fork + "/contents/fix.txt", json={"message": "fix", "content": _b64("fix\n"), "branch": "fix"})
    opened = check(bob.post(repo + "/pulls", json={"title": "Fix", "head": "bob:fix", "base": "main"}))
    assert opened.status_code == 201, opened.text
    pr = opened.json()
    assert (pr["head"]["label"], pr["head"]["repo"]["full_name"], pr["base"]["repo"]["full_name"]) == (
        "bob:fix",
        f"bob/{name}",
        repo.removeprefix("/repos/"),
    )
    assert [p["number"] for p in check(alice.get(repo + "/pulls", params={"head": "bob:fix"})).json()] == [
        pr["number"]
    ]
    check(alice.get(f"{repo}/pulls/{pr['number']}/files"))
    assert check(bob.delete(fork)).status_code == 204
    gone = check(alice.get(f"{repo}/pulls/{pr['number']}")).json()
    assert (gone["head"]["repo"], gone["head"]["label"], gone["head"]["sha"]) == (
        None,
        "bob:fix",
        pr["head"]["sha"],
    )
    return int(pr["number"])


def test_github_pull_requests_from_forks_and_from_deleted_forks(
    sandbox: SandboxServer,
    alice: httpx2.Client,
    bob: httpx2.Client,
    repo: str,
    openapi: OpenApiCheck,
    capture: CaptureServer,
) -> None:
    """GitHub — docs.github.com REST "Create a fork" (202, `fork`, `parent`, `source`), "Create a pull
    request" (`head` as `username:branch` of a fork), "Delete a repository" (204; admins only). A pull
    request's `head.repo` is the fork, and null once the fork is deleted (REST description: nullable); its
    commits stay. Webhooks: `pull_request` opened / synchronize with the fork as `head.repo`, valid against
    octokit's schemas."""
    hook = {"config": {"url": capture.hook_url, "content_type": "json"}, "events": ["pull_request"]}
    alice.post(repo + "/hooks", json=hook).raise_for_status()
    assert bob.delete(repo).status_code == 403
    n = github_fork_pull(openapi, alice, bob, repo)
    assert [c["commit"]["message"] for c in alice.get(f"{repo}/pulls/{n}/commits").json()] == ["fix"]
    idle(sandbox)
    got = [r for r in capture.capture.received if r.event == "pull_request"]
    assert [r.payload["action"] for r in got] == ["opened"]
    assert got[0].payload["pull_request"]["head"]["repo"]["full_name"] == "bob/demo"
    assert schema_errors("pull_request", "opened", got[0].payload) == []
    alice.patch(f"{repo}/issues/{n}", json={"state": "closed"}).raise_for_status()
    idle(sandbox)
    closed = [r for r in capture.capture.received if r.event == "pull_request"][-1]
    assert closed.payload["action"] == "closed" and closed.payload["pull_request"]["head"]["repo"] is None
    assert schema_errors("pull_request", "closed", closed.payload) == []


def test_a_push_to_the_forks_branch_moves_the_pull_request(
    sandbox: SandboxServer, alice: httpx2.Client, bob: httpx2.Client, repo: str, capture: CaptureServer
) -> None:
    """Both forges synchronise a pull request when its head branch — in the fork — moves (GitHub
    `pull_request` synchronize)."""
    bob.post(repo + "/forks", json={}).raise_for_status()
    head = bob.get("/repos/bob/demo/git/ref/heads/main").json()["object"]["sha"]
    bob.post("/repos/bob/demo/git/refs", json={"ref": "refs/heads/fix", "sha": head}).raise_for_status()
    put = {"message": "one", "content": _b64("1\n"), "branch": "fix"}
    bob.put("/repos/bob/demo/contents/a.txt", json=put).raise_for_status()
    n = bob.post(repo + "/pulls", json={"title": "Fix", "head": "bob:fix", "base": "main"}).json()["number"]
    hook = {"config": {"url": capture.hook_url, "content_type": "json"}, "events": ["pull_request"]}
    alice.post(repo + "/hooks", json=hook).raise_for_status()
    put = {"message": "two", "content": _b64("2\n"), "branch": "fix"}
    after = bob.put("/repos/bob/demo/contents/b.txt", json=put).json()["commit"]["sha"]
    assert alice.get(f"{repo}/pulls/{n}").json()["head"]["sha"] == after
    assert [c["commit"]["message"] for c in alice.get(f"{repo}/pulls/{n}/commits").json()] == ["one", "two"]
    idle(sandbox)
    synced = [r for r in capture.capture.received if r.event == "pull_request"]
    assert [(r.payload["action"], r.payload["after"]) for r in synced] == [("synchronize", after)]


def gitea_fork_pull(check: GiteaApiCheck, g: httpx2.Client, gbob: httpx2.Client, repo: str) -> int:
    name = repo.rsplit("/", 1)[1]
    made = check(gbob.post(repo + "/forks", json={}))
    assert made.status_code == 202
    assert (made.json()["full_name"], made.json()["fork"], made.json()["parent"]["full_name"]) == (
        f"bob/{name}",
        True,
        repo.removeprefix("/repos/"),
    )
    fork = f"/repos/bob/{name}"
    fork_id = made.json()["id"]
    gbob.post(fork + "/branches", json={"new_branch_name": "fix", "old_ref_name": "main"}).raise_for_status()
    body = {"message": "fix", "content": _b64("fix\n"), "branch": "fix"}
    gbob.post(fork + "/contents/fix.txt", json=body).raise_for_status()
    opened = check(gbob.post(repo + "/pulls", json={"title": "Fix", "head": "bob:fix", "base": "main"}))
    pr = opened.json()
    assert (pr["head"]["repo_id"], pr["head"]["repo"]["full_name"], pr["head"]["ref"]) == (
        fork_id,
        f"bob/{name}",
        "fix",
    )
    assert check(gbob.delete(fork)).status_code == 204
    gone = check(g.get(f"{repo}/pulls/{pr['number']}")).json()
    assert (gone["head"]["repo_id"], gone["head"]["repo"], gone["head"]["ref"]) == (
        -1,
        None,
        f"refs/pull/{pr['number']}/head",
    )
    assert (gone["head"]["label"], gone["head"]["sha"]) == ("fix", pr["head"]["sha"])
    return int(pr["number"])


def test_gitea_pull_requests_from_forks_and_from_deleted_forks(
    sandbox: SandboxServer, g: httpx2.Client, gbob: httpx2.Client, capture: CaptureServer
) -> None:
    """Gitea — routers/api/v1/repo/fork.go CreateFork (202, `fork`, `parent`), CreatePullRequest (`head`
    `owner:branch` of a fork), repo.go Delete (204, owner only). services/convert/pull.go ToAPIPullRequest:
    the head is `repo_id` -1, `repo` null, `ref` refs/pull/N/head unless its repository still exists. The
    `pull_request` webhook names the fork as `head.repo`."""
    g.post("/user/repos", json={"name": "gfork"}).raise_for_status()
    repo = "/repos/alice/gfork"
    hook = {
        "type": "gitea",
        "config": {"url": capture.hook_url, "content_type": "json", "secret": SECRET},
        "events": ["pull_request"],
        "active": True,
    }
    g.post(repo + "/hooks", json=hook).raise_for_status()
    assert gbob.delete(repo).status_code == 403
    n = gitea_fork_pull(GiteaApiCheck.load(), g, gbob, repo)
    assert [c["commit"]["message"].strip() for c in g.get(f"{repo}/pulls/{n}/commits").json()] == ["fix"]
    idle(sandbox)
    opened = [r for r in capture.capture.received if r.headers.get("x-gitea-event") == "pull_request"]
    assert opened[0].payload["action"] == "opened"
    assert opened[0].payload["pull_request"]["head"]["repo"]["full_name"] == "bob/gfork"
