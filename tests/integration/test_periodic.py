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
from bot.demo.threads import ThreadedWorker
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


def test_each_slot_runs_once_across_two_workers(redis_url: str) -> None:
    key = "steward-test:periodic-runs"
    registry = Registry()

    @registry.every(seconds=1, name="tick")
    async def tick(ctx: PeriodicContext) -> None:
        client = Redis.from_url(redis_url)
        try:
            await client.rpush(key, ctx.slot.isoformat())
        finally:
            await client.aclose()
        await asyncio.sleep(0)

    settings = Settings(redis_url=redis_url)
    workers = [ThreadedWorker(settings, registry).start() for _ in range(2)]
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
