"""Smoke: the split deployment — `steward serve` and `steward worker` as separate processes (README, "Running
it"), each from the installed entry point — answers every command of the README's table on both forges."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.demo.scratch_redis import Claim
from bot.demo.threads import free_port
from tests.e2e.stack import ForgeUser
from tests.smoke.stack import USERS, environment, sandbox, steward, wait_up
from tests.smoke.sweep import readme_table, sweep


@pytest.fixture(scope="module")
def stack(redis_claim: Claim) -> Iterator[tuple[str, str]]:
    """`steward sandbox`, `steward serve` and `steward worker`; yields the sandbox's and receiver's URLs."""
    redis_claim.reset()
    port, metrics = free_port(), free_port()
    with sandbox() as sandbox_url:
        env = environment(sandbox_url, redis_claim.url, port)
        with (
            steward("serve", env=env) as serve,
            steward("worker", env={**env, "STEWARD_WORKER_METRICS_PORT": str(metrics)}) as worker,
        ):
            receiver_url = f"http://127.0.0.1:{port}"
            wait_up(f"{receiver_url}/healthz", serve, "steward serve")
            wait_up(f"http://127.0.0.1:{metrics}/readyz", worker, "steward worker")
            yield sandbox_url, receiver_url
            assert worker.popen.poll() is None, f"steward worker stopped:\n{worker.output()[-3000:]}"


@pytest.mark.parametrize("forge", ["github", "gitea"])
def test_serve_and_worker_answer_every_command_of_the_readme(
    stack: tuple[str, str], redis_claim: Claim, forge: str
) -> None:
    sandbox_url, receiver_url = stack
    maintainer = ForgeUser(sandbox_url, "maintainer", USERS["maintainer"], forge)
    outsider = ForgeUser(sandbox_url, "outsider", USERS["outsider"], forge)
    sweep(maintainer, outsider, sandbox_url, redis_claim.url, receiver_url, readme_table())
