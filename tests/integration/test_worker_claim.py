"""The worker's own Redis round trips per job (issue 28), and what they must still decide: a job runs on
one worker only, a job running or gone is left alone, the try count and the job's definition reach the
job, a job whose definition expired ends as arq ends it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import redis.exceptions
from arq.constants import abort_jobs_ss, in_progress_key_prefix, job_key_prefix, retry_key_prefix
from arq.jobs import Job, JobStatus
from arq.utils import timestamp_ms
from arq.worker import func

from bot.queue.jobs import make_redis
from bot.worker import claims
from bot.worker.claims import ResilientWorker
from bot.worker.redis_watch import RedisWatch
from tests.integration.redis_watch import RoundTrips
from tests.workers import close_when_idle

QUEUE = "steward:test:claim"


async def _until(check: Any, within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


@asynccontextmanager
async def _worker(
    redis_url: str,
    ran: list[tuple[str, int]],
    trips: list[RoundTrips] | None = None,
    gate: asyncio.Event | None = None,
    **options: Any,
) -> AsyncIterator[ResilientWorker]:
    async def note(ctx: dict[str, Any], value: str) -> str:
        ran.append((value, int(ctx["job_try"])))
        await asyncio.sleep(0.001)  # let the other worker's loop run between jobs
        return value

    async def hold(ctx: dict[str, Any], value: str) -> str:
        ran.append((value, int(ctx["job_try"])))
        assert gate is not None
        await gate.wait()
        return value

    redis = make_redis(redis_url)
    if trips is not None:
        trips.append(RoundTrips(redis))  # on a fresh client: it sees every connection the worker makes
    worker = ResilientWorker(
        functions=[func(note, name="note"), func(hold, name="hold")],
        redis_pool=redis,
        queue_name=QUEUE,
        handle_signals=False,
        keep_result=60,
        health_check_interval=3600,
        watch=RedisWatch(redis, name="test"),
        **{"poll_delay": 0.01, **options},
    )
    try:
        yield worker
    finally:
        await close_when_idle(worker)


async def test_a_job_costs_the_worker_two_round_trips_the_poll_with_its_claim_and_start_and_the_end(
    redis_url: str,
) -> None:
    """arq sent seven: the poll, WATCH, EXISTS, ZSCORE and the claim's MULTI/EXEC, the start's transaction
    (the definition, the try count), the end's transaction. Now the poll, the claim and the start are one
    script call."""
    ran: list[tuple[str, int]] = []
    client = make_redis(redis_url)
    try:
        counters: list[RoundTrips] = []
        async with _worker(redis_url, ran, counters) as worker:
            trips = counters[0]
            # The health record and the heartbeat written once; the poll script loaded (NOSCRIPT: its source).
            await worker._poll_iteration()
            worker._last_job_beat = float("inf")  # Steward's last-job gauge (once a second) is not arq's
            counts = []
            for n in range(4):
                await client.enqueue_job("note", f"v{n}", _queue_name=QUEUE, _job_id=f"job-{n}")
                before = trips.count
                await worker._poll_iteration()
                await _until(lambda: all(t.done() for t in worker.tasks.values()))
                counts.append(trips.count - before)
            assert ran == [("v0", 1), ("v1", 1), ("v2", 1), ("v3", 1)]
            assert counts == [2, 2, 2, 2], counts
            # The job's result is kept and the queue, the mark and the try count are gone, as arq leaves them.
            result = await Job("job-1", client, _queue_name=QUEUE).result_info()
            assert result is not None and result.result == "v1" and result.success and result.job_try == 1
            assert not await client.exists(
                in_progress_key_prefix + "job-1", retry_key_prefix + "job-1", job_key_prefix + "job-1"
            )
            assert await client.zcard(QUEUE) == 0
    finally:
        await client.aclose()


async def test_a_job_marked_in_progress_or_gone_from_the_queue_is_not_started(redis_url: str) -> None:
    ran: list[tuple[str, int]] = []
    client = make_redis(redis_url)
    try:
        async with _worker(redis_url, ran) as worker:
            slots = worker.sem._value
            await client.enqueue_job("note", "busy", _queue_name=QUEUE, _job_id="busy")
            await client.set(in_progress_key_prefix + "busy", b"another-worker", px=60_000)
            await worker.start_jobs([b"busy", b"never-queued"])
            assert worker.tasks == {} and ran == []
            # Every slot given back.
            assert worker.job_counter == 0 and worker.sem._value == slots
            assert await client.get(in_progress_key_prefix + "busy") == b"another-worker"
            assert not await client.exists(retry_key_prefix + "busy"), "the try count is not touched"
            assert not await client.exists(in_progress_key_prefix + "never-queued")
            # Once the other worker's mark goes, it runs here, a first try.
            await client.delete(in_progress_key_prefix + "busy")
            await worker.start_jobs([b"busy"])
            await _until(lambda: ran == [("busy", 1)])
    finally:
        await client.aclose()


async def test_a_job_deferred_meanwhile_waits(redis_url: str) -> None:
    ran: list[tuple[str, int]] = []
    client = make_redis(redis_url)
    try:
        async with _worker(redis_url, ran) as worker:
            await client.enqueue_job("note", "later", _queue_name=QUEUE, _job_id="later", _defer_by=60)
            await worker.start_jobs([b"later"])  # read before it was deferred, say
            assert worker.tasks == {} and ran == [] and worker.job_counter == 0
            assert not await client.exists(in_progress_key_prefix + "later")
    finally:
        await client.aclose()


async def test_the_try_count_goes_up_with_each_run_and_an_expired_job_ends_as_arq_ends_it(
    redis_url: str,
) -> None:
    ran: list[tuple[str, int]] = []
    client = make_redis(redis_url)
    try:
        async with _worker(redis_url, ran) as worker:
            await client.enqueue_job("note", "again", _queue_name=QUEUE, _job_id="again")
            await client.set(retry_key_prefix + "again", 2)  # ran twice before (a worker died, say)
            await worker.start_jobs([b"again"])
            await _until(lambda: ran == [("again", 3)])
            # A job still queued whose definition is gone: arq fails it ("job expired") and drops it.
            await client.zadd(QUEUE, {"expired": 1})
            await worker.start_jobs([b"expired"])
            await _until(lambda: not worker.tasks or all(t.done() for t in worker.tasks.values()))
            await _until(lambda: worker.jobs_failed == 1)
            info = await Job("expired", client, _queue_name=QUEUE).result_info()
            assert info is not None and not info.success and "job expired" in str(info.result)
            assert await client.zcard(QUEUE) == 0
            status = await Job("expired", client, _queue_name=QUEUE).status()
            assert status == JobStatus.complete
    finally:
        await client.aclose()


async def test_two_workers_on_one_queue_run_each_job_once(redis_url: str) -> None:
    ran: list[tuple[str, int]] = []
    client = make_redis(redis_url)
    jobs = 300
    try:
        async with (
            _worker(redis_url, ran, burst=True, max_jobs=4) as one,
            _worker(redis_url, ran, burst=True, max_jobs=4) as two,
        ):
            for n in range(jobs):
                await client.enqueue_job("note", f"j{n}", _queue_name=QUEUE, _job_id=f"j{n}")
            async with asyncio.timeout(60):
                await asyncio.gather(one.main(), two.main())
            values = sorted(v for v, _ in ran)
            assert len(values) == jobs and len(set(values)) == jobs, "each job ran exactly once"
            assert {t for _, t in ran} == {1}
            assert one.jobs_complete + two.jobs_complete == jobs
            assert one.jobs_complete > 0 and two.jobs_complete > 0, "both workers took jobs"
    finally:
        await client.aclose()


class _LostAnswer:
    """A script call that runs in Redis but whose answer never comes back (the connection drops)."""

    def __init__(self, script: Any) -> None:
        self.script = script
        self.answers: list[Any] = []

    async def __call__(self, *args: Any) -> Any:
        self.answers.append(await self.script(*args))
        raise redis.exceptions.ConnectionError("Connection closed by server.")


async def test_a_poll_whose_answer_is_lost_leaves_no_mark_and_uses_no_try(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redis goes away while the poll's script ran: once it answers again, the marks the poll may have set on
    jobs this worker never started are dropped and their tries given back, so they run now, a first try;
    the mark of the job the worker is running stays."""
    ran: list[tuple[str, int]] = []
    gate = asyncio.Event()
    client = make_redis(redis_url)
    try:
        async with _worker(redis_url, ran, gate=gate) as worker:
            await client.enqueue_job("hold", "running", _queue_name=QUEUE, _job_id="running")
            await worker._poll_iteration()
            await _until(lambda: ran == [("running", 1)])
            await client.enqueue_job("note", "lost", _queue_name=QUEUE, _job_id="lost")
            lost = _LostAnswer(claims._POLL)
            monkeypatch.setattr(claims, "_POLL", lost)
            await worker._poll_iteration()  # waits for Redis, which answers: the worker carries on
            [(claimed, _, _)] = lost.answers
            assert [row[0] for row in claimed] == [b"lost"] and "lost" not in worker.tasks
            assert not await client.exists(in_progress_key_prefix + "lost")
            assert int(await client.get(retry_key_prefix + "lost") or 0) == 0
            assert await client.get(in_progress_key_prefix + "running") == worker.worker_id.encode()
            monkeypatch.undo()
            await worker._poll_iteration()
            await _until(lambda: ("lost", 1) in ran)
            gate.set()
            await _until(lambda: all(t.done() for t in worker.tasks.values()))
            assert sorted(ran) == [("lost", 1), ("running", 1)]
    finally:
        await client.aclose()


