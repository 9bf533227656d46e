"""Receiver benchmark: signed unique deliveries per second and ack latency of /webhooks/github (verify,
parse, normalise, dedupe, enqueue in Redis) against a bare Starlette endpoint on the same uvicorn
settings, measured in the same run, with Steward's default logging (info, one line per accepted delivery,
written to a file as a service's log would be). Throughput is measured with `wrk` (closed loop) when it is
installed, else with the Python generator below; the ack latency at ``--rate`` deliveries/s with the
Python open-loop generator (wrk has no fixed rate). Prints figures and ratios; asserts nothing.

    make bench            # or: .venv/bin/python bench/receiver.py [--seconds 10] [--rate 500] [--python]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import IO

import httpx2

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.demo.scratch_redis import Claim, base_of, claim  # noqa: E402
from bot.demo.threads import free_port  # noqa: E402
from bot.receiver.signatures import sign_sha256  # noqa: E402

SECRET = "bench-secret"
BODY = (ROOT / "tests" / "fixtures" / "github" / "webhooks" / "issue_comment" / "created.json").read_bytes()
SIGNATURE = "sha256=" + sign_sha256(SECRET, BODY)
REDIS_BASE = os.environ.get("STEWARD_BENCH_REDIS_URL", "redis://127.0.0.1:6379")


def start(app_spec: str, env: dict[str, str], log: IO[bytes]) -> tuple[subprocess.Popen[bytes], str]:
    """One uvicorn process, as `steward serve` runs it (one process, the default loop and HTTP parser,
    no access log, info level); its output goes to ``log``."""
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
            "info",
            *(["--factory"] if "factory" in app_spec else []),
        ],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=log,
        stderr=subprocess.STDOUT,
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


# wrk's request script: the same signed body, a unique X-GitHub-Delivery on every request (the run's
# prefix, wrk's thread and a counter): every request is a new delivery, verified, deduped and queued.
WRK_SCRIPT = """
local prefix, counter, thread_id = "%(prefix)s", 0, 0
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("thread_id", threads)
end
function init(args)
  local f = assert(io.open("%(body)s", "rb"))
  wrk.body = f:read("*a")
  f:close()
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["X-GitHub-Event"] = "issue_comment"
  wrk.headers["X-Hub-Signature-256"] = "%(signature)s"
end
function request()
  counter = counter + 1
  wrk.headers["X-GitHub-Delivery"] = prefix .. "-" .. thread_id .. "-" .. counter
  return wrk.format(nil, "/webhooks/github")
end
"""


def cpu_seconds(pid: int) -> float | None:
    """The CPU time (user + system) a process has used; None off Linux."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wrk_throughput(url: str, seconds: float, connections: int) -> tuple[float, int]:
    """Closed loop with wrk (one thread: the server gets the other core); fails on any non-2xx answer."""
    with tempfile.TemporaryDirectory() as tmp:
        body, script = Path(tmp) / "body.json", Path(tmp) / "deliveries.lua"
        body.write_bytes(BODY)
        script.write_text(WRK_SCRIPT % {"prefix": uuid.uuid4().hex, "body": body, "signature": SIGNATURE})
        done = subprocess.run(
            ["wrk", "-t1", f"-c{connections}", f"-d{seconds:g}s", "-s", str(script), url],
            capture_output=True,
            text=True,
            check=True,
        )
    if "Non-2xx" in done.stdout or "Socket errors" in done.stdout:
        raise SystemExit(f"wrk saw failed requests:\n{done.stdout}")
    found = re.search(r"Requests/sec:\s+([\d.]+)", done.stdout)
    count = re.search(r"(\d+) requests in", done.stdout)
    if not found or not count:
        raise SystemExit(f"cannot read wrk's output:\n{done.stdout}")
    return float(found.group(1)), int(count.group(1))


def pct(samples: list[float], q: float) -> float:
    return statistics.quantiles(samples, n=100)[int(q) - 1] * 1000


