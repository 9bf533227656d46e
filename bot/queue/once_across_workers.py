"""Effects that must happen once across every worker, where the forge holds no record to look at."""

from __future__ import annotations

import hashlib

from redis.asyncio import Redis


class Memo:
    """ "Has this been done yet?" across every worker: the first caller of ``first(key)`` gets True for
    ``ttl`` seconds. For effects that must happen once (one notice per invalid file, say) where the forge
    holds no record to look at. Keys are digests (DESIGN §3.9)."""

    def __init__(self, redis: Redis, *, prefix: str = "steward:once") -> None:
        self._redis = redis
        self._prefix = prefix

    @property
    def redis(self) -> Redis:
        return self._redis

    def _name(self, key: str) -> str:
        return f"{self._prefix}:{hashlib.sha256(key.encode()).hexdigest()[:32]}"

    async def first(self, key: str, ttl: int) -> bool:
        return bool(await self._redis.set(self._name(key), "1", nx=True, ex=ttl))

    async def done(self, key: str) -> bool:
        """Whether ``first(key)`` was asked for (and has not expired), without asking for it."""
        return bool(await self._redis.exists(self._name(key)))
