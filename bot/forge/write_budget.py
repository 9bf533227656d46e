"""A write budget for content-creating forge calls, shared by every worker through Redis.

GitHub's secondary limits allow about 80 content-creating requests a minute and 500 an
hour per token; a worker that would exceed them waits for budget instead of failing.
Each limit is a sliding-window log (a sorted set of timestamps) checked and taken in one
Lua script, so concurrent workers never overspend.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from redis.asyncio import Redis

from bot.forge import RateLimited
from bot.telemetry import metrics

_TAKE = """
local now = tonumber(ARGV[1])
local member = ARGV[2]
local wait = 0
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[1 + 2 * i])
  local window = tonumber(ARGV[2 + 2 * i])
  -- Entries older than the window are trimmed only when the log looks full: until then they cannot
  -- make it refuse (so a window with room costs one ZCARD), and the log never holds more than `limit`.
  if redis.call('ZCARD', key) >= limit then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
    if redis.call('ZCARD', key) >= limit then
      local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
      local until_free = tonumber(oldest[2]) + window - now
      if until_free > wait then wait = until_free end
    end
  end
end
if wait > 0 then return wait end
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[2 + 2 * i])
  redis.call('ZADD', key, now, member)
  redis.call('PEXPIRE', key, window + 1000)
end
return 0
"""


# Whose work a write is: the repository and the person whose event or command the job runs (set by the worker
# around each job: ``writes_for``). Periodic work and the catch-up have none and take from the whole budget.
_FOR: ContextVar[tuple[str, str] | None] = ContextVar("steward_writes_for", default=None)


@contextmanager
def writes_for(repo: str, person: str) -> Iterator[None]:
    """Inside: the writes are ``repo``'s and ``person``'s, each held to a share of the budget."""
    token = _FOR.set((repo.casefold(), person.casefold()))
    try:
        yield
    finally:
        _FOR.reset(token)


# Set around a call that has a budget of its own (the catch-up's redeliveries): it takes none of this one.
_UNBUDGETED: ContextVar[bool] = ContextVar("steward_unbudgeted", default=False)


@contextmanager
def unbudgeted() -> Iterator[None]:
    token = _UNBUDGETED.set(True)
    try:
        yield
    finally:
        _UNBUDGETED.reset(token)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class WriteBudget:
    def __init__(
        self,
        redis: Redis,
        limits: Sequence[tuple[int, float]],
        *,
        on_wait: Callable[[float], Awaitable[None] | None] | None = None,
        prefix: str = "steward:budget",
        max_wait: float | None = None,
    ) -> None:
        """``max_wait``: the longest a caller waits for budget in all; a longer wait raises
        ``RateLimited`` so the job is deferred instead of sleeping past its time limit."""
        self._redis = redis
        self._limits = [(count, window) for count, window in limits if count > 0]
        self._script: Any = redis.register_script(_TAKE)
        self._on_wait = on_wait
        self._prefix = prefix
        self._max_wait = max_wait
        self._shares: tuple[float, float] = (1.0, 1.0)

    def share(self, *, repository: float, person: float) -> WriteBudget:
        """Hold each repository to ``repository`` and each person to ``person`` of every limit (1.0: no
        share of its own), for the writes made inside ``writes_for``: one person's flood, or one busy
        repository, can never spend what everyone else needs (issue 35 item 5)."""
        self._shares = (repository, person)
        return self

    async def try_take(self, key: str) -> float:
        """Take one unit for ``key`` now and return 0, or return the seconds to wait."""
        if not self._limits:
            return 0.0
        keys = [f"{self._prefix}:{key}:{int(window * 1000)}" for _, window in self._limits]
        args: list[Any] = [int(time.time() * 1000), uuid.uuid4().hex]
        for count, window in self._limits:
            args += [count, int(window * 1000)]
        whose = _FOR.get()
        if whose is not None:
            for kind, name, share in (
                ("repo", whose[0], self._shares[0]),
                ("person", whose[1], self._shares[1]),
            ):
                if share >= 1.0 or not name:
                    continue
                for count, window in self._limits:
                    keys.append(f"{self._prefix}:{key}:{kind}:{_digest(name)}:{int(window * 1000)}")
                    args += [max(1, math.floor(count * share)), int(window * 1000)]
        wait_ms = await self._script(keys=keys, args=args)
        return float(wait_ms) / 1000.0

    async def take(self, key: str, *, forge: str | None = None) -> float:
        """Wait until budget is available for ``key``, take it, and return the seconds waited
        (counted in the budget-wait metrics under ``forge`` when given)."""
        if _UNBUDGETED.get():
            return 0.0
        waited = 0.0
        while True:
            wait = await self.try_take(key)
            if wait <= 0:
                if waited and forge is not None:
                    metrics.BUDGET_WAITS.labels(forge).inc()
                    metrics.BUDGET_WAIT_SECONDS.labels(forge).inc(waited)
                return waited
            wait = min(wait + 0.005, 60.0)
            if self._max_wait is not None and waited + wait > self._max_wait:
                if forge is not None:
                    metrics.BUDGET_DEFERRALS.labels(forge).inc()
                raise RateLimited(f"the write budget is spent for {wait:.1f}s more", retry_after=wait)
            if self._on_wait is not None:
                result = self._on_wait(wait)
                if result is not None:
                    await result
            await asyncio.sleep(wait)
            waited += wait
