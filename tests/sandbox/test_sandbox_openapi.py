"""Every GitHub operation the sandbox implements answers in the shape GitHub's OpenAPI description gives."""

from __future__ import annotations

import base64
import time

import httpx2
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from bot.sandbox.server import SandboxServer

from .helpers import OpenApiCheck, client

NOT_IMPLEMENTED = {
    "pulls/create",
    "pulls/get",
    "pulls/list",
    "pulls/list-commits",
    "pulls/list-files",
    "checks/create",
    "checks/update",
}


def _app_jwt(sandbox: SandboxServer) -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    body = {"app_id": 77, "slug": "steward", "public_key_pem": public.decode()}
    assert httpx2.post(sandbox.url + "/_sandbox/apps", json=body).status_code == 201
    now = int(time.time())
    return jwt.encode({"iat": now - 30, "exp": now + 540, "iss": "77"}, key, algorithm="RS256")


def test_every_implemented_operation_matches_the_openapi_description(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, openapi: OpenApiCheck
) -> None:
    check = openapi
    check(alice.get(repo))
    assert alice.put(repo + "/collaborators/bob", json={"permission": "triage"}).status_code == 204
    assert check(alice.get(repo + "/collaborators/bob/permission")).json()["permission"] == "read"

    check(alice.post(repo + "/labels", json={"name": "bug", "color": "d73a4a", "description": "broken"}))
    check(alice.get(repo + "/labels"))
    milestone = alice.post(repo + "/milestones", json={"title": "v1"}).json()
    check(alice.get(repo + "/milestones"))
    check(alice.get(f"{repo}/milestones/{milestone['number']}"))
    check(alice.patch(f"{repo}/milestones/{milestone['number']}", json={"description": "first"}))

    issue = alice.post(repo + "/issues", json={"title": "Crash", "body": "It crashes"}).json()
    n = issue["number"]
    check(alice.get(f"{repo}/issues/{n}"))
    check(
        alice.patch(f"{repo}/issues/{n}", json={"title": "Crash on start", "milestone": milestone["number"]})
    )
    check(alice.post(f"{repo}/issues/{n}/labels", json={"labels": ["bug", "new-label"]}))
    check(alice.put(f"{repo}/issues/{n}/labels", json={"labels": ["bug"]}))
    check(alice.get(f"{repo}/issues/{n}/labels"))
    check(alice.delete(f"{repo}/issues/{n}/labels/bug"))

    comment = check(alice.post(f"{repo}/issues/{n}/comments", json={"body": "/steward help"})).json()
    check(alice.get(f"{repo}/issues/{n}/comments"))
    check(alice.patch(f"{repo}/issues/comments/{comment['id']}", json={"body": "edited"}))
    reaction = check(
        alice.post(f"{repo}/issues/comments/{comment['id']}/reactions", json={"content": "eyes"})
    )
    assert reaction.status_code == 201
    assert (
        check(
            alice.post(f"{repo}/issues/comments/{comment['id']}/reactions", json={"content": "eyes"})
        ).status_code
        == 200
    )
    check(alice.get(f"{repo}/issues/comments/{comment['id']}/reactions"))
    check(alice.delete(f"{repo}/issues/comments/{comment['id']}/reactions/{reaction.json()['id']}"))
    check(alice.delete(f"{repo}/issues/comments/{comment['id']}"))

    readme = check(alice.get(repo + "/contents/README.md")).json()
    assert base64.b64decode(readme["content"]).startswith(b"# demo")
    content = base64.b64encode(b"print('hi')\n").decode()
    created = check(alice.put(repo + "/contents/hello.py", json={"message": "add hello", "content": content}))
    assert created.status_code == 201
    updated = check(
        alice.put(
            repo + "/contents/hello.py",
            json={"message": "edit", "content": content + "", "sha": created.json()["content"]["sha"]},
        )
    )
    assert updated.status_code == 200

    head = check(alice.get(repo + "/git/ref/heads/main")).json()["object"]["sha"]
    blob = check(alice.post(repo + "/git/blobs", json={"content": "x = 1\n", "encoding": "utf-8"})).json()
    base_tree = alice.get(f"{repo}/git/commits/{head}").json()["tree"]["sha"]
    tree = check(
        alice.post(
            repo + "/git/trees",
            json={
                "base_tree": base_tree,
                "tree": [{"path": "x.py", "mode": "100644", "type": "blob", "sha": blob["sha"]}],
            },
        )
    ).json()
    commit = check(
        alice.post(repo + "/git/commits", json={"message": "x", "tree": tree["sha"], "parents": [head]})
    ).json()
    check(alice.post(repo + "/git/refs", json={"ref": "refs/heads/fix", "sha": head}))
    check(alice.patch(repo + "/git/refs/heads/fix", json={"sha": commit["sha"]}))

    # the 2021 description calls description/target_url non-nullable; real GitHub answers null when unset
    status = {
        "state": "pending",
        "context": "ci",
        "description": "running",
        "target_url": "https://ci.example/1",
    }
    check(alice.post(f"{repo}/statuses/{commit['sha']}", json=status))
    check(alice.get(f"{repo}/commits/{commit['sha']}/statuses"))
    check(alice.get(f"{repo}/commits/{commit['sha']}/status"))

    token = _app_jwt(sandbox)
    install = httpx2.post(
        sandbox.url + "/_sandbox/apps/77/installations", json={"owner": "alice", "repos": ["demo"]}
    ).json()
    app_client = httpx2.Client(base_url=sandbox.url, headers={"Authorization": f"Bearer {token}"})
    check(app_client.get(repo + "/installation"))
    check(app_client.post(f"/app/installations/{install['id']}/access_tokens"))

    implemented = {op for _, _, op in openapi.operations()} - NOT_IMPLEMENTED
    assert implemented - openapi.checked == set()


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
