"""A job kept from its issue by another job's lock backs off, never past the lock's expiry (issue 40 item 4).

It used to be tried again every 0.1–0.5 s for as long as the lock was held — 5 min 40 s for a dead worker's
lock: a claim, a 2-second wait for the lock and a deferral, over and over. Now each try waits longer (0.5 s
doubling, at most 30 s) and never past the moment the lock expires.
"""

from __future__ import annotations

from bot.queue.jobs import make_redis
from bot.worker.jobs import BUSY_MAX_DEFER, _busy_defer


async def test_a_blocked_job_backs_off_to_at_most_the_locks_expiry(redis_url: str) -> None:
    redis = make_redis(redis_url)
    try:
        await redis.set("steward:lock:github:o/r#1", "another-job", px=300_000)  # a long job, or a dead one
        first = await _busy_defer(redis, "github:o/r#1", 1)
        assert 0.4 <= first <= 0.6, first
        later = await _busy_defer(redis, "github:o/r#1", 8)
        assert BUSY_MAX_DEFER * 0.8 <= later <= BUSY_MAX_DEFER * 1.2, "not a claim every half second"
        await redis.set("steward:lock:github:o/r#2", "another-job", px=3_000)
        assert await _busy_defer(redis, "github:o/r#2", 8) <= 3.0 * 1.2, "never past the lock's expiry"
    finally:
        await redis.aclose()
