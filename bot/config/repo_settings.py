"""Each repository's effective settings: its configuration file on the default branch, read through the
port, laid over Steward's defaults, cached a few minutes in Redis (shared by every worker) and dropped when
a push touches the file.

An invalid file never leaves a repository without settings: the last valid ones (or the defaults) stay in
force, and ``RepoSettings.errors`` says what is wrong so a handler can tell people (``handlers.core.config``).

Nothing acts until invited (DESIGN §3.15): a repository that has never had a valid file — none, or only one
that does not validate — is ``waiting``, and its settings have every capability's ``enabled`` switched off,
so every event handler, command, periodic job and re-derivation that honours its switch stays still (the
core commands and the onboarding are answered: ``bot.commands.dispatch``). Removing the file makes the
repository wait again; what Steward wrote stays. ``require=False`` (``STEWARD_REQUIRE_CONFIG=false``) runs
every repository on the defaults instead.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, cast

from redis.asyncio import Redis

from bot.config.repo_file import CONFIG_PATHS, ConfigError, merge, parse, with_preset
from bot.config.settings import HandlerSettings
from bot.forge import Forge, ForgeKind, NotFound, PermissionDenied, RepoRef, repo_key
from bot.queue.budgets import publish_events_limit
from bot.queue.locks import Alongside, LuaScript

CACHE_SECONDS = 300
LAST_VALID_SECONDS = 30 * 86_400
# Repositories' cached copies whose settings a process keeps built (``RepoConfigs._built_from``).
BUILT_COPIES = 512


@dataclass(frozen=True)
class RepoSettings:
    settings: HandlerSettings
    # What the repository's file sets (the last valid file when the current one is invalid).
    overrides: Mapping[str, Any] = field(default_factory=dict)
    # The file found on the default branch ("" when the repository has none) and its blob sha.
    path: str = ""
    sha: str = ""
    # What is wrong with that file; empty when it is valid or absent.
    errors: tuple[ConfigError, ...] = ()
    # Whether ``overrides`` come from an earlier valid version of an invalid file.
    stale: bool = False
    # Whether the capabilities wait for the repository's invitation (no valid file yet, and the installation
    # requires one): ``settings`` then has every capability switched off, and ``configured`` holds what
    # they would be once invited (the defaults, or the file's last valid settings).
    waiting: bool = False
    configured: HandlerSettings | None = None
    # Where the organisation's defaults came from ("owner/.github:steward.yml"); "" when there are none.
    org: str = ""

    @property
    def as_configured(self) -> HandlerSettings:
        """The settings the repository's file (or its absence) gives, whether or not Steward may act yet:
        what the onboarding pull request proposes and labels."""
        return self.configured if self.configured is not None else self.settings


def layered(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Two files' settings as one: ``over`` (a repository's) laid key by key over ``base`` (its
    organisation's), each with its preset spelt out first."""

    def deep(a: Any, b: Any) -> Any:
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            return {**a, **{k: deep(a[k], v) if k in a else v for k, v in b.items()}}
        return b

    return dict(deep(dict(with_preset(base)), dict(with_preset(over))))


def switched_off(settings: HandlerSettings) -> HandlerSettings:
    """``settings`` with every capability's ``enabled`` false (the sections that have the switch)."""
    update = {
        name: getattr(settings, name).model_copy(update={"enabled": False})
        for name, info in HandlerSettings.model_fields.items()
        if "enabled" in getattr(info.annotation, "model_fields", {})
    }
    return settings.model_copy(update=update)


def _digest(kind: ForgeKind, repo: RepoRef) -> str:
    # By the repository's key (its id: a renamed repository keeps its cached settings), digested once.
    return _digest_of(repo_key(kind, repo))


@lru_cache(maxsize=4096)
def _digest_of(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:24]


# The repository's settings cache: its generation (bumped by every push) and the copy kept under it.
_CACHED = """
local generation = redis.call('GET', KEYS[1]) or '0'
return {generation, redis.call('GET', ARGV[1] .. ':' .. generation)}
"""
_CACHED_SCRIPT = LuaScript(_CACHED)


