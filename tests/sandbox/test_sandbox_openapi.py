"""Every GitHub operation the sandbox implements answers in the shape GitHub's OpenAPI description gives."""

from __future__ import annotations

import base64
import json
import time

import httpx2
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from bot.sandbox.server import SandboxServer

from .helpers import FIXTURES, OpenApiCheck, client, idle, served_operations
from .test_sandbox_collaboration import github_collaboration_routes
from .test_sandbox_edits import github_edit_pull
from .test_sandbox_forks import github_fork_pull
from .test_sandbox_locks import github_lock_routes
from .test_sandbox_records import github_records_routes
from .test_sandbox_repositories import github_repository_routes
from .test_sandbox_search import github_search_routes


def _app_jwt(sandbox: SandboxServer, webhook_url: str | None = None) -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    body = {"app_id": 77, "slug": "steward", "public_key_pem": public.decode(), "webhook_url": webhook_url}
    assert httpx2.post(sandbox.url + "/_sandbox/apps", json=body).status_code == 201
    now = int(time.time())
    return jwt.encode({"iat": now - 30, "exp": now + 540, "iss": "77"}, key, algorithm="RS256")


def test_every_route_the_sandbox_serves_is_in_the_descriptions(sandbox: SandboxServer) -> None:
    """A route GitHub's current description (or Gitea's) does not know is one the sandbox made up."""
    github = json.loads((FIXTURES / "openapi-2026-subset.json").read_text())
    gitea = json.loads((FIXTURES.parent / "gitea" / "openapi3.v1.json").read_text())
    # GraphQL is not a REST route: GitHub's REST description has no /graphql (tests/sandbox/
    # test_sandbox_pin_facts.py pins what the sandbox's GraphQL endpoint answers). `GET /git/refs` is GitHub's
    # older "List references", which its description no longer lists but GitHub answers (octokit/fixtures
    # `git-refs`; tests/sandbox/test_sandbox_repositories.py).
    assert served_operations(sandbox.app, "github", github)[1] == {
        "POST /graphql",
        "GET /repos/{owner}/{repo}/git/refs",
        "GET /repos/{owner}/{repo}/git/refs/",
    }
    assert served_operations(sandbox.app, "gitea", gitea)[1] == set()


def _repository_and_people(
    check: OpenApiCheck, sandbox: SandboxServer, alice: httpx2.Client, repo: str
) -> None:
    check(alice.get("/user"))
    check(alice.get("/users/bob"))
    check(alice.post("/user/repos", json={"name": "second"}))
    mine = check(alice.get("/user/repos", params={"per_page": 100})).json()
    assert {r["full_name"] for r in mine} >= {"alice/demo", "alice/second"}
    assert all(r["permissions"]["admin"] for r in mine if r["owner"]["login"] == "alice")
    check(alice.get(repo))
    check(alice.put(repo + "/collaborators/bob", json={"permission": "triage"}))
    assert check(alice.get(repo + "/collaborators/bob/permission")).json()["permission"] == "read"
    admins = check(alice.get(repo + "/collaborators", params={"permission": "admin"})).json()
    assert [user["login"] for user in admins] == ["alice"], "the owner is an admin; bob (triage) is not"
    hook = {"config": {"url": "http://127.0.0.1:9/hook", "content_type": "json"}, "events": ["push"]}
    made = check(alice.post(repo + "/hooks", json=hook)).json()
    check(alice.get(repo + "/hooks"))
    check(alice.get(f"{repo}/hooks/{made['id']}"))
    check(alice.patch(f"{repo}/hooks/{made['id']}", json={"active": False}))
    check(alice.delete(f"{repo}/hooks/{made['id']}"))


