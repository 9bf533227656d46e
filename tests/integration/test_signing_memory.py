"""The sequence numbers Steward wrote, remembered in Redis (replay detection), against a real Redis."""

from __future__ import annotations

import uuid

from bot.queue.jobs import make_redis
from bot.records.signing import Place, RedisMemory
from tests.integration.redis_watch import commands_on


async def test_noting_a_sequence_number_is_one_call_and_never_lowers_it(redis_url: str) -> None:
    redis = make_redis(redis_url)
    marker = uuid.uuid4().hex
    place = Place("github", 7, "comment", 11, "verdict", marker)
    memory = RedisMemory(redis)

    async def notes() -> None:
        await memory.note(place, 1_796_155_060_808_041)
        await memory.note(place, 1_796_155_060_808_040)  # an older number: kept out

    try:
        seen = await commands_on(redis_url, marker, notes, scripts=False)
        assert await memory.last(place) == 1_796_155_060_808_041
        await memory.note(place, 1_796_155_060_808_042)
        assert await memory.last(place) == 1_796_155_060_808_042
    finally:
        await redis.aclose()
    # One script call per note (the read, the comparison and the write), not a read and then a write.
    assert [c.split(" ", 1)[0].strip('"').upper() for c in seen] in (
        ["EVALSHA", "EVALSHA"],
        ["EVALSHA", "EVAL", "EVALSHA"],  # Redis did not know the script yet (NOSCRIPT), once
    ), seen
