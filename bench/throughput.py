"""Throughput end to end: labelled-bug events (a `refine` label on an RA9 bug report: read the issue, its
comments and the repository's settings, write the verdict comment and the labels) per second with 1, 2 and 4
worker processes, against arq running no-op jobs with the same worker settings in the same run (the queue's
own ceiling). The write budget is lifted for the sandbox. The events are queued first with no worker running;
the rate is the events over the time from the first job's start to the last job's end (arq's records).

    .venv/bin/python bench/throughput.py [--events 150] [--workers 1 2 4]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import redis
from arq.connections import ArqRedis, RedisSettings, create_pool
from arq.constants import result_key_prefix
from arq.jobs import deserialize_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.noop_worker import QUEUE as NOOP_QUEUE  # noqa: E402
from bench.stack import Stack, running  # noqa: E402
from bot.demo.threads import jobs_outstanding  # noqa: E402
from tests.e2e.stack import wait_for  # noqa: E402

DATA = ROOT / "tests" / "e2e" / "data"
REJECTED = (DATA / "bug-rejected.md").read_text()
LIFTED = {"write_budget_per_minute": "1000000", "write_budget_per_hour": "10000000"}


def span(client: redis.Redis, job_ids: list[str]) -> tuple[float, int]:
    """Seconds from the first job's start to the last one's end, and how many succeeded."""
    starts, ends, ok = [], [], 0
    for job_id in job_ids:
        raw = client.get(result_key_prefix + job_id)
        if raw is None:
            continue
        result = deserialize_result(raw)  # type: ignore[arg-type]
        starts.append(result.start_time.timestamp())
        ends.append(result.finish_time.timestamp())
        ok += bool(result.success)
    return max(ends) - min(starts), ok


def labelled_bugs(stack: Stack, workers: int, events: int) -> tuple[float, int, dict[str, float]]:
    stack.start_workers(1)
    owner, repo = stack.new_repo()
    numbers = [owner.open_issue(repo, f"Checkout fails {i}", REJECTED, labels=["bug"]) for i in range(events)]
    stack.settle(timeout=600)
    stack.stop_workers()
    stack.admin("DELETE", "deliveries")
    for number in numbers:
        owner.add_labels(repo, number, ["refine"])
    client = redis.Redis.from_url(stack.scratch.url)

    def all_queued() -> bool:
        idle = stack.admin("GET", "deliveries/idle?timeout=10").get("idle")
        return bool(idle) and jobs_outstanding(client) >= events

    wait_for(all_queued, timeout=300, what="the label events to be queued")
    job_ids = [
        f"delivery:github:{d['id']}" for d in stack.admin("GET", "deliveries") if d["event"] == "issues"
    ]
    stack.start_workers(workers)
    before = stack.cpu()
    wait_for(lambda: jobs_outstanding(client) == 0, timeout=900, what="the workers to finish")
    after = stack.cpu()
    stack.stop_workers()
    seconds, ok = span(client, job_ids)
    client.close()
    # CPU milliseconds per event in each part (the workers' start-up is outside the measured span).
    cpu = {part: (after[part] - before[part]) / len(job_ids) * 1000 for part in after}
    return len(job_ids) / seconds, ok, cpu


def mixed_events(stack: Stack, workers: int, events: int, repos: int) -> tuple[float, int, dict[str, float]]:
    """A synthetic mix over ``repos`` repositories, queued first, then ``workers`` workers: per four events,
    a `refine` label on an RA9 bug, a `/steward ping`, a comment with no command and a title edit."""
    stack.start_workers(1)
    made = [stack.new_repo(settle=False) for _ in range(repos)]
    stack.settle(timeout=600)
    per = [(owner, repo, owner.open_issue(repo, "Dark mode", "Please add it.")) for owner, repo in made]
    bugs = [
        (owner, repo, owner.open_issue(repo, "Checkout fails", REJECTED, labels=["bug"]))
        for owner, repo, _ in (per[i % repos] for i in range(events // 4 + 1))
    ]
    stack.settle(timeout=600)
    stack.stop_workers()
    stack.admin("DELETE", "deliveries")
    for i in range(events):
        owner, repo, plain = per[i % repos]
        kind = i % 4
        if kind == 0:
            bug_owner, bug_repo, bug = bugs[i // 4]
            bug_owner.add_labels(bug_repo, bug, ["refine"])
        elif kind == 1:
            owner.comment(repo, plain, "/steward ping")
        elif kind == 2:
            owner.comment(repo, plain, "Thanks, that helps.")
        else:
            owner.edit_issue(repo, plain, title=f"Dark mode ({i})")
    client = redis.Redis.from_url(stack.scratch.url)
    wait_for(
        lambda: bool(stack.admin("GET", "deliveries/idle?timeout=10").get("idle")),
        timeout=300,
        what="deliveries",
    )
    job_ids = [f"delivery:github:{d['id']}" for d in stack.admin("GET", "deliveries")]
    stack.start_workers(workers)
    before = stack.cpu()
    wait_for(lambda: jobs_outstanding(client) == 0, timeout=900, what="the workers to finish")
    after = stack.cpu()
    stack.stop_workers()
    done = [j for j in job_ids if client.exists(result_key_prefix + j)]
    seconds, ok = span(client, done)
    client.close()
    cpu = {part: (after[part] - before[part]) / max(1, len(done)) * 1000 for part in after}
    return len(done) / seconds, ok, cpu


def noop_ceiling(stack: Stack, workers: int, jobs: int) -> float:
    async def enqueue() -> list[str]:
        pool: ArqRedis = await create_pool(RedisSettings.from_dsn(stack.scratch.url))
        ids = [f"noop:{workers}:{i}:{time.time_ns()}" for i in range(jobs)]
        for job_id in ids:
            await pool.enqueue_job("noop", 0, _job_id=job_id, _queue_name=NOOP_QUEUE)
        await pool.aclose()
        return ids

    ids = asyncio.run(enqueue())
    procs = [
        subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "noop_worker.py"), stack.scratch.url],
            env=stack.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(workers)
    ]
    client = redis.Redis.from_url(stack.scratch.url)
    try:
        wait_for(lambda: client.zcard(NOOP_QUEUE) == 0, timeout=300, what="the no-op jobs")
        wait_for(
            lambda: all(client.exists(result_key_prefix + i) for i in ids[-20:]), timeout=60, what="results"
        )
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(30)
    seconds, _ = span(client, ids)
    client.close()
    return jobs / seconds


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=150, help="labelled bugs per worker count")
    parser.add_argument("--noop-jobs", type=int, default=2000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument(
        "--repos",
        type=int,
        default=0,
        help="a synthetic mix of events over this many repositories (0: labelled bugs)",
    )
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    with running(workers=0, **LIFTED) as stack:
        for count in args.workers:
            if args.repos:
                rate, ok, cpu = mixed_events(stack, count, args.events, args.repos)
            else:
                rate, ok, cpu = labelled_bugs(stack, count, args.events)
            noop = noop_ceiling(stack, count, args.noop_jobs)
            rows.append({"workers": count, "rate": rate, "ok": ok, "noop": noop, "cpu": cpu})
    what = f"events (a mix over {args.repos} repositories)" if args.repos else "labelled-bug events"
    print(f"== throughput: {args.events} {what} per row, write budget lifted, github")
    print("   CPU ms per event: the sandbox forge, the receiver, the workers together")
    print(
        f"{'workers':<9}{'events/s':>10}{'no-op jobs/s':>14}{'ratio':>8}{'speed-up':>10}{'jobs ok':>9}"
        f"{'sandbox':>9}{'receiver':>10}{'workers':>9}"
    )
    for row in rows:
        cpu = row["cpu"]
        print(
            f"{row['workers']:<9}{row['rate']:>10.1f}{row['noop']:>14.0f}{row['rate'] / row['noop']:>8.3f}"
            f"{row['rate'] / rows[0]['rate']:>10.2f}{row['ok']:>9}"
            f"{cpu['sandbox']:>9.1f}{cpu['receiver']:>10.1f}{cpu['workers']:>9.1f}"
        )


if __name__ == "__main__":
    main()
