"""Steward as separate processes for the end-to-end benchmarks: `steward sandbox`, `steward serve` and any
number of `steward worker`, on a Redis database of the run's own (``bot.demo.scratch_redis``), as an operator
runs them. Each process logs to a temporary file at Steward's default level (info)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx2

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.demo.scratch_redis import Claim, base_of, claim  # noqa: E402
from bot.demo.threads import free_port  # noqa: E402
from tests.e2e.stack import SECRET, ForgeUser, queue_idle, wait_for  # noqa: E402

REDIS_BASE = os.environ.get("STEWARD_BENCH_REDIS_URL", "redis://127.0.0.1:6379")
USERS = {
    "maintainer": "bench-maintainer-token",
    "outsider": "bench-outsider-token",
    "steward-bot": "bench-bot-token",
}


def cpu_seconds(pid: int) -> float:
    """The CPU time (user + system) a process has used (Linux; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _up(url: str) -> bool:
    try:
        return httpx2.get(url, timeout=1).status_code < 500
    except httpx2.TransportError:
        return False


@dataclass
class Stack:
    scratch: Claim
    sandbox_url: str
    receiver_url: str
    env: dict[str, str]
    stack: ExitStack
    sandbox: subprocess.Popen[bytes]
    receiver: subprocess.Popen[bytes]
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def cpu(self) -> dict[str, float]:
        """CPU seconds used so far by the sandbox, the receiver and the workers (together)."""
        return {
            "sandbox": cpu_seconds(self.sandbox.pid),
            "receiver": cpu_seconds(self.receiver.pid),
            "workers": sum(cpu_seconds(p.pid) for p in self.workers),
        }

    def user(self, login: str = "maintainer", flavor: str = "github") -> ForgeUser:
        return ForgeUser(self.sandbox_url, login, USERS[login], flavor)

    def admin(self, method: str, path: str, body: Any = None) -> Any:
        response = httpx2.request(method, f"{self.sandbox_url}/_sandbox/{path}", json=body, timeout=60)
        response.raise_for_status()
        return response.json() if response.content else None

    def start_workers(self, count: int, **env: str) -> None:
        """``count`` more workers, returning once each polls the queue (arq logs "Starting worker")."""
        started = [
            self.stack.enter_context(_process("worker", env={**self.env, **env})) for _ in range(count)
        ]
        for proc in started:
            wait_for(lambda proc=proc: b"Starting worker" in _log_of(proc), timeout=120, what="a worker")  # type: ignore[misc]
        self.workers += started

    def stop_workers(self) -> None:
        for proc in self.workers:
            proc.send_signal(signal.SIGTERM)
        for proc in self.workers:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.workers.clear()

    def settle(self, timeout: float = 120.0) -> None:
        """Every delivery made and every job done, twice in a row (a job's writes cause deliveries)."""

        def quiet() -> bool:
            idle = self.admin("GET", "deliveries/idle?timeout=10").get("idle")
            return bool(idle) and queue_idle(self.scratch.url)

        wait_for(lambda: quiet() and quiet(), timeout=timeout, what="deliveries and jobs to settle")

    def new_repo(self, flavor: str = "github", *, settle: bool = True) -> tuple[ForgeUser, str]:
        """A repository with Steward's hook, the bot an admin, and no limit on commands or events a minute
        (the benchmarks run many, from one person); settled unless ``settle`` is false."""
        owner = self.user("maintainer", flavor)
        repo = owner.create_repo()
        owner.add_collaborator(repo, "steward-bot", "admin")
        owner.add_hook(repo, f"{self.receiver_url}{owner.webhook_path}")
        folder = ".github" if flavor == "github" else ".gitea"
        limits = "limits:\n  commands_per_minute: 0\n  events_per_minute: 0\n"
        owner.put_file(repo, f"{folder}/steward.yml", limits)
        if settle:
            self.settle()
        return owner, repo


def _log_of(proc: subprocess.Popen[bytes]) -> bytes:
    log: IO[bytes] = proc.log  # type: ignore[attr-defined]
    log.seek(0)
    return log.read()


@contextmanager
def _process(*args: str, env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    log: IO[bytes]
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen([sys.executable, "-m", "bot.cli", *args], env=env, stdout=log, stderr=log)
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


@contextmanager
def running(*, workers: int = 1, **settings: str) -> Iterator[Stack]:
    """Sandbox, receiver and ``workers`` worker processes; ``settings`` are extra STEWARD_* variables."""
    scratch = claim(base_of(REDIS_BASE))
    sandbox_port, port = free_port(), free_port()
    sandbox_url, receiver_url = f"http://127.0.0.1:{sandbox_port}", f"http://127.0.0.1:{port}"
    base = {k: v for k, v in os.environ.items() if not k.startswith("STEWARD_")}
    env = {
        **base,
        "STEWARD_REDIS_URL": scratch.url,
        "STEWARD_GITHUB_API_URL": sandbox_url,
        "STEWARD_GITHUB_TOKEN": USERS["steward-bot"],
        "STEWARD_GITHUB_WEBHOOK_SECRETS": SECRET,
        "STEWARD_GITEA_URL": sandbox_url,
        "STEWARD_GITEA_TOKEN": USERS["steward-bot"],
        "STEWARD_GITEA_WEBHOOK_SECRETS": SECRET,
        "STEWARD_BOT_LOGIN": "steward-bot",
        "STEWARD_PORT": str(port),
        "STEWARD_LOG_LEVEL": "info",
        "STEWARD_RECONCILE_INTERVAL_SECONDS": "0",
        "STEWARD_RECONCILE_ON_START": "false",
        **{f"STEWARD_{k.upper()}": v for k, v in settings.items()},
    }
    users = [arg for login, token in USERS.items() for arg in ("--user", f"{login}={token}")]
    with ExitStack() as stack:
        stack.callback(scratch.release)
        sandbox = stack.enter_context(_process("sandbox", "--port", str(sandbox_port), *users, env=env))
        wait_for(lambda: _up(f"{sandbox_url}/_sandbox/state"), timeout=60, what="the sandbox")
        receiver = stack.enter_context(_process("serve", env=env))
        wait_for(lambda: _up(f"{receiver_url}/healthz"), timeout=60, what="the receiver")
        bench = Stack(scratch, sandbox_url, receiver_url, env, stack, sandbox, receiver)
        stack.callback(bench.stop_workers)
        bench.start_workers(workers)
        yield bench


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]
