"""The `steward` command as a maintainer runs it: sandbox, receiver and worker as separate processes,
then `steward run` (both in one), each stopped with SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

import httpx2

from bot.demo.threads import free_port
from tests.e2e.stack import SECRET, SIGNING_KEY, ForgeUser, settle, wait_for


@contextmanager
def process(*args: str, env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    # The log goes to a file (a pipe nobody reads would fill and block the process).
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


def _up(url: str) -> bool:
    try:
        return httpx2.get(url, timeout=1).status_code < 500
    except httpx2.TransportError:
        return False


def stopped_cleanly(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM: the server drains and shuts down, then uvicorn exits by re-raising the signal (status
    143, which systemd and Kubernetes count as a clean stop)."""
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(30)
    proc.log.seek(0)  # type: ignore[attr-defined]
    log = proc.log.read().decode()  # type: ignore[attr-defined]
    assert code in (0, -signal.SIGTERM), log[-3000:]
    assert "Application shutdown complete" in log


def _env(sandbox_url: str, redis_url: str, port: int) -> dict[str, str]:
    return {
        "STEWARD_REDIS_URL": redis_url,
        "STEWARD_GITHUB_API_URL": sandbox_url,
        "STEWARD_GITHUB_TOKEN": "proc-bot-token",
        "STEWARD_GITHUB_WEBHOOK_SECRETS": SECRET,
        "STEWARD_PORT": str(port),
        "STEWARD_LOG_LEVEL": "info",
        "STEWARD_SIGNING_KEY": SIGNING_KEY,
    }


def _ping_round_trip(sandbox_url: str, redis_url: str, receiver_url: str) -> None:
    owner = ForgeUser(sandbox_url, "owner", "proc-owner-token")
    repo = owner.create_repo()
    owner.add_collaborator(repo, "bot", "push")
    owner.add_hook(repo, f"{receiver_url}/webhooks/github")
    number = owner.open_issue(repo, "processes")
    owner.comment(repo, number, "/steward ping")
    settle(sandbox_url, redis_url)
    replies = [c["body"] for c in owner.comments(repo, number) if c["user"]["login"] == "bot"]
    assert len(replies) == 1 and "pong — Steward" in replies[0]


@contextmanager
def sandbox_process(redis_url: str) -> Iterator[tuple[str, str, dict[str, str]]]:
    """`steward sandbox` running; yields its URL, the receiver URL to use, and Steward's environment."""
    sandbox_port, port = free_port(), free_port()
    sandbox_url, receiver_url = f"http://127.0.0.1:{sandbox_port}", f"http://127.0.0.1:{port}"
    users = ["--user", "owner=proc-owner-token", "--user", "bot=proc-bot-token"]
    env = _env(sandbox_url, redis_url, port)
    with process("sandbox", "--port", str(sandbox_port), *users, env=env):
        wait_for(lambda: _up(f"{sandbox_url}/_sandbox/state"), timeout=30, what="the sandbox")
        yield sandbox_url, receiver_url, env


def test_sandbox_serve_and_worker_as_separate_processes(redis_url: str) -> None:
    with (
        sandbox_process(redis_url) as (sandbox_url, receiver_url, env),
        process("serve", env=env) as serve,
        process("worker", env=env) as worker,
    ):
        wait_for(lambda: _up(f"{receiver_url}/healthz"), timeout=30, what="the receiver")
        # Ready, and not degraded once the worker process has reported in (its heartbeat).
        ok = {"status": "ok", "redis": "ok"}
        wait_for(lambda: httpx2.get(f"{receiver_url}/readyz").json() == ok, timeout=30, what="a worker")
        _ping_round_trip(sandbox_url, redis_url, receiver_url)
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(30) == 0
        stopped_cleanly(serve)


def test_run_is_receiver_and_worker_in_one_process(redis_url: str) -> None:
    with (
        sandbox_process(redis_url) as (sandbox_url, receiver_url, env),
        process("run", env=env) as run,
    ):
        wait_for(lambda: _up(f"{receiver_url}/healthz"), timeout=30, what="steward run")
        _ping_round_trip(sandbox_url, redis_url, receiver_url)
        stopped_cleanly(run)


def test_run_exits_non_zero_when_its_worker_dies(redis_url: str) -> None:
    """`steward run` never keeps a receiver that acknowledges work nobody will do: a worker that stops for
    any reason but a shutdown (here: its metrics port is taken) takes the process down, exit status 1."""
    import socket

    with socket.socket() as taken, sandbox_process(redis_url) as (_, _, env):
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        env = {**env, "STEWARD_WORKER_METRICS_PORT": str(taken.getsockname()[1])}
        with process("run", env=env) as run:
            code = run.wait(30)
            run.log.seek(0)  # type: ignore[attr-defined]
            log = run.log.read().decode()  # type: ignore[attr-defined]
    assert code == 1, log[-2000:]
    assert "the worker stopped; stopping the receiver too" in log


def test_a_workers_own_port_answers_health_readiness_and_metrics(redis_url: str) -> None:
    with sandbox_process(redis_url) as (_, _, env):
        port = free_port()
        with process("worker", env={**env, "STEWARD_WORKER_METRICS_PORT": str(port)}):
            status = f"http://127.0.0.1:{port}"
            wait_for(lambda: _up(f"{status}/healthz"), timeout=30, what="the worker's port")
            assert httpx2.get(f"{status}/readyz").json() == {"status": "ok", "redis": "ok"}
            metrics = httpx2.get(f"{status}/metrics").text
            assert 'steward_redis_up{process="worker"} 1.0' in metrics
            assert "steward_signing_key_pinned 1.0" in metrics
            assert httpx2.get(f"{status}/nope").status_code == 404


def test_a_worker_without_a_pinned_signing_key_says_so_loudly(redis_url: str) -> None:
    """Issue 40 item 2: without STEWARD_SIGNING_KEY the key lives in Redis, and losing Redis loses it. The
    worker still works, but is not ready: its /readyz answers 503 naming the signing key, the metric is 0,
    and an error is logged at start (docs/integrity.md says why readiness and not a refusal to start)."""
    with sandbox_process(redis_url) as (_, _, env):
        port = free_port()
        unpinned = {k: v for k, v in env.items() if k != "STEWARD_SIGNING_KEY"}
        with process("worker", env={**unpinned, "STEWARD_WORKER_METRICS_PORT": str(port)}) as worker:
            status = f"http://127.0.0.1:{port}"
            wait_for(lambda: _up(f"{status}/healthz"), timeout=30, what="the worker's port")
            ready = httpx2.get(f"{status}/readyz")
            assert ready.status_code == 503
            assert ready.json() == {"status": "unavailable", "redis": "ok", "signing": "not pinned"}
            assert "steward_signing_key_pinned 0.0" in httpx2.get(f"{status}/metrics").text
            worker.log.seek(0)  # type: ignore[attr-defined]
            assert "the signing key is not pinned" in worker.log.read().decode()  # type: ignore[attr-defined]
