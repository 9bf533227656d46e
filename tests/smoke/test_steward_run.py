"""Smoke: `steward run`, started from the installed entry point in a fresh process against `steward sandbox`,
answers every command of the README's table on GitHub and on Gitea. One stack serves both forges (as one
Steward configured for both does) and every command, so the suite stays cheap enough for every CI run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.demo.scratch_redis import Claim
from bot.demo.threads import free_port
from tests.e2e.stack import ForgeUser
from tests.smoke.stack import USERS, environment, sandbox, steward, wait_up
from tests.smoke.sweep import INVOCATIONS, readme_table, sweep


@pytest.fixture(scope="module")
def stack(redis_claim: Claim) -> Iterator[tuple[str, str]]:
    """`steward sandbox` and `steward run`; yields the sandbox's and the receiver's URLs."""
    redis_claim.reset()
    port = free_port()
    with sandbox() as sandbox_url, steward("run", env=environment(sandbox_url, redis_claim.url, port)) as run:
        receiver_url = f"http://127.0.0.1:{port}"
        wait_up(f"{receiver_url}/healthz", run, "steward run")
        yield sandbox_url, receiver_url
        assert run.popen.poll() is None, f"steward run stopped:\n{run.output()[-3000:]}"


def test_every_command_in_the_table_has_an_invocation() -> None:
    names = [row.name for row in readme_table()]
    assert "refine" in names and len(names) == len(set(names))
    assert set(names) == set(INVOCATIONS), "give each command of the README's table an invocation here"


@pytest.mark.parametrize("forge", ["github", "gitea"])
def test_steward_run_answers_every_command_of_the_readme(
    stack: tuple[str, str], redis_claim: Claim, forge: str
) -> None:
    sandbox_url, receiver_url = stack
    maintainer = ForgeUser(sandbox_url, "maintainer", USERS["maintainer"], forge)
    outsider = ForgeUser(sandbox_url, "outsider", USERS["outsider"], forge)
    sweep(maintainer, outsider, sandbox_url, redis_claim.url, receiver_url, readme_table())
