"""Steward as it ships, for the smoke suite: the `steward` console script that `pip install` puts beside
the interpreter, started in a fresh process with nothing but its environment, against `steward sandbox`
(another process). Nothing of Steward is imported into the test process to run it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2

from bot.demo.threads import free_port
from tests.e2e.stack import SECRET, SIGNING_KEY, wait_for

USERS = {"maintainer": "smoke-maintainer", "outsider": "smoke-outsider", "steward-bot": "smoke-bot"}


def steward_command() -> list[str]:
    """The installed entry point (`.venv/bin/steward`), or `python -m bot.cli` where none is installed."""
    script = Path(sys.executable).with_name("steward")
    return [str(script)] if script.exists() else [sys.executable, "-m", "bot.cli"]


@dataclass
class Process:
    popen: subprocess.Popen[bytes]
    log: tempfile._TemporaryFileWrapper[bytes]

    def output(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read().decode(errors="replace")


@contextmanager
def steward(*args: str, env: dict[str, str]) -> Iterator[Process]:
    """`steward ARGS` running; SIGTERM (then SIGKILL) when the block ends. Its output goes to a file (a pipe
    nobody reads would fill and block it) that a failing test shows."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("STEWARD_")}
    with tempfile.NamedTemporaryFile(prefix="steward-smoke-") as log:
        popen = subprocess.Popen(
            [*steward_command(), *args],
            env={**clean, "PYTHONUNBUFFERED": "1", **env},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        running = Process(popen, log)
        try:
            yield running
        finally:
            if popen.poll() is None:
                popen.send_signal(signal.SIGTERM)
                try:
                    popen.wait(20)
                except subprocess.TimeoutExpired:
                    popen.kill()
                    popen.wait()


def answers(url: str) -> bool:
    try:
        return httpx2.get(url, timeout=2).status_code < 500
    except httpx2.TransportError:
        return False


def wait_up(url: str, process: Process, what: str) -> None:
    def up() -> bool:
        if process.popen.poll() is not None:
            raise AssertionError(
                f"{what} exited with {process.popen.returncode}:\n{process.output()[-3000:]}"
            )
        return answers(url)

    wait_for(up, timeout=60, what=what)


@contextmanager
def sandbox() -> Iterator[str]:
    """`steward sandbox` on a free port, with the smoke suite's users; yields its URL."""
    port = free_port()
    users = [arg for login, token in USERS.items() for arg in ("--user", f"{login}={token}")]
    with steward("sandbox", "--port", str(port), *users, env={}) as process:
        url = f"http://127.0.0.1:{port}"
        wait_up(f"{url}/_sandbox/state", process, "steward sandbox")
        yield url


def environment(sandbox_url: str, redis_url: str, port: int) -> dict[str, str]:
    """What an operator sets for Steward on GitHub and on Gitea at once (README, "Running it")."""
    token, secret = USERS["steward-bot"], SECRET
    return {
        "STEWARD_REDIS_URL": redis_url,
        "STEWARD_GITHUB_API_URL": sandbox_url,
        "STEWARD_GITHUB_TOKEN": token,
        "STEWARD_GITHUB_WEBHOOK_SECRETS": secret,
        "STEWARD_GITEA_URL": sandbox_url,
        "STEWARD_GITEA_TOKEN": token,
        "STEWARD_GITEA_WEBHOOK_SECRETS": secret,
        "STEWARD_PORT": str(port),
        "STEWARD_LOG_LEVEL": "warning",
        # The sweep writes more than the default 80 writes a minute; a catch-up on the hour would land in it.
        "STEWARD_WRITE_BUDGET_PER_MINUTE": "10000",
        "STEWARD_WRITE_BUDGET_PER_HOUR": "100000",
        "STEWARD_RECONCILE_INTERVAL_SECONDS": "0",
        "STEWARD_SIGNING_KEY": SIGNING_KEY,  # pinned, as the README's production set-up asks
    }
