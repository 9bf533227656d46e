"""GitHub only: an App reads its own webhook's deliveries with its JWT (GET /app/hook/deliveries) and asks
for a redelivery; an installation token cannot (FORGE-FACTS "Webhooks": "/app/hook/deliveries for an App")."""

from __future__ import annotations

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from bot.forge.github import GitHubForges
from bot.forge.github_transport import SharedSession
from bot.forge.retry import RetryPolicy
from bot.sandbox.server import SandboxServer
from tests.contract.conftest import USERS, Site

APP_ID = 7301


async def test_an_app_lists_and_redelivers_its_own_webhooks_deliveries(sandbox: SandboxServer) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    site = Site("github", sandbox.url, USERS["owner"])
    try:
        app = {
            "app_id": APP_ID,
            "slug": "catch-up",
            "public_key_pem": public,
            "webhook_url": "http://127.0.0.1:9/",
        }
        site.admin.post("/_sandbox/apps", json=app).raise_for_status()
        repo = site.new_repo()
        install = site.admin.post(
            f"/_sandbox/apps/{APP_ID}/installations", json={"owner": "owner", "repos": [repo.name]}
        ).json()
        for title in ("one", "two", "three"):
            site.open_issue(repo, title)
        site.admin.get("/_sandbox/deliveries/idle", params={"timeout": 30})
        http = SharedSession(timeout=10)
        try:
            forges = GitHubForges(
                http,
                base_url=sandbox.url,
                policy=RetryPolicy(attempts=2, base_delay=0.01),
                budget=None,
                app_id=str(APP_ID),
                private_key=private,
            )
            forge = await forges.for_event(int(install["id"]), repo)
            listed = await forge.list_hook_deliveries(None)
            # Installing the App delivered `installation.created` to it first (GitHub sends it to every App).
            assert [(d.event, d.action) for d in listed if d.event == "installation"] == [
                ("installation", "created")
            ]
            found = [d for d in listed if d.event != "installation"]
            assert [(d.event, d.action, d.hook_id, d.repo) for d in found] == [
                ("issues", "opened", None, None)
            ] * 3
            await forge.redeliver(None, found[-1])
            site.admin.get("/_sandbox/deliveries/idle", params={"timeout": 30})
            again = await forge.list_hook_deliveries(None)
            assert len(again) == len(listed) + 1 and again[0].redelivery and again[0].guid == found[-1].guid
        finally:
            await http.aclose()
    finally:
        site.close()
