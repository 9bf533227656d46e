"""CPU per event against the floor of its forge requests (issue 28, item 1), side by side in one run.

Steward runs as an operator runs it (`steward sandbox`, `steward serve`, one `steward worker`) on a Redis
server of the benchmark's own (so `INFO commandstats` counts only this run). For each forge and each kind of
event, ``--events`` events are made by a person in the sandbox, then everything settles. Per event:

- **Steward's CPU**: the receiver's and the worker's CPU time (``/proc``), everything they did for the event —
  receiving the deliveries (including those of Steward's own writes, which it drops), the queue, Redis, the
  rules, logging — less what the same processes spend in an idle window of the same length (the worker's
  queue polling and the benchmark's own settle checks), measured in the same run;
- **forge requests**: the bot's requests in the sandbox's request log;
- **Redis commands**: ``INFO commandstats`` deltas (a script's own commands included), less the idle window's;
  **Redis round trips**: ``total_reads_processed`` deltas (``INFO stats``: the requests Redis read from its
  clients' sockets; a pipeline or a script call is one), less the idle window's;
- **the floor**: a plain keep-alive ``http.client`` making as many requests (GETs of the same issue, with
  the bot's token) to the same sandbox, timed by this process's CPU clock.

    .venv/bin/python bench/cpu_per_event.py [--events 6] [--rounds 3] [--forge github gitea]
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.demo.threads import free_port

DATA = Path(__file__).resolve().parent.parent / "tests" / "e2e" / "data"
REJECTED = (DATA / "bug-rejected.md").read_text()
APPROVED = (DATA / "bug-approved.md").read_text()
FORKS = "What we store.\n\n## Open forks\n\n- [ ] F1: Postgres or SQLite?\n- [ ] F2: REST or gRPC?\n"


def private_redis() -> tuple[subprocess.Popen[bytes], str]:
    """A Redis server of this run's own, so that its command counts are this run's alone."""
    port = free_port()
    folder = tempfile.mkdtemp(prefix="steward-bench-redis-")
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no", "--dir", folder],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return proc, f"redis://127.0.0.1:{port}"


def cpu_ns(pid: int) -> int:
    """CPU time a process's threads have run, in nanoseconds (``/proc/<pid>/task/*/schedstat``): finer than
    ``/proc/<pid>/stat``'s clock ticks (10 ms), and it counts the thread pool Gitea's client runs in."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return total


def steward_cpu(stack: Any) -> tuple[float, float]:
    """Seconds of CPU the receiver and the workers have used."""
    return cpu_ns(stack.receiver.pid) / 1e9, sum(cpu_ns(p.pid) for p in stack.workers) / 1e9


def redis_calls(url: str) -> tuple[int, int]:
    """Commands Redis ran (scripts' own included) and requests it read from its clients' sockets."""
    import redis

    client = redis.Redis.from_url(url.rsplit("/", 1)[0] if url.count("/") > 2 else url)
    try:
        stats = client.info("commandstats")
        reads = int(client.info("stats")["total_reads_processed"])
    finally:
        client.close()
    return sum(int(v["calls"]) for v in stats.values()), reads


@dataclass
class Row:
    forge: str
    event: str
    cpu_ms: float  # Steward's CPU per event, idle-corrected
    requests: float
    redis: float
    floor_ms: float
    trips: float = 0.0  # Redis round trips per event

    @property
    def ratio(self) -> float:
        return self.cpu_ms / self.floor_ms if self.floor_ms else float("nan")


def floor_per_request(sandbox_url: str, path: str, *, count: int = 300) -> float:
    """CPU seconds per request of a plain keep-alive ``http.client`` GET of ``path`` on the sandbox."""
    host, port = sandbox_url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port))
    headers = {"Authorization": "token bench-bot-token", "Accept": "application/vnd.github+json"}
    for _ in range(10):  # warm up
        conn.request("GET", path, headers=headers)
        conn.getresponse().read()
    started = time.process_time()
    for _ in range(count):
        conn.request("GET", path, headers=headers)
        conn.getresponse().read()
    spent = time.process_time() - started
    conn.close()
    return spent / count


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=6, help="events of each kind per forge and round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (the median and the range are shown)")
    parser.add_argument("--forge", nargs="+", default=["github", "gitea"])
    parser.add_argument("--only", nargs="*", default=None, help="event kinds to run (default: all)")
    args = parser.parse_args()
    if shutil.which("redis-server") is None:
        sys.exit("redis-server is needed (the benchmark runs a Redis of its own)")
    redis_proc, redis_base = private_redis()
    os.environ["STEWARD_BENCH_REDIS_URL"] = redis_base
    from bench.stack import running

    time.sleep(0.3)
    rows: list[Row] = []
    try:
        # A slower queue poll than the default (20 ms) makes the idle cost that is subtracted small; it
        # changes when a job starts, not what it costs.
        # The write budget is lifted: the run writes more than a minute's budget, and a deferred job would
        # stretch its window (the budget's own cost, one script call per write, is still counted).
        lifted = {"write_budget_per_minute": "1000000", "write_budget_per_hour": "10000000"}
        with running(workers=1, worker_poll_delay_seconds="0.25", **lifted) as stack:
            url = stack.scratch.url
            for _ in range(args.rounds):
                for flavor in args.forge:
                    rows += measure(stack, flavor, url, args.events, args.only)
    finally:
        redis_proc.terminate()
        redis_proc.wait(10)
    report(rows, args.rounds)


