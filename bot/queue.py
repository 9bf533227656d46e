"""The arq queue on Redis: the pool, job ids and delivery dedupe.

A delivery's job id is derived from its forge and delivery id, and a dedupe key remembers
it for seven days. The receiver answers 2xx only once the job is in Redis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from arq.connections import ArqRedis
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


async def enqueue_event(redis: ArqRedis, event: Event, *, dedupe_ttl: int) -> Enqueued:
    """Enqueue the event's job unless this delivery was seen; raises on any Redis error.

    The dedupe key is written only after the job is in Redis: if Redis fails between the
    two, the sender's redelivery finds no key and arq's job-id check still refuses a second
    copy of a job that is queued.
    """
    job_id = job_id_for(event)
    key = dedupe_key(event.forge, event.delivery_id)
    if await redis.exists(key):
        return Enqueued("duplicate", job_id)
    job = await redis.enqueue_job(JOB_FUNCTION, event.to_json(), _job_id=job_id, _queue_name=QUEUE_NAME)
    if job is None:
        return Enqueued("duplicate", job_id)
    await redis.set(key, job_id, ex=dedupe_ttl)
    return Enqueued("enqueued", job_id)
