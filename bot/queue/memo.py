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

    async def first(self, key: str, ttl: int) -> bool:
        name = f"{self._prefix}:{hashlib.sha256(key.encode()).hexdigest()[:32]}"
        return bool(await self._redis.set(name, "1", nx=True, ex=ttl))
