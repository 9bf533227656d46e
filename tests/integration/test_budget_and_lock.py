"""The write budget and the per-issue lock against a real Redis, shared by several clients."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from redis.asyncio import Redis

from bot.forge.write_budget import WriteBudget
from bot.queue.jobs import make_redis
from bot.queue.locks import issue_lock
from tests.integration.redis_watch import commands_on


async def test_the_budget_is_shared_and_a_writer_waits_for_it(redis_url: str) -> None:
    first, second = Redis.from_url(redis_url), Redis.from_url(redis_url)
    waits: list[float] = []
    a = WriteBudget(first, [(3, 1.0)], on_wait=waits.append)
    b = WriteBudget(second, [(3, 1.0)], on_wait=waits.append)
    try:
        assert [await a.try_take("tok") for _ in range(2)] == [0.0, 0.0]
        assert await b.try_take("tok") == 0.0
        # Three taken in this second by two clients: the fourth must wait, not fail.
        assert await b.try_take("tok") > 0
        assert await a.try_take("other-token") == 0.0, "budgets are per token"
        started = time.monotonic()
        waited = await b.take("tok")
        assert waited > 0 and waits
        assert time.monotonic() - started >= waited * 0.9
    finally:
        await first.aclose()
        await second.aclose()


async def test_the_tightest_window_decides(redis_url: str) -> None:
    client = Redis.from_url(redis_url)
    budget = WriteBudget(client, [(100, 1.0), (2, 30.0)])
    try:
        assert await budget.try_take("k") == 0.0
        assert await budget.try_take("k") == 0.0
        wait = await budget.try_take("k")
        assert 25 < wait <= 30, "the hourly-style window holds even when the short one has room"
    finally:
        await client.aclose()


async def test_one_issue_at_a_time(redis_url: str) -> None:
    redis = make_redis(redis_url)
    inside = 0
    most = 0

    async def job() -> None:
        nonlocal inside, most
        while True:
            async with issue_lock(redis, "github:o/r#1", ttl=10, wait=0.5) as got:
                if not got:
                    continue
                inside += 1
                most = max(most, inside)
                await asyncio.sleep(0.01)
                inside -= 1
                return

    try:
        await asyncio.gather(*(job() for _ in range(20)))
        assert most == 1
        async with issue_lock(redis, "github:o/r#2", ttl=10, wait=0) as got:
            assert got, "another issue is not blocked"
    finally:
        await redis.aclose()


async def test_a_job_holds_another_issues_lock_and_is_told_when_it_is_busy(redis_url: str) -> None:
    """A bug refining its stories holds each story's lock, so the story's own events never interleave."""
    from bot.queue.locks import Busy, IssueLocks

    redis = make_redis(redis_url)
    try:
        first = IssueLocks(redis, owner="job-1", ttl=10, wait=0.2)
        second = IssueLocks(redis, owner="job-2", ttl=10, wait=0.2)
        async with first.hold("github:o/r#7"):
            with pytest.raises(Busy):
                async with second.hold("github:o/r#7"):
                    pass
            async with IssueLocks(redis, owner="job-1", ttl=10, wait=0).hold("github:o/r#7"):
                pass  # a re-run of the same job takes back its own lock
        async with second.hold("github:o/r#7"):
            pass
    finally:
        await redis.aclose()


async def test_the_lock_scripts_are_sent_by_their_sha_not_their_source(redis_url: str) -> None:
    redis = make_redis(redis_url)
    key = f"github:o/r#{uuid.uuid4().hex}"

    async def lock_twice() -> None:
        for _ in range(2):
            async with issue_lock(redis, key, ttl=10, wait=0) as got:
                assert got

    try:
        seen = await commands_on(redis_url, key, lock_twice)
    finally:
        await redis.aclose()
    calls = [c.split(" ", 1)[0].strip('"').upper() for c in seen if not c.startswith('"GET"')]
    sent = [c for c in calls if c in ("EVAL", "EVALSHA")]
    # A script Redis does not know yet goes once as source (after a NOSCRIPT answer); then only its SHA.
    assert sent[-2:] == ["EVALSHA", "EVALSHA"], seen
    assert sent.count("EVAL") <= 2, seen


async def test_a_write_budget_with_room_does_not_trim_its_log(redis_url: str) -> None:
    """A window with room costs a count and the add: old entries are trimmed only when the log is full
    (they cannot refuse a write before that), and then a window that moved on has room again."""
    client = Redis.from_url(redis_url)
    marker = uuid.uuid4().hex
    budget = WriteBudget(client, [(3, 0.3), (100, 60.0)], prefix=f"steward:budget:{marker}")

    async def three() -> None:
        for _ in range(3):
            assert await budget.try_take("tok") == 0.0

    try:
        seen = await commands_on(redis_url, marker, three)
        assert not [c for c in seen if "ZREMRANGEBYSCORE" in c.upper()], seen
        assert await budget.try_take("tok") > 0, "the fourth in the short window waits"
        await asyncio.sleep(0.35)  # the short window moves on (not a wait for work: the window is time)
        assert await budget.try_take("tok") == 0.0
        assert await client.zcard(f"steward:budget:{marker}:tok:300") == 1, "the old entries were trimmed"
    finally:
        await client.aclose()


async def test_a_read_sent_alongside_the_lock_costs_no_round_trip_and_its_error_still_frees_the_lock(
    redis_url: str,
) -> None:
    from bot.queue.locks import LuaScript
    from tests.integration.redis_watch import RoundTrips

    redis = make_redis(redis_url)
    trips = RoundTrips(redis)
    marker = uuid.uuid4().hex
    read = LuaScript("return redis.call('GET', KEYS[1])")
    try:
        await redis.set(f"value:{marker}", "here")
        await redis.set(f"done:{marker}", "1")
        await redis.hset(f"hash:{marker}", "a", "b")
        for _ in range(2):  # the first time, Redis may not know the scripts yet
            before = trips.count
            async with issue_lock(
                redis,
                f"github:o/r#{marker}",
                ttl=10,
                wait=0,
                done_key=f"done:{marker}",
                alongside=(read, [f"value:{marker}"], []),
            ) as held:
                assert held and held.done and held.alongside() == b"here"
            taken_and_released = trips.count - before
        assert taken_and_released == 2, "the lock, the mark and the read in one; the release in one"
        with pytest.raises(Exception, match="WRONGTYPE"):
            async with issue_lock(
                redis, f"github:o/r#{marker}", ttl=10, wait=0, alongside=(read, [f"hash:{marker}"], [])
            ) as held:
                assert held and not held.done
                held.alongside()
        assert await redis.get(f"steward:lock:github:o/r#{marker}") is None, "the lock was given back"
    finally:
        await redis.aclose()
