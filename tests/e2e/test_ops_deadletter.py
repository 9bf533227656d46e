"""The dead-letter list is capped in bytes as well as entries (issue 25): sustained failures of large events
cannot fill Redis. Past a cap the oldest entries go, counted in `steward_dead_dropped_total{reason}`; the
newest is kept even when it alone is over the byte cap; `drop` and `retry` give the bytes back; a list
written before the byte count existed is repaired on the next add. Real Redis."""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict

from bot.events.event import Event
from bot.forge import RepoRef
from bot.queue.dead_letters import DEAD_BYTES_KEY, DEAD_KEY, DeadJob, DeadLetters
from bot.queue.jobs import make_redis
from bot.telemetry import metrics


def _event(n: int) -> Event:
    return Event(
        forge="github",
        delivery_id=f"d-{n}",
        name="issues",
        action="edited",
        sender="s",
        repo=RepoRef("o", "r"),
    )


def _dropped(reason: str) -> float:
    return metrics.REGISTRY.get_sample_value("steward_dead_dropped_total", {"reason": reason}) or 0.0


def test_the_dead_list_is_capped_in_bytes_oldest_first_with_a_metric(redis_url: str) -> None:
    async def run() -> None:
        redis = make_redis(redis_url)
        dead = DeadLetters(redis, max_entries=100, max_bytes=10_000)
        before = _dropped("bytes")
        try:
            for n in range(10):
                await dead.add(
                    job_id=f"job-{n}", event=_event(n), raw_event="x" * 3000, exc=RuntimeError("no"), tries=1
                )
            kept = [e.job_id for e in await dead.list()]
            assert kept == ["job-7", "job-8", "job-9"], kept
            size = int(await redis.get(DEAD_BYTES_KEY))
            assert size == sum(len(v) for v in (await redis.hgetall(DEAD_KEY)).values()) and size <= 10_000
            assert _dropped("bytes") == before + 7
            assert metrics.REGISTRY.get_sample_value("steward_dead_bytes") == size

            await dead.add(
                job_id="huge", event=_event(99), raw_event="y" * 20_000, exc=RuntimeError(), tries=1
            )
            assert [e.job_id for e in await dead.list()] == ["huge"], "the newest stays, alone"

            assert await dead.drop("huge") and not await dead.drop("huge")
            assert int(await redis.get(DEAD_BYTES_KEY)) == 0 and await dead.count() == 0
        finally:
            await redis.aclose()

    asyncio.run(run())


def test_a_list_without_its_byte_count_is_repaired_and_capped_by_entries(redis_url: str) -> None:
    async def run() -> None:
        redis = make_redis(redis_url)
        try:
            for n in range(5):  # as an older Steward wrote them: the hash only
                old = DeadJob(
                    f"old-{n}", f"d{n}", "gitea", "o/r", "issues.edited", "e", "E", float(n), 1, "{}"
                )
                await redis.hset(DEAD_KEY, old.job_id, json.dumps(asdict(old)))
            dead = DeadLetters(redis, max_entries=3)
            before = _dropped("entries")
            await dead.add(job_id="new", event=_event(1), raw_event="{}", exc=RuntimeError(), tries=1)
            assert [e.job_id for e in await dead.list()] == ["old-3", "old-4", "new"]
            assert _dropped("entries") == before + 3
            size = int(await redis.get(DEAD_BYTES_KEY))
            assert size == sum(len(v) for v in (await redis.hgetall(DEAD_KEY)).values())
        finally:
            await redis.aclose()

    asyncio.run(run())


def test_one_command_is_one_dead_letter_whichever_jobs_ran_it(redis_url: str) -> None:
    """A comment's commands run by its delivery and again by a catch-up that found the comment unanswered
    (while the delivery was still running, or already parked) are one subject: the job parked last replaces
    the one parked before, with its bytes; another comment, or an event without a subject, is kept apart. A
    pointer to an entry dropped since replaces nothing."""

    async def run() -> None:
        redis = make_redis(redis_url)
        dead = DeadLetters(redis)
        try:
            subject = "steward:comment-done:github:o/r:7"
            for job_id in ("delivery:github:d-1", "delivery:github:catch-up:github:o/r:7"):
                await dead.add(
                    job_id=job_id,
                    event=_event(1),
                    raw_event="{}",
                    exc=RuntimeError(),
                    tries=1,
                    subject=subject,
                )
            await dead.add(job_id="other", event=_event(2), raw_event="{}", exc=RuntimeError(), tries=1)
            await dead.add(
                job_id="another-comment",
                event=_event(3),
                raw_event="{}",
                exc=RuntimeError(),
                tries=1,
                subject="steward:comment-done:github:o/r:8",
            )
            kept = [e.job_id for e in await dead.list()]
            assert kept == ["delivery:github:catch-up:github:o/r:7", "other", "another-comment"], kept
            assert await dead.count() == 3
            assert await dead.parked([subject, "steward:comment-done:github:o/r:9"]) == [True, False]
            size = int(await redis.get(DEAD_BYTES_KEY))
            assert size == sum(len(v) for v in (await redis.hgetall(DEAD_KEY)).values())

            assert await dead.drop("delivery:github:catch-up:github:o/r:7")
            assert await dead.parked([subject]) == [False], "dropped: the catch-up may run it again"
            await dead.add(
                job_id="retried",
                event=_event(1),
                raw_event="{}",
                exc=RuntimeError(),
                tries=1,
                subject=subject,
            )
            assert sorted(e.job_id for e in await dead.list()) == ["another-comment", "other", "retried"]
        finally:
            await redis.aclose()

    asyncio.run(run())
