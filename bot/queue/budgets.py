"""A write budget for content-creating forge calls, shared by every worker through Redis.

GitHub's secondary limits allow about 80 content-creating requests a minute and 500 an
hour per token; a worker that would exceed them waits for budget instead of failing.
Each limit is a sliding-window log (a sorted set of timestamps) checked and taken in one
Lua script, so concurrent workers never overspend.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import re
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from redis.asyncio import Redis

from bot import metrics
from bot.event_types import Event
from bot.forge import RateLimited

_TAKE = """
local now = tonumber(ARGV[1])
local member = ARGV[2]
local wait = 0
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[1 + 2 * i])
  local window = tonumber(ARGV[2 + 2 * i])
  -- Entries older than the window are trimmed only when the log looks full: until then they cannot
  -- make it refuse (so a window with room costs one ZCARD), and the log never holds more than `limit`.
  if redis.call('ZCARD', key) >= limit then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
    if redis.call('ZCARD', key) >= limit then
      local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
      local until_free = tonumber(oldest[2]) + window - now
      if until_free > wait then wait = until_free end
    end
  end
end
if wait > 0 then return wait end
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[2 + 2 * i])
  redis.call('ZADD', key, now, member)
  redis.call('PEXPIRE', key, window + 1000)
end
return 0
"""


class WriteBudget:
    def __init__(
        self,
        redis: Redis,
        limits: Sequence[tuple[int, float]],
        *,
        on_wait: Callable[[float], Awaitable[None] | None] | None = None,
        prefix: str = "steward:budget",
        max_wait: float | None = None,
    ) -> None:
        """``max_wait``: the longest a caller waits for budget in all; a longer wait raises
        ``RateLimited`` so the job is deferred instead of sleeping past its time limit."""
        self._redis = redis
        self._limits = [(count, window) for count, window in limits if count > 0]
        self._script: Any = redis.register_script(_TAKE)
        self._on_wait = on_wait
        self._prefix = prefix
        self._max_wait = max_wait

    async def try_take(self, key: str) -> float:
        """Take one unit for ``key`` now and return 0, or return the seconds to wait."""
        if not self._limits:
            return 0.0
        keys = [f"{self._prefix}:{key}:{int(window * 1000)}" for _, window in self._limits]
        args: list[Any] = [int(time.time() * 1000), uuid.uuid4().hex]
        for count, window in self._limits:
            args += [count, int(window * 1000)]
        wait_ms = await self._script(keys=keys, args=args)
        return float(wait_ms) / 1000.0

    async def take(self, key: str, *, forge: str | None = None) -> float:
        """Wait until budget is available for ``key``, take it, and return the seconds waited
        (counted in the budget-wait metrics under ``forge`` when given)."""
        waited = 0.0
        while True:
            wait = await self.try_take(key)
            if wait <= 0:
                if waited and forge is not None:
                    metrics.BUDGET_WAITS.labels(forge).inc()
                    metrics.BUDGET_WAIT_SECONDS.labels(forge).inc(waited)
                return waited
            wait = min(wait + 0.005, 60.0)
            if self._max_wait is not None and waited + wait > self._max_wait:
                if forge is not None:
                    metrics.BUDGET_DEFERRALS.labels(forge).inc()
                raise RateLimited(f"the write budget is spent for {wait:.1f}s more", retry_after=wait)
            if self._on_wait is not None:
                result = self._on_wait(wait)
                if result is not None:
                    await result
            await asyncio.sleep(wait)
            waited += wait


_TAKE_COMMAND = """
local now, window, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZSCORE', KEYS[1], ARGV[4]) then return 0 end
if redis.call('ZCARD', KEYS[1]) >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return math.max(1, tonumber(oldest[2]) + window - now)
end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('PEXPIRE', KEYS[1], window + 1000)
return 0
"""


class CommandBudget:
    """How many commands one person may run on one repository in a sliding minute (DESIGN §3.6: one
    comment with twenty commands must not become twenty replies, nor a hundred comments a thousand).

    Each command is counted under its own name (the comment and its place in it), so a job that runs
    again counts it once. Keys are digests: a login never becomes a Redis key as it is (DESIGN §3.9)."""

    def __init__(self, redis: Redis, *, window: float = 60.0, prefix: str = "steward:commands") -> None:
        self._redis = redis
        self._script: Any = redis.register_script(_TAKE_COMMAND)
        self._window_ms = int(window * 1000)
        self._prefix = prefix

    def _key(self, kind: str, forge: str, repo: str, login: str) -> str:
        digest = hashlib.sha256(f"{forge}\0{repo.casefold()}\0{login.casefold()}".encode()).hexdigest()[:20]
        return f"{self._prefix}:{kind}:{digest}"

    async def take(self, *, forge: str, repo: str, login: str, command: str, limit: int) -> float:
        """Count ``command`` for ``login`` and return 0, or the seconds until the budget has room."""
        if limit <= 0:
            return 0.0
        key = self._key("count", forge, repo, login)
        args = [int(time.time() * 1000), self._window_ms, limit, command]
        wait_ms = await self._script(keys=[key], args=args)
        return float(wait_ms) / 1000.0

    async def first_notice(self, *, forge: str, repo: str, login: str, thread: int | None = None) -> bool:
        """True once per window for a person over budget in ``thread`` (an issue or pull request): each
        thread where they are refused says why, at most once a minute, not once per command."""
        where = repo if thread is None else f"{repo}#{thread}"
        key = self._key("notice", forge, where, login)
        return bool(await self._redis.set(key, "1", nx=True, px=self._window_ms))


class Memo:
    """ "Has this been done yet?" across every worker: the first caller of ``first(key)`` gets True for
    ``ttl`` seconds. For effects that must happen once (one notice per invalid file, say) where the forge
    holds no record to look at. Keys are digests (DESIGN §3.9)."""

    def __init__(self, redis: Redis, *, prefix: str = "steward:once") -> None:
        self._redis = redis
        self._prefix = prefix

    @property
    def redis(self) -> Redis:
        return self._redis

    async def first(self, key: str, ttl: int) -> bool:
        name = f"{self._prefix}:{hashlib.sha256(key.encode()).hexdigest()[:32]}"
        return bool(await self._redis.set(name, "1", nx=True, ex=ttl))


# --- the event budget: what one person's edits, comments and label changes may cost (issue 25) -------------
#
# Taken in the receiver, inside the one Redis script that enqueues a delivery (bot.queue), so it costs no
# round trip and never calls the forge: an event within its sender's budget is queued to run now; one
# beyond it is still acknowledged (202) but queued to run at its sender's next free slot, so it waits in
# the queue's future rather than ahead of everyone else's work. Slots follow the generic cell rate
# algorithm: ``limit`` events at once, then one every ``window / limit`` seconds, in arrival order. While a
# deferred job waits, a later event of the same kind from the same person on the same issue (and label)
# replaces the event in that job instead of taking another slot ("coalesced"): handlers read the current
# state from the forge, so the newest event stands for the ones before it.
#
# The limit is the repository's `limits.events_per_minute`; the receiver cannot read the repository's file
# (that is a forge call), so the worker publishes the value whenever it reads the configuration
# (``publish_events_limit``) and the receiver uses Steward's default until it has.

EVENT_WINDOW_SECONDS: Final = 60.0
# The events one person's text or clicks make: edits, comments and label changes.
BUDGETED_EVENTS: Final = frozenset(
    {
        "issues.edited",
        "issues.labeled",
        "issues.unlabeled",
        "pull_request.edited",
        "pull_request.labeled",
        "pull_request.unlabeled",
        "issue_comment.created",
        "issue_comment.edited",
        "issue_comment.deleted",
    }
)
# A line that may hold a command (`/name` after blanks): such a comment keeps its command budget instead.
_MAY_HOLD_A_COMMAND: Final = re.compile(
    r"^[ \t\u00a0\u200b\u200c\u200d\u2060\ufeff]*/[A-Za-z0-9]", re.MULTILINE
)
EVENTS_LIMIT_SECONDS: Final = 30 * 86_400


# The receiver names three keys per budgeted delivery, mostly for the same few senders, repositories and
# issues: their digests are remembered (a pure function; bounded).
@functools.lru_cache(maxsize=8192)
def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


def events_limit_key(forge: str, repo: str) -> str:
    """Where the worker publishes a repository's `limits.events_per_minute` for the receiver."""
    return f"steward:events-limit:{_digest(forge, repo.casefold())}"


