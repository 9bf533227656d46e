"""The receiver writes arq's job format itself (one Lua call per batch, for speed). This test fails the
day arq changes that format: the same job enqueued through arq's own ``enqueue_job`` and through the
receiver's ``Enqueuer`` is stored the same way, and a real arq worker runs both."""

from __future__ import annotations

import time
from typing import Any

from arq.constants import default_queue_name, job_key_prefix
from arq.jobs import deserialize_job
from arq.worker import Worker, func

from bot.events.event import CommentSnapshot, Event, IssueSnapshot
from bot.forge import RepoRef
from bot.queue.jobs import JOB_FUNCTION, QUEUE_NAME, Enqueuer, job_id_for, make_redis


def _event(delivery: str) -> Event:
    return Event(
        forge="github",
        delivery_id=delivery,
        name="issue_comment",
        action="created",
        sender="alice",
        repo=RepoRef("alice", "demo"),
        issue=IssueSnapshot(number=7, title="t", body="b", state="open", author="alice"),
        comment=CommentSnapshot(id=99, body="/steward ping", author="alice"),
    )


async def test_the_receivers_job_is_stored_as_arqs_enqueue_job_stores_it(redis_url: str) -> None:
    redis = make_redis(redis_url)
    try:
        ours, theirs = _event("ours"), _event("theirs")
        before = int(time.time() * 1000)
        enqueued = await Enqueuer(redis, dedupe_ttl=60).enqueue(ours)
        job = await redis.enqueue_job(
            JOB_FUNCTION, theirs.to_json(), _job_id=job_id_for(theirs), _queue_name=QUEUE_NAME
        )
        after = int(time.time() * 1000) + 1  # arq rounds to the millisecond
        assert enqueued.outcome == "enqueued" and job is not None
        stored: dict[str, Any] = {}
        for name, event in (("ours", ours), ("theirs", theirs)):
            key = job_key_prefix + job_id_for(event)
            definition = deserialize_job(await redis.get(key))
            score = await redis.zscore(QUEUE_NAME, job_id_for(event))
            stored[name] = {
                "function": definition.function,
                "args": definition.args,
                "kwargs": definition.kwargs,
                "job_try": definition.job_try,
                "ttl_ms": await redis.pttl(key),
                "score": score,
                "enqueue_ms": int(definition.enqueue_time.timestamp() * 1000),
            }
        for data in stored.values():
            assert before <= data["score"] <= after and before - 1 <= data["enqueue_ms"] <= after
            assert data["ttl_ms"] > 0
        same = ("function", "kwargs", "job_try")
        assert {k: stored["ours"][k] for k in same} == {k: stored["theirs"][k] for k in same}
        assert stored["ours"]["function"] == JOB_FUNCTION and stored["ours"]["job_try"] is None
        assert stored["ours"]["args"] == (ours.to_json(),) and stored["theirs"]["args"] == (theirs.to_json(),)
        assert abs(stored["ours"]["ttl_ms"] - stored["theirs"]["ttl_ms"]) < 5_000, "the same expiry"
        assert abs(stored["ours"]["score"] - stored["theirs"]["score"]) < 5_000
    finally:
        await redis.aclose()


async def test_a_real_arq_worker_runs_both(redis_url: str) -> None:
    redis = make_redis(redis_url)
    ran: list[str] = []

    async def process_event(ctx: dict[str, Any], raw: str) -> str:
        ran.append(Event.from_json(raw).delivery_id)
        return "ok"

    try:
        await Enqueuer(redis, dedupe_ttl=60).enqueue(_event("ours"))
        theirs = _event("theirs")
        await redis.enqueue_job(
            JOB_FUNCTION, theirs.to_json(), _job_id=job_id_for(theirs), _queue_name=QUEUE_NAME
        )
        worker = Worker(
            functions=[func(process_event, name=JOB_FUNCTION)],
            redis_pool=redis,
            queue_name=QUEUE_NAME,
            burst=True,
            poll_delay=0.01,
            handle_signals=False,
        )
        await worker.async_run()
        assert sorted(ran) == ["ours", "theirs"]
        assert (worker.jobs_complete, worker.jobs_failed) == (2, 0)
        assert default_queue_name != QUEUE_NAME
    finally:
        await redis.aclose()