class RepoConfigs:
    def __init__(
        self,
        redis: Redis,
        defaults: HandlerSettings,
        *,
        commands: Sequence[str] = (),
        ttl: int = CACHE_SECONDS,
        require: bool = True,
        org_repos: Mapping[str, str] | None = None,
    ) -> None:
        self._redis = redis
        # The repository, under each repository's owner, whose Steward file holds the organisation's defaults
        # (by forge kind; "" or absent: none).
        self._org_repos = dict(org_repos or {})
        self.defaults = defaults
        # Whether a repository must invite Steward with a valid file before any capability acts.
        self.require = require
        self._commands = tuple(commands)  # the command names `commands:` may configure
        self._ttl = ttl
        # A cached copy → (the defaults it was built on, what it builds): every job reads its repository's
        # copy, and the same copy built the same settings (a merge and a validation) at each one.
        self._built: dict[bytes, tuple[HandlerSettings, RepoSettings]] = {}

    @property
    def redis(self) -> Redis:
        return self._redis

    def _key(self, kind: ForgeKind, repo: RepoRef) -> str:
        return f"steward:config:{_digest(kind, repo)}"

    def _valid_key(self, kind: ForgeKind, repo: RepoRef) -> str:
        return f"steward:config-valid:{_digest(kind, repo)}"

    def _generation_key(self, kind: ForgeKind, repo: RepoRef) -> str:
        return f"steward:config-gen:{_digest(kind, repo)}"

    def lookup(self, kind: ForgeKind, repo: RepoRef) -> Alongside:
        """The cache read ``get`` makes, for a caller that sends it with another call (the worker sends it
        with the issue's lock: ``bot.queue.locks.issue_lock``) and hands the answer to ``get``."""
        return _CACHED_SCRIPT, [self._generation_key(kind, repo)], [self._key(kind, repo)]

    async def get(self, forge: Forge, repo: RepoRef, *, looked_up: Any = None) -> RepoSettings:
        """``looked_up``: the answer of ``lookup``'s read when the caller made it already."""
        # The cache is keyed by a generation that every push bumps: a job that read the file before a push
        # writes its copy under the old generation, where nobody looks any more.
        # The generation and the copy under it in one round trip (every job reads them).
        if looked_up is None:
            script, keys, args = self.lookup(forge.kind, repo)
            looked_up = await script(self._redis, keys, *args)
        generation, cached = looked_up
        key = f"{self._key(forge.kind, repo)}:{(generation or b'0').decode()}"
        if cached is not None:
            return self._built_from(cached)
        record = await self._read(forge, repo)
        await self._redis.set(key, json.dumps(record), ex=self._ttl)
        built = self._build(record)
        # The receiver takes the event budget without reading the file (bot.queue.budgets): tell it the limit.
        await publish_events_limit(
            self._redis, forge.kind, repo_key(forge.kind, repo), built.settings.limits.events_per_minute
        )
        return built

    async def invalidate(self, kind: ForgeKind, repo: RepoRef) -> None:
        generation = self._generation_key(kind, repo)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.incr(generation)
            pipe.expire(generation, LAST_VALID_SECONDS)
            await pipe.execute()

    async def _read(self, forge: Forge, repo: RepoRef) -> dict[str, Any]:
        record = await self._read_own(forge, repo)
        org = await self._read_org(forge, repo)
        if org is not None:
            record["org"] = org
        return record

    async def _read_org(self, forge: Forge, repo: RepoRef) -> dict[str, Any] | None:
        """The organisation's defaults: the Steward file of the owner's configured repository (GitHub: its
        `.github` repository), when it has a valid one Steward may read."""
        name = self._org_repos.get(forge.kind, "")
        if not name or name.casefold() == repo.name.casefold():
            return None
        org = RepoRef(repo.owner, name)
        for path in ("steward.yml", *CONFIG_PATHS[forge.kind]):
            try:
                found = await forge.read_file(org, path)
            except (NotFound, PermissionDenied):
                return None  # no such repository, or not one Steward may read
            if found is None:
                continue
            parsed = parse(found.content, self._commands)
            if not parsed.valid:
                return {"repo": org.full_name, "path": path, "overrides": {}, "invalid": True}
            return {"repo": org.full_name, "path": path, "overrides": dict(parsed.data or {})}
        return None

    async def _read_own(self, forge: Forge, repo: RepoRef) -> dict[str, Any]:
        for path in CONFIG_PATHS[forge.kind]:
            found = await forge.read_file(repo, path)
            if found is None:
                continue
            parsed = parse(found.content, self._commands)
            record: dict[str, Any] = {"path": path, "sha": found.sha, "overrides": {}, "errors": []}
            if parsed.valid:
                record["overrides"] = dict(parsed.data or {})
                await self._redis.set(
                    self._valid_key(forge.kind, repo), json.dumps(record["overrides"]), ex=LAST_VALID_SECONDS
                )
                return record
            record["errors"] = [[e.path, e.line, e.message] for e in parsed.errors]
            last = await cast(Awaitable[bytes | None], self._redis.get(self._valid_key(forge.kind, repo)))
            if last is not None:
                record["overrides"], record["stale"] = json.loads(last), True
            return record
        return {"path": "", "sha": "", "overrides": {}, "errors": []}

    def _built_from(self, cached: bytes) -> RepoSettings:
        """The settings a cached copy holds, built once per copy (and per ``defaults``: tests and the demo
        change them). ``RepoSettings`` is frozen and its sections too; nothing changes ``overrides``."""
        found = self._built.get(cached)
        if found is not None and found[0] is self.defaults:
            return found[1]
        built = self._build(json.loads(cached))
        if len(self._built) >= BUILT_COPIES:
            self._built.clear()
        self._built[cached] = (self.defaults, built)
        return built

    def _build(self, record: Mapping[str, Any]) -> RepoSettings:
        own = record.get("overrides") or {}
        org = record.get("org") or {}
        # The repository's file extends the organisation's, key by key (each with its preset spelt out first,
        # so a repository's preset decides its own capabilities).
        overrides = layered(org.get("overrides") or {}, own) if org else own
        try:
            settings = merge(self.defaults, overrides)
        except ValueError:  # defaults changed under a cached file: the file alone no longer fits them
            settings, overrides = self.defaults, {}
        path = str(record.get("path") or "")
        errors = tuple(ConfigError(str(p), ln, str(m)) for p, ln, m in record.get("errors") or ())
        stale = bool(record.get("stale"))
        # Invited: a valid file now, or an invalid one whose last valid version still applies.
        waiting = self.require and not (path and (not errors or stale))
        return RepoSettings(
            settings=switched_off(settings) if waiting else settings,
            overrides=overrides,
            org=f"{org.get('repo')}:{org.get('path')}" if org and not org.get("invalid") else "",
            path=path,
            sha=str(record.get("sha") or ""),
            errors=errors,
            stale=stale,
            waiting=waiting,
            configured=settings if waiting else None,
        )
