"""The queue's times are on Redis's clock, and a process's skew shows (issue 40 item 5).

A worker whose clock was 60 s ahead delayed every reply by 60 s and nothing showed it. Each process now
measures its clock against Redis's `TIME` (`steward_clock_skew_seconds`) and reads and writes the queue's
times on Redis's clock: here a process whose own clock runs 60 s ahead schedules deferred work, queues a
delivery and polls as if its clock were right.
"""

from __future__ import annotations

import time
import types

import pytest

from bot.events.event import Event
from bot.forge import RepoRef
from bot.queue import clock
from bot.queue.deferred import LATER_PREFIX, Deferred
from bot.queue.jobs import QUEUE_NAME, Enqueuer, make_redis
from bot.telemetry import metrics


def _event(delivery: str) -> Event:
    return Event(
        forge="github",
        delivery_id=delivery,
        name="issues",
        action="opened",
        sender="",
        repo=RepoRef("o", "r"),
    )


async def test_a_clock_60_s_ahead_is_measured_and_the_queue_keeps_redis_time(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ahead = types.SimpleNamespace(time=lambda: time.time() + 60.0)
    monkeypatch.setattr(clock, "time", ahead)
    redis = make_redis(redis_url)
    try:
        skew = await clock.measure(redis, "worker")
        assert 59.0 < skew < 61.0
        sample = metrics.CLOCK_SKEW.labels("worker")._value.get()
        assert 59.0 < sample < 61.0, "exported as steward_clock_skew_seconds"
        seconds, micros = await redis.time()
        redis_now = int(seconds) + int(micros) / 1e6
        assert abs(clock.now() - redis_now) < 1.0, "the queue reads Redis's time, not the process's"

        await Deferred(redis).run_later(_event("later-1"), delay=30.0, job_id="x")
        score = await redis.zscore(QUEUE_NAME, LATER_PREFIX + "x")
        assert score is not None and abs(score / 1000 - (redis_now + 30.0)) < 2.0, "due in 30 s, not 90"

        await Enqueuer(redis, dedupe_ttl=60).enqueue(_event("now-1"))
        score = await redis.zscore(QUEUE_NAME, "delivery:github:now-1")
        assert score is not None and abs(score / 1000 - redis_now) < 2.0, "due now on Redis's clock"
    finally:
        monkeypatch.undo()
        await clock.measure(redis, "worker")
        await redis.aclose()
