"""The arq queue on Redis: the pool, job ids and delivery dedupe.

A delivery's job id is derived from its forge and delivery id, and a dedupe key remembers
it for seven days. The receiver answers 2xx only once the job is in Redis.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from typing import Any, Literal

import hiredis
import redis.exceptions
from arq.connections import ArqRedis
from arq.constants import expires_extra_ms, in_progress_key_prefix, job_key_prefix, result_key_prefix
from arq.jobs import serialize_job
from redis.asyncio import ConnectionPool
from redis.asyncio.connection import Connection

from bot.events.event import Event
from bot.queue import clock
from bot.queue.budgets import (
    DEFAULT_EVENTS_PER_MINUTE,
    EVENT_WINDOW_SECONDS,
    CommandNames,
    event_budget_keys,
)

QUEUE_NAME = "steward:queue"
JOB_FUNCTION = "process_event"
RECONCILE_FUNCTION = "steward_reconcile"
CATCH_UP_KEY = "steward:catch-up"


def job_id_for(event: Event) -> str:
    return f"delivery:{event.forge}:{event.delivery_id}"


def dedupe_key(forge: str, delivery_id: str) -> str:
    return f"steward:seen:{forge}:{delivery_id}"


_PLAIN = frozenset({str, bytes, int})


class _HiredisPackedConnection(Connection):
    """redis-py's asyncio connection packs commands in Python, which costs more than the rest of
    an enqueue; hiredis (a redis-py dependency here) packs them in C, byte for byte the same."""

    def pack_command(self, *args: Any) -> list[bytes]:
        first = args[0]
        if isinstance(first, str):
            args = (*first.encode().split(), *args[1:])
        elif isinstance(first, bytes) and b" " in first:
            args = (*first.split(), *args[1:])
        encoder = self.encoder
        if (
            encoder.encoding == "utf-8"
            and encoder.encoding_errors == "strict"
            and _PLAIN.issuperset(map(type, args))
        ):
            # Strings (UTF-8), bytes and integers: hiredis writes them as the encoder would, without a
            # Python call per argument (an enqueue has fourteen per delivery). Anything else (a float, a
            # bool the encoder refuses) goes through the encoder.
            return [hiredis.pack_command(args)]
        return [hiredis.pack_command(tuple(encoder.encode(arg) for arg in args))]  # type: ignore[no-untyped-call]


# What "Redis is unreachable" looks like: refused or dropped connections and timeouts (redis-py wraps the
# socket errors beneath them), a Redis still loading its AOF after a restart (BusyLoadingError is a
# ConnectionError).
REDIS_ERRORS: tuple[type[BaseException], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
)


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
    """``deferred``: beyond its sender's event budget, queued for a later slot (``delay`` seconds away);
    ``coalesced``: its event replaced the one in that sender's job already waiting for the same issue."""

    outcome: Literal["enqueued", "duplicate", "deferred", "coalesced"]
    job_id: str
    delay: float = 0.0


_UNBUDGETED = "steward:unbudgeted"


def _job_fields(
    event: Event, dedupe_ttl: int, events_per_minute: int, names: CommandNames | None = None
) -> tuple[str, list[str], list[Any]]:
    """The keys and arguments that enqueue one delivery's job (see ``_ENQUEUE_BATCH``)."""
    job_id = job_id_for(event)
    now_ms = clock.now_ms()  # Redis's clock: every process agrees on when a job is due
    # Long texts are cut (a worker re-reads them): a job holds what handlers need, not a 25 MB body.
    job = serialize_job(JOB_FUNCTION, (event.trimmed().to_json(),), {}, None, now_ms)
    budget = event_budget_keys(event, names)
    keys = [
        dedupe_key(event.forge, event.delivery_id),
        job_key_prefix + job_id,
        result_key_prefix + job_id,
        QUEUE_NAME,
        budget.schedule if budget else _UNBUDGETED,
        budget.limit if budget else _UNBUDGETED,
        budget.pending if budget else _UNBUDGETED,
    ]
    limit = events_per_minute if budget else 0
    window_ms = int(EVENT_WINDOW_SECONDS * 1000)
    return job_id, keys, [expires_extra_ms, job, now_ms, job_id, dedupe_ttl, limit, window_ms]


