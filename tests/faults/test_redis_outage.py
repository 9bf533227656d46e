"""Survive a Redis outage: with Redis shut down and started again in the middle of a burst of labelled
bugs, the worker (and `steward run`) waits for Redis instead of dying; every delivery the receiver
acknowledged takes effect exactly once without restarting any Steward process, and once the refused
deliveries are redelivered (as an operator does from the forge's delivery log), every bug has exactly one
verdict."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import httpx2
import pytest
import redis

from bot.demo.texts import APPROVED_BUG
from bot.demo.threads import free_port
from bot.sandbox.server import SandboxServer
from tests.e2e.stack import SECRET, SIGNING_KEY, TEST_CONFIG_PATHS, ForgeUser, settle, wait_for
from tests.faults.conftest import OwnRedis, log_of, steward_process, still_running

USERS = {"owner": "outage-owner-token", "steward-bot": "outage-bot-token"}
BUGS = 24


@contextmanager
def steward(
    mode: str, sandbox: SandboxServer, redis_url: str, metrics_port: int
) -> Iterator[tuple[str, list[subprocess.Popen[bytes]]]]:
    port = free_port()
    env = {
        "STEWARD_REDIS_URL": redis_url,
        "STEWARD_GITHUB_API_URL": sandbox.url,
        "STEWARD_GITHUB_TOKEN": USERS["steward-bot"],
        "STEWARD_GITHUB_WEBHOOK_SECRETS": SECRET,
        "STEWARD_PORT": str(port),
        "STEWARD_WORKER_METRICS_PORT": str(metrics_port),
        "STEWARD_LOG_LEVEL": "info",
        "STEWARD_SIGNING_KEY": SIGNING_KEY,
        "STEWARD_RETRY_BASE_DELAY": "0.05",
        # One person's burst on one repository: the shares of the write budget a person and a repository
        # may spend (a quarter and a half: tests/e2e/test_write_budget_fairness.py pins those) are the
        # whole budget here, so the scenario waits on the outage rather than on that pacing (the 24 bugs'
        # ~78 writes at a quarter of 80 a minute take about three minutes).
        "STEWARD_WRITE_SHARE_PER_PERSON": "1.0",
        "STEWARD_WRITE_SHARE_PER_REPOSITORY": "1.0",
    }
    with ExitStack() as stack:
        names = ["serve", "worker"] if mode == "serve+worker" else ["run"]
        procs = [stack.enter_context(steward_process(name, env=env)) for name in names]
        url = f"http://127.0.0.1:{port}"
        wait_for(lambda: _up(f"{url}/readyz"), timeout=30, what="the receiver")
        status = f"http://127.0.0.1:{env['STEWARD_WORKER_METRICS_PORT']}"
        wait_for(lambda: _up(f"{status}/readyz"), timeout=30, what="the worker")
        yield url, procs


def _status(url: str) -> int:
    try:
        return httpx2.get(url, timeout=3).status_code
    except httpx2.TransportError:
        return 0


def _up(url: str) -> bool:
    try:
        return httpx2.get(url, timeout=1).status_code == 200
    except httpx2.TransportError:
        return False


def _acknowledged_triggers(sandbox_url: str, deliveries: list[dict[str, Any]]) -> set[int]:
    """The bugs with a delivery that refines them (opened with the `refine` label, or labelled `refine`)
    that the receiver acknowledged."""
    found: set[int] = set()
    for delivery in deliveries:
        if delivery["event"] != "issues" or delivery["status_code"] not in (200, 202):
            continue
        payload = httpx2.get(f"{sandbox_url}/_sandbox/deliveries/{delivery['id']}").json()["payload"]
        labels = {label["name"] for label in payload["issue"]["labels"]}
        if payload["action"] == "opened" and "refine" in labels:
            found.add(payload["issue"]["number"])
        if payload["action"] == "labeled" and payload["label"]["name"] == "refine":
            found.add(payload["issue"]["number"])
    return found


def _published_limits(redis_url: str) -> set[bytes]:
    """The event limits workers published to the receiver (this test's Redis holds one repository's)."""
    client = redis.Redis.from_url(redis_url)
    try:
        return {client.get(key) or b"" for key in client.scan_iter("steward:events-limit:*")}
    finally:
        client.close()


def _verdicts(owner: ForgeUser, repo: str, number: int) -> int:
    return sum(
        1
        for c in owner.comments(repo, number)
        if c["user"]["login"] == "steward-bot" and c["body"].startswith("<!-- steward:ra9-verdict:")
    )


@pytest.mark.parametrize("mode", ["serve+worker", "run"])
def test_a_redis_outage_mid_burst_loses_nothing_acknowledged_and_kills_no_process(
    own_redis: OwnRedis, mode: str
) -> None:
    metrics_port = free_port()
    with (
        SandboxServer(USERS) as sandbox,
        steward(mode, sandbox, own_redis.url, metrics_port) as (receiver, procs),
    ):
        owner = ForgeUser(sandbox.url, "owner", USERS["owner"])
        repo = owner.create_repo()
        # The burst is 24 bugs opened with two labels each in a few seconds: under the default per-person
        # event budget (30 a minute) the labels would be handled one every 2 s, and the scenario would wait
        # on that pacing rather than on the outage.
        owner.put_file(repo, TEST_CONFIG_PATHS["github"], "limits:\n  events_per_minute: 0\n")
        owner.add_collaborator(repo, "steward-bot", "push")
        owner.add_hook(repo, f"{receiver}/webhooks/github")
        # The receiver paces a person's events at Steward's default until a worker has read the
        # repository's file and published its limit (bot.queue.budgets): the hook came after the file's
        # push, so an issue makes the worker read it before the burst (else, on a loaded machine, the
        # burst's 31st event could arrive first and the rest wait one every 2 s).
        owner.open_issue(repo, "Before the burst", "Nothing to refine.")
        settle(sandbox.url, own_redis.url)
        wait_for(lambda: _published_limits(own_redis.url) == {b"0"}, what="the repository's event limit")
        worker_status = f"http://127.0.0.1:{metrics_port}"
        numbers: list[int] = []
        for i in range(BUGS):
            if i == BUGS // 3:
                own_redis.stop()
                wait_for(lambda: _status(f"{receiver}/readyz") == 503, what="the receiver to see the outage")
                wait_for(lambda: _status(f"{worker_status}/readyz") == 503, what="the worker to see it")
            if i == 2 * BUGS // 3:
                own_redis.start()
                wait_for(lambda: _status(f"{worker_status}/readyz") == 200, what="the worker to see Redis")
            numbers.append(owner.open_issue(repo, f"Bug {i}", APPROVED_BUG, labels=["bug", "refine"]))
        deliveries = httpx2.get(f"{sandbox.url}/_sandbox/deliveries").json()
        refused = [d for d in deliveries if d["status_code"] == 503]
        assert refused, "the receiver refused deliveries while Redis was down (503: the forge may redeliver)"

        # Every acknowledged delivery takes effect, with no process restarted.
        settle(sandbox.url, own_redis.url, timeout=120)
        assert still_running(*procs), "no Steward process died"
        acknowledged = _acknowledged_triggers(sandbox.url, deliveries)
        assert acknowledged, "some bugs' deliveries were acknowledged"
        assert {n: _verdicts(owner, repo, n) for n in acknowledged} == dict.fromkeys(acknowledged, 1)

        # The operator redelivers what was refused; then every bug has exactly one verdict.
        for delivery in refused:
            httpx2.post(f"{sandbox.url}/_sandbox/deliveries/{delivery['id']}/redeliver")
        settle(sandbox.url, own_redis.url, timeout=120)
        assert [_verdicts(owner, repo, n) for n in numbers] == [1] * BUGS
        labels = [owner.labels_of(repo, n) for n in numbers]
        assert all("refinement:approved" in found for found in labels)
        assert still_running(*procs)

        # One warning for the outage (not one per job or per poll), and a word when Redis is back.
        lines = [ln for ln in log_of(procs[-1]).splitlines() if "warning" in ln and "Redis is" in ln]
        waiting = [i for i, ln in enumerate(lines) if "unreachable; waiting for it to come back" in ln]
        assert len(waiting) <= 1 and not [ln for ln in lines if "the job will run again" in ln], lines
        assert not waiting or any("Redis is back; carrying on" in ln for ln in lines[waiting[0] :])