def report(rows: list[Row], rounds: int) -> None:
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"== CPU per event vs the floor of its forge requests ({when}; {rounds} rounds: median, range)")
    print(
        f"{'forge':<8}{'event':<32}{'cpu ms':>8}{'reqs':>6}{'redis':>7}{'trips':>6}"
        f"{'floor ms':>10}{'ratio':>7}  range"
    )
    groups: dict[tuple[str, str], list[Row]] = {}
    for r in rows:
        groups.setdefault((r.forge, r.event), []).append(r)
    for (forge, event), group in groups.items():
        ratios = [r.ratio for r in group]
        print(
            f"{forge:<8}{event:<32}{statistics.median(r.cpu_ms for r in group):>8.2f}"
            f"{statistics.median(r.requests for r in group):>6.1f}"
            f"{statistics.median(r.redis for r in group):>7.0f}"
            f"{statistics.median(r.trips for r in group):>6.0f}"
            f"{statistics.median(r.floor_ms for r in group):>10.3f}{statistics.median(ratios):>7.1f}"
            f"  {min(ratios):.1f}–{max(ratios):.1f}"
        )


def measure(stack: Any, flavor: str, redis_url: str, k: int, only: list[str] | None) -> list[Row]:
    owner, repo = stack.new_repo(flavor)
    api = "/api/v1" if flavor == "gitea" else ""
    plain = owner.open_issue(repo, "Dark mode", "Please add it.")
    key = owner.create_milestone(repo, "v1")
    stack.settle()

    receiver_share: list[float] = []

    def window(act: Callable[[], Any]) -> tuple[float, int, int, float, int]:
        """Steward's CPU seconds, the bot's requests on the repository and Redis commands while ``act``
        runs and everything settles, and the window's length."""
        stack.admin("DELETE", "requests")
        cpu0, calls0, t0 = steward_cpu(stack), redis_calls(redis_url), time.monotonic()
        act()
        stack.settle()
        cpu1, calls1, t1 = steward_cpu(stack), redis_calls(redis_url), time.monotonic()
        mine = [r for r in stack.admin("GET", "requests") if r["login"] == "steward-bot"]
        spent = (cpu1[0] - cpu0[0]) + (cpu1[1] - cpu0[1])
        receiver_share.append((cpu1[0] - cpu0[0]) / spent if spent else 0.0)
        return spent, len(mine), calls1[0] - calls0[0], t1 - t0, calls1[1] - calls0[1]

    # The idle cost of the same processes (queue polling) and of this benchmark's settle checks, per second.
    idle = [window(lambda: time.sleep(1.0)) for _ in range(3)]
    idle_cpu = sum(w[0] for w in idle) / sum(w[3] for w in idle)
    idle_redis = sum(w[2] for w in idle) / sum(w[3] for w in idle)
    idle_trips = sum(w[4] for w in idle) / sum(w[3] for w in idle)
    floor = floor_per_request(stack.sandbox_url, f"{api}/repos/{repo}/issues/{plain}")

    def opened_with_labels() -> Callable[[], Any]:
        return lambda: [
            owner.open_issue(repo, "Login fails", REJECTED, labels=["bug", "refine"]) for _ in range(k)
        ]

    def refine_label() -> Callable[[], Any]:
        bugs = [owner.open_issue(repo, "Login fails", REJECTED, labels=["bug"]) for _ in range(k)]
        stack.settle()
        return lambda: [owner.add_labels(repo, n, ["refine"]) for n in bugs]

    def ping() -> Callable[[], Any]:
        return lambda: [owner.comment(repo, plain, "/steward ping") for _ in range(k)]

    def decide() -> Callable[[], Any]:
        issues = [owner.open_issue(repo, "Storage", FORKS) for _ in range(k)]
        stack.settle()
        return lambda: [owner.comment(repo, n, "/decide F1 Postgres") for n in issues]

    def evidence() -> Callable[[], Any]:
        bugs = [
            owner.open_issue(repo, "Session survives logout", APPROVED, labels=["bug", "refine"])
            for _ in range(k)
        ]
        stack.settle()
        for n in bugs:
            owner.comment(repo, n, "/hypothesis Stale cache: src/auth/cache.py:88 keeps the old token")
        stack.settle()
        return lambda: [owner.comment(repo, n, "/evidence H1 for the log shows a cache hit") for n in bugs]

    def milestone_item() -> Callable[[], Any]:
        issues = [owner.open_issue(repo, "Export orders") for _ in range(k)]
        stack.settle()
        return lambda: [owner.set_milestone(repo, n, key) for n in issues]

    kinds: dict[str, Callable[[], Callable[[], Any]]] = {
        "RA9 bug opened with its labels": opened_with_labels,
        "`refine` label on an RA9 bug": refine_label,
        "/steward ping": ping,
        "/decide": decide,
        "/evidence": evidence,
        "milestone item event": milestone_item,
    }
    rows = []
    for name, prepare in kinds.items():
        if only and not any(o in name for o in only):
            continue
        act = prepare()
        spent, requests, calls, length, reads = window(act)
        trips = max(0.0, reads - idle_trips * length) / k
        cpu = max(0.0, spent - idle_cpu * length) / k
        redis_per = max(0.0, calls - idle_redis * length) / k
        per = requests / k
        rows.append(Row(flavor, name, cpu * 1000, per, redis_per, floor * per * 1000, trips))
        print(
            f"  {flavor} {name}: {cpu * 1000:.2f} ms, {per:.1f} requests, {redis_per:.0f} redis,"
            f" {trips:.0f} round trips"
            f" ({length:.1f} s, idle {idle_cpu * 1000:.1f} ms/s, receiver {receiver_share[-1]:.0%} of it)",
            flush=True,
        )
    return rows


if __name__ == "__main__":
    main()