def _issues(check: OpenApiCheck, alice: httpx2.Client, repo: str) -> None:
    check(alice.post(repo + "/labels", json={"name": "bug", "color": "d73a4a", "description": "broken"}))
    check(alice.get(repo + "/labels"))
    check(alice.get(repo + "/labels/bug"))
    check(alice.post(repo + "/labels", json={"name": "temp"}))
    check(alice.patch(repo + "/labels/temp", json={"new_name": "temporary"}))
    check(alice.delete(repo + "/labels/temporary"))
    milestone = check(alice.post(repo + "/milestones", json={"title": "v1"})).json()
    check(alice.get(repo + "/milestones"))
    check(alice.get(f"{repo}/milestones/{milestone['number']}"))
    check(alice.patch(f"{repo}/milestones/{milestone['number']}", json={"description": "first"}))
    gone = check(alice.post(repo + "/milestones", json={"title": "v0"})).json()
    check(alice.delete(f"{repo}/milestones/{gone['number']}"))

    n = check(alice.post(repo + "/issues", json={"title": "Crash", "body": "It crashes"})).json()["number"]
    check(alice.get(repo + "/issues"))
    check(alice.get(f"{repo}/issues/{n}"))
    check(
        alice.patch(f"{repo}/issues/{n}", json={"title": "Crash on start", "milestone": milestone["number"]})
    )
    check(alice.post(f"{repo}/issues/{n}/labels", json={"labels": ["bug", "new-label"]}))
    check(alice.put(f"{repo}/issues/{n}/labels", json={"labels": ["bug"]}))
    check(alice.get(f"{repo}/issues/{n}/labels"))
    check(alice.delete(f"{repo}/issues/{n}/labels/bug"))
    check(alice.delete(f"{repo}/issues/{n}/labels"))
    issue_reaction = check(alice.post(f"{repo}/issues/{n}/reactions", json={"content": "rocket"})).json()
    check(alice.get(f"{repo}/issues/{n}/reactions"))
    check(alice.delete(f"{repo}/issues/{n}/reactions/{issue_reaction['id']}"))

    comment = check(alice.post(f"{repo}/issues/{n}/comments", json={"body": "/steward help"})).json()
    check(alice.get(f"{repo}/issues/{n}/comments"))
    # The repository's comments since a time (the catch-up after downtime, bot/catchup/comments.py).
    listed = check(alice.get(f"{repo}/issues/comments?since=2000-01-01T00:00:00Z&per_page=100")).json()
    assert comment["id"] in [c["id"] for c in listed]
    check(alice.get(f"{repo}/issues/comments/{comment['id']}"))
    check(alice.patch(f"{repo}/issues/comments/{comment['id']}", json={"body": "edited"}))
    reaction = check(
        alice.post(f"{repo}/issues/comments/{comment['id']}/reactions", json={"content": "eyes"})
    )
    assert reaction.status_code == 201
    again = alice.post(f"{repo}/issues/comments/{comment['id']}/reactions", json={"content": "eyes"})
    assert check(again).status_code == 200
    check(alice.get(f"{repo}/issues/comments/{comment['id']}/reactions"))
    check(alice.delete(f"{repo}/issues/comments/{comment['id']}/reactions/{reaction.json()['id']}"))
    check(alice.delete(f"{repo}/issues/comments/{comment['id']}"))

    child = alice.post(repo + "/issues", json={"title": "child"}).json()
    check(alice.post(f"{repo}/issues/{n}/sub_issues", json={"sub_issue_id": child["id"]}))
    check(alice.get(f"{repo}/issues/{n}/sub_issues"))
    detach = {"sub_issue_id": child["id"]}
    removed = check(alice.request("DELETE", f"{repo}/issues/{n}/sub_issue", json=detach))
    assert removed.status_code == 200 and removed.json()["number"] == n
    again = check(alice.request("DELETE", f"{repo}/issues/{n}/sub_issue", json=detach))
    assert again.status_code == 404, "no longer a sub-issue"
    check(alice.post(f"{repo}/issues/{n}/sub_issues", json={"sub_issue_id": child["id"]}))
    check(alice.post(f"{repo}/issues/{n}/dependencies/blocked_by", json={"issue_id": child["id"]}))
    check(alice.get(f"{repo}/issues/{n}/dependencies/blocked_by"))
    check(alice.get(f"{repo}/issues/{child['number']}/dependencies/blocking"))


