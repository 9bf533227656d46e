"""`steward worker` and `steward run` run on uvloop's event loop when it is installed (it comes with
uvicorn[standard]): the worker's many small Redis and forge round trips cost less CPU there (issue 28)."""

from __future__ import annotations

import asyncio

from bot.cli.main import run_fast


async def _loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__


def test_the_worker_runs_on_uvloop_when_it_is_installed() -> None:
    assert run_fast(_loop_module()).startswith("uvloop")
