"""The receiver's group commit (bot.queue.jobs.Enqueuer), against real Redis: deliveries that arrive together
share one script call, counted at the connection; under load a call waits a moment for more; an idle
delivery never waits; every delivery is answered only once Redis has its job, and a failed call fails each
delivery of its batch (the receiver answers each one 503)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
from arq.connections import ArqRedis
from redis.exceptions import DataError, RedisError

from bot.events.event import CommentSnapshot, Event, IssueSnapshot
from bot.forge import RepoRef
from bot.queue.jobs import QUEUE_NAME, Enqueuer, _HiredisPackedConnection, job_id_for, make_redis
from tests.integration.redis_watch import RoundTrips

_count = 0


def _event(sender: str = "alice", number: int = 7) -> Event:
    global _count
    _count += 1
    return Event(
        forge="github",
        delivery_id=f"batch-{time.time_ns()}-{_count}",
        name="issue_comment",
        action="created",
        sender=sender,
        repo=RepoRef.parse("acme/app"),
        issue=IssueSnapshot(number=number, title="t", body="b", state="open", author="someone"),
        comment=CommentSnapshot(id=_count, body="a plain comment", author=sender),
    )


@pytest.fixture
async def counted(redis_url: str) -> AsyncIterator[tuple[ArqRedis, RoundTrips]]:
    client = make_redis(redis_url)
    trips = RoundTrips(client)
    await client.ping()  # connected, and the script is not loaded yet: the first call may load it
    yield client, trips
    await client.aclose()


async def _warm(enqueuer: Enqueuer, trips: RoundTrips) -> None:
    """One delivery first, so the script is loaded (a first EVALSHA that misses is retried as EVAL)."""
    await enqueuer.enqueue(_event(sender="warm", number=1))
    trips.count = 0


async def test_a_burst_of_concurrent_deliveries_shares_one_redis_call(
    counted: tuple[ArqRedis, RoundTrips],
) -> None:
    redis, trips = counted
    enqueuer = Enqueuer(redis, dedupe_ttl=60)
    await _warm(enqueuer, trips)
    events = [_event(sender=f"person-{i}", number=100 + i) for i in range(20)]
    results = await asyncio.gather(*(enqueuer.enqueue(e) for e in events))
    assert trips.count == 1
    assert [r.outcome for r in results] == ["enqueued"] * 20
    # Answered only once Redis has each job.
    for event in events:
        assert await redis.zscore(QUEUE_NAME, job_id_for(event)) is not None


async def test_under_load_a_call_waits_for_the_deliveries_arriving_meanwhile(
    counted: tuple[ArqRedis, RoundTrips],
) -> None:
    """Deliveries arriving one per turn of the event loop, right after a call: without the linger the first
    would go alone and the rest share a second call; with it, they all share one."""
    redis, trips = counted
    # A wide "busy" window and a long linger, so a slow machine cannot change what is counted.
    enqueuer = Enqueuer(redis, dedupe_ttl=60, linger=0.2, busy=60)
    await _warm(enqueuer, trips)
    tasks = []
    for i in range(10):
        tasks.append(asyncio.create_task(enqueuer.enqueue(_event(sender=f"p-{i}", number=200 + i))))
        await asyncio.sleep(0)
    results = await asyncio.gather(*tasks)
    assert trips.count == 1
    assert {r.outcome for r in results} == {"enqueued"}


async def test_an_idle_receiver_sends_a_delivery_at_once(counted: tuple[ArqRedis, RoundTrips]) -> None:
    redis, _ = counted
    # A linger far longer than the test's patience: an idle delivery must not meet it.
    enqueuer = Enqueuer(redis, dedupe_ttl=60, linger=600)
    result = await asyncio.wait_for(enqueuer.enqueue(_event()), 10)
    assert result.outcome == "enqueued"


async def test_a_failed_call_fails_every_delivery_of_its_batch() -> None:
    """Redis down: each waiting delivery gets the error (the receiver answers each one 503); none is lost
    silently and none waits for ever."""
    enqueuer = Enqueuer(make_redis("redis://127.0.0.1:1/0", connect_timeout=0.5), dedupe_ttl=60)
    outcomes = await asyncio.wait_for(
        asyncio.gather(
            *(enqueuer.enqueue(_event(sender=f"q-{i}")) for i in range(5)), return_exceptions=True
        ),
        20,
    )
    assert len(outcomes) == 5
    # What the receiver turns into its 503 (bot.receiver.app: RedisError or OSError).
    assert all(isinstance(o, RedisError | OSError) for o in outcomes), outcomes


def test_commands_are_packed_as_the_encoder_packs_them() -> None:
    """hiredis packs strings, bytes and integers itself: byte for byte what redis-py's encoder gives;
    anything else still goes through the encoder (a float as it writes it, a bool refused)."""
    connection = _HiredisPackedConnection()
    plain = ("EVALSHA", "abc", 2, "steward:seen:github:x", "é ü", b"\x00raw", -3, 2**70)
    encoded = tuple(connection.encoder.encode(a) for a in plain)
    assert connection.pack_command(*plain) == connection.pack_command(*encoded)
    assert (
        b"".join(connection.pack_command("SET", "k", 0.1)) == b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\n0.1\r\n"
    )
    with pytest.raises(DataError):
        connection.pack_command("SET", "k", True)
