"""Receiver benchmark: signed deliveries per second and ack latency of /webhooks/github (verify,
parse, normalise, dedupe, enqueue in Redis) against a bare Starlette endpoint on the same uvicorn
settings, measured in the same run. Prints figures and ratios; asserts nothing.

    make bench            # or: .venv/bin/python bench/receiver.py [--requests 4000] [--rate 500]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx2
import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.runner import free_port  # noqa: E402
from bot.signatures import sign_sha256  # noqa: E402

SECRET = "bench-secret"
BODY = (ROOT / "tests" / "fixtures" / "github" / "webhooks" / "issue_comment" / "created.json").read_bytes()
SIGNATURE = "sha256=" + sign_sha256(SECRET, BODY)
REDIS_URL = os.environ.get("STEWARD_BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")


def start(app_spec: str, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            app_spec,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-access-log",
            "--log-level",
            "warning",
            *(["--factory"] if "factory" in app_spec else []),
        ],
        cwd=ROOT,
        env={**os.environ, **env},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            httpx2.get(url + "/", timeout=0.5)
            return proc, url
        except httpx2.TransportError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"{app_spec} did not start")


def request_bytes(host: str) -> bytes:
    """One signed delivery as raw HTTP/1.1 bytes: a fresh delivery id each time."""
    head = (
        f"POST /webhooks/github HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"X-GitHub-Event: issue_comment\r\nX-GitHub-Delivery: {uuid.uuid4()}\r\n"
        f"X-Hub-Signature-256: {SIGNATURE}\r\nContent-Length: {len(BODY)}\r\n\r\n"
    )
    return head.encode() + BODY


class Connection:
    """A minimal keep-alive HTTP/1.1 client: the load generator must cost far less than the server."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str) -> None:
        self.reader, self.writer, self.host = reader, writer, host

    @classmethod
    async def open(cls, url: str) -> Connection:
        host = url.removeprefix("http://")
        name, port = host.split(":")
        reader, writer = await asyncio.open_connection(name, int(port))
        return cls(reader, writer, host)

    async def post(self) -> int:
        self.writer.write(request_bytes(self.host))
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        await self.reader.readexactly(length)
        return status

    def close(self) -> None:
        self.writer.close()


async def throughput(url: str, total: int, concurrency: int) -> float:
    """Closed loop: ``concurrency`` connections send ``total`` deliveries as fast as answered."""
    connections = [await Connection.open(url) for _ in range(concurrency)]
    remaining = total

    async def one_client(conn: Connection) -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            status = await conn.post()
            assert status == 202, status

    started = time.perf_counter()
    await asyncio.gather(*(one_client(c) for c in connections))
    elapsed = time.perf_counter() - started
    for conn in connections:
        conn.close()
    return total / elapsed


async def latency(url: str, rate: float, seconds: float) -> list[float]:
    """Open loop: deliveries sent at ``rate`` per second whatever the answers; each one's ack time.
    A pool of idle keep-alive connections is kept so a request never waits for a connection."""
    idle = [await Connection.open(url) for _ in range(64)]
    samples: list[float] = []

    async def one() -> None:
        conn = idle.pop() if idle else await Connection.open(url)
        sent = time.perf_counter()
        try:
            status = await conn.post()
        except (asyncio.IncompleteReadError, ConnectionError):
            # The server closed a connection that sat idle past its keep-alive timeout: redial.
            conn = await Connection.open(url)
            sent = time.perf_counter()
            status = await conn.post()
        samples.append(time.perf_counter() - sent)
        assert status == 202, status
        idle.append(conn)

    tasks = []
    started = time.perf_counter()
    for i in range(int(rate * seconds)):
        delay = started + i / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one()))
    await asyncio.gather(*tasks)
    for conn in idle:
        conn.close()
    return samples


def pct(samples: list[float], q: float) -> float:
    return statistics.quantiles(samples, n=100)[int(q) - 1] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rate", type=float, default=500.0)
    parser.add_argument("--seconds", type=float, default=6.0)
    args = parser.parse_args()
    redis.Redis.from_url(REDIS_URL).flushdb()
    env = {
        "STEWARD_REDIS_URL": REDIS_URL,
        "STEWARD_GITHUB_WEBHOOK_SECRETS": SECRET,
        "STEWARD_LOG_LEVEL": "warning",
    }
    results: dict[str, dict[str, float]] = {}
    for name, spec in (("bare", "bench.bare_app:app"), ("steward", "bench.receiver_app:app")):
        proc, url = start(spec, env)
        try:
            asyncio.run(throughput(url, 300, 8))  # warm up
            rps = asyncio.run(throughput(url, args.requests, args.concurrency))
            samples = asyncio.run(latency(url, args.rate, args.seconds))
            results[name] = {"rps": rps, "p50": pct(samples, 50), "p99": pct(samples, 99)}
        finally:
            proc.terminate()
            proc.wait(10)
    queued = redis.Redis.from_url(REDIS_URL).zcard("steward:queue")
    redis.Redis.from_url(REDIS_URL).flushdb()
    bare, steward = results["bare"], results["steward"]
    print(
        f"{'endpoint':<10}{'deliveries/s':>14}{'p50 ms':>10}{'p99 ms':>10}   (latency at {args.rate:.0f}/s)"
    )
    for name, r in results.items():
        print(f"{name:<10}{r['rps']:>14.0f}{r['p50']:>10.2f}{r['p99']:>10.2f}")
    print(f"throughput ratio steward/bare: {steward['rps'] / bare['rps']:.2f}  (aim ≥ 0.35)")
    print(
        f"p99 ratio steward/bare: {steward['p99'] / bare['p99']:.2f}; "
        f"steward p99 {steward['p99']:.1f} ms (aim < 20)"
    )
    print(f"jobs enqueued by the steward run: {queued}")


if __name__ == "__main__":
    main()
