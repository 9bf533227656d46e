"""Steward installed as a GitHub App: JWT → installation token (cached) → acting as `<slug>[bot]`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from bot.demo.threads import ThreadedServer, ThreadedWorker
from bot.receiver.app import create_app
from bot.sandbox.server import SandboxServer
from tests.e2e.stack import SECRET, ForgeUser, app_key, settle

APP_ID = 7001
USERS = {"owner": "tok-owner", "visitor": "tok-visitor"}


@pytest.fixture
def app_sandbox() -> Iterator[SandboxServer]:
    with SandboxServer(USERS) as server:
        yield server


def test_an_app_installation_answers_as_its_bot_and_reuses_its_token(
    app_sandbox: SandboxServer, redis_url: str, tmp_path: Path
) -> None:
    key_path, public = app_key(tmp_path)
    admin = httpx2.Client(base_url=app_sandbox.url)
    admin.post(
        "/_sandbox/apps", json={"app_id": APP_ID, "slug": "steward-app", "public_key_pem": public}
    ).raise_for_status()
    owner = ForgeUser(app_sandbox.url, "owner", USERS["owner"])
    repo = owner.create_repo()
    admin.post(
        f"/_sandbox/apps/{APP_ID}/installations", json={"owner": "owner", "repos": [repo.split("/")[1]]}
    ).raise_for_status()

    from bot.config.settings import Settings

    settings = Settings(
        redis_url=redis_url,
        github_api_url=app_sandbox.url,
        github_app_id=str(APP_ID),
        github_private_key_path=key_path,
        github_webhook_secrets=SECRET,  # type: ignore[arg-type]
    )
    receiver = ThreadedServer(create_app(settings)).start()
    worker = ThreadedWorker(settings).start()
    try:
        owner.add_hook(repo, f"{receiver.url}/webhooks/github")
        number = owner.open_issue(repo, "as an app")
        visitor = ForgeUser(app_sandbox.url, "visitor", USERS["visitor"])
        visitor.comment(repo, number, "/steward ping")
        visitor.comment(repo, number, "/steward help")
        settle(app_sandbox.url, redis_url)
        bot_comments = [c for c in owner.comments(repo, number) if c["user"]["login"] == "steward-app[bot]"]
        assert len(bot_comments) == 2
        assert any("pong" in c["body"] for c in bot_comments)
        log = admin.get("/_sandbox/requests").json()
        token_requests = [r for r in log if r["path"].endswith("/access_tokens")]
        assert len(token_requests) == 1, "the installation token is cached until shortly before it expires"
        assert all(r["login"] == f"app:{APP_ID}" for r in token_requests)
    finally:
        worker.stop()
        receiver.stop()


def test_reconcile_asks_github_to_redeliver_what_the_apps_webhook_missed(
    app_sandbox: SandboxServer, redis_url: str, tmp_path: Path
) -> None:
    import os
    import subprocess
    import sys

    from bot.demo.threads import free_port

    key_path, public = app_key(tmp_path)
    port = free_port()
    admin = httpx2.Client(base_url=app_sandbox.url)
    admin.post(
        "/_sandbox/apps",
        json={
            "app_id": APP_ID,
            "slug": "steward-app",
            "public_key_pem": public,
            "webhook_url": f"http://127.0.0.1:{port}/webhooks/github",
            "webhook_secret": SECRET,
        },
    ).raise_for_status()
    owner = ForgeUser(app_sandbox.url, "owner", USERS["owner"])
    repo = owner.create_repo()
    admin.post(
        f"/_sandbox/apps/{APP_ID}/installations", json={"owner": "owner", "repos": [repo.split("/")[1]]}
    ).raise_for_status()
    # Steward is down: the App's webhook URL refuses connections.
    number = owner.open_issue(repo, "as an app", "Crashes.", labels=["bug", "refine"])
    settle(app_sandbox.url, redis_url)

    from bot.config.settings import Settings

    settings = Settings(
        redis_url=redis_url,
        github_api_url=app_sandbox.url,
        github_app_id=str(APP_ID),
        github_private_key_path=key_path,
        github_webhook_secrets=SECRET,  # type: ignore[arg-type]
    )
    # The receiver is back; the worker starts after the command, since a worker's own catch-up at start
    # redelivers what it finds missed too (and must then find nothing left to redeliver).
    receiver = ThreadedServer(create_app(settings), port=port).start()
    worker: ThreadedWorker | None = None
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("STEWARD_")}
        env |= {
            "STEWARD_REDIS_URL": redis_url,
            "STEWARD_GITHUB_API_URL": app_sandbox.url,
            "STEWARD_GITHUB_APP_ID": str(APP_ID),
            "STEWARD_GITHUB_PRIVATE_KEY_PATH": str(key_path),
        }
        done = subprocess.run(
            [sys.executable, "-m", "bot.cli", "reconcile", "--repo", repo],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=Path(__file__).resolve().parents[2],
        )
        assert done.returncode == 0, done.stdout + done.stderr
        # The issue's own events are made good by the re-check (one verdict below), so they are not
        # redelivered; what the re-check does not cover is (issue 40 item 3).
        assert "App: redeliver " in done.stdout and "App: redeliver issues." not in done.stdout
        worker = ThreadedWorker(settings).start()
        settle(app_sandbox.url, redis_url)
        verdicts = [
            c
            for c in owner.comments(repo, number)
            if c["user"]["login"] == "steward-app[bot]" and "steward:ra9-verdict:" in c["body"]
        ]
        assert len(verdicts) == 1, "the re-check and the redelivered events make one verdict"
        redelivered = [d for d in admin.get("/_sandbox/deliveries").json() if d["redelivery"]]
        assert redelivered and all(d["delivered"] for d in redelivered)
        once = {d["id"] for d in redelivered}
        assert len(once) == len(redelivered), "each missed delivery is redelivered once"
    finally:
        if worker is not None:
            worker.stop()
        receiver.stop()
