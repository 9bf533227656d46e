"""Redis going away is a non-event for a worker: it notices, says so once, waits for Redis to come back
(capped exponential backoff with jitter), and carries on — it never dies of it.

``RedisWatch`` is the one place that knows whether Redis answers: every part of the worker that meets a
Redis error waits on it, and only one of them probes Redis at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Awaitable, Callable

import redis.exceptions
from redis.asyncio import Redis

from bot.queue.jobs import REDIS_ERRORS
from bot.telemetry import logs, metrics

log = logs.get("steward.outage")

# Also a connection lost during a watched transaction, which redis-py reports as a WatchError (the worker's
# own loop watches no key since its claim became a script; kept for safety).
REDIS_UNAVAILABLE: tuple[type[BaseException], ...] = (*REDIS_ERRORS, redis.exceptions.WatchError)
_PING_FAILURES: tuple[type[BaseException], ...] = (*REDIS_UNAVAILABLE, TimeoutError)


class Stopped(Exception):
    """The process is stopping: nobody waits for Redis any more."""


class RedisWatch:
    def __init__(self, redis: Redis, *, name: str, first_delay: float = 0.05, max_delay: float = 2.0) -> None:
        self._redis = redis
        # Run once Redis answers again, before anyone else carries on (give back what the outage left).
        self.on_back: list[Callable[[], Awaitable[None]]] = []
        self._name = name
        self._first_delay = first_delay
        self._max_delay = max_delay
        self._back = asyncio.Event()
        self._back.set()
        self._probe: asyncio.Task[None] | None = None
        self._down_since = 0.0
        self._stopping = False
        metrics.REDIS_UP.labels(name).set(1)

    @property
    def redis(self) -> Redis:
        return self._redis

    @property
    def up(self) -> bool:
        return self._back.is_set()

    async def answers(self, within: float = 1.0) -> bool:
        """Whether Redis answers a PING now (for ``/readyz``), whatever the worker last saw."""
        try:
            async with asyncio.timeout(within):
                await self._redis.ping()
        except _PING_FAILURES:
            metrics.REDIS_UP.labels(self._name).set(0)
            return False
        if self.up:
            metrics.REDIS_UP.labels(self._name).set(1)
        return True

    def stop(self) -> None:
        """Wake every waiter with ``Stopped`` (shutdown must not wait for Redis)."""
        self._stopping = True
        self._back.set()

    async def wait(self, exc: BaseException) -> None:
        """Redis failed with ``exc``: wait until it answers again. Logs one warning per outage."""
        if self._stopping:
            raise Stopped from exc
        if self._back.is_set():
            self._back.clear()
            self._down_since = time.monotonic()
            metrics.REDIS_UP.labels(self._name).set(0)
            log.warning(
                "Redis is unreachable; waiting for it to come back",
                process=self._name,
                error=type(exc).__name__,
                detail=str(exc)[:200],
            )
        if self._probe is None or self._probe.done():
            self._probe = asyncio.get_running_loop().create_task(self._until_back())
        await self._back.wait()
        if self._stopping:
            raise Stopped from exc

    async def _until_back(self) -> None:
        delay = self._first_delay
        while not self._stopping:
            await asyncio.sleep(delay * (0.5 + random.random() / 2))
            try:
                await self._redis.ping()
            except REDIS_UNAVAILABLE:
                delay = min(self._max_delay, delay * 2)
                continue
            for recover in self.on_back:
                with contextlib.suppress(*REDIS_UNAVAILABLE):
                    await recover()
            metrics.REDIS_UP.labels(self._name).set(1)
            metrics.REDIS_RECONNECTS.labels(self._name).inc()
            log.warning(
                "Redis is back; carrying on",
                process=self._name,
                down_seconds=round(time.monotonic() - self._down_since, 1),
            )
            break
        self._back.set()
