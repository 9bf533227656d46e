"""Redis's clock, which every process shares (issue 40 item 5).

A job's place in the queue is a time: when it is due. Each process used to read its own clock for it — the
receiver when it queued a delivery, a handler when it deferred work, a worker when it polled for what is
due — so a worker whose clock was 60 s off delayed every reply by 60 s (or ran deferred work early), and
nothing showed it. Now each process measures its clock against Redis's ``TIME`` (``measure``: the receiver
every 10 s, each worker every few seconds), exports the difference as ``steward_clock_skew_seconds``, and
reads the queue's times on Redis's clock (``now``, ``now_ms``): the local clock corrected by that difference
once it reaches a second.
"""

from __future__ import annotations

import time
from typing import Any

from bot.telemetry import metrics

_skew = 0.0  # this process's clock minus Redis's, in seconds
# Below this the two clocks agree as well as a round trip can tell (and arq's own scheduling, on the local
# clock, stays exactly in step): the local clock is used as it is.
SIGNIFICANT = 1.0


async def measure(redis: Any, process: str) -> float:
    """Compare this process's clock with Redis's ``TIME`` (halfway through the round trip); the skew."""
    global _skew
    before = time.time()
    seconds, micros = await redis.time()
    after = time.time()
    _skew = (before + after) / 2 - (int(seconds) + int(micros) / 1_000_000)
    metrics.CLOCK_SKEW.labels(process).set(round(_skew, 3))
    return _skew


def now() -> float:
    """The time on Redis's clock (as last measured; the local clock while they agree within a second)."""
    return time.time() - (_skew if abs(_skew) >= SIGNIFICANT else 0.0)


def now_ms() -> int:
    """In milliseconds, rounded as arq's ``timestamp_ms`` rounds (a job arq queued "now" is due now)."""
    return round(now() * 1000)
