"""The catch-up survives losing Redis, and `steward reconcile --repo R` starts at R's own last catch-up (issue
40 item 1), end to end on both forges.

- Redis came back empty after an outage (flushed, replaced, restarted without persistence): the queue, the
  dedupe keys, the catch-up's window and the list of repositories heard from were gone, and nothing written
  meanwhile was ever answered. Now the workers keep their heartbeat and the last completed catch-up in a state
  file (`STEWARD_STATE_FILE`); a worker that finds Redis without Steward's mark says so
  (`steward_redis_emptied_total`, one error line) and catches up on every installed repository from there.
- `steward reconcile --repo R` without `--since` looked back only to the forge's last run, which another
  repository's run had moved past R's missed commands; now R's own last catch-up is where it starts.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path

import httpx2
import redis
from pydantic import SecretStr

from bot.demo.threads import ThreadedServer, ThreadedWorker
from bot.receiver.app import create_app
from bot.telemetry import metrics
from tests.e2e.conftest import Steward
from tests.e2e.stack import reconcile, wait_for
from tests.e2e.test_reconcile_e2e import REJECTED, _steward_down, _verdicts_by_anyone


def _delivered(steward: Steward) -> None:
    wait_for(
        lambda: steward.maintainer.call("GET", f"{steward.sandbox.url}/_sandbox/deliveries/idle").get("idle"),
        what="the sandbox's deliveries",
    )


def _pongs(steward: Steward, repo: str, number: int, bot: str = "steward-bot") -> list[str]:
    return [
        c["body"]
        for c in steward.maintainer.comments(repo, number)
        if c["user"]["login"] == bot and "pong" in c["body"]
    ]


def _emptied() -> float:
    return sum(
        s.value for m in metrics.REDIS_EMPTIED.collect() for s in m.samples if s.name.endswith("_total")
    )


def test_a_redis_that_comes_back_empty_is_noticed_and_caught_up_on(steward: Steward, tmp_path: Path) -> None:
    m = steward.maintainer
    # A bot of this test's own: the catch-up lists what the forge says it is installed on, and the session's
    # sandbox holds every other test's repositories too.
    bot, token = f"keeper-{uuid.uuid4().hex[:6]}", f"tok-{uuid.uuid4().hex}"
    httpx2.post(
        f"{steward.sandbox.url}/_sandbox/users", json={"login": bot, "token": token}
    ).raise_for_status()
    repo = steward.new_repo()
    m.add_collaborator(repo, bot, "admin" if steward.forge == "gitea" else "push")
    number = m.open_issue(repo, "a question")
    bug = m.open_issue(repo, "Login button does nothing", REJECTED)  # not labelled for refinement yet
    steward.settle()
    settings = steward.settings.model_copy(
        update={
            "github_token": SecretStr(token),
            "gitea_token": SecretStr(token),
            "bot_login": bot,
            "state_file": tmp_path / "steward-state.json",
            "reconcile_installed": True,
        }
    )
    for worker in steward.workers:
        worker.stop()
    steward.workers = [ThreadedWorker(settings).start()]
    wait_for(lambda: (tmp_path / "steward-state.json").exists(), what="the worker's heartbeat in the file")
    before = _emptied()

    port = steward.receiver.port
    steward.receiver.stop()
    for worker in steward.workers:
        worker.stop()
    m.comment(repo, number, "/steward ping")
    m.add_labels(repo, bug, ["bug", "refine"])
    _delivered(steward)
    # Redis comes back with nothing of Steward's (the test run's own claim on the database aside).
    r = redis.Redis.from_url(steward.redis_url)
    r.delete(*[k for k in r.scan_iter("steward:*")])

    steward.workers = [ThreadedWorker(settings).start()]
    steward.receiver = ThreadedServer(create_app(settings), port=port).start()
    wait_for(lambda: _pongs(steward, repo, number, bot), timeout=90, what="the answer to the ping")
    wait_for(lambda: _verdicts_by_anyone(steward, repo, bug), timeout=30, what="the bug's verdict")
    steward.settle(60)
    assert len(_pongs(steward, repo, number, bot)) == 1
    [verdict] = _verdicts_by_anyone(steward, repo, bug)
    assert "status: rejected" in verdict
    assert "refinement:needs-info" in m.labels_of(repo, bug)
    assert _emptied() == before + 1, "noticed once, as steward_redis_emptied_total"


def test_reconcile_of_one_repository_starts_at_its_own_last_catch_up(steward: Steward) -> None:
    m = steward.maintainer
    first, second = steward.new_repo(), steward.new_repo()
    number = m.open_issue(first, "a question")
    steward.settle()
    both = reconcile(
        steward.settings, "--repo", f"{steward.forge}:{first}", "--repo", f"{steward.forge}:{second}"
    )
    assert both.returncode == 0, both.stdout[-2000:] + both.stderr[-2000:]

    with _steward_down(steward):
        m.comment(first, number, "/steward ping")
        _delivered(steward)
        posted = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        wait_for(
            lambda: datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") > posted,
            what="a later second (the forges' times have whole seconds)",
        )
    # Another repository's catch-up moves the forge's last run past the ping.
    other = reconcile(steward.settings, "--repo", f"{steward.forge}:{second}")
    assert other.returncode == 0, other.stdout[-2000:] + other.stderr[-2000:]

    mine = reconcile(steward.settings, "--repo", f"{steward.forge}:{first}")
    assert mine.returncode == 0, mine.stdout[-2000:] + mine.stderr[-2000:]
    assert "1 comment(s) with commands queued" in mine.stdout, mine.stdout
    wait_for(lambda: _pongs(steward, first, number), timeout=60, what="the answer to the ping")
    steward.settle(60)
    assert len(_pongs(steward, first, number)) == 1
