"""Per-issue locks in Redis: jobs that touch the same issue never run at the same time.

The worker holds the lock of the issue its event names for the whole job. A handler that also writes on
another issue (an approved bug refining its stories) holds that issue's lock too, for as long as it writes
there (``IssueLocks.hold``), so it never interleaves with that issue's own events.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import uuid
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import Any, cast

from redis import exceptions as redis_errors
from redis.asyncio import Redis


class Busy(Exception):
    """Another job holds an issue's lock: the job is deferred and runs again shortly."""


def issue_key(forge: str, repo: str, number: int) -> str:
    """The lock key of an issue (the same as ``Event.issue_key``)."""
    return f"{forge}:{repo}#{number}"


_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

_ACQUIRE = """
local current = redis.call('GET', KEYS[1])
if current == false or current == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
"""


class _Script:
    """A Lua script sent by its SHA-1 (EVALSHA), its source only when Redis does not know it yet (after a
    restart or a SCRIPT FLUSH: a NOSCRIPT answer), instead of the source with every call."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()

    async def __call__(self, redis: Redis, key: str, *args: str) -> Any:
        try:
            return await cast(Awaitable[Any], redis.evalsha(self.sha, 1, key, *args))
        except redis_errors.NoScriptError:
            return await cast(Awaitable[Any], redis.eval(self.source, 1, key, *args))


_ACQUIRE_SCRIPT = _Script(_ACQUIRE)
_RELEASE_SCRIPT = _Script(_RELEASE)


@asynccontextmanager
async def issue_lock(
    redis: Redis, key: str, *, ttl: float, wait: float, owner: str | None = None
) -> AsyncIterator[bool]:
    """Hold the per-issue lock; yields False when it stayed taken for ``wait`` seconds.

    ``owner`` is the job id: a job re-run after its worker died or was cut off by shutdown
    takes back its own lock instead of waiting for it to expire.
    """
    token = owner or uuid.uuid4().hex
    name = f"steward:lock:{key}"
    deadline = asyncio.get_running_loop().time() + wait
    acquired = False
    while True:
        if await _ACQUIRE_SCRIPT(redis, name, token, str(int(ttl * 1000))):
            acquired = True
            break
        if asyncio.get_running_loop().time() >= deadline:
            break
        await asyncio.sleep(0.02 + random.random() * 0.03)
    try:
        yield acquired
    finally:
        if acquired:
            # Shielded: a job cancelled at shutdown must still give its lock back. With Redis gone it is
            # given back once Redis is back (``release_pending``): the job may have finished, and the
            # issue's other events must not wait for the lock to expire.
            try:
                await asyncio.shield(_RELEASE_SCRIPT(redis, name, token))
            except (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError):
                _PENDING.add((name, token))


# Locks whose release failed because Redis was unreachable, given back once it answers again.
_PENDING: set[tuple[str, str]] = set()


def pending_releases() -> int:
    return len(_PENDING)


async def release_pending(redis: Redis) -> int:
    """Give back the locks this process could not release during an outage; returns how many."""
    released = 0
    for name, token in list(_PENDING):
        await _RELEASE_SCRIPT(redis, name, token)
        _PENDING.discard((name, token))
        released += 1
    return released


class IssueLocks:
    """What a job needs to hold other issues' locks: Redis, the job's id (re-runs take back their own
    locks) and the lock lifetime."""

    def __init__(self, redis: Redis, *, owner: str, ttl: float, wait: float = 2.0) -> None:
        self._redis = redis
        self._owner = owner or uuid.uuid4().hex
        self._ttl = ttl
        self._wait = wait

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        """Hold ``key``'s lock, or raise ``Busy`` when another job keeps it for longer than ``wait``."""
        async with issue_lock(
            self._redis, key, ttl=self._ttl, wait=self._wait, owner=f"{self._owner}>{key}"
        ) as got:
            if not got:
                raise Busy(f"{key} is being changed by another job")
            yield
