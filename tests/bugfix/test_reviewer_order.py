"""Bugfix reviewers are asked least recently asked first (issue 39), per repository, in a real Redis."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from redis.asyncio import Redis

from bot.forge import RepoRef
from handlers.bugfix.reviewer_requests import _least_recent, _remember


def _ctx(redis: Redis, repo: str) -> Any:
    owner, name = repo.split("/")
    return cast(
        Any,
        SimpleNamespace(
            memo=SimpleNamespace(redis=redis),
            event=SimpleNamespace(forge="github"),
            repo=RepoRef(owner, name, 7 if name == "a" else 8),
        ),
    )


async def test_the_least_recently_asked_come_first_and_each_repository_keeps_its_own_order(
    redis_url: str,
) -> None:
    redis = Redis.from_url(redis_url)
    try:
        here, there = _ctx(redis, "org/a"), _ctx(redis, "org/b")
        pool = ["carol", "Alice", "bob"]
        assert await _least_recent(here, pool, 2) == ["Alice", "bob"]  # nobody asked yet: by name
        await _remember(here, ["Alice"])
        assert await _least_recent(here, pool, 2) == ["bob", "carol"]
        await _remember(here, ["bob"])
        await _remember(here, ["carol"])
        assert await _least_recent(here, pool, 1) == ["Alice"]  # asked longest ago
        assert await _least_recent(there, pool, 1) == ["Alice"]  # another repository: its own order
    finally:
        await redis.aclose()
