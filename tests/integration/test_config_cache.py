"""The per-repository settings cache (real Redis): a push drops it, and a job that read the file before the
push can never put its stale copy back (the cache is keyed by a generation every push bumps)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from bot.config.repo_settings import RepoConfigs
from bot.config.settings import HandlerSettings
from bot.forge import FileContent, RepoRef
from bot.queue.jobs import make_redis
from tests.integration.redis_watch import commands_on

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


class NoFile(FileForge):
    """A repository without a configuration file, until a test writes one (``text`` empty: none)."""

    async def read_file(self, repo: RepoRef, path: str, ref: str | None = None) -> FileContent | None:
        return await super().read_file(repo, path, ref) if self.text else None


async def test_a_repository_waits_until_a_file_has_validated_once(redis_url: str) -> None:
    """DESIGN §3.15: no file, or a file that never validated, is no invitation — every capability is
    switched off; a valid file is; an invalid version after it keeps the last valid settings in force; no
    file again makes the repository wait again."""
    redis = make_redis(redis_url)
    configs = RepoConfigs(redis, HandlerSettings())
    forge = NoFile("")

    async def now(text: str) -> Any:
        forge.text = text
        await configs.invalidate("github", REPO)
        return await configs.get(forge, REPO)  # type: ignore[arg-type]

    try:
        found = await now("")
        assert found.waiting and not found.settings.bug_refinement.enabled
        assert not found.settings.milestones.enabled
        assert found.as_configured.milestones.enabled, "what the onboarding proposes: the defaults"
        found = await now("backlog:\n  roundcap: 4\n")
        assert found.waiting and found.errors and not found.settings.backlog.enabled
        found = await now("# on, with the defaults\n")
        assert not found.waiting and found.settings.backlog.enabled and found.settings.milestones.enabled
        found = await now("backlog:\n  enabled: false\n  roundcap: 4\n")
        assert not found.waiting and found.stale and found.settings.backlog.enabled, "the last valid file"
        found = await now("")
        assert found.waiting and not found.settings.backlog.enabled
    finally:
        await redis.aclose()


async def test_an_operator_may_run_repositories_without_a_file_on_the_defaults(redis_url: str) -> None:
    redis = make_redis(redis_url)
    configs = RepoConfigs(redis, HandlerSettings(), require=False)
    try:
        found = await configs.get(NoFile(""), REPO)  # type: ignore[arg-type]
        assert not found.waiting and found.settings.milestones.enabled
    finally:
        await redis.aclose()


async def test_a_cached_read_is_one_redis_round_trip(redis_url: str) -> None:
    """Every job reads its repository's settings: the generation and the copy under it come in one call."""
    redis = make_redis(redis_url)
    repo = RepoRef("alice", f"demo-{uuid.uuid4().hex}")
    configs = RepoConfigs(redis, HandlerSettings())
    forge: Any = FileForge("bug_refinement:\n  enabled: true\n")
    marker = configs._generation_key("github", repo).rsplit(":", 1)[1]
    try:
        await configs.get(forge, repo)  # reads the file and caches it
        sent = await commands_on(redis_url, marker, lambda: configs.get(forge, repo), scripts=False)
        assert len(sent) == 1 and sent[0].upper().startswith("EVALSHA"), sent
        assert forge.reads == 1, "answered from the cache"
    finally:
        await redis.aclose()


async def test_a_cached_copy_is_built_once_and_a_new_copy_or_new_defaults_anew(
    redis_url: str, monkeypatch: Any
) -> None:
    """Every job reads its repository's cached copy: the same copy is merged and validated once per process;
    a push (a new copy) or other defaults build again."""
    from bot.config import repo_settings

    built: list[object] = []
    real = repo_settings.merge

    def counting(defaults: HandlerSettings, overrides: Any) -> HandlerSettings:
        built.append(overrides)
        return real(defaults, overrides)

    monkeypatch.setattr(repo_settings, "merge", counting)
    redis = make_redis(redis_url)
    configs = RepoConfigs(redis, HandlerSettings())
    forge = FileForge("backlog:\n  round_cap: 3\n")
    try:
        first = await configs.get(forge, REPO)  # type: ignore[arg-type]
        built.clear()
        for _ in range(3):
            assert await configs.get(forge, REPO) == first  # type: ignore[arg-type]
        assert len(built) == 1, "the cached copy, built once"
        forge.text = "backlog:\n  round_cap: 7\n"
        await configs.invalidate("github", REPO)
        assert (await configs.get(forge, REPO)).settings.backlog.round_cap == 7  # type: ignore[arg-type]
        assert (await configs.get(forge, REPO)).settings.backlog.round_cap == 7  # type: ignore[arg-type]
        forge.text = "debug:\n  pending_timeout_hours: 48\n"  # a file that leaves round_cap to the defaults
        await configs.invalidate("github", REPO)
        assert (await configs.get(forge, REPO)).settings.backlog.round_cap != 9  # type: ignore[arg-type]
        configs.defaults = HandlerSettings().model_copy(
            update={"backlog": HandlerSettings().backlog.model_copy(update={"round_cap": 9})}
        )
        found = await configs.get(forge, REPO)  # type: ignore[arg-type]
        assert found.settings.backlog.round_cap == 9, "the same copy over new defaults is built again"
    finally:
        await redis.aclose()
