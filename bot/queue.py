"""The arq queue on Redis: the pool, job ids and delivery dedupe.

A delivery's job id is derived from its forge and delivery id, and a dedupe key remembers
it for seven days. The receiver answers 2xx only once the job is in Redis.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any, Literal

from arq.connections import ArqRedis
from arq.constants import expires_extra_ms, job_key_prefix, result_key_prefix
from arq.jobs import serialize_job
from redis.asyncio import ConnectionPool

from bot.events import Event

QUEUE_NAME = "steward:queue"
JOB_FUNCTION = "process_event"


def job_id_for(event: Event) -> str:
    return f"delivery:{event.forge}:{event.delivery_id}"


def dedupe_key(forge: str, delivery_id: str) -> str:
    return f"steward:seen:{forge}:{delivery_id}"


def make_redis(url: str, *, connect_timeout: float = 1.0, timeout: float = 3.0) -> ArqRedis:
    """An arq client that does not connect until used, so a process starts while Redis is down."""
    pool = ConnectionPool.from_url(
        url,
        socket_connect_timeout=connect_timeout,
        socket_timeout=timeout,
        health_check_interval=30,
        max_connections=64,
    )
    return ArqRedis(connection_pool=pool, default_queue_name=QUEUE_NAME)


@dataclass(frozen=True)
class Enqueued:
    outcome: Literal["enqueued", "duplicate"]
    job_id: str


# One round trip, atomically: refuse when the delivery was seen or its job exists (queued or
# with a result kept), else write the job exactly as arq's ``enqueue_job`` does (job key with
# expiry, queue entry) together with the dedupe key.
_ENQUEUE = """
if redis.call('EXISTS', KEYS[1], KEYS[2], KEYS[3]) > 0 then return 0 end
redis.call('PSETEX', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[4])
redis.call('SET', KEYS[1], ARGV[4], 'EX', ARGV[5])
return 1
"""


def _job_fields(event: Event, dedupe_ttl: int) -> tuple[str, list[str], list[Any]]:
    job_id = job_id_for(event)
    now_ms = int(time.time() * 1000)
    job = serialize_job(JOB_FUNCTION, (event.to_json(),), {}, None, now_ms)
    keys = [
        dedupe_key(event.forge, event.delivery_id),
        job_key_prefix + job_id,
        result_key_prefix + job_id,
        QUEUE_NAME,
    ]
    return job_id, keys, [expires_extra_ms, job, now_ms, job_id, dedupe_ttl]


async def enqueue_event(redis: ArqRedis, event: Event, *, dedupe_ttl: int) -> Enqueued:
    """Enqueue the event's job unless this delivery was seen; raises on any Redis error.

    The job, its queue entry and the dedupe key are written in one Lua script, so a delivery
    is either fully enqueued and remembered or not at all, and two concurrent copies of one
    delivery enqueue one job.
    """
    job_id, keys, args = _job_fields(event, dedupe_ttl)
    created = await redis.register_script(_ENQUEUE)(keys=keys, args=args)
    return Enqueued("enqueued" if created else "duplicate", job_id)


class Enqueuer:
    """Enqueues deliveries, batching those that arrive together into one Redis pipeline.

    A Redis round trip costs far more in the client than in Redis; under load, every request
    waiting at the same moment shares one. When idle a delivery still goes out at once.
    """

    def __init__(self, redis: ArqRedis, *, dedupe_ttl: int) -> None:
        self._redis = redis
        self._script: Any = redis.register_script(_ENQUEUE)
        self._dedupe_ttl = dedupe_ttl
        self._pending: list[tuple[Event, asyncio.Future[Enqueued]]] = []
        self._flusher: asyncio.Task[None] | None = None

    async def enqueue(self, event: Event) -> Enqueued:
        future: asyncio.Future[Enqueued] = asyncio.get_running_loop().create_future()
        self._pending.append((event, future))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        return await future

    async def _flush(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            job_ids: list[str] = []
            try:
                async with self._redis.pipeline(transaction=False) as pipe:
                    for event, _ in batch:
                        job_id, keys, args = _job_fields(event, self._dedupe_ttl)
                        job_ids.append(job_id)
                        await self._script(keys=keys, args=args, client=pipe)
                    results = await pipe.execute(raise_on_error=False)
            except Exception as exc:  # every waiting delivery learns the queue failed
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for (_, future), job_id, result in zip(batch, job_ids, results, strict=True):
                if future.done():
                    continue
                if isinstance(result, Exception):
                    future.set_exception(result)
                else:
                    future.set_result(Enqueued("enqueued" if result else "duplicate", job_id))
