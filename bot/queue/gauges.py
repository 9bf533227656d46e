"""Gauges read from Redis each time metrics are scraped, so the receiver and every worker say the same thing
whatever they did themselves: the dead-letter list, the queue (ready and deferred apart, and how long the
oldest ready job has waited), and the workers' heartbeat and last finished job. A gauge kept in memory was
wrong in both directions (issue 26): the list emptied by `steward dead retry` in another process, a worker
restarted, a receiver that never parks anything."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Collection
from dataclasses import dataclass
from typing import Any, cast

from redis.exceptions import RedisError

from bot.queue import clock
from bot.queue.dead_letters import DEAD_BYTES_KEY, DEAD_KEY
from bot.queue.jobs import QUEUE_NAME, queue_catch_up
from bot.queue.liveness import job_states
from bot.telemetry import metrics

# Written by every worker's polling loop (every ~10 s) and after every job it finishes: a Unix time.
HEARTBEAT_KEY = "steward:worker:heartbeat"
LAST_JOB_KEY = "steward:worker:last-job"
# The receiver's /readyz reports a worker whose heartbeat is older than this as missing.
HEARTBEAT_STALE_SECONDS = 60.0


@dataclass(frozen=True)
class Sample:
    dead: int
    dead_bytes: int
    ready: int
    deferred: int
    running: int
    stranded: int
    oldest_ready: float
    heartbeat_age: float | None
    last_job_age: float | None


def _age(raw: Any, now: float) -> float | None:
    try:
        return max(0.0, now - float(raw)) if raw is not None else None
    except ValueError:
        return None


async def sample(redis: Any, now: float | None = None) -> Sample:
    """One round trip: what the gauges show."""
    now = clock.now() if now is None else now  # the queue's times are on Redis's clock
    now_ms = int(now * 1000)
    async with redis.pipeline(transaction=False) as pipe:
        pipe.hlen(DEAD_KEY)
        pipe.get(DEAD_BYTES_KEY)
        pipe.zcount(QUEUE_NAME, "-inf", now_ms)
        pipe.zcount(QUEUE_NAME, f"({now_ms}", "+inf")
        pipe.get(HEARTBEAT_KEY)
        pipe.get(LAST_JOB_KEY)
        dead, dead_bytes, _due, deferred, beat, last = await pipe.execute()
    # Of the jobs due now, those a worker runs (or a dead worker left, for a few seconds) are not waiting.
    ready, running, stranded, waiting_since = await job_states(redis, now_ms)
    oldest = 0.0
    if waiting_since is not None:
        oldest = max(0.0, (now_ms - waiting_since) / 1000)
    return Sample(
        dead=int(dead),
        dead_bytes=int(dead_bytes or 0),
        ready=ready,
        deferred=int(deferred),
        running=running,
        stranded=stranded,
        oldest_ready=oldest,
        heartbeat_age=_age(beat, now),
        last_job_age=_age(last, now),
    )


async def refresh(redis: Any) -> Sample | None:
    """Set the gauges from Redis; None (the gauges keep their last values) when Redis does not answer."""
    try:
        got = await sample(redis)
    except Exception:  # a scrape never fails because Redis is gone (steward_redis_up says so)
        return None
    metrics.DEAD_JOBS.set(got.dead)
    metrics.DEAD_BYTES.set(got.dead_bytes)
    metrics.QUEUE_JOBS.labels("ready").set(got.ready)
    metrics.QUEUE_JOBS.labels("deferred").set(got.deferred)
    metrics.QUEUE_JOBS.labels("running").set(got.running)
    metrics.QUEUE_JOBS.labels("stranded").set(got.stranded)
    metrics.QUEUE_OLDEST_READY_SECONDS.set(got.oldest_ready)
    metrics.WORKER_HEARTBEAT_SECONDS.set(-1 if got.heartbeat_age is None else got.heartbeat_age)
    metrics.WORKER_LAST_JOB_SECONDS.set(-1 if got.last_job_age is None else got.last_job_age)
    return got


async def beat(redis: Any, key: str = HEARTBEAT_KEY) -> None:
    await cast(Awaitable[Any], redis.set(key, repr(time.time()), ex=30 * 86_400))


# The receivers' own heartbeat: a receiver that starts and finds it older than this (or missing) knows that
# no receiver accepted deliveries for a while — the forge's deliveries of that time failed — and queues a
# catch-up. Replicas restarted one at a time keep it fresh, so a rolling restart queues none.
RECEIVER_HEARTBEAT_KEY = "steward:receiver:heartbeat"
RECEIVER_BEAT_SECONDS = 10.0
RECEIVER_GAP_SECONDS = 30.0
# The receiver outages nobody caught up on yet (a sorted set: one member per outage noticed, its score the
# Unix time the outage began): the next reconcile's window starts at the earliest at the latest. A finished
# reconcile removes only the members it read when it started (``clear_outages``), so an outage noticed while
# it ran — whose events it may have listed too early to see — stays for the next run.
OUTAGE_SINCE_KEY = "steward:outage-since"


async def mark_outage(redis: Any, began: float) -> None:
    """Note an outage that began at ``began`` (a Unix time) for the next catch-up."""
    member = f"receiver:{time.time():.6f}:{uuid.uuid4().hex[:8]}"
    await redis.zadd(OUTAGE_SINCE_KEY, {member: began})
    await redis.expire(OUTAGE_SINCE_KEY, 30 * 86_400)


async def outages(redis: Any) -> dict[str, float]:
    """The outages not caught up on yet: member → when it began."""
    raw = await cast(Awaitable[list[Any]], redis.zrange(OUTAGE_SINCE_KEY, 0, -1, withscores=True))
    return {(m.decode() if isinstance(m, bytes) else str(m)): float(score) for m, score in raw}


async def clear_outages(redis: Any, seen: Collection[str]) -> None:
    """Remove the outages a finished catch-up covered — exactly the members it read when it started (ZREM of
    named members is atomic: a compare-and-delete per outage), never one noticed since."""
    if seen:
        await redis.zrem(OUTAGE_SINCE_KEY, *seen)


async def receiver_heartbeat(redis: Any, *, catch_up: bool, log: Any) -> None:
    """Run for the receiver's lifetime (see ``RECEIVER_HEARTBEAT_KEY``)."""
    first = True
    while True:
        try:
            now = time.time()
            await clock.measure(redis, "receiver")
            previous = await redis.getset(RECEIVER_HEARTBEAT_KEY, repr(now))
            await redis.expire(RECEIVER_HEARTBEAT_KEY, 30 * 86_400)
            if first:
                first = False
                gap = _age(previous, now)
                # No beat at all: a first start (or Redis lost its data: the workers catch up then).
                if catch_up and gap is not None and gap > RECEIVER_GAP_SECONDS:
                    # The catch-up looks at least this far back (the earliest unseen outage wins).
                    await mark_outage(redis, float(previous))
                    log.info(
                        "no receiver ran for a while; catching up (steward reconcile)",
                        last=f"{int(gap)}s ago",
                    )
                    await queue_catch_up(redis, "receiver-start")
        except (RedisError, OSError):
            pass  # Redis down: /readyz says so; the beat resumes when it is back
        await asyncio.sleep(RECEIVER_BEAT_SECONDS)
