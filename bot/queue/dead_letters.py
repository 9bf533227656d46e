"""Jobs that failed for good, parked in Redis until an operator replays or drops them (DESIGN §3.12).

A delivery whose job could not finish — the forge kept failing, a permanent error, a job that kept
timing out — is recorded here with what is needed to run it again, and its dedupe key is dropped so the
forge's own "Redeliver" button works too. ``steward dead list`` shows the entries, ``steward dead retry``
puts them back on the queue and ``steward dead drop`` forgets those that can never succeed.

The list is capped in entries (``MAX_ENTRIES``) and in bytes (``STEWARD_DEAD_MAX_BYTES``): each entry keeps
its event's normalised JSON, so sustained failures could otherwise fill Redis. Past either cap the oldest
entries are dropped, counted in ``steward_dead_dropped_total{reason}``. The newest entry is never dropped,
even when it alone is larger than the byte cap. Entries are kept in a hash (job id → JSON), their order in
a sorted set (by failure time) and their total size in a counter, all changed together by one script.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Awaitable
from dataclasses import asdict, dataclass
from typing import Any, cast

from arq.connections import ArqRedis

from bot.events.event import Event
from bot.queue.jobs import JOB_FUNCTION, QUEUE_NAME, dedupe_key
from bot.telemetry import metrics

DEAD_KEY = "steward:dead"
DEAD_ORDER_KEY = "steward:dead:order"
DEAD_BYTES_KEY = "steward:dead:bytes"
# The job last parked for a subject (``DeadLetters.add``); a pointer to an entry dropped since is ignored,
# and it expires after as long as a catch-up can find the same comment again (``COMMENT_DONE_TTL``).
DEAD_SUBJECT_KEY = "steward:dead:subject"
SUBJECT_TTL = 7 * 24 * 3600
# The list is for a person to read and replay; beyond this many entries the oldest are dropped.
MAX_ENTRIES = 10_000
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
MAX_ERROR_CHARS = 500

# KEYS: the hash, the order, the byte count, the delivery's dedupe key, the subject's key (see ``add``).
# ARGV: job id, entry, failed at, max entries, max bytes, the subject key's lifetime (0: no subject).
# Returns {dropped for entries, dropped for bytes, entries, bytes}.
_ADD = """
if tonumber(ARGV[6]) > 0 then
  local before = redis.call('GET', KEYS[5])
  if before and before ~= ARGV[1] and redis.call('HEXISTS', KEYS[1], before) == 1 then
    redis.call('DECRBY', KEYS[3], redis.call('HSTRLEN', KEYS[1], before))
    redis.call('HDEL', KEYS[1], before)
    redis.call('ZREM', KEYS[2], before)
  end
  redis.call('SET', KEYS[5], ARGV[1], 'EX', ARGV[6])
end
local old = redis.call('HSTRLEN', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('INCRBY', KEYS[3], string.len(ARGV[2]) - old)
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('DEL', KEYS[4])
local max_n, max_b = tonumber(ARGV[4]), tonumber(ARGV[5])
local by_n, by_b = 0, 0
while true do
  local n = redis.call('HLEN', KEYS[1])
  local b = tonumber(redis.call('GET', KEYS[3]) or '0')
  if (n <= max_n and b <= max_b) or n <= 1 then break end
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  if not oldest or oldest == ARGV[1] then break end
  redis.call('DECRBY', KEYS[3], redis.call('HSTRLEN', KEYS[1], oldest))
  redis.call('HDEL', KEYS[1], oldest)
  redis.call('ZREM', KEYS[2], oldest)
  if n > max_n then by_n = by_n + 1 else by_b = by_b + 1 end
end
return {by_n, by_b, redis.call('HLEN', KEYS[1]), tonumber(redis.call('GET', KEYS[3]) or '0')}
"""

# KEYS: the hash, the order, the byte count. ARGV: job id. Returns 1 if it was there.
_REMOVE = """
local size = redis.call('HSTRLEN', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('DECRBY', KEYS[3], size)
return 1
"""


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
    def __init__(
        self, redis: ArqRedis, *, max_entries: int = MAX_ENTRIES, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> None:
        self._redis = redis
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._add: Any = redis.register_script(_ADD)
        self._remove: Any = redis.register_script(_REMOVE)

    async def add(
        self,
        *,
        job_id: str,
        event: Event,
        raw_event: str,
        exc: BaseException,
        tries: int,
        subject: str = "",
        subject_ttl: int = SUBJECT_TTL,
    ) -> DeadJob:
        """Park a job. ``subject``: what the job does, when two jobs may do the same (a comment's commands,
        run by its delivery and by a catch-up that found the comment unanswered while that delivery was
        still running or already parked): a job parked for a subject replaces the one parked for it before,
        so one command is one dead letter, with its newest failure."""
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
        await self._repair()
        by_entries, by_bytes, count, size = await self._add(
            keys=[
                DEAD_KEY,
                DEAD_ORDER_KEY,
                DEAD_BYTES_KEY,
                dedupe_key(event.forge, event.delivery_id),
                f"{DEAD_SUBJECT_KEY}:{subject}",
            ],
            args=[
                job_id,
                json.dumps(asdict(entry)),
                repr(entry.failed_at),
                self.max_entries,
                self.max_bytes,
                subject_ttl if subject else 0,
            ],
        )
        if by_entries:
            metrics.DEAD_DROPPED.labels("entries").inc(by_entries)
        if by_bytes:
            metrics.DEAD_DROPPED.labels("bytes").inc(by_bytes)
        metrics.DEAD_JOBS.set(int(count))
        metrics.DEAD_BYTES.set(int(size))
        return entry

    async def parked(self, subjects: list[str]) -> list[bool]:
        """Whether a job is parked for each subject (``add``)."""
        if not subjects:
            return []
        pointers = await cast(
            Awaitable[list[bytes | None]], self._redis.mget([f"{DEAD_SUBJECT_KEY}:{s}" for s in subjects])
        )
        async with self._redis.pipeline(transaction=False) as pipe:
            for job_id in pointers:
                pipe.hexists(DEAD_KEY, (job_id or b"").decode())
            found = await pipe.execute()
        return [bool(p) and bool(f) for p, f in zip(pointers, found, strict=True)]

    async def _repair(self) -> None:
        """Entries written before the order and the byte count existed (or a count gone astray): rebuild
        both from the hash. Cheap when they agree (two counts)."""
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.hlen(DEAD_KEY)
            pipe.zcard(DEAD_ORDER_KEY)
            count, ordered = await pipe.execute()
        if int(count) == int(ordered):
            return
        raw = await cast(Awaitable[dict[bytes, bytes]], self._redis.hgetall(DEAD_KEY))
        order: dict[str, float] = {}
        for job_id, value in raw.items():
            try:
                order[job_id.decode()] = float(json.loads(value)["failed_at"])
            except (KeyError, TypeError, ValueError):
                order[job_id.decode()] = 0.0
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.delete(DEAD_ORDER_KEY)
            if order:
                pipe.zadd(DEAD_ORDER_KEY, order)
            pipe.set(DEAD_BYTES_KEY, sum(len(v) for v in raw.values()))
            await pipe.execute()

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

    async def drop(self, job_id: str) -> bool:
        """Forget a dead job (one that can never succeed); False if unknown."""
        return bool(await self._remove(keys=[DEAD_KEY, DEAD_ORDER_KEY, DEAD_BYTES_KEY], args=[job_id]))

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
        await self.drop(job_id)
        await self.count()
        return new_id
