"""End-to-end fixtures: the sandbox forge, and a Steward (receiver + worker) wired to it.

The `steward` fixture runs every test that uses it twice: on a GitHub-flavoured sandbox repository
(GitHub's API, GitHub's webhooks, the gidgethub adapter) and on a Gitea-flavoured one (Gitea's API at
`/api/v1`, Gitea's webhooks to `/webhooks/gitea`, the py-gitea adapter)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from bot.commands.registry import load_registry
from bot.config.settings import HandlerSettings, Settings
from bot.receiver.app import create_app
from bot.sandbox.server import SandboxServer
from tests.e2e.stack import (
    SECRET,
    ForgeUser,
    ThreadedServer,
    ThreadedWorker,
    past_this_second,
    run_periodic_now,
    settle,
    signed_delivery,
)

USERS = {
    "maintainer": "tok-maintainer",
    "triager": "tok-triager",
    "outsider": "tok-outsider",
    "steward-bot": "tok-bot",
}


@pytest.fixture(scope="session")
def sandbox() -> Iterator[SandboxServer]:
    with SandboxServer(USERS) as server:
        yield server


FORGES = ["github", "gitea"]


@dataclass
class Steward:
    forge: str
    sandbox: SandboxServer
    redis_url: str
    receiver: ThreadedServer
    workers: list[ThreadedWorker]
    settings: Settings
    maintainer: ForgeUser
    triager: ForgeUser
    outsider: ForgeUser
    bot: ForgeUser

    def new_repo(self, *, configured: bool = True) -> str:
        """A repository the bot works on, with its webhook. ``configured``: see ``ForgeUser.create_repo``
        (by default it has a configuration file, so every capability acts from the first event)."""
        repo = self.maintainer.create_repo(configured=configured)
        # As the README asks: write on GitHub; Administrator on Gitea, which shows other people's
        # permissions only to repository admins.
        self.maintainer.add_collaborator(repo, "steward-bot", "admin" if self.forge == "gitea" else "push")
        self.maintainer.add_collaborator(repo, "triager", "triage")
        self.maintainer.add_hook(repo, f"{self.receiver.url}{self.maintainer.webhook_path}")
        self.settle()
        return repo

    def settle(self, timeout: float = 30.0, *, then_next_second: bool = False) -> None:
        settle(self.sandbox.url, self.redis_url, timeout)
        if then_next_second:
            past_this_second()

    def faults(self, *faults: dict[str, Any]) -> None:
        for fault in faults:
            self.maintainer.client.post(f"{self.sandbox.url}/_sandbox/faults", json=fault).raise_for_status()

    def bot_comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        return [c for c in self.maintainer.comments(repo, number) if c["user"]["login"] == "steward-bot"]

    def run_periodic(self, name: str) -> None:
        """Run periodic job ``name`` now, as its next slot would (not waiting for the clock)."""
        run_periodic_now(self.redis_url, name)

    def bot_requests(self, repo: str) -> list[dict[str, Any]]:
        """The requests the bot made on ``repo`` since the sandbox's request log was last cleared."""
        log = self.maintainer.call("GET", f"{self.sandbox.url}/_sandbox/requests")
        return [r for r in log if r["login"] == "steward-bot" and f"/repos/{repo}/" in f"{r['path']}/"]

    def clear_requests(self) -> None:
        self.maintainer.client.delete(f"{self.sandbox.url}/_sandbox/requests").raise_for_status()

    def deliver(self, event: str, payload: bytes, *, delivery: str | None = None) -> Any:
        """Send a delivery to the receiver, signed the way this forge signs it."""
        return signed_delivery(self.receiver.url, event, payload, delivery=delivery, flavor=self.forge)


