"""Queued events carry their format's version (issue 40 item 5).

During a rolling upgrade a job queued by a newer Steward reached an older worker, which failed to read a
field it did not know, and arq dropped the job outside the dead-letter list. Now each queued event names its
format (in ``extra``, where a worker of any version takes an unknown key); a worker refuses an event of a
newer format — the job is deferred for an upgraded worker, never dropped — reads every older one (fields it
does not know left out), and parks an unreadable one in the dead-letter list.
"""

from __future__ import annotations

import json

import pytest
from arq.worker import Retry

from bot.events.event import EVENT_FORMAT, CommentSnapshot, Event, IssueSnapshot
from bot.forge import RepoRef
from bot.queue.jobs import make_redis
from bot.worker.jobs import build_runtime, process_event
from tests.e2e.conftest import make_settings


def _event() -> Event:
    return Event(
        forge="github",
        delivery_id="d-1",
        name="issue_comment",
        action="created",
        sender="alice",
        repo=RepoRef("alice", "demo", 77),
        issue=IssueSnapshot(number=7, title="t", body="b", state="open", author="alice"),
        comment=CommentSnapshot(id=99, body="/steward ping", author="alice"),
    )


def test_an_event_names_its_format_and_reads_back_whole() -> None:
    raw = _event().to_json()
    assert json.loads(raw)["extra"]["_format"] == str(EVENT_FORMAT)
    back = Event.from_json(raw)
    assert back == _event() and back.repo is not None and back.repo.id == 77
    assert "_format" not in back.extra


def test_an_older_event_with_fields_this_worker_does_not_know_is_read() -> None:
    data = json.loads(_event().to_json())
    del data["extra"]["_format"]  # written before formats were numbered
    data["issue"]["a_field_from_elsewhere"] = 1
    data["another_field"] = "x"
    back = Event.from_json(json.dumps(data))
    assert back.issue is not None and back.issue.number == 7 and back.comment is not None


async def test_a_newer_event_waits_for_an_upgraded_worker_and_an_unreadable_one_is_parked(
    redis_url: str,
) -> None:
    data = json.loads(_event().to_json())
    data["extra"]["_format"] = str(EVENT_FORMAT + 1)
    redis = make_redis(redis_url)
    runtime = build_runtime(make_settings("http://127.0.0.1:9", redis_url), redis)
    try:
        with pytest.raises(Retry):
            await process_event({"runtime": runtime, "job_id": "newer"}, json.dumps(data))
        assert await runtime.dead.count() == 0, "deferred, not parked"
        answer = await process_event({"runtime": runtime, "job_id": "broken"}, '{"forge": "github"}')
        assert answer.startswith("dead:")
        assert await runtime.dead.count() == 1, "an unreadable event is parked where an operator sees it"
    finally:
        await runtime.aclose()
        await redis.aclose()
