"""GitHub App flow: JWT -> installation -> installation token -> acting as `<slug>[bot]` (+ gidgethub)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import gidgethub.apps
import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from gidgethub.httpx import GitHubAPI

from bot.sandbox.server import SandboxServer
from bot.sandbox.shared.label_sets import GITHUB_DEFAULTS

from .helpers import CaptureServer, client, idle, schema_errors

APP_ID = 4242


@pytest.fixture(scope="module")
def private_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _pem(key: rsa.RSAPrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


@pytest.fixture
def installation(sandbox: SandboxServer, repo: str, private_key: rsa.RSAPrivateKey) -> int:
    public = private_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    app = {"app_id": APP_ID, "slug": "steward", "name": "Steward", "public_key_pem": public.decode()}
    assert httpx2.post(sandbox.url + "/_sandbox/apps", json=app).json()["bot_login"] == "steward[bot]"
    answer = httpx2.post(
        f"{sandbox.url}/_sandbox/apps/{APP_ID}/installations", json={"owner": "alice", "repos": ["demo"]}
    )
    assert answer.status_code == 201
    inst_id: int = answer.json()["id"]
    return inst_id


def _jwt(key: rsa.RSAPrivateKey, iss: int = APP_ID) -> str:
    now = int(time.time())
    return jwt.encode({"iat": now - 60, "exp": now + 540, "iss": str(iss)}, key, algorithm="RS256")


def test_app_jwt_to_installation_token_to_bot(
    sandbox: SandboxServer,
    repo: str,
    installation: int,
    private_key: rsa.RSAPrivateKey,
    capture: CaptureServer,
    alice: httpx2.Client,
) -> None:
    alice.post(
        repo + "/hooks", json={"config": {"url": capture.hook_url, "content_type": "json"}, "events": ["*"]}
    )
    as_app = httpx2.Client(base_url=sandbox.url, headers={"Authorization": f"Bearer {_jwt(private_key)}"})
    assert as_app.get("/app").json()["slug"] == "steward"
    assert as_app.get(repo + "/installation").json()["id"] == installation
    minted = as_app.post(f"/app/installations/{installation}/access_tokens")
    assert minted.status_code == 201
    expires = datetime.fromisoformat(minted.json()["expires_at"].replace("Z", "+00:00"))
    assert timedelta(minutes=59) < expires - datetime.now(UTC) <= timedelta(hours=1)

    with client(sandbox, minted.json()["token"]) as bot:
        issue = alice.post(repo + "/issues", json={"title": "x"}).json()["number"]
        comment = bot.post(f"{repo}/issues/{issue}/comments", json={"body": "hi from the bot"})
        assert comment.status_code == 201
        assert comment.json()["user"]["login"] == "steward[bot]"
        assert comment.json()["user"]["type"] == "Bot"
        assert comment.json()["performed_via_github_app"]["slug"] == "steward"
        assert bot.post(repo + "/labels", json={"name": "bot-made"}).status_code == 201  # write access
        assert (
            bot.put(repo + "/collaborators/bob", json={"permission": "push"}).status_code == 403
        )  # not admin
    perm = alice.get(repo + "/collaborators/steward[bot]/permission").json()
    assert perm["permission"] == "write"
    idle(sandbox)
    deliveries = capture.capture.received
    bot_comment = next(d for d in deliveries if d.event == "issue_comment")
    assert bot_comment.payload["sender"]["login"] == "steward[bot]"
    assert bot_comment.payload["installation"]["id"] == installation
    assert schema_errors("issue_comment", "created", bot_comment.payload) == []


def test_bad_jwts_and_expired_tokens_are_refused(
    sandbox: SandboxServer, repo: str, installation: int, private_key: rsa.RSAPrivateKey
) -> None:
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    for token in (_jwt(other), _jwt(private_key, iss=999), "a.b.c"):
        answer = httpx2.get(sandbox.url + "/app", headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 401
    as_app = {"Authorization": f"Bearer {_jwt(private_key)}"}
    token = httpx2.post(
        f"{sandbox.url}/app/installations/{installation}/access_tokens", headers=as_app
    ).json()
    sandbox.forge.tokens[token["token"]].expires_at = "2000-01-01T00:00:00Z"
    with client(sandbox, token["token"]) as bot:
        assert bot.get(repo).status_code == 401
    assert httpx2.get(sandbox.url + "/user", headers=as_app).status_code == 401


async def test_gidgethub_drives_the_sandbox(
    sandbox: SandboxServer, repo: str, installation: int, private_key: rsa.RSAPrivateKey
) -> None:
    async with httpx2.AsyncClient() as http:
        as_app = GitHubAPI(http, "steward-tests", base_url=sandbox.url)
        minted = await gidgethub.apps.get_installation_access_token(
            as_app, installation_id=str(installation), app_id=str(APP_ID), private_key=_pem(private_key)
        )
        cache: dict[object, object] = {}
        gh = GitHubAPI(http, "steward-tests", oauth_token=minted["token"], base_url=sandbox.url, cache=cache)
        for i in range(5):
            await gh.post(f"{repo}/labels", data={"name": f"l{i}"})
        names = [label["name"] async for label in gh.getiter(f"{repo}/labels?per_page=2")]
        defaults = [name for name, _, _ in GITHUB_DEFAULTS]  # a new repository's labels
        assert names == sorted([*defaults, *(f"l{i}" for i in range(5))], key=str.casefold)
        await gh.getitem(repo)
        await gh.getitem(repo)  # served from gidgethub's cache after a 304
    log = httpx2.get(sandbox.url + "/_sandbox/requests").json()
    assert [e["status"] for e in log if e["path"] == repo] == [200, 304]
    assert {e["login"] for e in log if e["path"] == repo} == {"steward[bot]"}


def test_installing_the_app_and_adding_repositories_tell_the_apps_webhook(
    sandbox: SandboxServer,
    repo: str,
    private_key: rsa.RSAPrivateKey,
    capture: CaptureServer,
    alice: httpx2.Client,
) -> None:
    """GitHub delivers `installation.created` (every repository installed on) and
    `installation_repositories.added` (the ones added) to the App's own webhook; both match octokit's schemas
    and are signed and addressed as an App's deliveries (X-GitHub-Hook-Installation-Target-Type:
    integration)."""
    public = private_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    app_id = APP_ID + 1
    app = {
        "app_id": app_id,
        "slug": "steward-hooked",
        "public_key_pem": public.decode(),
        "webhook_url": capture.hook_url,
        "webhook_secret": "s3cret",
    }
    assert httpx2.post(sandbox.url + "/_sandbox/apps", json=app).status_code == 201
    other = alice.post("/user/repos", json={"name": "second"}).json()["name"]
    made = httpx2.post(
        f"{sandbox.url}/_sandbox/apps/{app_id}/installations", json={"owner": "alice", "repos": ["demo"]}
    ).json()
    added = httpx2.post(
        f"{sandbox.url}/_sandbox/installations/{made['id']}/repositories", json={"repos": ["demo", other]}
    ).json()
    assert added["added"] == [other]
    idle(sandbox)
    received = [r for r in capture.capture.received if r.event.startswith("installation")]
    assert [(r.event, r.payload["action"]) for r in received] == [
        ("installation", "created"),
        ("installation_repositories", "added"),
    ]
    created, more = (r.payload for r in received)
    assert [r["full_name"] for r in created["repositories"]] == ["alice/demo"]
    assert [r["full_name"] for r in more["repositories_added"]] == [f"alice/{other}"]
    assert created["installation"]["id"] == more["installation"]["id"] == made["id"]
    assert created["sender"]["login"] == "alice"
    assert "repository" not in created
    assert schema_errors("installation", "created", created) == []
    assert schema_errors("installation_repositories", "added", more) == []
    assert {r.headers["x-github-hook-installation-target-type"] for r in received} == {"integration"}
    assert all(r.headers["x-hub-signature-256"].startswith("sha256=") for r in received)
