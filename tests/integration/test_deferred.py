"""Work for later (``bot.queue.deferred``) on a real Redis and a real arq worker: an event queued for later
runs once per job id, after its delay; claims are first-come; the repositories Steward has heard from are kept
and forgotten; a periodic job's lingering in-progress mark does not count as work outstanding."""

from __future__ import annotations

import asyncio
import time
import uuid

import redis
from arq.constants import in_progress_key_prefix, result_key_prefix

from bot.demo.threads import jobs_outstanding
from bot.events.event import Event, MilestoneSnapshot
from bot.forge import RepoRef
from bot.queue.deferred import Deferred, SeenRepositories
from bot.queue.jobs import QUEUE_NAME, make_redis
from tests.integration.redis_watch import commands_on

REPO = RepoRef("o", "r")


def event(action: str = "steward-refresh") -> Event:
    return Event(
        forge="gitea",
        delivery_id="later-1",
        name="milestone",
        action=action,
        sender="",
        repo=REPO,
        milestone=MilestoneSnapshot(1, "", ""),
        extra={"create": "1"},
    )


async def test_an_event_is_queued_once_per_job_id_after_its_delay(redis_url: str) -> None:
    client = make_redis(redis_url)
    try:
        deferred = Deferred(client)
        before = time.time()
        assert await deferred.run_later(event(), delay=30, job_id="milestones:refresh:1")
        assert not await deferred.run_later(event(), delay=1, job_id="milestones:refresh:1"), "queued once"
        assert await deferred.run_later(event(), delay=0, job_id="milestones:refresh:2")
        scores = dict(await client.zrange(QUEUE_NAME, 0, -1, withscores=True))
        assert set(scores) == {b"later:milestones:refresh:1", b"later:milestones:refresh:2"}
        assert before + 29 <= scores[b"later:milestones:refresh:1"] / 1000 <= time.time() + 31
        [job] = [j for j in await client.queued_jobs() if j.job_id == "later:milestones:refresh:1"]
        assert job.function == "process_event" and Event.from_json(job.args[0]) == event()
    finally:
        await client.aclose()


async def test_a_claim_is_first_come_and_lapses(redis_url: str) -> None:
    client = make_redis(redis_url)
    try:
        deferred = Deferred(client)
        results = await asyncio.gather(*(deferred.claim("refresh:o/r:1", ttl=0.2) for _ in range(20)))
        assert sorted(results) == [False] * 19 + [True]
        await asyncio.sleep(0.3)
        assert await deferred.claim("refresh:o/r:1", ttl=0.2), "a claim lapses with its lifetime"
    finally:
        await client.aclose()


async def test_a_marked_time_is_kept_replaced_or_kept_first(redis_url: str) -> None:
    """The milestone gate's "last poll" and "watching since" (``handlers.milestones.watch_times``)."""
    client = make_redis(redis_url)
    try:
        deferred = Deferred(client)
        assert await deferred.marked("polled:o/r") is None
        await deferred.mark("polled:o/r", 100.5, ttl=60)
        await deferred.mark("polled:o/r", 200.25, ttl=60)
        assert await deferred.marked("polled:o/r") == 200.25
        await deferred.mark("since:o/r", 100.0, ttl=60, only_new=True)
        await deferred.mark("since:o/r", 300.0, ttl=60, only_new=True)
        assert await deferred.marked("since:o/r") == 100.0, "only_new keeps the first"
        assert 0 < await client.ttl("steward:mark:since:o/r") <= 60
    finally:
        await client.aclose()


async def test_the_repositories_heard_from_are_kept_per_forge_and_forgotten_when_old(redis_url: str) -> None:
    client = make_redis(redis_url)
    try:
        seen = SeenRepositories(client)
        await seen.note("gitea", REPO)
        await seen.note("gitea", RepoRef("o", "other"))
        await seen.note("github", RepoRef("g", "h"))
        await seen.note("gitea", REPO)
        assert set(await seen.recent("gitea")) == {REPO, RepoRef("o", "other")}
        assert await seen.recent("github") == [RepoRef("g", "h")]
        await client.zadd(
            "steward:repos:gitea", {"o/old": time.time() - 40 * 24 * 3600, "not a repo": time.time()}
        )
        assert set(await seen.recent("gitea")) == {REPO, RepoRef("o", "other")}
        assert await client.zscore("steward:repos:gitea", "o/old") is None, "forgotten"
    finally:
        await client.aclose()


async def test_a_renamed_repository_stays_one_entry_under_its_new_name(redis_url: str) -> None:
    """Kept by id: a rename or a transfer (the same id, another name) replaces the name, and a repository
    an earlier version noted by name is noted by id at its next event."""
    client = make_redis(redis_url)
    try:
        seen = SeenRepositories(client)
        await client.zadd("steward:repos:github", {"o/r": time.time()})  # as an earlier version noted it
        await seen.note("github", RepoRef("o", "r", 41))
        await seen.note("github", RepoRef("org", "r-renamed", 41))
        await seen.note("github", RepoRef("o", "r", 42))  # a new repository took the old name
        found = await seen.recent("github")
        assert [(r.full_name, r.id) for r in found] == [("o/r", 42), ("org/r-renamed", 41)]
    finally:
        await client.aclose()


def test_a_finished_periodic_jobs_mark_is_not_work_outstanding(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    try:
        assert jobs_outstanding(client) == 0
        # arq keeps a cron job's in-progress mark a minute after it ran, beside its result.
        client.set(in_progress_key_prefix + "periodic:milestones:1", b"1")
        client.set(result_key_prefix + "periodic:milestones:1", b"done")
        assert jobs_outstanding(client) == 0
        client.set(in_progress_key_prefix + "delivery:gitea:x", b"1")
        client.zadd(QUEUE_NAME, {"later:y": time.time() * 1000 + 60_000})
        assert jobs_outstanding(client) == 2, "a running job and a deferred one"
    finally:
        client.close()


async def test_a_repository_is_noted_in_redis_once_a_minute_not_per_job(redis_url: str) -> None:
    client = make_redis(redis_url)
    repo = RepoRef("o", f"seen-{uuid.uuid4().hex}")
    seen = SeenRepositories(client)

    async def five_jobs() -> None:
        for _ in range(5):
            await seen.note("github", repo)

    try:
        writes = await commands_on(redis_url, repo.name, five_jobs)
        assert len(writes) == 1, writes
        assert repo in await seen.recent("github")
    finally:
        await client.aclose()