# One call for a batch of deliveries, atomically: each is refused when it was seen (its dedupe key) or its
# job is queued, else its job is written exactly as arq's ``enqueue_job`` writes it (job key with expiry,
# queue entry) together with the dedupe key. Unlike ``enqueue_job`` a kept result does not refuse it: the
# dedupe key outlives every result, and when it is gone on purpose (a job parked in the dead-letter list)
# the forge's "Redeliver" must run the job again, so the stale result is dropped instead.
#
# A budgeted delivery (``bot.queue.budgets``: an edit, comment or label change; limit > 0) first meets its
# sender's budget: while a job of the same sender, issue and kind waits for its slot (the pending key names
# it, and arq has not started it), the new event replaces the one in that job (coalesced); otherwise it
# takes the sender's next slot (GCRA: the schedule key holds the theoretical arrival time) and its job is
# queued at that slot's time (> now: deferred, the pending key set), so the queue runs it after everyone
# else's work that is due. The repository's published limit (the limit key) overrides the default. The
# waiting job's own keys are named from the pending key's value, not passed in KEYS: like arq itself, this
# needs one Redis primary (docs/performance.md, "Scaling model").
# KEYS come seven per delivery, ARGV seven per delivery after the count and the two arq key prefixes;
# returns per delivery 0 (duplicate), 1 (queued now), the id of the job it was coalesced into, or the
# milliseconds it was deferred by plus 3 (deferred), in order.
_ENQUEUE_BATCH = """
local out = {}
local job_prefix, progress_prefix = ARGV[2], ARGV[3]
for i = 0, tonumber(ARGV[1]) - 1 do
  local k, a = i * 7, 3 + i * 7
  local job, now, job_id = ARGV[a + 2], tonumber(ARGV[a + 3]), ARGV[a + 4]
  if redis.call('EXISTS', KEYS[k + 1], KEYS[k + 2]) > 0 then
    out[i + 1] = 0
  else
    local limit, window = tonumber(ARGV[a + 6]), tonumber(ARGV[a + 7])
    if limit > 0 then
      local published = redis.call('GET', KEYS[k + 6])
      if published then limit = tonumber(published) end
    end
    local at, result = now, 1
    local pending = nil
    if limit > 0 then
      pending = redis.call('GET', KEYS[k + 7])
      if pending and (redis.call('EXISTS', job_prefix .. pending) == 0
          or redis.call('EXISTS', progress_prefix .. pending) == 1) then
        pending = nil
      end
    end
    if pending then
      redis.call('SET', job_prefix .. pending, job, 'KEEPTTL')
      redis.call('SET', KEYS[k + 1], pending, 'EX', ARGV[a + 5])
      out[i + 1] = pending
    else
      if limit > 0 then
        local interval = math.max(1, math.floor(window / limit))
        local tat = tonumber(redis.call('GET', KEYS[k + 5]) or now)
        if tat < now then tat = now end
        local allowed = tat - (window - interval)
        if allowed > now then at = math.floor(allowed) end
        local next_tat = tat + interval
        redis.call('SET', KEYS[k + 5], tostring(next_tat), 'PX', math.floor(next_tat - now) + 1000)
        if at > now then
          redis.call('SET', KEYS[k + 7], job_id, 'PX', at - now + window)
          result = 3 + (at - now)
        end
      end
      redis.call('DEL', KEYS[k + 3])
      redis.call('PSETEX', KEYS[k + 2], tonumber(ARGV[a + 1]) + (at - now), job)
      redis.call('ZADD', KEYS[k + 4], at, job_id)
      redis.call('SET', KEYS[k + 1], job_id, 'EX', ARGV[a + 5])
      out[i + 1] = result
    end
  end
end
return out
"""


