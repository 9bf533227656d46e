"""Which workers are alive, and what a dead one left behind (issue 40 item 4).

arq marks a running job "in progress" (a key holding the worker's id) for the job's whole time limit, so a
worker killed mid-job (SIGKILL, an OOM kill) stranded its jobs — and, through them, their issues' locks —
for 5 minutes 40 seconds with the defaults. Now each worker keeps a short-lived liveness key
(``LIVE_PREFIX`` + its id, ``LIVE_TTL_MS``, renewed every ``LIVE_EVERY`` seconds) and its id in a set
(``WORKERS_KEY``). Every live worker, at each renewal, looks for registered workers whose liveness key is
gone: their in-progress marks on jobs still in the queue are removed, so the next poll runs those jobs again
— within seconds — and each re-run takes back its own issue locks (a lock's owner is its job's id,
``bot.queue.locks``), then gives them back. A worker of an older version, which keeps no liveness key, is
never in the set, so its jobs are never taken from it.

The same reading gives the queue's gauges: of the jobs due now, how many are ``running`` (marked by a live
worker, or by one that keeps no liveness key), ``stranded`` (marked by a registered worker that is gone:
about to be released) and ``ready`` (no mark: waiting for a worker) — ``bot.queue.gauges``.
"""

from __future__ import annotations

from typing import Any

from arq.constants import in_progress_key_prefix

from bot.queue.jobs import QUEUE_NAME
from bot.queue.locks import LuaScript

WORKERS_KEY = "steward:workers"
LIVE_PREFIX = "steward:worker:live:"
LIVE_TTL_MS = 6000
LIVE_EVERY = 2.0
# How many of the queue's due jobs one look reads (oldest first: a stranded job was due before it started).
SCAN_LIMIT = 5000

# Renew this worker's liveness, then release the in-progress marks of registered workers whose liveness
# key is gone. KEYS: the workers set, the queue; ARGV: this worker's id, the liveness prefix, its TTL (ms),
# now (ms), the in-progress prefix, the scan limit. Answers the ids of the jobs released.
_RENEW_AND_REAP = LuaScript("""
redis.call('SET', ARGV[2] .. ARGV[1], '1', 'PX', ARGV[3])
redis.call('SADD', KEYS[1], ARGV[1])
local dead = {}
local any = false
for _, w in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('EXISTS', ARGV[2] .. w) == 0 then
    dead[w] = true
    any = true
    redis.call('SREM', KEYS[1], w)
  end
end
if not any then return {} end
local freed = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[4], 'LIMIT', 0, ARGV[6])) do
  local mark = ARGV[5] .. id
  local w = redis.call('GET', mark)
  if w and dead[w] then
    redis.call('DEL', mark)
    freed[#freed + 1] = id
  end
end
return freed
""")

# The queue's due jobs by state. KEYS: the workers set, the queue; ARGV: now (ms), the liveness prefix, the
# in-progress prefix, the scan limit. Answers {due, running, stranded, the due time (ms) of the oldest job no
# worker runs, or -1} (due counts every job due now).
_STATES = LuaScript("""
local due = redis.call('ZCOUNT', KEYS[2], '-inf', ARGV[1])
local running, stranded, oldest = 0, 0, -1
local found = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, ARGV[4])
for i = 1, #found, 2 do
  local w = redis.call('GET', ARGV[3] .. found[i])
  if w then
    if redis.call('SISMEMBER', KEYS[1], w) == 1 and redis.call('EXISTS', ARGV[2] .. w) == 0 then
      stranded = stranded + 1
    else
      running = running + 1
    end
  elseif oldest == -1 then
    oldest = found[i + 1]
  end
end
return {due, running, stranded, oldest}
""")


async def renew_and_reap(redis: Any, worker_id: str, now_ms: int) -> list[str]:
    """Keep ``worker_id`` alive; release what dead workers left (the ids of the jobs released)."""
    freed = await _RENEW_AND_REAP(
        redis,
        (WORKERS_KEY, QUEUE_NAME),
        worker_id,
        LIVE_PREFIX,
        str(LIVE_TTL_MS),
        str(now_ms),
        in_progress_key_prefix,
        str(SCAN_LIMIT),
    )
    return [f.decode() if isinstance(f, bytes) else str(f) for f in freed or []]


async def retire(redis: Any, worker_id: str) -> None:
    """A worker that stops cleanly leaves the set (its jobs ended or were given back)."""
    await redis.srem(WORKERS_KEY, worker_id)
    await redis.delete(LIVE_PREFIX + worker_id)


async def job_states(redis: Any, now_ms: int) -> tuple[int, int, int, float | None]:
    """(ready, running, stranded, the due time in ms of the oldest ready job or None) among the jobs due
    now."""
    due, running, stranded, oldest = await _STATES(
        redis, (WORKERS_KEY, QUEUE_NAME), str(now_ms), LIVE_PREFIX, in_progress_key_prefix, str(SCAN_LIMIT)
    )
    first = float(oldest) if oldest is not None and float(oldest) >= 0 else None
    return max(0, int(due) - int(running) - int(stranded)), int(running), int(stranded), first