def measure_once(name: str, args: argparse.Namespace, use_wrk: bool, scratch: Claim) -> dict[str, float]:
    spec = {"bare": "bench.bare_app:app", "steward": "bench.receiver_app:app"}[name]
    env = {
        "STEWARD_REDIS_URL": scratch.url,
        "STEWARD_GITHUB_WEBHOOK_SECRETS": SECRET,
        "STEWARD_LOG_LEVEL": args.log_level,
    }
    queued_before = int(scratch.client().zcard("steward:queue"))
    with tempfile.TemporaryFile() as log:
        proc, url = start(spec, env, log)
        try:
            asyncio.run(throughput(url, 300, 8))  # warm up
            cpu_before = cpu_seconds(proc.pid)
            if use_wrk:
                rps, count = wrk_throughput(url, args.seconds, args.concurrency)
            else:
                count = int(args.seconds * 500)
                rps = asyncio.run(throughput(url, count, args.concurrency))
            cpu_after = cpu_seconds(proc.pid)
            samples = asyncio.run(latency(url, args.rate, args.latency_seconds))
        finally:
            proc.terminate()
            proc.wait(10)
        log.seek(0)
        lines = sum(1 for line in log if b"delivery enqueued" in line)
    queued = int(scratch.client().zcard("steward:queue")) - queued_before
    # CPU time per delivery: what one core can serve, whatever else the machine runs meanwhile.
    cpu_us = 0.0
    if cpu_before is not None and cpu_after is not None:
        cpu_us = (cpu_after - cpu_before) / count * 1e6
    return {
        "rps": rps,
        "cpu_us": cpu_us,
        "p50": pct(samples, 50),
        "p99": pct(samples, 99),
        "log_lines": lines,
        "queued": queued,
    }


def measure_receiver(
    args: argparse.Namespace, use_wrk: bool, scratch: Claim
) -> list[dict[str, dict[str, float]]]:
    """Rounds of both endpoints, one after the other (the order alternates), on a Redis database of the
    benchmark's own (``bot.demo.scratch_redis``: other runs share the Redis). A shared machine is noisy: each
    round's ratio compares two runs a few seconds apart, and the median round is reported."""
    rounds = []
    for i in range(args.rounds):
        order = ("bare", "steward") if i % 2 == 0 else ("steward", "bare")
        rounds.append({name: measure_once(name, args, use_wrk, scratch) for name in order})
    return rounds


def summarise(rounds: list[dict[str, dict[str, float]]]) -> dict[str, float]:
    ratios = [r["steward"]["rps"] / r["bare"]["rps"] for r in rounds]
    median = sorted(range(len(rounds)), key=lambda i: ratios[i])[len(rounds) // 2]
    chosen = rounds[median]
    return {
        "ratio": ratios[median],
        "bare_rps": chosen["bare"]["rps"],
        "steward_rps": chosen["steward"]["rps"],
        "bare_p99": statistics.median(r["bare"]["p99"] for r in rounds),
        "steward_p50": statistics.median(r["steward"]["p50"] for r in rounds),
        "steward_p99": statistics.median(r["steward"]["p99"] for r in rounds),
        "bare_cpu": statistics.median(r["bare"]["cpu_us"] for r in rounds),
        "steward_cpu": statistics.median(r["steward"]["cpu_us"] for r in rounds),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=5.0, help="throughput run per endpoint and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rate", type=float, default=500.0, help="deliveries/s for the ack latency")
    parser.add_argument("--latency-seconds", type=float, default=4.0)
    parser.add_argument("--log-level", default="info", help="Steward's STEWARD_LOG_LEVEL (default: info)")
    parser.add_argument("--python", action="store_true", help="the Python generator even when wrk is here")
    args = parser.parse_args()
    use_wrk = not args.python and shutil.which("wrk") is not None
    scratch = claim(base_of(REDIS_BASE))
    try:
        rounds = measure_receiver(args, use_wrk, scratch)
    finally:
        scratch.release()
    tool = "wrk -t1" if use_wrk else "python generator (wrk not installed)"
    print(f"== receiver: {tool}, {args.concurrency} connections, STEWARD_LOG_LEVEL={args.log_level}")
    print(
        f"{'round':<7}{'endpoint':<10}{'deliveries/s':>14}{'CPU µs each':>13}{'p50 ms':>10}{'p99 ms':>10}"
        f"   (ack at {args.rate:.0f}/s)"
    )
    for i, r in enumerate(rounds, 1):
        for name in ("bare", "steward"):
            m = r[name]
            print(f"{i:<7}{name:<10}{m['rps']:>14.0f}{m['cpu_us']:>13.0f}{m['p50']:>10.2f}{m['p99']:>10.2f}")
        steward = r["steward"]
        if steward["queued"] != steward["log_lines"]:
            print(f"  ! {steward['queued']:.0f} jobs queued but {steward['log_lines']:.0f} lines logged")
    s = summarise(rounds)
    print(f"throughput ratio steward/bare (median round): {s['ratio']:.2f}  (aim >= 0.50)")
    if s["steward_cpu"]:
        print(
            f"CPU per delivery (median): bare {s['bare_cpu']:.0f} µs, steward {s['steward_cpu']:.0f} µs; "
            f"capacity ratio on one core: {s['bare_cpu'] / s['steward_cpu']:.2f}"
        )
    print(
        f"steward p50/p99 ack at {args.rate:.0f}/s (median): "
        f"{s['steward_p50']:.1f}/{s['steward_p99']:.1f} ms (aim p99 < 20)"
    )


if __name__ == "__main__":
    main()
