"""The worker's claim loop: arq's worker with every Redis call of its own loop (polling, starting a job,
recording a job's end, the health record, cron) made to wait for Redis instead of raising
(``bot.worker.redis_watch``), and with fewer of them: the poll, the claims and the starts of the jobs it
finds are one script call (arq sends a command for the poll, four round trips per claim and a transaction
per start), so a job costs the worker two round trips, its poll and its end.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
import uuid
from typing import Any, cast

import arq.worker
from arq.connections import ArqRedis
from arq.constants import abort_jobs_ss, in_progress_key_prefix, job_key_prefix, retry_key_prefix
from arq.worker import Worker

from bot.queue import clock, gauges, liveness
from bot.queue.locks import LuaScript, pending_releases, release_pending
from bot.telemetry import logs
from bot.worker.redis_watch import REDIS_UNAVAILABLE, RedisWatch, Stopped

log = logs.get("steward.outage")
arq_log = logging.getLogger("arq.worker")  # what arq itself logs about a job it did not claim

# Set by every running worker every few seconds, kept two minutes: a worker that starts and finds it gone
# knows that no worker ran for a while (and events may have been lost with the receiver).
ALIVE_KEY = "steward:alive"
ALIVE_SECONDS = 120
_ALIVE_EVERY = 10.0


# A job's claim and the start of its run, in one atomic call. The claim is arq's (0.28): it is taken when no
# in-progress mark is there and the job is still in the queue, not deferred past now (arq decides this with
# WATCH on the mark, EXISTS, ZSCORE, then MULTI PSETEX EXEC). The start is what arq's run_job reads first, in
# one transaction: the definition (GET), the try count (INCR, EXPIRE 88400) and, when the worker allows
# aborts, whether the job was aborted (ZREM). KEYS: the mark, the queue, the definition, the try count, the
# abort set; ARGV: the job's id, now (ms), the mark's life (ms), the mark (this worker's id), aborts (1/0).
# 0 when not claimed; else the score, the try, the abort mark's removal and the definition (nil: expired).
_CLAIM = LuaScript("""
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local score = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not score or tonumber(score) == 0 or tonumber(score) > tonumber(ARGV[2]) then return 0 end
redis.call('PSETEX', KEYS[1], ARGV[3], ARGV[4])
local try = redis.call('INCR', KEYS[4])
redis.call('EXPIRE', KEYS[4], 88400)
local aborted = 0
if ARGV[5] == '1' then aborted = redis.call('ZREM', KEYS[5], ARGV[1]) end
return {score, try, aborted, redis.call('GET', KEYS[3])}
""")

# arq's poll (ZRANGEBYSCORE: the ids due by now, from the read offset, at most the read limit) and, in the
# same atomic call, ``_CLAIM`` for each of them in turn until the worker's free slots are taken (arq claims
# one by one while it has a slot: a job running elsewhere takes none). KEYS: the queue; ARGV: now (ms), the
# offset, the limit, the free slots, the mark's life (ms), the mark, aborts (1/0), then arq's key prefixes
# (the mark, the definition, the try count) and its abort set. Answers the claimed jobs (id, score, try,
# the abort mark's removal, the definition), the ids left alone (running elsewhere) and how many ids read
# were not looked at (the slots ran out first).
_POLL = LuaScript("""
local now = tonumber(ARGV[1])
local slots = tonumber(ARGV[4])
local claimed, skipped = {}, {}
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', ARGV[2], ARGV[3])
for _, id in ipairs(ids) do
  local mark = ARGV[8] .. id
  local score = redis.call('ZSCORE', KEYS[1], id)
  if redis.call('EXISTS', mark) == 1 or not score or tonumber(score) == 0 or tonumber(score) > now then
    skipped[#skipped + 1] = id
  else
    redis.call('PSETEX', mark, ARGV[5], ARGV[6])
    local retry = ARGV[10] .. id
    local try = redis.call('INCR', retry)
    redis.call('EXPIRE', retry, 88400)
    local aborted = 0
    if ARGV[7] == '1' then aborted = redis.call('ZREM', ARGV[11], id) end
    claimed[#claimed + 1] = {id, score, try, aborted, redis.call('GET', ARGV[9] .. id)}
    if #claimed >= slots then
      return {claimed, skipped, #ids - #claimed - #skipped}
    end
  end
end
return {claimed, skipped, 0}
""")

# Once Redis is back, for a job this worker may have claimed but did not start (the answer was lost): drops
# its in-progress mark if this worker holds it, and takes back the try the claim counted with it (the mark
# and the count are written together), so an outage never uses up a try. KEYS: the mark, the try count;
# ARGV: the mark (this worker's id). Answers 1 when it dropped a mark.
_FORGET = LuaScript("""
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('DECR', KEYS[2]) end
return 1
""")

# The same after a poll whose answer was lost: the jobs it may have claimed are among those due by its time,
# still in the queue (no one else can start them while the mark is there). For each of them but the ones
# this worker runs. KEYS: the queue; ARGV: the poll's time (ms), the mark, arq's prefixes of the mark and
# of the try count, then the ids of the jobs this worker runs. Answers how many marks it dropped.
_FORGET_POLL = LuaScript("""
local running = {}
for i = 5, #ARGV do running[ARGV[i]] = true end
local dropped = 0
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])) do
  local mark = ARGV[3] .. id
  if not running[id] and redis.call('GET', mark) == ARGV[2] then
    redis.call('DEL', mark)
    local retry = ARGV[4] .. id
    if redis.call('EXISTS', retry) == 1 then redis.call('DECR', retry) end
    dropped = dropped + 1
  end