async def test_a_claim_whose_answer_is_lost_leaves_no_mark_and_uses_no_try(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[tuple[str, int]] = []
    client = make_redis(redis_url)
    try:
        async with _worker(redis_url, ran) as worker:
            slots = worker.sem._value
            await client.enqueue_job("note", "lost", _queue_name=QUEUE, _job_id="lost")
            lost = _LostAnswer(claims._CLAIM)
            monkeypatch.setattr(claims, "_CLAIM", lost)
            with pytest.raises(redis.exceptions.ConnectionError):
                await worker.start_jobs([b"lost"])
            assert lost.answers[0] != 0, "the claim ran"
            assert await client.get(in_progress_key_prefix + "lost") == worker.worker_id.encode()
            assert worker.job_counter == 0 and worker.sem._value == slots
            await worker._recover()  # what the worker does once Redis answers again
            assert not await client.exists(in_progress_key_prefix + "lost")
            assert int(await client.get(retry_key_prefix + "lost") or 0) == 0
            monkeypatch.undo()
            await worker.start_jobs([b"lost"])
            await _until(lambda: ran == [("lost", 1)])
    finally:
        await client.aclose()


async def test_a_job_aborted_before_it_starts_ends_aborted_when_the_worker_allows_aborts(
    redis_url: str,
) -> None:
    """Steward's worker does not allow aborts; one that does still ends a job aborted before its start."""
    ran: list[tuple[str, int]] = []
    client = make_redis(redis_url)
    try:
        async with _worker(redis_url, ran, allow_abort_jobs=True) as worker:
            await client.enqueue_job("note", "kept", _queue_name=QUEUE, _job_id="kept")
            await client.enqueue_job("note", "dropped", _queue_name=QUEUE, _job_id="dropped")
            await client.zadd(abort_jobs_ss, {"dropped": timestamp_ms()})
            await worker._poll_iteration()
            await _until(lambda: worker.jobs_complete + worker.jobs_failed == 2)
            assert ran == [("kept", 1)]
            info = await Job("dropped", client, _queue_name=QUEUE).result_info()
            assert info is not None and not info.success and isinstance(info.result, asyncio.CancelledError)
            assert not await client.zrange(abort_jobs_ss, 0, -1)
    finally:
        await client.aclose()


async def test_a_backlog_fills_each_slot_as_it_frees_not_a_poll_delay_later(redis_url: str) -> None:
    """arq claims one job per round trip and keeps on while a slot is free, so quick jobs waiting in the queue
    fill the slots their forerunners give back while it claims; a poll that claims a whole batch at once
    waits for a slot to free within the poll delay instead, so a backlog never waits a poll delay per batch
    (arq's own loop passes this only when its jobs end within its claims' round trips)."""
    ran: list[tuple[str, int]] = []
    client = make_redis(redis_url)
    try:
        async with _worker(redis_url, ran, max_jobs=2, poll_delay=30) as worker:
            for n in range(20):
                await client.enqueue_job("note", f"b{n}", _queue_name=QUEUE, _job_id=f"b{n}")
            async with asyncio.timeout(20):  # less than one poll delay (a loaded machine: generous)
                await worker._poll_iteration()
                # Every job's task ended (its finish written), not only its function: closing a worker
                # cancels a job still finishing, and arq's close then raises its CancelledError.
                await _until(
                    lambda: len(ran) == 20 and all(task.done() for task in worker.tasks.values()), within=20
                )
            assert sorted(v for v, _ in ran) == sorted(f"b{n}" for n in range(20))
    finally:
        await client.aclose()


async def test_a_retry_is_due_when_it_asked_on_redis_clock_even_from_a_worker_whose_clock_is_ahead(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """arq counts a Retry's due time from the job's score and its own clock: a worker 60 s ahead deferred a
    retry by 65 s instead of 5 (issue 40 item 5). The worker reads arq's times on Redis's clock too."""
    import types

    import arq.utils
    import arq.worker
    from arq.worker import Retry

    from bot.queue import clock

    tries: list[int] = []

    async def flaky(ctx: dict[str, Any]) -> str:
        tries.append(int(ctx["job_try"]))
        raise Retry(defer=5)

    client = make_redis(redis_url)
    redis = make_redis(redis_url)
    monkeypatch.setattr(arq.worker, "timestamp_ms", arq.worker.timestamp_ms)  # given back after the test
    try:
        await client.enqueue_job("flaky", _queue_name=QUEUE, _job_id="retry-1")
        ahead = types.SimpleNamespace(time=lambda: time.time() + 60.0)
        monkeypatch.setattr(arq.utils, "time", ahead.time)  # arq's own clock in this process
        monkeypatch.setattr(clock, "time", ahead)
        assert await clock.measure(redis, "worker") > 59.0
        worker = ResilientWorker(
            functions=[func(flaky, name="flaky")],
            redis_pool=redis,
            queue_name=QUEUE,
            handle_signals=False,
            health_check_interval=3600,
            watch=RedisWatch(redis, name="test"),
            poll_delay=0.01,
        )
        try:
            await worker._poll_iteration()
            await _until(lambda: bool(tries) and all(t.done() for t in worker.tasks.values()))
        finally:
            await close_when_idle(worker)
        seconds, micros = await client.time()
        redis_now = int(seconds) + int(micros) / 1e6
        score = await client.zscore(QUEUE, "retry-1")
        assert tries == [1] and score is not None
        assert abs(score / 1000 - (redis_now + 5.0)) < 2.0, f"due in {score / 1000 - redis_now:.1f} s, not 5"
    finally:
        monkeypatch.undo()
        await clock.measure(redis, "worker")
        await client.delete(QUEUE)
        await client.aclose()
        await redis.aclose()
