"""The arq queue on Redis: the pool, job ids and delivery dedupe.

A delivery's job id is derived from its forge and delivery id, and a dedupe key remembers
it for seven days. The receiver answers 2xx only once the job is in Redis.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass
from typing import Any, Literal

import hiredis
from arq.connections import ArqRedis
from arq.constants import expires_extra_ms, job_key_prefix, result_key_prefix
from arq.jobs import serialize_job
from redis.asyncio import ConnectionPool
from redis.asyncio.connection import Connection

from bot.events import Event

QUEUE_NAME = "steward:queue"
JOB_FUNCTION = "process_event"
RECONCILE_FUNCTION = "steward_reconcile"
CATCH_UP_KEY = "steward:catch-up"


def job_id_for(event: Event) -> str:
    return f"delivery:{event.forge}:{event.delivery_id}"


def dedupe_key(forge: str, delivery_id: str) -> str:
    return f"steward:seen:{forge}:{delivery_id}"


class _HiredisPackedConnection(Connection):
    """redis-py's asyncio connection packs commands in Python, which costs more than the rest of
    an enqueue; hiredis (a redis-py dependency here) packs them in C, byte for byte the same."""

    def pack_command(self, *args: Any) -> list[bytes]:
        first = args[0]
        if isinstance(first, str):
            args = (*first.encode().split(), *args[1:])
        elif isinstance(first, bytes) and b" " in first:
            args = (*first.split(), *args[1:])
        return [hiredis.pack_command(tuple(self.encoder.encode(arg) for arg in args))]  # type: ignore[no-untyped-call]


def make_redis(url: str, *, connect_timeout: float = 1.0, timeout: float = 3.0) -> ArqRedis:
    """An arq client that does not connect until used, so a process starts while Redis is down."""
    extra: dict[str, Any] = {}
    if url.startswith("redis://"):
        extra["connection_class"] = _HiredisPackedConnection
    pool = ConnectionPool.from_url(
        url,
        **extra,
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


def _job_fields(event: Event, dedupe_ttl: int) -> tuple[str, list[str], list[Any]]:
    """The keys and arguments that enqueue one delivery's job (see ``_ENQUEUE_BATCH``)."""
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


# One call for a batch of deliveries, atomically: each is refused when it was seen (its dedupe key) or its
# job is queued, else its job is written exactly as arq's ``enqueue_job`` writes it (job key with expiry,
# queue entry) together with the dedupe key. Unlike ``enqueue_job`` a kept result does not refuse it: the
# dedupe key outlives every result, and when it is gone on purpose (a job parked in the dead-letter list)
# the forge's "Redeliver" must run the job again, so the stale result is dropped instead. KEYS come four
# per delivery, ARGV five per delivery after the count; returns 1 (enqueued) or 0 (duplicate) per
# delivery, in order.
_ENQUEUE_BATCH = """
local out = {}
for i = 0, tonumber(ARGV[1]) - 1 do
  local k, a = i * 4, 1 + i * 5
  if redis.call('EXISTS', KEYS[k + 1], KEYS[k + 2]) > 0 then
    out[i + 1] = 0
  else
    redis.call('DEL', KEYS[k + 3])
    redis.call('PSETEX', KEYS[k + 2], ARGV[a + 1], ARGV[a + 2])
    redis.call('ZADD', KEYS[k + 4], ARGV[a + 3], ARGV[a + 4])
    redis.call('SET', KEYS[k + 1], ARGV[a + 4], 'EX', ARGV[a + 5])
    out[i + 1] = 1
  end
end
return out
"""


class Enqueuer:
    """Enqueues deliveries, batching those that arrive together into one Redis call.

    A Redis round trip costs far more in the client than in Redis; under load, every request
    waiting at the same moment shares one script call, atomic for the whole batch. When idle a
    delivery still goes out at once.
    """

    def __init__(self, redis: ArqRedis, *, dedupe_ttl: int) -> None:
        self._redis = redis
        self._script: Any = redis.register_script(_ENQUEUE_BATCH)
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
            keys: list[str] = []
            args: list[Any] = [len(batch)]
            for event, _ in batch:
                job_id, job_keys, job_args = _job_fields(event, self._dedupe_ttl)
                job_ids.append(job_id)
                keys += job_keys
                args += job_args
            try:
                results = await self._script(keys=keys, args=args)
            except Exception as exc:  # every waiting delivery learns the queue failed
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for (_, future), job_id, created in zip(batch, job_ids, results, strict=True):
                if not future.done():
                    future.set_result(Enqueued("enqueued" if created else "duplicate", job_id))


async def queue_catch_up(redis: ArqRedis, reason: str) -> None:
    """Queue one reconcile (the catch-up after downtime); workers and receivers asking within the same few
    seconds (every worker sees Redis come back at once) share it."""
    if await redis.set(CATCH_UP_KEY, reason, nx=True, ex=10):
        await redis.enqueue_job(
            RECONCILE_FUNCTION, reason, _job_id=f"steward:reconcile:{reason}:{uuid.uuid4().hex}"
        )