# Group commit under load: when the previous script call ended less than ``BUSY_SECONDS`` ago, the next one
# waits ``LINGER_SECONDS`` first, so the deliveries arriving meanwhile share it (one call costs the client
# far more than one more delivery in it). An idle receiver never waits: its delivery goes out at once.
LINGER_SECONDS = 0.001
BUSY_SECONDS = 0.002
# A batch this large goes out without waiting for more.
MAX_BATCH = 64


class Enqueuer:
    """Enqueues deliveries, batching those that arrive together into one Redis call.

    A Redis round trip costs far more in the client than in Redis; under load, every request
    waiting at the same moment shares one script call, atomic for the whole batch, and a call that
    follows another closely waits ``LINGER_SECONDS`` for more. When idle a delivery still goes out at
    once. Each delivery's answer waits for its batch's call: it is acknowledged only once Redis has its
    job, and a failed call fails every delivery in the batch.
    """

    def __init__(
        self,
        redis: ArqRedis,
        *,
        dedupe_ttl: int,
        events_per_minute: int = DEFAULT_EVENTS_PER_MINUTE,
        linger: float = LINGER_SECONDS,
        busy: float = BUSY_SECONDS,
    ) -> None:
        self._redis = redis
        self.redis = redis
        self._script: Any = redis.register_script(_ENQUEUE_BATCH)
        self._dedupe_ttl = dedupe_ttl
        self._events_per_minute = events_per_minute
        self._linger = linger
        self._busy = busy
        self._pending: list[tuple[Event, asyncio.Future[Enqueued]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self._last_call = -1e9
        # The commands the workers run, as they published them (the receiver refreshes it): a comment
        # skips its sender's event budget only when it names one of them.
        self.command_names: CommandNames | None = None

    async def enqueue(self, event: Event) -> Enqueued:
        future: asyncio.Future[Enqueued] = asyncio.get_running_loop().create_future()
        self._pending.append((event, future))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        return await future

    async def _flush(self) -> None:
        loop = asyncio.get_running_loop()
        while self._pending:
            if (
                self._linger > 0
                and len(self._pending) < MAX_BATCH
                and loop.time() - self._last_call < self._busy
            ):
                await asyncio.sleep(self._linger)
            batch, self._pending = self._pending, []
            job_ids: list[str] = []
            keys: list[str] = []
            args: list[Any] = [len(batch), job_key_prefix, in_progress_key_prefix]
            for event, _ in batch:
                job_id, job_keys, job_args = _job_fields(
                    event, self._dedupe_ttl, self._events_per_minute, self.command_names
                )
                job_ids.append(job_id)
                keys += job_keys
                args += job_args
            try:
                results = await self._script(keys=keys, args=args)
            except Exception as exc:  # every waiting delivery learns the queue failed
                self._last_call = loop.time()
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            self._last_call = loop.time()
            for (_, future), job_id, result in zip(batch, job_ids, results, strict=True):
                if not future.done():
                    future.set_result(_enqueued(result, job_id))


def _enqueued(result: int | bytes | str, job_id: str) -> Enqueued:
    if isinstance(result, bytes | str):
        return Enqueued("coalesced", result.decode() if isinstance(result, bytes) else result)
    if result >= 3:
        return Enqueued("deferred", job_id, (result - 3) / 1000.0)
    return Enqueued("enqueued" if result else "duplicate", job_id)


async def queue_catch_up(redis: ArqRedis, reason: str) -> None:
    """Queue one reconcile (the catch-up after downtime); workers and receivers asking within the same few
    seconds (every worker sees Redis come back at once) share it."""
    if await redis.set(CATCH_UP_KEY, reason, nx=True, ex=10):
        await redis.enqueue_job(
            RECONCILE_FUNCTION, reason, _job_id=f"steward:reconcile:{reason}:{uuid.uuid4().hex}"
        )
