"""A worker killed with SIGKILL in the middle of a job — after the forge applied its comment, before the
answer came back — leaves the job in the queue; it runs again on the next worker and the issue ends with one
verdict, not two.

arq re-runs a job whose worker vanished once the job's in-progress mark expires: Steward's job timeout plus
its backstop plus 10 seconds (arq's own timeout is Steward's plus the backstop, 30 s by default, and arq
adds 10). The scenario runs with a 5-second job timeout (the kill must land before Steward's own timeout
ends the hung job, even on a busy machine) and a 2-second backstop, so the re-run comes after 17 s; with
the defaults (300 s and 30 s), a killed worker's jobs run again after about 5 minutes 40 seconds
(docs/reliability.md). GitHub-flavoured only: the kill and re-run happen in Steward's queue, the same on
both forges (the forge side is covered by the other scenarios on both)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal

import httpx2
import pytest

from bot.demo.texts import APPROVED_BUG
from bot.demo.threads import ThreadedServer, free_port
from bot.forge import RepoRef
from bot.queue.jobs import make_redis
from bot.receiver.app import create_app
from bot.sandbox.server import SandboxServer
from bot.worker.jobs import RECONCILE_RUNNING_KEY, build_runtime, create_worker, reconcile_job
from tests.e2e.conftest import make_settings
from tests.e2e.stack import SECRET, ForgeUser, settle, wait_for
from tests.faults.conftest import log_of, steward_process
from tests.faults.scenario import Expected, check_forge_state, killed_mid_verdict
from tests.workers import close_when_idle

USERS = {"maintainer": "kill-maintainer", "steward-bot": "kill-bot"}
BACKSTOP = 2


def handled(log: str) -> list[str]:
    """The kinds of the events a worker's log (JSON lines) says it handled."""
    kinds = []
    for line in log.splitlines():
        if '"event handled"' in line:
            with contextlib.suppress(ValueError):
                kinds.append(str(json.loads(line).get("kind", "")))
    return kinds


def _worker_env(sandbox: SandboxServer, redis_url: str) -> dict[str, str]:
    return {
        "STEWARD_REDIS_URL": redis_url,
        "STEWARD_GITHUB_API_URL": sandbox.url,
        "STEWARD_GITHUB_TOKEN": USERS["steward-bot"],
        "STEWARD_GITHUB_WEBHOOK_SECRETS": SECRET,
        "STEWARD_WORKER_METRICS_PORT": str(free_port()),
        "STEWARD_JOB_TIMEOUT_SECONDS": "5",
        "STEWARD_JOB_TIMEOUT_BACKSTOP_SECONDS": str(BACKSTOP),
        "STEWARD_RETRY_BASE_DELAY": "0.05",
        "STEWARD_RECONCILE_INTERVAL_SECONDS": "0",
        "STEWARD_LOG_LEVEL": "info",
    }


