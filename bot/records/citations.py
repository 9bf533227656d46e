"""Which records cite which comment, kept in Redis so that an edit of a comment nobody cites costs no forge
read (issue 25 §2, "Reads").

A scope (a forge and repository) maps *owners* (an issue's number) to the *members* they cite (comment ids),
both ways, as Redis sets: ``…:o:<owner>`` → members and ``…:m:<member>`` → owners; every change is a
SADD/SREM, so two workers updating different owners never lose each other's entries. The index is
**complete** only after a full rebuild (``steward reconcile`` scans every issue that can cite): until then —
a new deployment, or Redis flushed — ``owners`` answers None and the caller falls back to scanning the
forge. Entries only ever over-approximate (an owner that no longer cites costs one re-derivation, never a
missed one), and the index holds no authority: the forge's comments remain the records.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

PREFIX = "steward:cites"


class Citations:
    def __init__(self, redis: Any, *, prefix: str = PREFIX) -> None:
        self._redis = redis
        self._prefix = prefix

    def _scope(self, scope: str) -> str:
        return f"{self._prefix}:{hashlib.sha256(scope.casefold().encode()).hexdigest()[:24]}"

    async def put(self, scope: str, owner: str, members: Iterable[str]) -> None:
        """``owner`` now cites exactly ``members`` (replacing what it cited before)."""
        base = self._scope(scope)
        wanted = {str(m) for m in members}
        raw = await self._redis.smembers(f"{base}:o:{owner}")
        before = {m.decode() if isinstance(m, bytes) else str(m) for m in raw}
        if before == wanted:
            return
        pipe = self._redis.pipeline(transaction=True)
        for member in before - wanted:
            pipe.srem(f"{base}:m:{member}", owner)
        for member in wanted - before:
            pipe.sadd(f"{base}:m:{member}", owner)
        pipe.delete(f"{base}:o:{owner}")
        if wanted:
            pipe.sadd(f"{base}:o:{owner}", *sorted(wanted))
        await pipe.execute()

    async def owners(self, scope: str, member: str) -> set[str] | None:
        """The owners citing ``member``; None while the index is not known complete."""
        base = self._scope(scope)
        if not await self.complete(scope):
            return None
        raw = await self._redis.smembers(f"{base}:m:{member}")
        return {m.decode() if isinstance(m, bytes) else str(m) for m in raw}

    async def complete(self, scope: str) -> bool:
        return bool(await self._redis.exists(f"{self._scope(scope)}:complete"))

    async def mark_complete(self, scope: str) -> None:
        """Every owner of ``scope`` has been ``put``: from now on ``owners`` answers from the index."""
        await self._redis.set(f"{self._scope(scope)}:complete", "1")
