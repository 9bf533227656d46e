"""A worker's memory with large Gitea bodies in flight (issue 40 §5): the chart derives the worker's memory
limit as ``memoryBaseMi + maxJobs × maxBodyBytes (MiB) × FACTOR`` (charts/steward/values.yaml; 3 until this
bench measured 7.9, 8 since); this measures the factor.

Steward runs as processes (sandbox, receiver, one `steward worker`, each its own memory). On a Gitea
repository, a small RA9 bug labelled ``bug`` and ``refine`` warms the worker up; its RSS is then read at idle.
The worker is stopped (SIGSTOP) while ``--jobs`` bugs are opened with the same labels, each with a body of
``--body-mib`` MiB (the RA9 report with a pasted log; Gitea has no body limit, Steward's receiver admits up
to ``STEWARD_MAX_BODY_BYTES``, 25 MiB), so their jobs are all queued; it is then let go (SIGCONT) and runs
them at once (``STEWARD_MAX_JOBS``, 10). Each job's queued event keeps 256 KiB of the body, so the worker
re-reads the issue whole from the forge and refines it. The worker's RSS is sampled every 20 ms while the
jobs run, and its peak (``VmHWM`` in /proc/PID/status) read when every job is done. Printed: idle RSS, peak,
RSS while the jobs run, and the factor ``(peak − idle) / (jobs × body MiB)`` against the chart's 3.

    .venv/bin/python bench/worker_memory.py [--jobs 10 --body-mib 24]

Linux only (/proc). The write budget's per-person and per-repository shares are lifted (one person's burst
on one repository), so the jobs wait on nothing but the machine.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import threading
import time
from pathlib import Path

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.stack import Stack, running
from bot.config.settings import Settings
from bot.demo.texts import APPROVED_BUG
from tests.e2e.stack import ForgeUser, wait_for

MIB = 1024 * 1024
ARTIFACTS = "Log: `logs/checkout.log`, lines 4410-4432\n"


def status_kib(pid: int, field: str) -> int:
    """A ``/proc/PID/status`` figure in KiB (``VmRSS``, ``VmHWM``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise LookupError(field)


def big_bug(mib: float) -> str:
    """The approved RA9 bug report with a pasted log in its artifacts, ``mib`` MiB in all (ASCII)."""
    target = int(mib * MIB)
    head, tail = APPROVED_BUG.split(ARTIFACTS)
    line = "2026-12-01T10:00:00Z checkout cart=8812 currency=EUR total=90.00 promotions=[] code=LOYAL15\n"
    room = target - len(head) - len(ARTIFACTS) - len(tail) - len("```\n```\n")
    log = line * (room // len(line))
    log += "x" * (room - len(log) - 1) + "\n"
    body = f"{head}{ARTIFACTS}```\n{log}```\n{tail}"
    assert len(body) == target, (len(body), target)
    return body


def _queue(stack: Stack) -> dict[str, int]:
    try:
        return dict(httpx2.get(f"{stack.receiver_url}/queue", timeout=5).json())
    except (httpx2.TransportError, ValueError):
        return {}


class Sampler(threading.Thread):
    """The worker's RSS every ``interval`` s, with the jobs running then (from the receiver's /queue, every
    tenth sample)."""

    def __init__(self, stack: Stack, pid: int, interval: float = 0.02) -> None:
        super().__init__(daemon=True)
        self.stack, self.pid, self.interval = stack, pid, interval
        self.samples: list[tuple[float, int, int]] = []  # (seconds, RSS KiB, jobs running)
        self.done = threading.Event()

    def run(self) -> None:
        start, jobs, n = time.monotonic(), 0, 0
        while not self.done.is_set():
            if n % 10 == 0:
                jobs = int(_queue(self.stack).get("running", jobs))
            self.samples.append((time.monotonic() - start, status_kib(self.pid, "VmRSS"), jobs))
            n += 1
            self.done.wait(self.interval)


def verdicts(owner: ForgeUser, repo: str, number: int) -> int:
    return sum(
        1
        for c in owner.comments(repo, number)
        if c["user"]["login"] == "steward-bot" and c["body"].startswith("<!-- steward:ra9-verdict:")
    )


def measure(jobs: int, body_mib: float) -> None:
    limit = Settings.model_fields["max_body_bytes"].default
    max_jobs = Settings.model_fields["max_jobs"].default
    body = big_bug(body_mib)
    print(f"body {len(body) / MIB:.2f} MiB each; STEWARD_MAX_BODY_BYTES default {limit / MIB:.0f} MiB")
    with running(workers=1, write_share_per_person="1.0", write_share_per_repository="1.0") as stack:
        worker = stack.workers[0]
        owner, repo = stack.new_repo("gitea")
        owner.client.timeout = httpx2.Timeout(300)
        warm = owner.open_issue(repo, "Discount lost on currency switch", APPROVED_BUG, ["bug", "refine"])
        stack.settle()
        print(f"warm-up bug refined: {verdicts(owner, repo, warm)} verdict(s); max_jobs {max_jobs}")
        time.sleep(2)
        idle = []
        for _ in range(5):
            idle.append(status_kib(worker.pid, "VmRSS"))
            time.sleep(0.2)
        idle_rss, idle_hwm = statistics.median(idle), status_kib(worker.pid, "VmHWM")

        # Stopped, the worker takes none of the jobs until all are queued; let go, it starts max_jobs at once.
        os.kill(worker.pid, signal.SIGSTOP)
        try:
            began = time.monotonic()
            numbers = [
                owner.open_issue(repo, f"Discount lost, with the log ({n})", body, ["bug", "refine"])
                for n in range(jobs)
            ]
            wait_for(
                lambda: stack.admin("GET", "deliveries/idle?timeout=10").get("idle"),
                timeout=600,
                what="the deliveries",
            )
            print(f"{jobs} issues opened and delivered in {time.monotonic() - began:.1f} s")
            print(f"jobs queued for the stopped worker: {_queue(stack).get('ready')}")
        except BaseException:
            os.kill(worker.pid, signal.SIGCONT)
            raise
        sampler = Sampler(stack, worker.pid)
        sampler.start()
        began = time.monotonic()
        os.kill(worker.pid, signal.SIGCONT)
        stack.settle(timeout=900)
        sampler.done.set()
        sampler.join()
        took = time.monotonic() - began
        peak = status_kib(worker.pid, "VmHWM")
        after = status_kib(worker.pid, "VmRSS")
        receiver_peak = status_kib(stack.receiver.pid, "VmHWM")
        done = sum(verdicts(owner, repo, n) for n in numbers)

    running_rss = [rss for _, rss, j in sampler.samples if j > 0]
    most = max((j for _, _, j in sampler.samples), default=0)
    at_most = [rss for _, rss, j in sampler.samples if j == most and most]
    sampled_max = max(rss for _, rss, _ in sampler.samples)
    mib = 1024
    print(
        f"== worker memory, Gitea, {jobs} jobs × {body_mib:g} MiB bodies ({took:.1f} s until every job ended)"
    )
    print(f"verdicts written: {done} of {jobs}; most jobs running at once (sampled): {most}")
    print(f"idle RSS before:           {idle_rss / mib:8.1f} MiB (VmHWM then {idle_hwm / mib:.1f} MiB)")
    print(f"peak RSS (VmHWM):          {peak / mib:8.1f} MiB (largest sample {sampled_max / mib:.1f} MiB)")
    if running_rss:
        print(
            f"RSS while jobs ran:        median {statistics.median(running_rss) / mib:.1f} MiB, "
            f"max {max(running_rss) / mib:.1f} MiB ({len(running_rss)} samples)"
        )
    if at_most:
        print(f"RSS with {most} running:       median {statistics.median(at_most) / mib:.1f} MiB")
    print(f"RSS after, idle again:     {after / mib:8.1f} MiB")
    factor = (peak - idle_rss) / mib / (jobs * body_mib)
    print(f"factor (peak − idle) / (jobs × body MiB) = {factor:.2f} (the chart assumes {CHART_FACTOR})")
    base = 192  # the chart's worker.memoryBaseMi
    print(
        f"chart's derived limit for these settings: {base} + {jobs} × {limit / MIB:.0f} × {CHART_FACTOR} = "
        f"{base + jobs * limit / MIB * CHART_FACTOR:.0f} MiB; measured peak {peak / mib:.0f} MiB"
    )
    print(f"receiver peak RSS (VmHWM), for comparison: {receiver_peak / mib:.1f} MiB")


# The factor charts/steward/templates/_helpers.tpl takes each body by.
CHART_FACTOR = 8


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=10)
    parser.add_argument("--body-mib", type=float, default=24)
    args = parser.parse_args()
    measure(args.jobs, args.body_mib)


if __name__ == "__main__":
    main()