@pytest.mark.timeout(240)  # the re-run waits for the in-progress mark: job timeout + backstop + 10 s
def test_a_worker_killed_mid_job_leaves_one_comment_after_its_job_runs_again(redis_url: str) -> None:
    with SandboxServer(USERS) as sandbox:
        settings = make_settings(sandbox.url, redis_url, github_token=USERS["steward-bot"])
        receiver = ThreadedServer(create_app(settings)).start()
        try:
            owner = ForgeUser(sandbox.url, "maintainer", USERS["maintainer"])
            repo = owner.create_repo()
            owner.add_collaborator(repo, "steward-bot", "push")
            owner.add_hook(repo, f"{receiver.url}/webhooks/github")
            # The bot's first comment is applied by the forge, whose answer then never comes.
            hang = {"method": "POST", "path": r"/issues/\d+/comments$", "apply": True, "hang": True}
            fault = {**hang, "hang_seconds": 60, "login": "steward-bot"}
            httpx2.post(f"{sandbox.url}/_sandbox/faults", json=fault).raise_for_status()
            expected = Expected()
            env = _worker_env(sandbox, redis_url)
            with steward_process("worker", env=env) as first:
                number = owner.open_issue(repo, "Discount lost", APPROVED_BUG, labels=["bug", "refine"])
                expected.verdict_label[number] = "refinement:approved"

                def applied() -> bool:
                    return any(c["user"]["login"] == "steward-bot" for c in owner.comments(repo, number))

                wait_for(applied, timeout=60, what="the forge to apply the bot's comment")
                first.send_signal(signal.SIGKILL)
                first.wait(10)
                # Its other events (opened, one per label) may end before the kill; the verdict's must not.
                assert killed_mid_verdict(owner, repo, number, "refinement:approved"), "killed mid-job"
            # The second worker's own job timeout is generous: what it must do is run the job again, and on a
            # busy machine 5 seconds can be too little for a whole refinement (the first worker's short
            # timeout only sets when the in-progress mark expires).
            again = {**_worker_env(sandbox, redis_url), "STEWARD_JOB_TIMEOUT_SECONDS": "60"}
            with steward_process("worker", env=again) as second:
                settle(sandbox.url, redis_url, timeout=120)

                # A worker writes its info lines in blocks (every 0.1 s: bot.telemetry.logs), so the line of a
                # job that just ended can still be in the process when the queue is found idle: wait for it.
                def reran() -> bool:
                    return any(k.startswith("issues.") for k in handled(log_of(second)))

                try:
                    wait_for(reran, timeout=10, what="the worker's log to say it handled the issue's event")
                except AssertionError:
                    tail = "\n".join(log_of(second).splitlines()[-20:])
                    raise AssertionError(f"the issue's job ran again on the next worker:\n{tail}") from None
            problems = check_forge_state(ForgeUserSteward(owner), repo, expected)
            assert not problems, "\n".join(problems)
        finally:
            receiver.stop()


class ForgeUserSteward:
    """What ``check_forge_state`` reads, for a test without the e2e ``steward`` fixture."""

    def __init__(self, owner: ForgeUser) -> None:
        self.maintainer = owner

    def bot_comments(self, repo: str, number: int) -> list[dict[str, object]]:
        return [c for c in self.maintainer.comments(repo, number) if c["user"]["login"] == "steward-bot"]


def test_a_jobs_in_progress_mark_lasts_its_own_timeout_not_the_reconciles(redis_url: str) -> None:
    """What makes the re-run above come in seconds: arq's in-progress mark follows the event job's timeout
    (plus its backstop, 30 s by default, and 10 s), not the reconcile job's 30 minutes."""
    settings = make_settings("http://127.0.0.1:9", redis_url, job_timeout_seconds=7)
    worker = create_worker(settings, handle_signals=False)
    try:
        assert worker.in_progress_timeout_s == 7 + 40
        assert worker.job_timeout_s == 7 + 30, "arq's limit is the backstop behind Steward's own"
    finally:
        asyncio.run(close_when_idle(worker))
    shorter = make_settings(
        "http://127.0.0.1:9", redis_url, job_timeout_seconds=7, job_timeout_backstop_seconds=2
    )
    worker = create_worker(shorter, handle_signals=False)
    try:
        assert worker.in_progress_timeout_s == 7 + 2 + 10 and worker.job_timeout_s == 7 + 2
    finally:
        asyncio.run(close_when_idle(worker))


async def test_a_reconcile_job_does_not_start_beside_a_running_one(redis_url: str) -> None:
    """A long reconcile outlives that mark; a second worker picking the job up finds its lock and stops."""
    settings = make_settings("http://127.0.0.1:9", redis_url)
    redis = make_redis(redis_url)
    runtime = build_runtime(settings, redis)
    try:
        await runtime.seen.note("github", RepoRef("maintainer", "busy"))
        await redis.set(RECONCILE_RUNNING_KEY, "another-job", ex=60)
        answer = await reconcile_job({"runtime": runtime, "job_id": "second"})
        assert answer == "a reconcile is already running"
        assert await redis.get(RECONCILE_RUNNING_KEY) == b"another-job", "the running job's lock is kept"
    finally:
        await runtime.aclose()
        await redis.aclose()
