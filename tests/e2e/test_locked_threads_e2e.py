"""Steward as a GitHub App on a locked conversation (docs/forge-port.md, "Locked conversations").

GitHub refuses an App's comments there whatever its permission ("Unable to create comment because issue is
locked.", probot/stale#25, renovatebot/renovate#6215) and takes no reaction from anyone (docs.github.com
"Locking conversations"). Steward then writes nothing in the thread, still sets the labels it decided, says
so once in its log, and neither retries the job nor parks it as a dead letter; once the thread is unlocked
it answers again."""

from __future__ import annotations

from pathlib import Path

import httpx2
import redis
import structlog

from bot.config.settings import Settings
from bot.demo.threads import ThreadedServer, ThreadedWorker
from bot.queue.dead_letters import DEAD_KEY
from bot.receiver.app import create_app
from bot.sandbox.server import SandboxServer
from tests.e2e.stack import SECRET, ForgeUser, app_key, settle

APP_ID = 7021
USERS = {"owner": "tok-owner", "visitor": "tok-visitor"}
BOT = "locked-app[bot]"


def _app(sandbox: SandboxServer, tmp_path: Path) -> Path:
    key_path, public = app_key(tmp_path)
    httpx2.post(
        sandbox.url + "/_sandbox/apps",
        json={"app_id": APP_ID, "slug": "locked-app", "public_key_pem": public},
    ).raise_for_status()
    return key_path


def test_an_app_on_a_locked_thread_sets_its_labels_says_nothing_and_does_not_retry(
    redis_url: str, tmp_path: Path
) -> None:
    with SandboxServer(USERS) as sandbox:
        key_path = _app(sandbox, tmp_path)
        owner = ForgeUser(sandbox.url, "owner", USERS["owner"])
        repo = owner.create_repo()
        httpx2.post(
            f"{sandbox.url}/_sandbox/apps/{APP_ID}/installations",
            json={"owner": "owner", "repos": [repo.split("/")[1]]},
        ).raise_for_status()
        settings = Settings(
            redis_url=redis_url,
            github_api_url=sandbox.url,
            github_app_id=str(APP_ID),
            github_private_key_path=key_path,
            github_webhook_secrets=SECRET,  # type: ignore[arg-type]
        )
        receiver = ThreadedServer(create_app(settings)).start()
        worker = ThreadedWorker(settings).start()
        try:
            owner.add_hook(repo, f"{receiver.url}/webhooks/github")
            number = owner.open_issue(repo, "It crashes")
            settle(sandbox.url, redis_url)
            owner.call("PUT", f"/repos/{repo}/issues/{number}/lock", {"lock_reason": "too heated"})
            httpx2.delete(sandbox.url + "/_sandbox/requests")
            with structlog.testing.capture_logs() as logs:
                # A bug report asked to be refined: Steward decides its verdict (rejected: it says nothing).
                owner.call("POST", f"/repos/{repo}/issues/{number}/labels", {"labels": ["bug", "refine"]})
                settle(sandbox.url, redis_url)
                owner.comment(repo, number, "/steward ping")
                settle(sandbox.url, redis_url)
            shown = owner.call("GET", f"/repos/{repo}/issues/{number}")
            labels = [label["name"] for label in shown["labels"]]
            assert "refinement:needs-info" in labels, labels
            assert [c for c in owner.comments(repo, number) if c["user"]["login"] == BOT] == []
            made = httpx2.get(sandbox.url + "/_sandbox/requests").json()
            refused = [r for r in made if r["login"] == BOT and r["method"] == "POST" and r["status"] == 403]
            assert {r["path"].rsplit("/", 1)[-1] for r in refused} <= {"comments", "reactions"}
            posts = [r for r in refused if r["path"].endswith("/comments")]
            assert len(posts) <= 3, "each refusal once, not retried"
            said = [e for e in logs if "conversation is locked" in str(e.get("event"))]
            assert said and all(e["log_level"] in ("warning", "info") for e in said)
            with redis.Redis.from_url(redis_url) as r:
                assert r.hlen(DEAD_KEY) == 0, "a locked thread is not a failure"
            owner.call("DELETE", f"/repos/{repo}/issues/{number}/lock")
            owner.comment(repo, number, "/steward ping")
            settle(sandbox.url, redis_url)
            answers = [c["body"] for c in owner.comments(repo, number) if c["user"]["login"] == BOT]
            assert any("pong" in body for body in answers), answers
        finally:
            worker.stop()
            receiver.stop()
