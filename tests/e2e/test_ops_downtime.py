"""The downtime scenario of issue 26, end to end on both forges, with no `steward reconcile` typed by
anyone and no redelivery API used: commands and labels posted while Steward's receiver alone was down,
then while the whole of Steward (receiver and worker) was down, end with every command answered exactly
once and every verdict right. The receiver that starts after a gap in the receivers' heartbeat queues the
catch-up itself; the catch-up lists the comments written since the outage began and queues the commands
no job handled; a late redelivery of a missed delivery (GitHub) changes nothing. The forge requests each
catch-up cost are printed (`pytest -s`) and bounded here."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx2
import redis

from bot.demo.threads import ThreadedServer, ThreadedWorker
from bot.queue.gauges import RECEIVER_HEARTBEAT_KEY
from bot.queue.jobs import CATCH_UP_KEY
from bot.receiver.app import create_app
from bot.worker.claims import ALIVE_KEY
from tests.e2e.conftest import Steward
from tests.e2e.stack import wait_for

DATA = Path(__file__).parent / "data"
REJECTED = (DATA / "bug-rejected.md").read_text()


def _delivered(steward: Steward) -> None:
    wait_for(
        lambda: steward.maintainer.call("GET", f"{steward.sandbox.url}/_sandbox/deliveries/idle").get("idle"),
        what="the sandbox's deliveries",
    )


def _pongs(steward: Steward, repo: str, number: int) -> list[str]:
    return [c["body"] for c in steward.bot_comments(repo, number) if "pong" in c["body"]]


def _verdicts(steward: Steward, repo: str, number: int) -> list[str]:
    return [c["body"] for c in steward.bot_comments(repo, number) if "steward:ra9-verdict:" in c["body"]]


def _long_ago(steward: Steward) -> None:
    """The outage lasted minutes: the receivers' heartbeat (and the workers' alive mark) are that old."""
    r = redis.Redis.from_url(steward.redis_url)
    r.set(RECEIVER_HEARTBEAT_KEY, repr(time.time() - 600))
    r.delete(CATCH_UP_KEY, ALIVE_KEY)


def _bot_requests(steward: Steward) -> list[dict[str, Any]]:
    log = httpx2.get(f"{steward.sandbox.url}/_sandbox/requests", timeout=10).json()
    return [r for r in log if r["login"] == "steward-bot"]


def _posted_meanwhile(steward: Steward, repo: str, ping_on: int) -> tuple[int, int]:
    """A `/steward ping`, a `/steward ping` on a new issue, and a bug labelled for refinement."""
    m = steward.maintainer
    m.comment(repo, ping_on, "/steward ping")
    other = m.open_issue(repo, "another question")
    m.comment(repo, other, "before the command\n\n/steward ping")
    bug = m.open_issue(repo, "Login button does nothing", REJECTED)
    m.add_labels(repo, bug, ["bug", "refine"])
    _delivered(steward)
    return other, bug


def _answered_once(steward: Steward, repo: str, pinged: list[int], bug: int) -> None:
    for number in pinged:
        wait_for(lambda n=number: _pongs(steward, repo, n), timeout=60, what=f"the answer on #{number}")
    wait_for(lambda: _verdicts(steward, repo, bug), timeout=60, what="the verdict")
    steward.settle(60)
    for number in pinged:
        assert len(_pongs(steward, repo, number)) == 1, f"#{number} answered exactly once"
    [verdict] = _verdicts(steward, repo, bug)
    assert "status: rejected" in verdict
    assert "refinement:needs-info" in steward.maintainer.labels_of(repo, bug)


def _redeliver_missed(steward: Steward, repo: str) -> int:
    """GitHub: redeliver every delivery of ``repo`` that failed (as an operator clicking "Redeliver")."""
    deliveries = httpx2.get(f"{steward.sandbox.url}/_sandbox/deliveries", timeout=10).json()
    failed = [d for d in deliveries if d["repository"] == repo and not d["delivered"]]
    for d in failed:
        httpx2.post(f"{steward.sandbox.url}/_sandbox/deliveries/{d['id']}/redeliver", timeout=10)
    return len(failed)


def test_receiver_only_outage_commands_and_labels_answered_once(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    first = m.open_issue(repo, "a question")
    steward.settle()
    port = steward.receiver.port
    steward.receiver.stop()  # the worker keeps running
    other, bug = _posted_meanwhile(steward, repo, first)
    assert not steward.bot_comments(repo, first), "nobody heard"

    _long_ago(steward)
    steward.clear_requests()
    steward.receiver = ThreadedServer(create_app(steward.settings), port=port).start()
    _answered_once(steward, repo, [first, other], bug)
    cost = _bot_requests(steward)
    print(f"\n{steward.forge} receiver-only outage: the catch-up cost {len(cost)} forge requests")
    assert len(cost) < 80, [f"{r['method']} {r['path']}" for r in cost]

    if steward.forge == "github":
        assert _redeliver_missed(steward, repo) >= 3
        steward.settle(60)
        assert len(_pongs(steward, repo, first)) == 1 and len(_pongs(steward, repo, other)) == 1
        assert len(_verdicts(steward, repo, bug)) == 1


def test_whole_steward_outage_commands_and_labels_answered_once(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    first = m.open_issue(repo, "a question")
    steward.settle()
    port = steward.receiver.port
    for worker in steward.workers:
        worker.stop()
    steward.receiver.stop()
    other, bug = _posted_meanwhile(steward, repo, first)

    _long_ago(steward)
    steward.clear_requests()
    steward.workers = [ThreadedWorker(steward.settings).start()]
    steward.receiver = ThreadedServer(create_app(steward.settings), port=port).start()
    _answered_once(steward, repo, [first, other], bug)
    cost = _bot_requests(steward)
    print(f"\n{steward.forge} whole-Steward outage: the catch-up cost {len(cost)} forge requests")
    assert len(cost) < 80, [f"{r['method']} {r['path']}" for r in cost]