def _contents_and_git(check: OpenApiCheck, alice: httpx2.Client, repo: str) -> str:
    """Returns the sha of a commit on branch `fix`."""
    readme = check(alice.get(repo + "/contents/README.md")).json()
    assert base64.b64decode(readme["content"]).startswith(b"# demo")
    content = base64.b64encode(b"print('hi')\n").decode()
    created = check(alice.put(repo + "/contents/hello.py", json={"message": "add hello", "content": content}))
    assert created.status_code == 201
    sha = created.json()["content"]["sha"]
    updated = check(
        alice.put(repo + "/contents/hello.py", json={"message": "edit", "content": content, "sha": sha})
    )
    assert updated.status_code == 200
    check(alice.get(repo + "/contents/hello.py"))
    sha = updated.json()["content"]["sha"]
    check(alice.delete(repo + "/contents/hello.py", params={"message": "drop", "sha": sha}))

    head = check(alice.get(repo + "/git/ref/heads/main")).json()["object"]["sha"]
    check(alice.get(repo + "/git/matching-refs/heads/"))
    blob = check(alice.post(repo + "/git/blobs", json={"content": "x = 1\n", "encoding": "utf-8"})).json()
    check(alice.get(f"{repo}/git/blobs/{blob['sha']}"))
    base_tree = check(alice.get(f"{repo}/git/commits/{head}")).json()["tree"]["sha"]
    check(alice.get(f"{repo}/git/trees/{base_tree}"))
    entry = {"path": "x.py", "mode": "100644", "type": "blob", "sha": blob["sha"]}
    tree = check(alice.post(repo + "/git/trees", json={"base_tree": base_tree, "tree": [entry]})).json()
    commit = check(
        alice.post(repo + "/git/commits", json={"message": "x", "tree": tree["sha"], "parents": [head]})
    ).json()
    check(alice.post(repo + "/git/refs", json={"ref": "refs/heads/fix", "sha": head}))
    check(alice.patch(repo + "/git/refs/heads/fix", json={"sha": commit["sha"]}))
    check(alice.post(repo + "/git/refs", json={"ref": "refs/heads/gone", "sha": head}))
    check(alice.delete(repo + "/git/refs/heads/gone"))
    check(alice.get(f"{repo}/commits/{commit['sha']}"))

    status = {
        "state": "pending",
        "context": "ci",
        "description": "running",
        "target_url": "https://ci.example/1",
    }
    check(alice.post(f"{repo}/statuses/{commit['sha']}", json=status))
    check(alice.get(f"{repo}/commits/{commit['sha']}/statuses"))
    check(alice.get(f"{repo}/commits/{commit['sha']}/status"))
    return str(commit["sha"])


def _app(check: OpenApiCheck, sandbox: SandboxServer, alice: httpx2.Client, repo: str) -> None:
    token = _app_jwt(sandbox, webhook_url="http://127.0.0.1:9/app-hook")
    install = httpx2.post(
        sandbox.url + "/_sandbox/apps/77/installations", json={"owner": "alice", "repos": ["demo"]}
    ).json()
    alice.post(repo + "/issues", json={"title": "the App hears of this"})
    idle(sandbox)
    with httpx2.Client(base_url=sandbox.url, headers={"Authorization": f"Bearer {token}"}) as app_client:
        check(app_client.get("/app"))
        listed = check(app_client.get("/app/installations")).json()
        assert [i["id"] for i in listed] == [install["id"]]
        check(app_client.get(f"/app/installations/{install['id']}"))
        check(app_client.get(repo + "/installation"))
        access = check(app_client.post(f"/app/installations/{install['id']}/access_tokens")).json()
        deliveries = check(app_client.get("/app/hook/deliveries")).json()
        # Newest first: the issue, and before it the App's own installation (a delivery with no repository).
        assert [d["event"] for d in deliveries] == ["issues", "installation"]
        check(app_client.get(f"/app/hook/deliveries/{deliveries[0]['id']}"))
        check(app_client.get(f"/app/hook/deliveries/{deliveries[1]['id']}"))
        assert (
            check(app_client.post(f"/app/hook/deliveries/{deliveries[0]['id']}/attempts")).status_code == 202
        )
    with client(sandbox, access["token"]) as installation:
        check(installation.get("/installation/repositories"))


