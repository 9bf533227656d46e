"""A killed worker's jobs run again within seconds, and the queue's gauges tell running work from waiting
work (issue 40 item 4).

With arq's in-progress mark alone, a worker killed mid-job (SIGKILL, an OOM kill) stranded its job — and the
issue's lock with it — until the mark expired: the job's timeout plus its backstop plus 10 s, 5 minutes 40
seconds with the defaults. And `steward_queue_jobs{state="ready"}`, which KEDA scales on and the "work
waits" alert reads, counted the running job as waiting. Now each worker keeps a liveness key that lives six
seconds; a live worker releases a dead one's marks at once and the job runs again on it (taking back its own
issue lock); the gauge says `running`, then `stranded` for the few seconds before the release, and `ready`
only for jobs no worker runs. The defaults are kept here (a 300-second job timeout): the re-run must not
wait for the mark.
"""

from __future__ import annotations

import contextlib
import json
import signal

import httpx2
import pytest

from bot.demo.texts import APPROVED_BUG
from bot.demo.threads import ThreadedServer, free_port
from bot.receiver.app import create_app
from bot.sandbox.server import SandboxServer
from tests.e2e.conftest import make_settings
from tests.e2e.stack import SECRET, ForgeUser, settle, wait_for
from tests.e2e.test_ops_monitoring import value
from tests.faults.conftest import log_of, steward_process
from tests.faults.scenario import killed_mid_verdict

USERS = {"maintainer": "live-maintainer", "steward-bot": "live-bot"}


def _handled_issue(log: str) -> bool:
    for line in log.splitlines():
        if '"event handled"' in line:
            with contextlib.suppress(ValueError):
                if str(json.loads(line).get("kind", "")).startswith("issues."):
                    return True
    return False


def _env(sandbox: SandboxServer, redis_url: str) -> dict[str, str]:
    return {
        "STEWARD_REDIS_URL": redis_url,
        "STEWARD_GITHUB_API_URL": sandbox.url,
        "STEWARD_GITHUB_TOKEN": USERS["steward-bot"],
        "STEWARD_GITHUB_WEBHOOK_SECRETS": SECRET,
        "STEWARD_WORKER_METRICS_PORT": str(free_port()),
        "STEWARD_RETRY_BASE_DELAY": "0.05",
        "STEWARD_RECONCILE_INTERVAL_SECONDS": "0",
        "STEWARD_RECONCILE_ON_START": "false",
        "STEWARD_LOG_FORMAT": "json",
        "STEWARD_LOG_LEVEL": "info",
    }


@pytest.mark.timeout(180)
def test_a_killed_workers_job_runs_again_within_seconds_and_the_gauges_say_running(redis_url: str) -> None:
    with SandboxServer(USERS) as sandbox:
        settings = make_settings(sandbox.url, redis_url, github_token=USERS["steward-bot"])
        receiver = ThreadedServer(create_app(settings)).start()
        try:
            owner = ForgeUser(sandbox.url, "maintainer", USERS["maintainer"])
            repo = owner.create_repo()
            owner.add_collaborator(repo, "steward-bot", "push")
            owner.add_hook(repo, f"{receiver.url}/webhooks/github")
            hang = {"method": "POST", "path": r"/issues/\d+/comments$", "apply": True, "hang": True}
            fault = {**hang, "hang_seconds": 60, "login": "steward-bot"}
            httpx2.post(f"{sandbox.url}/_sandbox/faults", json=fault).raise_for_status()
            with steward_process("worker", env=_env(sandbox, redis_url)) as first:
                number = owner.open_issue(repo, "Discount lost", APPROVED_BUG, labels=["bug", "refine"])

                def applied() -> bool:
                    return any(c["user"]["login"] == "steward-bot" for c in owner.comments(repo, number))

                wait_for(applied, timeout=60, what="the forge to apply the bot's comment")
                # The job hangs on the forge's answer: a worker runs it, nobody waits for a worker.
                wait_for(
                    lambda: value(receiver.url, "steward_queue_jobs", state="running") == 1,
                    what="the hung job counted as running",
                )
                # (The issue's other event waits for its lock, deferred between tries.)
                wait_for(
                    lambda: value(receiver.url, "steward_queue_jobs", state="ready") == 0,
                    what="no job counted as waiting for a worker",
                )
                # Its other events (opened, one per label) may end before the kill; the verdict's job hangs on
                # the forge's answer for a minute, so it is still in its middle when the kill lands below.
                assert killed_mid_verdict(owner, repo, number, "refinement:approved"), "mid-job"
                with steward_process("worker", env=_env(sandbox, redis_url)) as second:
                    first.send_signal(signal.SIGKILL)
                    first.wait(10)
                    # Within seconds, not when the mark expires (300 + 30 + 10 s).
                    wait_for(
                        lambda: _handled_issue(log_of(second)),
                        timeout=45,
                        what="the killed worker's job to run again on the other worker",
                    )
                    settle(sandbox.url, redis_url, timeout=60)
                    assert value(receiver.url, "steward_queue_jobs", state="stranded") == 0
                    assert value(receiver.url, "steward_queue_jobs", state="running") == 0
            bot = [c for c in owner.comments(repo, number) if c["user"]["login"] == "steward-bot"]
            assert len([c for c in bot if "ra9-verdict" in c["body"]]) == 1, "one verdict, not two"
        finally:
            receiver.stop()
