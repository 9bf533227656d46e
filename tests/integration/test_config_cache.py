"""The per-repository settings cache (real Redis): a push drops it, and a job that read the file before the
push can never put its stale copy back (the cache is keyed by a generation every push bumps)."""

from __future__ import annotations

import asyncio

from bot.config_service import RepoConfigs
from bot.forge import FileContent, RepoRef
from bot.queue import make_redis
from bot.settings import HandlerSettings

REPO = RepoRef("alice", "demo")


class FileForge:
    """Only what the cache reads: one file on the default branch, which a test can change, and a gate that
    holds a read back until the test lets it go."""

    kind = "github"

    def __init__(self, text: str) -> None:
        self.text = text
        self.reads = 0
        self.gate: asyncio.Event | None = None
        self.reading = asyncio.Event()

    async def read_file(self, repo: RepoRef, path: str, ref: str | None = None) -> FileContent | None:
        if path != ".github/steward.yml":
            return None
        self.reads += 1
        text = self.text
        self.reading.set()
        if self.gate is not None:
            await self.gate.wait()
        return FileContent(path, text.encode(), sha=str(hash(text)))


async def test_a_read_that_straddles_a_push_does_not_bring_back_the_old_file(redis_url: str) -> None:
    redis = make_redis(redis_url)
    configs = RepoConfigs(redis, HandlerSettings())
    forge = FileForge("backlog:\n  round_cap: 3\n")
    try:
        assert (await configs.get(forge, REPO)).settings.backlog.round_cap == 3  # type: ignore[arg-type]
        assert (await configs.get(forge, REPO)).settings.backlog.round_cap == 3  # type: ignore[arg-type]
        assert forge.reads == 1, "cached"

        await configs.invalidate("github", REPO)
        forge.gate, forge.reading = asyncio.Event(), asyncio.Event()
        slow = asyncio.create_task(configs.get(forge, REPO))  # type: ignore[arg-type]
        await forge.reading.wait()
        # While that job still holds the old text, a push changes the file and drops the cache.
        forge.text = "backlog:\n  round_cap: 7\n"
        await configs.invalidate("github", REPO)
        forge.gate.set()
        assert (await slow).settings.backlog.round_cap == 3, "that job saw the file as it was"
        forge.gate = None
        assert (await configs.get(forge, REPO)).settings.backlog.round_cap == 7  # type: ignore[arg-type]
    finally:
        await redis.aclose()


async def test_an_invalid_file_keeps_the_last_valid_settings(redis_url: str) -> None:
    redis = make_redis(redis_url)
    configs = RepoConfigs(redis, HandlerSettings())
    forge = FileForge("backlog:\n  round_cap: 3\n")
    try:
        await configs.get(forge, REPO)  # type: ignore[arg-type]
        forge.text = "backlog:\n  roundcap: 4\n"
        await configs.invalidate("github", REPO)
        found = await configs.get(forge, REPO)  # type: ignore[arg-type]
        assert found.stale and found.settings.backlog.round_cap == 3
        assert [e.path for e in found.errors] == ["backlog.roundcap"]
    finally:
        await redis.aclose()