def make_settings(sandbox_url: str, redis_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "redis_url": redis_url,
        "github_api_url": sandbox_url,
        "github_token": "tok-bot",
        "github_webhook_secrets": SECRET,
        "gitea_url": sandbox_url,
        "gitea_token": "tok-bot",
        "gitea_webhook_secrets": SECRET,
        # With the bot's login set (`STEWARD_BOT_LOGIN`, docs/operations.md), the receiver drops the
        # bot's own events (its comments, edits and pushes) at once. Discovered instead, they were queued
        # and paced by the bot's own per-person event budget (30 a minute) before the worker ignored
        # them, and every settle waited for that pacing.
        "bot_login": "steward-bot",
        "write_budget_per_minute": 10_000,
        "write_budget_per_hour": 100_000,
        "retry_base_delay": 0.05,
        "retry_max_delay": 5.0,
        # A failed job's next run: 0.05–0.1 s after its first failure, not 1–2 s (the same doubling).
        "job_retry_base_seconds": 0.05,
        # The hourly catch-up would land in whichever test runs on the hour; its own tests ask for it.
        "reconcile_interval_seconds": 0,
        # The quota a catch-up sees is the sandbox's hourly one (each test starts a fresh window, see the
        # `steward` fixture): a catch-up must not stop for it (tests/e2e/test_ops_catchup.py sets its own
        # floor).
        "reconcile_quota_floor": 0.0,
        # The session's sandbox holds every test's repositories, and tok-bot may write to each: a catch-up
        # that asked the forge would walk them all. Tests of that catch-up set it (and a bot of their own).
        "reconcile_installed": False,
        # Every test's repository belongs to `maintainer` in the session's sandbox: an organisation-defaults
        # repository there would reach them all. Its tests name one of their own (test_org_defaults_e2e.py).
        "github_org_config_repo": "",
        "gitea_org_config_repo": "",
    }
    values.update(overrides)
    return Settings(**values)


@pytest.fixture(params=FORGES)
def steward(sandbox: SandboxServer, redis_url: str, request: pytest.FixtureRequest) -> Iterator[Steward]:
    marker = request.node.get_closest_marker("settings")
    settings = make_settings(sandbox.url, redis_url, **(marker.kwargs if marker else {}))
    handler_marker = request.node.get_closest_marker("handler_settings")
    handler_settings = HandlerSettings.model_validate(handler_marker.kwargs if handler_marker else {})
    # The registry `steward run` builds (never a process-wide one another test changed), plus what the test
    # adds with @pytest.mark.extend_registry(fn).
    registry = load_registry()
    for extend in request.node.iter_markers("extend_registry"):
        extend.args[0](registry)
    receiver = ThreadedServer(create_app(settings)).start()
    worker = ThreadedWorker(settings, registry=registry, handler_settings=handler_settings).start()
    users = {login: ForgeUser(sandbox.url, login, token, request.param) for login, token in USERS.items()}
    sandbox.maintainer_client = users["maintainer"].client  # type: ignore[attr-defined]
    users["maintainer"].client.delete(f"{sandbox.url}/_sandbox/faults")
    # Each test reads the requests of its own time: the session's sandbox logs every earlier test's too (a
    # bugfix reviewer test's refused review request failed tests/e2e/test_comment_limits.py, drawn after it).
    users["maintainer"].client.delete(f"{sandbox.url}/_sandbox/requests")
    # Each test has an hour's quota of its own: the session's sandbox otherwise counts every request of
    # `tok-bot` since it started, and once 5000 are spent (a run of the e2e tests in one process), each
    # 403 carries `X-RateLimit-Remaining: 0` and reads as a spent primary limit (an hour's wait).
    sandbox.sandbox.new_rate_windows()
    running = Steward(
        request.param,
        sandbox,
        redis_url,
        receiver,
        [worker],
        settings,
        users["maintainer"],
        users["triager"],
        users["outsider"],
        users["steward-bot"],
    )
    yield running
    users["maintainer"].client.delete(f"{sandbox.url}/_sandbox/faults")
    for each in running.workers:
        each.stop()
    running.receiver.stop()  # a test may have restarted it
