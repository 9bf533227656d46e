"""Periodic work: `registry.every(...)` handlers run as arq cron jobs, once per slot however many
workers run (real Redis, real arq workers)."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest
import redis
from redis.asyncio import Redis

from bot.commands.periodic import PeriodicContext
from bot.commands.registry import Registry
from bot.config.settings import Settings
from bot.demo.threads import ThreadedWorker, run_periodic_now
from bot.worker.cron import schedule
from tests.e2e.stack import wait_for


def test_intervals_must_line_up_on_the_clock() -> None:
    registry = Registry()
    for bad in ({"seconds": 7}, {"minutes": 7}, {"seconds": 0}, {"hours": 5}):
        with pytest.raises(ValueError):
            registry.every(**bad)
    assert schedule(15) == {"second": {0, 15, 30, 45}}
    assert schedule(600) == {"second": 0, "minute": {0, 10, 20, 30, 40, 50}}
    assert schedule(6 * 3600) == {"second": 0, "minute": 0, "hour": {0, 6, 12, 18}}

    async def poll(ctx: PeriodicContext) -> None: ...

    registry.every(minutes=5, name="gate")(poll)
    with pytest.raises(ValueError, match="twice"):
        registry.every(minutes=5, name="gate")(poll)


def ticking(redis_url: str, key: str) -> Registry:
    """A registry whose one periodic job, each second, appends its slot to the Redis list ``key``."""
    registry = Registry()

    @registry.every(seconds=1, name="tick")
    async def tick(ctx: PeriodicContext) -> None:
        client = Redis.from_url(redis_url)
        try:
            await client.rpush(key, ctx.slot.isoformat())
        finally:
            await client.aclose()
        await asyncio.sleep(0)

    return registry


def test_each_slot_runs_once_across_two_workers(redis_url: str) -> None:
    key = "steward-test:periodic-runs"
    registry = ticking(redis_url, key)
    settings = Settings(redis_url=redis_url)
    workers = [ThreadedWorker(settings, registry, clock=True).start() for _ in range(2)]
    sync = redis.Redis.from_url(redis_url)
    try:
        wait_for(lambda: sync.llen(key) >= 4, timeout=20, what="four periodic slots")
    finally:
        for worker in workers:
            worker.stop()
    runs = Counter(item.decode() for item in sync.lrange(key, 0, -1))
    sync.close()
    assert len(runs) >= 4
    assert all(count == 1 for count in runs.values()), f"a slot ran twice: {runs}"


def test_a_worker_off_the_clock_runs_its_periodic_jobs_only_when_queued(redis_url: str) -> None:
    """The demo's and the tests' workers (``ThreadedWorker`` without ``clock``): a slot passing mid-test would
    add its requests to what a test counts (the minute's milestone look did, in
    tests/e2e/test_overview_e2e.py); queued by hand, the job runs, once per request."""
    key = "steward-test:periodic-queued"
    registry = Registry()

    @registry.every(seconds=1, name="tick")
    async def tick(ctx: PeriodicContext) -> None:
        client = Redis.from_url(redis_url)
        try:
            await client.rpush(key, ctx.slot.isoformat())
        finally:
            await client.aclose()

    sync = redis.Redis.from_url(redis_url)
    sync.delete(key)
    worker = ThreadedWorker(Settings(redis_url=redis_url), registry).start()
    try:
        assert worker.worker.cron_jobs == []
        for n in (1, 2):
            run_periodic_now(redis_url, "tick")
            wait_for(lambda n=n: sync.llen(key) >= n, timeout=20, what=f"queued run {n}")
    finally:
        worker.stop()
    assert sync.llen(key) == 2
    sync.close()


def test_a_worker_that_did_not_start_in_time_never_runs(redis_url: str) -> None:
    """A test whose worker was slow to start fails, and its worker must not start later and take the
    following tests' jobs from the shared Redis (a loaded machine once turned one slow start into a run of
    failures: replies made with another test's commands). ``start`` past its deadline stops the thread
    before the worker runs anything."""
    key = "steward-test:abandoned-runs"
    registry = ticking(redis_url, key)
    late = ThreadedWorker(Settings(redis_url=redis_url), registry, clock=True)
    with pytest.raises(RuntimeError, match="did not start"):
        late.start(timeout=-1)
    late.thread.join(timeout=30)
    assert not late.thread.is_alive(), "the abandoned worker's thread is still running"
    sync = redis.Redis.from_url(redis_url)
    try:
        assert sync.llen(key) == 0
    finally:
        sync.close()
