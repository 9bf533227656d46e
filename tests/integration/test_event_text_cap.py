"""A queued job holds what handlers need, not a 25 MB body (issue 40 item 5).

A worker held 3.7 GiB with ten 24 MiB Gitea deliveries in flight: each job carried the whole body, copied
between the receiver, Redis, arq and the worker. Now the receiver cuts each text of a queued event to
``MAX_EVENT_TEXT`` (every reader of Steward's reads less) and marks what it cut; a worker re-reads the cut
issue or comment from the forge before it runs the job (``tests/e2e/test_event_text_cap_e2e.py``).
"""

from __future__ import annotations

from arq.constants import job_key_prefix
from arq.jobs import deserialize_job

from bot.events.event import CUT, MAX_EVENT_TEXT, CommentSnapshot, Event, IssueSnapshot
from bot.forge import RepoRef
from bot.queue.jobs import Enqueuer, job_id_for, make_redis


async def test_a_huge_comment_is_cut_in_the_queued_job_and_marked(redis_url: str) -> None:
    huge = "/steward ping\n\n" + "x" * (4 * 1024 * 1024)
    event = Event(
        forge="gitea",
        delivery_id="huge-1",
        name="issue_comment",
        action="edited",
        sender="alice",
        repo=RepoRef("alice", "demo", 5),
        issue=IssueSnapshot(number=7, title="t", body=huge, state="open", author="alice"),
        comment=CommentSnapshot(id=99, body=huge, author="alice"),
        previous_body=huge,
    )
    redis = make_redis(redis_url)
    try:
        await Enqueuer(redis, dedupe_ttl=60).enqueue(event)
        stored = await redis.get(job_key_prefix + job_id_for(event))
        assert stored is not None and len(stored) < 4 * MAX_EVENT_TEXT, f"{len(stored or b'')} bytes queued"
        queued = Event.from_json(deserialize_job(stored).args[0])
        assert queued.extra[CUT] == "issue,comment,previous"
        assert queued.comment is not None and queued.comment.body.startswith("/steward ping")
        assert len(queued.comment.body) == MAX_EVENT_TEXT
    finally:
        await redis.aclose()
