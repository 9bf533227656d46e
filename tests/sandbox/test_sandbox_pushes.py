"""Who moved a branch, as the forges' own histories say it (issue 24 §4): GitHub's repository activity and
Gitea's activity feed, with each forge's shapes — every push the sandbox applies (contents and git data
APIs, branch creation, merges) is recorded with its pusher, whatever the commit names as author."""

from __future__ import annotations

import base64
import json

import httpx2

from bot.sandbox.server import SandboxServer

from .helpers import OpenApiCheck, client, collaborate, gitea_client
from .test_sandbox_gitea import GiteaApiCheck


def _put(who: httpx2.Client, repo: str, path: str, branch: str, *, author: str = "", gitea: bool) -> str:
    body = {"message": "change", "content": base64.b64encode(path.encode()).decode(), "branch": branch}
    if author:
        domain = "noreply.sandbox" if gitea else "users.noreply.sandbox"
        body["author"] = body["committer"] = {"name": author, "email": f"{author}@{domain}"}
    made = (who.post if gitea else who.put)(f"{repo}/contents/{path}", json=body)
    assert made.status_code in (200, 201), made.text
    return str(made.json()["commit"]["sha"])


def github_push_history(check: OpenApiCheck, sandbox: SandboxServer, alice: httpx2.Client) -> None:
    """GitHub `GET /repos/{o}/{r}/activity` ("List repository activities", REST repos; octokit
    `repos/list-activities`): `activity` objects, newest first, `ref` filter in either spelling."""
    alice.post("/user/repos", json={"name": "pushes"}).raise_for_status()
    repo = "/repos/alice/pushes"
    collaborate(alice, repo, "bob", "push")
    head = alice.get(repo + "/git/ref/heads/main").json()["object"]["sha"]
    alice.post(repo + "/git/refs", json={"ref": "refs/heads/fix", "sha": head}).raise_for_status()
    with client(sandbox, "bob-token") as bob:
        spoofed = _put(bob, repo, "a.txt", "fix", author="alice", gitea=False)
    assert alice.get(f"{repo}/commits/{spoofed}").json()["author"]["login"] == "alice"
    found = check(alice.get(repo + "/activity", params={"ref": "refs/heads/fix"})).json()
    assert [(a["activity_type"], a["actor"]["login"], a["after"]) for a in found] == [
        ("push", "bob", spoofed),
        ("branch_creation", "alice", head),
    ]
    assert found[1]["before"] == "0" * 40 and found[0]["before"] == head and found[0]["timestamp"]
    assert (
        check(alice.get(repo + "/activity", params={"ref": "fix", "direction": "asc"})).json() == found[::-1]
    )
    assert alice.get(repo + "/activity", params={"activity_type": "push"}).json() == found[:1]


def test_github_activity_names_the_pusher_not_the_commit_s_author(
    sandbox: SandboxServer, alice: httpx2.Client, openapi: OpenApiCheck
) -> None:
    github_push_history(openapi, sandbox, alice)


def gitea_push_history(check: GiteaApiCheck, sandbox: SandboxServer, g: httpx2.Client) -> None:
    """Gitea `GET /api/v1/repos/{o}/{r}/activities/feeds` (swagger `repoListActivityFeeds`;
    services/feed/notifier.go PushCommits: `commit_repo`, `act_user` the pusher, `ref_name` the full ref,
    `content` the PushCommits JSON; services/convert/activity.go ToActivity), newest first, paged."""
    g.post("/user/repos", json={"name": "gpushes"}).raise_for_status()
    repo = "/repos/alice/gpushes"
    g.put(repo + "/collaborators/bob", json={"permission": "write"}).raise_for_status()
    g.post(repo + "/branches", json={"new_branch_name": "fix", "old_ref_name": "main"}).raise_for_status()
    with gitea_client(sandbox, "bob-token") as gbob:
        spoofed = _put(gbob, repo, "a.txt", "fix", author="alice", gitea=True)
    assert g.get(f"{repo}/git/commits/{spoofed}").json()["author"]["login"] == "alice"
    found = check(g.get(repo + "/activities/feeds")).json()
    mine = [a for a in found if a["ref_name"] == "refs/heads/fix"]
    assert [(a["op_type"], a["act_user"]["login"]) for a in mine] == [
        ("commit_repo", "bob"),
        ("commit_repo", "alice"),
    ]
    content = json.loads(mine[0]["content"])
    assert content["HeadCommit"]["Sha1"] == spoofed and content["Len"] == 1
    assert content["Commits"][0]["AuthorEmail"] == "alice@noreply.sandbox"
    assert check(g.get(repo + "/activities/feeds", params={"limit": 1})).headers["x-total-count"] == str(
        len(found)
    )
    # Someone who hides their activity (KeepActivityPrivate) leaves the feed, for everyone but themselves.
    with gitea_client(sandbox, "bob-token") as gbob:
        hidden = check(gbob.patch("/user/settings", json={"hide_activity": True})).json()
        assert hidden["hide_activity"] is True
        pushed = _put(gbob, repo, "b.txt", "fix", gitea=True)
        theirs = [a["act_user"]["login"] for a in gbob.get(repo + "/activities/feeds").json()]
        assert theirs.count("bob") == 2
        gbob.patch("/user/settings", json={"hide_activity": False}).raise_for_status()
        gbob.patch("/user/settings", json={"hide_activity": True}).raise_for_status()
    seen = g.get(repo + "/activities/feeds").json()
    assert [a["act_user"]["login"] for a in seen if a["ref_name"] == "refs/heads/fix"] == ["alice"]
    assert all(json.loads(a["content"] or "{}").get("HeadCommit", {}).get("Sha1") != pushed for a in seen)
    assert g.get(repo + "/branches/fix").json()["commit"]["id"] == pushed, "the branch moved all the same"


def test_gitea_activity_feed_names_the_pusher_not_the_commit_s_author(
    sandbox: SandboxServer, g: httpx2.Client
) -> None:
    gitea_push_history(GiteaApiCheck.load(), sandbox, g)
