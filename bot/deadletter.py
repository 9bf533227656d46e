"""Jobs that failed for good, parked in Redis until an operator replays them (DESIGN §3.12).

A delivery whose job could not finish — the forge kept failing, a permanent error, a job that kept
timing out — is recorded here with what is needed to run it again, and its dedupe key is dropped so the
forge's own "Redeliver" button works too. ``steward dead list`` shows the entries and ``steward dead
retry`` puts them back on the queue.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Awaitable
from dataclasses import asdict, dataclass
from typing import Any, cast

from arq.connections import ArqRedis

from bot import metrics
from bot.events import Event
from bot.queue import JOB_FUNCTION, QUEUE_NAME, dedupe_key

DEAD_KEY = "steward:dead"
# The list is for a person to read and replay; beyond this many entries the oldest are dropped.
MAX_ENTRIES = 10_000
MAX_ERROR_CHARS = 500


@dataclass(frozen=True)
class DeadJob:
    job_id: str
    delivery_id: str
    forge: str
    repo: str
    event: str
    error: str
    error_type: str
    failed_at: float
    tries: int
    raw_event: str

    def summary(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("raw_event")
        data["failed_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.failed_at))
        return data


class DeadLetters:
    def __init__(self, redis: ArqRedis) -> None:
        self._redis = redis

    async def add(
        self, *, job_id: str, event: Event, raw_event: str, exc: BaseException, tries: int
    ) -> DeadJob:
        entry = DeadJob(
            job_id=job_id,
            delivery_id=event.delivery_id,
            forge=event.forge,
            repo=str(event.repo or "-"),
            event=event.kind,
            error=str(exc)[:MAX_ERROR_CHARS] or type(exc).__name__,
            error_type=type(exc).__name__,
            failed_at=time.time(),
            tries=tries,
            raw_event=raw_event,
        )
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(DEAD_KEY, job_id, json.dumps(asdict(entry)))
            # Dropped so that the forge's "Redeliver" is not refused as a duplicate.
            pipe.delete(dedupe_key(event.forge, event.delivery_id))
            pipe.hlen(DEAD_KEY)
            results = await pipe.execute()
        count = int(results[-1])
        if count > MAX_ENTRIES:
            await self._trim(count - MAX_ENTRIES)
            count = MAX_ENTRIES
        metrics.DEAD_JOBS.set(count)
        return entry

    async def _trim(self, excess: int) -> None:
        entries = sorted(await self.list(), key=lambda e: e.failed_at)
        if entries[:excess]:
            await cast(Awaitable[int], self._redis.hdel(DEAD_KEY, *(e.job_id for e in entries[:excess])))

    async def list(self) -> list[DeadJob]:
        raw = await cast(Awaitable[dict[bytes, bytes]], self._redis.hgetall(DEAD_KEY))
        entries = []
        for value in raw.values():
            try:
                entries.append(DeadJob(**json.loads(value)))
            except (TypeError, ValueError):
                continue
        return sorted(entries, key=lambda e: e.failed_at)

    async def count(self) -> int:
        count = int(await cast(Awaitable[int], self._redis.hlen(DEAD_KEY)))
        metrics.DEAD_JOBS.set(count)
        return count

    async def retry(self, job_id: str) -> str | None:
        """Put a dead job back on the queue under a new job id; returns that id, or None if unknown."""
        raw = await cast(Awaitable[bytes | None], self._redis.hget(DEAD_KEY, job_id))
        if raw is None:
            return None
        entry = DeadJob(**json.loads(raw))
        new_id = f"retry:{uuid.uuid4().hex[:12]}:{entry.job_id}"[:250]
        job = await self._redis.enqueue_job(
            JOB_FUNCTION, entry.raw_event, _job_id=new_id, _queue_name=QUEUE_NAME
        )
        if job is None:
            return None
        await cast(Awaitable[int], self._redis.hdel(DEAD_KEY, job_id))
        await self.count()
        return new_id
