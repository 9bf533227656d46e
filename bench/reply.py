"""Delivery → reply latency, end to end: a person's action in the sandbox forge (a `/steward ping` comment,
a `refine` label on an RA9 bug report), the sandbox's signed webhook, the receiver, the queue, one worker,
the forge calls, and the bot's reply being visible in the forge. Times come from the sandbox's request log
(when the person's request came, when the bot's reply was answered) and arq's job record (enqueued,
started), so polling costs nothing in the figures. Prints p50/p95/p99 and where the time goes.

    .venv/bin/python bench/reply.py [--samples 40] [--forge github]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
from arq.constants import result_key_prefix
from arq.jobs import deserialize_result

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.stack import Stack, percentile, running
from tests.e2e.stack import wait_for

DATA = Path(__file__).resolve().parent.parent / "tests" / "e2e" / "data"
REJECTED = (DATA / "bug-rejected.md").read_text()


@dataclass
class Sample:
    total: float  # the person's request came → the bot's reply answered
    ack: float  # the sandbox's delivery: POST to the receiver until its 202
    to_queue: float  # the person's request came → the job is in Redis
    pickup: float  # the job in Redis → a worker starts it
    work: float  # the worker starts → the reply is written
    forge_calls: int  # the bot's forge calls before the reply
    forge_seconds: float  # their time, as the sandbox saw it
    tries: int  # arq's run of the job that replied (1 unless it was deferred or retried)


def _bot(entry: dict[str, Any]) -> bool:
    return entry.get("login") == "steward-bot"


def measure(stack: Stack, act: Any, number: int, repo: str, flavor: str, event: str, replied: Any) -> Sample:
    stack.admin("DELETE", "requests")
    stack.admin("DELETE", "deliveries")
    act()

    def reply() -> dict[str, Any] | None:
        log = stack.admin("GET", "requests")
        return next((e for e in log if _bot(e) and replied(e) and "seconds" in e), None)

    answer = wait_for(reply, timeout=30, what="the bot's reply")
    log = stack.admin("GET", "requests")
    person = next(e for e in log if e.get("login") == "maintainer" and e["method"] != "GET")
    deliveries = [d for d in stack.admin("GET", "deliveries") if d["event"] == event]
    delivery = deliveries[0]
    job = f"delivery:{flavor}:{delivery['id']}"
    client = redis.Redis.from_url(stack.scratch.url)
    info = wait_for(lambda: client.get(result_key_prefix + job), timeout=30, what=f"the job {job} to finish")
    client.close()
    result = deserialize_result(info)
    enqueued, started = result.enqueue_time.timestamp(), result.start_time.timestamp()
    done = answer["at"] + answer["seconds"]
    calls = [e for e in log if _bot(e) and e["at"] <= answer["at"] and "seconds" in e]
    stack.settle()
    return Sample(
        total=done - person["at"],
        ack=float(delivery["duration"] or 0),
        to_queue=enqueued - person["at"],
        pickup=started - enqueued,
        work=done - started,
        forge_calls=len(calls),
        forge_seconds=sum(e["seconds"] for e in calls),
        tries=int(result.job_try or 1),
    )


def ping_samples(stack: Stack, flavor: str, count: int) -> list[Sample]:
    owner, repo = stack.new_repo(flavor)
    number = owner.open_issue(repo, "latency", "ping me")
    stack.settle()
    path = f"/repos/{repo}/issues/{number}/comments"

    def replied(entry: dict[str, Any]) -> bool:
        return entry["method"] == "POST" and entry["path"].endswith(path) and entry["status"] == 201

    return [
        measure(
            stack,
            lambda: owner.comment(repo, number, "/steward ping"),
            number,
            repo,
            flavor,
            "issue_comment",
            replied,
        )
        for _ in range(count)
    ]


def refine_samples(stack: Stack, flavor: str, count: int) -> list[Sample]:
    owner, repo = stack.new_repo(flavor)
    samples = []
    for i in range(count):
        number = owner.open_issue(repo, f"Login fails {i}", REJECTED, labels=["bug"])
        stack.settle()
        path = f"/repos/{repo}/issues/{number}/comments"

        def replied(entry: dict[str, Any], path: str = path) -> bool:
            return entry["method"] == "POST" and entry["path"].endswith(path) and entry["status"] == 201

        samples.append(
            measure(
                stack,
                lambda number=number: owner.add_labels(repo, number, ["refine"]),  # type: ignore[misc]
                number,
                repo,
                flavor,
                "issues",
                replied,
            )
        )
    return samples


def report(name: str, samples: list[Sample]) -> dict[str, Any]:
    total = [s.total * 1000 for s in samples]

    def median(attr: str) -> float:
        return statistics.median(getattr(s, attr) * 1000 for s in samples)

    row: dict[str, Any] = {
        "p50": percentile(total, 50),
        "p95": percentile(total, 95),
        "p99": percentile(total, 99),
        "to_queue": median("to_queue"),
        "ack": median("ack"),
        "pickup": median("pickup"),
        "work": median("work"),
        "forge": statistics.median(s.forge_seconds * 1000 for s in samples),
        "calls": statistics.median(s.forge_calls for s in samples),
    }
    slowest = max(samples, key=lambda s: s.total)
    row["slowest"] = slowest.total * 1000
    row["slowest_note"] = (
        f"slowest {slowest.total * 1000:.0f} ms: pickup {slowest.pickup * 1000:.0f}, "
        f"work {slowest.work * 1000:.0f}, run {slowest.tries}"
    )
    print(
        f"{name:<22}{row['p50']:>8.0f}{row['p95']:>8.0f}{row['p99']:>8.0f}"
        f"{row['to_queue']:>10.1f}{row['ack']:>8.1f}{row['pickup']:>9.1f}{row['work']:>8.1f}"
        f"{row['forge']:>9.1f}{row['calls']:>7.0f}"
    )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument("--forge", choices=("github", "gitea"), default="github")
    parser.add_argument("--poll-delay", default=None, help="STEWARD_WORKER_POLL_DELAY_SECONDS for the worker")
    args = parser.parse_args()
    # The write budget (80 a minute by default) is lifted: samples come faster than a person's, and a job
    # that waits for budget measures the budget, not the latency (tests/e2e/test_forge_economy.py pins it).
    extra = {"write_budget_per_minute": "100000", "write_budget_per_hour": "1000000"}
    if args.poll_delay:
        extra["worker_poll_delay_seconds"] = args.poll_delay
    started = time.monotonic()
    with running(workers=1, **extra) as stack:
        ping = ping_samples(stack, args.forge, args.samples)
        refine = refine_samples(stack, args.forge, args.samples)
    poll = args.poll_delay or "default"
    print(f"== delivery → reply, {args.forge}, one worker (poll delay {poll}), {args.samples} samples each")
    print("   milliseconds; the breakdown columns are medians; forge = the bot's calls before its reply")
    print(
        f"{'':<22}{'p50':>8}{'p95':>8}{'p99':>8}{'to queue':>10}{'ack':>8}{'pickup':>9}{'work':>8}"
        f"{'forge':>9}{'calls':>7}"
    )
    rows = [report("/steward ping", ping), report("refine label, RA9 bug", refine)]
    for name, row in zip(("/steward ping", "refine label"), rows, strict=True):
        print(f"  {name}: {row['slowest_note']}")
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