def _pulls_and_ci(check: OpenApiCheck, sandbox: SandboxServer, alice: httpx2.Client, repo: str) -> None:
    hook = {"config": {"url": "http://127.0.0.1:9/hook", "content_type": "json"}, "events": ["*"]}
    hook_id = alice.post(repo + "/hooks", json=hook).json()["id"]
    head = alice.get(repo + "/git/ref/heads/main").json()["object"]["sha"]
    alice.post(repo + "/git/refs", json={"ref": "refs/heads/feature", "sha": head})
    content = base64.b64encode(b"def test_it():\n    assert False\n").decode()
    alice.put(
        repo + "/contents/tests/test_it.py", json={"message": "red", "content": content, "branch": "feature"}
    )
    opened = {"title": "Fix it", "head": "feature", "base": "main", "body": "Fixes #1", "draft": True}
    n = check(alice.post(repo + "/pulls", json=opened)).json()["number"]
    check(alice.get(repo + "/pulls"))
    check(alice.get(repo + "/pulls", params={"head": "alice:feature", "state": "open"}))
    pull = check(alice.get(f"{repo}/pulls/{n}")).json()
    check(alice.get(f"{repo}/pulls/{n}/commits"))
    check(alice.get(f"{repo}/pulls/{n}/files"))
    sha = pull["head"]["sha"]
    play = {
        "repo": "alice/demo",
        "sha": sha,
        "kind": "check_run",
        "context": "build",
        "conclusion": "failure",
    }
    assert httpx2.post(sandbox.url + "/_sandbox/ci", json=play).status_code == 202
    runs = check(alice.get(f"{repo}/commits/{sha}/check-runs")).json()["check_runs"]
    suites = check(alice.get(f"{repo}/commits/{sha}/check-suites")).json()["check_suites"]
    check(alice.get(f"{repo}/check-runs/{runs[0]['id']}"))
    check(alice.get(f"{repo}/check-suites/{suites[0]['id']}"))
    check(alice.put(f"{repo}/pulls/{n}/merge", json={"sha": sha, "merge_method": "squash"}))
    idle(sandbox)
    deliveries = check(alice.get(f"{repo}/hooks/{hook_id}/deliveries", params={"per_page": 2})).json()
    check(alice.get(f"{repo}/hooks/{hook_id}/deliveries/{deliveries[0]['id']}"))
    check(alice.post(f"{repo}/hooks/{hook_id}/deliveries/{deliveries[0]['id']}/attempts"))


def test_every_operation_the_sandbox_serves_matches_the_openapi_description(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, openapi: OpenApiCheck
) -> None:
    """Every GitHub route the sandbox serves is exercised here, and each answer is valid against GitHub's
    current description (tests/fixtures/github/openapi-2026-subset.json)."""
    _repository_and_people(openapi, sandbox, alice, repo)
    _issues(openapi, alice, repo)
    _contents_and_git(openapi, alice, repo)
    _pulls_and_ci(openapi, sandbox, alice, repo)
    _app(openapi, sandbox, alice, repo)
    github_records_routes(openapi, sandbox, alice)
    github_repository_routes(openapi, sandbox, alice)
    github_lock_routes(openapi, alice)
    github_collaboration_routes(openapi, sandbox, alice)
    github_search_routes(openapi, alice)
    from .test_sandbox_assignees import github_assignee_routes  # it imports test_sandbox_gitea

    github_assignee_routes(openapi, alice)
    alice.post("/user/repos", json={"name": "edits"}).raise_for_status()
    github_edit_pull(openapi, alice, "/repos/alice/edits")
    alice.post("/user/repos", json={"name": "forked"}).raise_for_status()
    with client(sandbox, "bob-token") as bob:
        github_fork_pull(openapi, alice, bob, "/repos/alice/forked")
    served, _ = served_operations(sandbox.app, "github", openapi.spec)
    assert served - openapi.checked == set()


def test_error_responses_match_the_description_too(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, openapi: OpenApiCheck
) -> None:
    assert openapi(alice.get(repo + "/issues/99")).status_code == 404
    assert openapi(alice.get(repo + "/contents/missing.txt")).status_code == 404
    alice.post(repo + "/labels", json={"name": "bug"})
    duplicate = openapi(alice.post(repo + "/labels", json={"name": "BUG"}))
    assert duplicate.status_code == 422
    assert duplicate.json()["errors"][0]["code"] == "already_exists"
    with client(sandbox, "bob-token") as bob:
        assert bob.get(repo + "/collaborators/carol/permission").status_code == 403
