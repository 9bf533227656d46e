"""Onboarding when the GitHub App is installed: `installation.created` and `installation_repositories.added`
(delivered by the sandbox to the App's webhook) open one "Configure Steward" pull request per repository that
has no configuration file; a second delivery opens no second one; a pull request closed unmerged is never
opened again on its own — the forge's closed pull request is what Steward remembers, not Redis."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
import redis

from bot.config.settings import Settings
from bot.demo.scratch_redis import CLAIM_KEY
from bot.demo.threads import ThreadedServer, ThreadedWorker
from bot.receiver.app import create_app
from bot.sandbox.server import SandboxServer
from tests.e2e.stack import SECRET, ForgeUser, app_key, settle, signed_delivery

APP_ID = 7101
BOT = "steward-onboard[bot]"
USERS = {"owner": "tok-owner"}


@pytest.fixture
def app_sandbox() -> Iterator[SandboxServer]:
    with SandboxServer(USERS) as server:
        yield server


def onboarding_pulls(owner: ForgeUser, repo: str) -> list[dict[str, Any]]:
    return [
        p
        for p in owner.call("GET", f"/repos/{repo}/pulls?state=all&per_page=100")
        if p["head"]["ref"] == "steward/configure"
    ]


def forget_everything_but_the_claim(redis_url: str) -> None:
    """Empty Steward's Redis (dedupe keys, memos, caches), keeping the test run's claim on the database."""
    r = redis.Redis.from_url(redis_url)
    try:
        doomed = [k for k in r.scan_iter() if k != CLAIM_KEY.encode()]
        if doomed:
            r.delete(*doomed)
    finally:
        r.close()


def resend(admin: httpx2.Client, receiver: ThreadedServer, event: str) -> None:
    """The last `event` delivery again, as a new delivery (a new id, so the receiver's dedupe lets it in)."""
    found = admin.get("/_sandbox/deliveries", params={"event": event}).json()
    detail = admin.get(f"/_sandbox/deliveries/{found[-1]['id']}").json()
    payload = json.dumps(detail["payload"]).encode()
    answer = signed_delivery(receiver.url, event, payload, delivery=str(uuid.uuid4()))
    assert answer.status_code == 202, answer.text


def test_installing_the_app_opens_one_pull_request_per_repository_and_respects_a_no(
    app_sandbox: SandboxServer, redis_url: str, tmp_path: Path
) -> None:
    key_path, public = app_key(tmp_path)
    settings = Settings(
        redis_url=redis_url,
        github_api_url=app_sandbox.url,
        github_app_id=str(APP_ID),
        github_private_key_path=key_path,
        github_webhook_secrets=SECRET,  # type: ignore[arg-type]
        retry_base_delay=0.05,
        reconcile_interval_seconds=0,
    )
    receiver = ThreadedServer(create_app(settings)).start()
    worker = ThreadedWorker(settings).start()
    admin = httpx2.Client(base_url=app_sandbox.url, timeout=30)
    try:
        admin.post(
            "/_sandbox/apps",
            json={
                "app_id": APP_ID,
                "slug": "steward-onboard",
                "public_key_pem": public,
                "webhook_url": f"{receiver.url}/webhooks/github",
                "webhook_secret": SECRET,
            },
        ).raise_for_status()
        owner = ForgeUser(app_sandbox.url, "owner", USERS["owner"])
        fresh = owner.create_repo(configured=False)
        configured = owner.create_repo(configured=False)
        owner.put_file(configured, ".github/steward.yml", "backlog:\n  enabled: false\n")
        later = owner.create_repo(configured=False)
        names = [fresh.split("/")[1], configured.split("/")[1]]
        made = admin.post(f"/_sandbox/apps/{APP_ID}/installations", json={"owner": "owner", "repos": names})
        made.raise_for_status()
        settle(app_sandbox.url, redis_url)

        [pull] = onboarding_pulls(owner, fresh)
        assert (pull["title"], pull["state"], pull["user"]["login"]) == ("Configure Steward", "open", BOT)
        assert owner.file_sha(fresh, ".github/steward.yml", "steward/configure") is not None
        assert onboarding_pulls(owner, configured) == [], "a repository with a configuration file gets none"

        # The same installation event delivered again: nothing new.
        resend(admin, receiver, "installation")
        settle(app_sandbox.url, redis_url)
        assert len(onboarding_pulls(owner, fresh)) == 1

        # "Not now": closed unmerged, it gets a closing comment and is never opened again on its own, even
        # with Redis emptied (the closed pull request in the forge is the record).
        owner.edit_issue(fresh, pull["number"], state="closed")
        settle(app_sandbox.url, redis_url)
        closing = [c["body"] for c in owner.comments(fresh, pull["number"]) if c["user"]["login"] == BOT]
        assert len(closing) == 1 and "not now" in closing[0]
        forget_everything_but_the_claim(redis_url)
        resend(admin, receiver, "installation")
        settle(app_sandbox.url, redis_url)
        assert [p["state"] for p in onboarding_pulls(owner, fresh)] == ["closed"]

        # A repository added to the installation later gets its own.
        admin.post(
            f"/_sandbox/installations/{made.json()['id']}/repositories", json={"repos": [later.split("/")[1]]}
        ).raise_for_status()
        settle(app_sandbox.url, redis_url)
        assert [p["state"] for p in onboarding_pulls(owner, later)] == ["open"]
    finally:
        worker.stop()
        receiver.stop()