async def publish_events_limit(redis: Redis, forge: str, repo: str, limit: int) -> None:
    await redis.set(events_limit_key(forge, repo), str(limit), ex=EVENTS_LIMIT_SECONDS)


@dataclass(frozen=True)
class EventBudgetKeys:
    """The Redis keys one budgeted delivery uses: its sender's slot schedule on the repository, the
    repository's published limit, and the pending job this event would coalesce into."""

    schedule: str
    limit: str
    pending: str


def event_budget_keys(event: Event) -> EventBudgetKeys | None:
    """None when ``event`` is not budgeted: not an edit, comment or label change, no sender or repository,
    or a comment that may hold a command (commands have their own per-person budget, and must not be
    coalesced away). Keys are digests: a login never becomes a Redis key as it is (DESIGN §3.9)."""
    if event.kind not in BUDGETED_EVENTS or not event.sender or event.repo is None:
        return None
    comment = event.comment if event.name == "issue_comment" else None
    if comment is not None and _MAY_HOLD_A_COMMAND.search(comment.body or ""):
        return None
    repo = event.repo.full_name.casefold()
    sender = event.sender.casefold()
    what = f"{event.issue_key}\0{event.kind}\0{event.label or ''}"
    return EventBudgetKeys(
        schedule=f"steward:events:{_digest(event.forge, repo, sender)}",
        limit=events_limit_key(event.forge, repo),
        pending=f"steward:events-pending:{_digest(event.forge, repo, sender, what)}",
    )