end
return dropped
""")

# The claim's reads, for the run_job of this task (see ResilientWorker.pool).
_START: contextvars.ContextVar[_ClaimedStart | None] = contextvars.ContextVar(
    "steward_claimed_start", default=None
)


class _ClaimedStart:
    """Stands in for the pool and the pipeline arq's run_job opens first (GET the definition, INCR and
    EXPIRE the try count, ZREM the abort mark), and answers with what the claim script read. It checks that
    run_job asks exactly that, so an arq that changed its run_job fails loudly rather than running a job
    on a stale reading."""

    def __init__(
        self, job_id: str, abort: bool, definition: bytes | None, job_try: int, aborted: int
    ) -> None:
        self._expected: list[tuple[Any, ...]] = [
            ("get", job_key_prefix + job_id),
            ("incr", retry_key_prefix + job_id),
            ("expire", retry_key_prefix + job_id, 88400),
        ]
        self._answers: list[Any] = [definition, job_try, True]
        if abort:
            self._expected.append(("zrem", abort_jobs_ss, job_id))
            self._answers.append(aborted)
        self._asked: list[tuple[Any, ...]] = []

    def pipeline(self, transaction: bool = True) -> _ClaimedStart:
        _START.set(None)  # used once: the job's own calls, and arq's after this, go to Redis
        return self

    async def __aenter__(self) -> _ClaimedStart:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    def get(self, key: str) -> None:
        self._asked.append(("get", key))

    def incr(self, key: str) -> None:
        self._asked.append(("incr", key))

    def expire(self, key: str, seconds: int) -> None:
        self._asked.append(("expire", key, seconds))

    def zrem(self, key: str, *members: str) -> None:
        self._asked.append(("zrem", key, *members))

    async def execute(self) -> list[Any]:
        if self._asked != self._expected:
            raise RuntimeError(f"arq's run_job no longer starts as the claim script expects: {self._asked}")
        return self._answers


class ResilientWorker(Worker):
    """arq's worker, waiting out Redis outages wherever its own loop talks to Redis."""

    def __init__(self, *args: Any, watch: RedisWatch, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # arq's own times (a Retry's due time, counted from the job's score; its durations) on Redis's clock
        # too, as the poll and the claims read it: a worker whose clock is off defers a retry by what it
        # asked, not by its skew (the local clock while the two agree within a second: bot.queue.clock).
        setattr(arq.worker, "timestamp_ms", clock.now_ms)  # noqa: B010 (arq does not export the name)
        self.watch = watch
        self.worker_id = f"steward-worker:{uuid.uuid4().hex}"
        self._unstarted: set[str] = set()
        self._claimed: dict[str, _ClaimedStart] = {}
        self._slot_freed = asyncio.Event()
        self._lost_poll = 0  # the time of the latest poll whose answer was lost, until its marks are dropped
        self._alive_at = float("-inf")
        self._live_at = float("-inf")
        self._last_job_beat = float("-inf")
        watch.on_back.append(self._recover)

    async def record_health(self) -> None:
        await super().record_health()
        now = time.monotonic()
        if now - self._live_at >= liveness.LIVE_EVERY:
            self._live_at = now
            freed = await liveness.renew_and_reap(self.pool, self.worker_id, clock.now_ms())
            await clock.measure(self.pool, "worker")
            if freed:
                log.warning(
                    "a worker stopped without finishing its jobs (killed?); they run again now",
                    jobs=len(freed),
                    first=freed[0],
                )
        if now - self._alive_at >= _ALIVE_EVERY:
            self._alive_at = now
            await self.pool.set(ALIVE_KEY, self.worker_id, ex=ALIVE_SECONDS)
            # The heartbeat the receiver's /readyz and steward_worker_heartbeat_age_seconds read.
            await gauges.beat(self.pool)

    async def main(self) -> None:
        # Redis down at start-up, or in the few calls before the polling loop: wait and start again (the
        # start-up hook is idempotent).
        while True:
            try:
                await super().main()
                return
            except REDIS_UNAVAILABLE as exc:
                await self._wait(exc)

    async def _poll_iteration(self) -> None:
        try:
            if pending_releases():
                await self._recover()  # a lock's release failed while this loop never met the outage
            # arq's _poll_iteration (0.28), its poll and start_jobs made one script call (``_poll``).
            if not await self._poll():
                return
            if self.allow_abort_jobs:
                await self._cancel_aborted_jobs()
            for job_id, task in list(self.tasks.items()):
                if task.done():
                    del self.tasks[job_id]
                    task.result()  # an error in run_job surfaces here, as in arq
            await self.heart_beat()
        except REDIS_UNAVAILABLE as exc:
            await self._wait(exc)

    async def _poll(self) -> bool:
        """arq's poll and its ``start_jobs`` in one round trip (``_POLL``): the ids due now, and the claim
        and the start of as many as the worker has free slots for (at most the read limit per iteration,
        as arq). False when a burst is done (arq then ends the iteration)."""
        count = self.queue_read_limit
        if self.burst and self.max_burst_jobs >= 0:
            burst_jobs_remaining = self.max_burst_jobs - self._jobs_started()
            if burst_jobs_remaining < 1:
                return False
            count = min(burst_jobs_remaining, count)
        if not self.allow_pick_jobs or self.job_counter >= self.max_jobs:
            return True
        started = 0
        deadline: float | None = None
        while True:
            now = clock.now_ms()  # what is due, on Redis's clock (bot.queue.clock)
            try:
                claimed, skipped, unread = await _POLL(
                    self.pool,
                    (self.queue_name,),
                    str(now),
                    str(self._queue_read_offset),
                    str(count),
                    str(min(self.max_jobs - self.job_counter, count - started)),
                    str(int(self.in_progress_timeout_s * 1000)),
                    self.worker_id,
                    "1" if self.allow_abort_jobs else "0",
                    in_progress_key_prefix,
                    job_key_prefix,
                    retry_key_prefix,
                    abort_jobs_ss,
                )
            except REDIS_UNAVAILABLE:
                self._lost_poll = max(self._lost_poll, now)  # it may have claimed jobs: see _forget
                raise
            for job_id_b in skipped:
                arq_log.debug("job %s already running elsewhere", job_id_b.decode())
            for job_id_b, score, job_try, aborted, definition in claimed:
                # A free slot was counted for each (only this loop takes slots; finished jobs give them back).
                await self.sem.acquire()
                self.job_counter += 1
                self._start(job_id_b.decode(), score, job_try, aborted, definition)
            started += len(claimed)
            if not unread or started >= count:
                return True
            # Jobs are waiting and every slot is taken. arq claims one job per round trip and goes on with
            # its list while a slot is free, so the slots jobs give back meanwhile are filled in the same
            # poll: so here, a slot freed within the poll delay is filled at once (the iteration, with its
            # health record and cron, still ends within a poll delay of waiting).
            self._slot_freed.clear()
            if self.job_counter >= self.max_jobs:
                if deadline is None:
                    deadline = asyncio.get_running_loop().time() + self.poll_delay_s
                try:
                    async with asyncio.timeout_at(deadline):
                        await self._slot_freed.wait()
                except TimeoutError:
                    return True

    def _release_sem_dec_counter_on_complete(self) -> None:
        super()._release_sem_dec_counter_on_complete()
        self._slot_freed.set()

    def _start(self, job_id: str, score: bytes, job_try: int, aborted: int, definition: bytes | None) -> None:
        self._claimed[job_id] = _ClaimedStart(job_id, self.allow_abort_jobs, definition, job_try, aborted)
        task = self.loop.create_task(self.run_job(job_id, int(float(score))))
        task.add_done_callback(lambda _: self._release_sem_dec_counter_on_complete())
        self.tasks[job_id] = task

    async def start_jobs(self, job_ids: list[bytes]) -> None:
        """arq's ``start_jobs`` (0.28), with three changes. The claim and the start of the job's run are one
        script call (``_CLAIM``), where arq sends WATCH, EXISTS, ZSCORE and a MULTI/PSETEX/EXEC to claim the
        job and then a transaction that reads its definition and counts the try: one round trip instead
        of five, deciding what arq's watched transaction decides. The in-progress mark holds this worker's
        id, so once Redis is back the worker can take back a mark it set for a job it never started
        (``_forget``); and a slot taken for a job that could not start is given back, so an outage never
        leaves the worker with fewer slots."""
        for job_id_b in job_ids:
            await self.sem.acquire()
            if self.job_counter >= self.max_jobs:
                self.sem.release()
                return
            self.job_counter += 1
            job_id = job_id_b.decode()
            started = False
            try:
                claimed = await _CLAIM(
                    self.pool,
                    (
                        in_progress_key_prefix + job_id,
                        self.queue_name,
                        job_key_prefix + job_id,
                        retry_key_prefix + job_id,
                        abort_jobs_ss,
                    ),
                    job_id,
                    str(clock.now_ms()),
                    str(int(self.in_progress_timeout_s * 1000)),
                    self.worker_id,
                    "1" if self.allow_abort_jobs else "0",
                )
                if not claimed:
                    arq_log.debug("job %s already running elsewhere", job_id)
                    continue  # running elsewhere, finished, or deferred meanwhile
                self._start(job_id, *claimed)
                started = True
            except REDIS_UNAVAILABLE as exc:
                self._unstarted.add(job_id)
                raise exc from None
            finally:
                if not started:
                    self.job_counter -= 1
                    self.sem.release()

    @property
    def pool(self) -> ArqRedis:
        # The first thing arq's run_job asks of the pool is the pipeline that reads the job's definition
        # and counts its try; for a job this worker claimed, the claim read them already (``_ClaimedStart``).
        start = _START.get()
        return cast(ArqRedis, self._pool) if start is None else cast(ArqRedis, start)

    async def _forget(self) -> None:
        """Once Redis is back: drop the in-progress marks this worker set for jobs it could not start (the
        mark may or may not have been written), so they run again now rather than when the mark expires.
        For a poll whose answer was lost, those are the marks it holds on jobs due by then that it does
        not run (``_FORGET_POLL``)."""
        for job_id in list(self._unstarted):
            keys = (in_progress_key_prefix + job_id, retry_key_prefix + job_id)
            await _FORGET(self.pool, keys, self.worker_id)
            self._unstarted.discard(job_id)
        if self._lost_poll:
            # Every poll lost before it, too: they can only have claimed jobs due by then.
            await _FORGET_POLL(
                self.pool,
                (self.queue_name,),
                str(self._lost_poll),
                self.worker_id,
                in_progress_key_prefix,
                retry_key_prefix,
                *self.tasks,
            )
            self._lost_poll = 0

    async def run_job(self, job_id: str, score: int) -> None:
        claimed = self._claimed.pop(job_id, None)
        if claimed is not None:
            _START.set(claimed)  # in this job's task only; used up by run_job's first call
        try:
            await super().run_job(job_id, score)
        except REDIS_UNAVAILABLE as exc:
            # The job's definition could not be read, so it did not run: once Redis is back, its
            # in-progress mark goes, and the next poll starts it again (a re-run writes nothing twice).
            self._unstarted.add(job_id)
            await self._wait(exc)

    async def finish_job(self, *args: Any, **kwargs: Any) -> None:
        # A job's end (its result, its removal from the queue, or its deferral) is recorded once Redis is
        # back; the transaction is safe to repeat.
        await self._retry_redis(lambda: super(ResilientWorker, self).finish_job(*args, **kwargs))
        # The last job's time is a gauge read in seconds: written at most once a second, not per job.
        now = time.monotonic()
        if now - self._last_job_beat >= 1.0:
            with contextlib.suppress(*REDIS_UNAVAILABLE):
                await gauges.beat(self.pool, gauges.LAST_JOB_KEY)
                self._last_job_beat = now

    async def finish_failed_job(self, job_id: str, result_data: bytes | None) -> None:
        await self._retry_redis(lambda: super(ResilientWorker, self).finish_failed_job(job_id, result_data))

    async def _retry_redis(self, call: Any) -> None:
        while True:
            try:
                await call()
                return
            except REDIS_UNAVAILABLE as exc:
                try:
                    await self.watch.wait(exc)
                except Stopped:
                    log.warning("stopping while Redis is unreachable; the job will run again")
                    return

    async def _wait(self, exc: BaseException) -> None:
        try:
            await self.watch.wait(exc)
        except Stopped:
            raise asyncio.CancelledError from exc
        with contextlib.suppress(*REDIS_UNAVAILABLE):
            await self._recover()

    async def _recover(self) -> None:
        """What an outage left behind: locks not given back, in-progress marks of jobs never started."""
        await release_pending(self.pool)
        if self._unstarted or self._lost_poll:
            await self._forget()

    async def close(self) -> None:
        self.watch.stop()
        await self._let_cut_off_jobs_end()
        with contextlib.suppress(*REDIS_UNAVAILABLE):
            await liveness.retire(self._pool, self.worker_id)
        try:
            await super().close()
        except REDIS_UNAVAILABLE:
            # Stopping while Redis is gone: the health key cannot be deleted (it expires); the shutdown
            # hook still runs and the pool is closed.
            if self.on_shutdown:
                await self.on_shutdown(self.ctx)
            if self._pool is not None:
                await self._pool.close(close_connection_pool=True)
                self._pool = None

    async def _let_cut_off_jobs_end(self, within: float = 10.0) -> None:
        """A shutdown that cut jobs off (SIGTERM: arq cancels what is still running after
        ``job_completion_wait``, then stops the worker) leaves their tasks ending: each still writes its
        re-queue and gives its in-progress mark back. arq's ``close()`` would cancel them a second time
        there, and re-raise that CancelledError before closing anything: the Redis pool stayed open and
        ``on_shutdown`` (the forge sessions) never ran. They are let end first (up to ``within`` seconds);
        a task that ended cancelled has nothing left for ``close()`` to await."""
        ending = [task for task in self.tasks.values() if not task.done() and task.cancelling()]
        if ending:
            await asyncio.wait(ending, timeout=within)
        for job_id, task in list(self.tasks.items()):
            if task.done() and task.cancelled():
                del self.tasks[job_id]
