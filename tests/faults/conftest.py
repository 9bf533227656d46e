"""Fault-injection fixtures: a Redis of the test's own (AOF on) that a test can stop and start again, and
Steward's processes run the way an operator runs them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis

from bot.demo.threads import free_port
from tests.e2e.stack import wait_for


@dataclass
class OwnRedis:
    """A redis-server on a free port with AOF (`appendfsync always`), stopped and started at will."""

    directory: Path
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def _answers(self) -> bool:
        client = redis.Redis(port=self.port, socket_connect_timeout=0.5)
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                "redis-server",
                "--port", str(self.port), "--bind", "127.0.0.1",
                "--appendonly", "yes", "--appendfsync", "always", "--save", "",
                "--dir", str(self.directory),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        wait_for(self._answers, timeout=20, what="the test's Redis to answer")

    def stop(self) -> None:
        """A clean shutdown (SIGTERM): Redis flushes its AOF and exits; clients see refused connections."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(20)
            self.proc = None


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[OwnRedis]:
    server = OwnRedis(tmp_path)
    server.start()
    yield server
    server.stop()


@contextmanager
def steward_process(*args: str, env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """`steward <args>` as its own process; its log goes to a file (``proc.log``), read with ``log_of``."""
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot.cli", *args],
            env={**os.environ, "PYTHONUNBUFFERED": "1", **env},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        proc.log = log  # type: ignore[attr-defined]
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def log_of(proc: subprocess.Popen[bytes]) -> str:
    proc.log.seek(0)  # type: ignore[attr-defined]
    return str(proc.log.read().decode(errors="replace"))  # type: ignore[attr-defined]


def still_running(*procs: subprocess.Popen[bytes]) -> bool:
    time.sleep(0)  # a poll, not a wait
    return all(p.poll() is None for p in procs)


# The e2e stack (a session sandbox forge, a receiver and a worker wired to it, both forges) for the
# scenarios that fault the forge rather than Steward's own processes.
from tests.e2e.conftest import sandbox, steward  # noqa: E402, F401
