"""Work for later, and what a periodic job needs to know that no event tells it.

- ``Deferred.run_later``: an ``Event`` (usually a synthetic one a handler builds, e.g. "check the milestone
  gate") processed by the worker's ordinary ``process_event`` job after a delay — an arq job deferred in
  the queue, never a sleep. The job id is the caller's, so the same piece of work is queued once: arq
  refuses an id whose job is queued or whose result it still keeps.
- ``Deferred.claim``: a short claim in Redis (``SET NX`` with a lifetime), e.g. "a refresh of this
  milestone's dashboard is already pending", so a burst of events costs one job instead of one each.
- ``Deferred.mark`` / ``marked``: a remembered time (e.g. when the milestone gate last polled a repository).
- ``SeenRepositories``: the repositories Steward has had events from, per forge, with when it last had
  one, kept by id with the name of the latest event (a rename or a transfer keeps one entry). A cache
  (DESIGN §3.1): flushing Redis loses no decision, and the next event from a repository puts it back. A
  periodic job walks it (Gitea sends no milestone webhooks, so the milestone gate polls).

The worker records every event's repository; handlers reach ``Deferred`` as ``EventContext.deferred``
and periodic jobs as ``PeriodicContext.deferred`` (both None where no Redis is at hand, e.g. unit tests).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from datetime import UTC, datetime
from typing import Any, cast

from arq.connections import ArqRedis

from bot.events.event import Event
from bot.forge import ForgeKind, RepoRef, repo_key
from bot.queue import clock
from bot.queue.jobs import JOB_FUNCTION, QUEUE_NAME

CLAIM_PREFIX = "steward:claim:"
MARK_PREFIX = "steward:mark:"
LATER_PREFIX = "later:"
# Repositories not heard from in this long are forgotten (their next event brings them back).
REPO_MEMORY_SECONDS = 30 * 24 * 3600
# The most repositories a periodic job walks per forge (the set is bounded by the hooks installed).
MAX_REPOSITORIES = 10_000


class Deferred:
    def __init__(self, redis: ArqRedis) -> None:
        self._redis = redis

    async def run_later(self, event: Event, *, delay: float, job_id: str) -> bool:
        """Queue ``event`` for ``process_event`` in ``delay`` seconds under the job id ``later:<job_id>``;
        False when that job is already queued (or ran moments ago: arq keeps its result a minute)."""
        job = await self._redis.enqueue_job(
            JOB_FUNCTION,
            event.to_json(),
            _job_id=LATER_PREFIX + job_id,
            _queue_name=QUEUE_NAME,
            # Due on Redis's clock, which the workers poll by (bot.queue.clock), not this process's.
            _defer_until=datetime.fromtimestamp(clock.now() + max(0.0, delay), UTC),
        )
        return job is not None

    async def claim(self, key: str, *, ttl: float) -> bool:
        """True for the first caller to claim ``key`` within ``ttl`` seconds, False for the others."""
        millis = max(1, int(ttl * 1000))
        return bool(await self._redis.set(CLAIM_PREFIX + key, "1", nx=True, px=millis))

    async def mark(self, key: str, when: float, *, ttl: float, only_new: bool = False) -> None:
        """Remember a time under ``key`` for ``ttl`` seconds (``only_new``: unless one is there already),
        e.g. when a periodic job last looked at a repository. A cache: after a flush, callers start over."""
        await self._redis.set(MARK_PREFIX + key, repr(when), ex=max(1, int(ttl)), nx=only_new)

    async def marked(self, key: str) -> float | None:
        """The time remembered under ``key``, if any."""
        raw = await self._redis.get(MARK_PREFIX + key)
        try:
            return float(raw) if raw is not None else None
        except ValueError:
            return None


def _repos_key(forge: ForgeKind) -> str:
    return f"steward:repos:{forge}"


def _names_key(forge: ForgeKind) -> str:
    """The name each repository of ``_repos_key`` (by id) had at its last event."""
    return f"steward:repo-names:{forge}"


# A repository noted by this process is noted again in Redis at most this often: every job notes its
# repository, and the set only needs to know who was heard from in the last days (REPO_MEMORY_SECONDS).
NOTE_EVERY_SECONDS = 60.0
_MAX_NOTED = 10_000


class SeenRepositories:
    def __init__(self, redis: ArqRedis) -> None:
        self._redis = redis
        # (forge, repository) → when this process last wrote it to Redis.
        self._noted: dict[tuple[str, str, str], float] = {}

    async def note(self, forge: ForgeKind, repo: RepoRef) -> None:
        """Note an event from ``repo``. A repository is kept by its id (``repo_key``) with the name its
        latest event gave it: a renamed or transferred repository stays one entry, under its new name."""
        now = time.time()
        key = (forge, repo_key(forge, repo), repo.full_name)
        if now - self._noted.get(key, 0.0) < NOTE_EVERY_SECONDS:
            return
        async with self._redis.pipeline(transaction=False) as pipe:
            if repo.id:
                pipe.zadd(_repos_key(forge), {str(repo.id): now})
                pipe.hset(_names_key(forge), str(repo.id), repo.full_name)
                pipe.expire(_names_key(forge), REPO_MEMORY_SECONDS)
                pipe.zrem(_repos_key(forge), repo.full_name)  # as an earlier version noted it, by name
            else:
                pipe.zadd(_repos_key(forge), {repo.full_name: now})
            await pipe.execute()
        if len(self._noted) >= _MAX_NOTED:
            self._noted.clear()
        self._noted[key] = now

    async def recent(self, forge: ForgeKind, *, within: float = REPO_MEMORY_SECONDS) -> list[RepoRef]:
        """The repositories heard from in the last ``within`` seconds, most recent first; older ones are
        forgotten."""
        key = _repos_key(forge)
        await self._redis.zremrangebyscore(key, "-inf", time.time() - max(within, REPO_MEMORY_SECONDS))
        raw = cast(
            list[Any],
            await self._redis.zrevrangebyscore(
                key, "+inf", time.time() - within, start=0, num=MAX_REPOSITORIES
            ),
        )
        members = [item.decode() if isinstance(item, bytes) else str(item) for item in raw]
        ids = [m for m in members if m.isdigit()]
        names = await cast(Awaitable[list[Any]], self._redis.hmget(_names_key(forge), ids)) if ids else []
        name_of = {
            m: (n.decode() if isinstance(n, bytes) else str(n)) for m, n in zip(ids, names, strict=True) if n
        }
        found: list[RepoRef] = []
        for member in members:
            try:
                if member.isdigit():
                    named = RepoRef.parse(name_of.get(member, ""))
                    found.append(RepoRef(named.owner, named.name, int(member)))
                else:
                    found.append(RepoRef.parse(member))
            except ValueError:
                continue
        return found
