"""What one person may cost Steward, counted in Redis and shared by every process: commands a minute
(``CommandBudget``) and edits, comments and label changes a minute (the event budget, taken by the
receiver inside the script that enqueues a delivery, ``bot.queue.jobs``).

The forge's own limits are ``bot.forge.write_budget``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from bot.events.event import Event
from bot.forge import repo_key

if TYPE_CHECKING:  # only annotations: `steward`'s start-up, which reads the settings, skips redis.asyncio
    from redis.asyncio import Redis

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


# --- the event budget: what one person's edits, comments and label changes may cost (issue 25) -------------
#
# Taken in the receiver, inside the one Redis script that enqueues a delivery (bot.queue.jobs), so it costs no
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
# The default `limits.events_per_minute` (``bot.config.settings.LimitSettings``), which the receiver uses
# until the worker has published a repository's own.
DEFAULT_EVENTS_PER_MINUTE: Final = 30
# The events one person's text or clicks make: new issues, edits, comments and label changes.
BUDGETED_EVENTS: Final = frozenset(
    {
        "issues.opened",
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
# A line that may hold a command (`/name` after blanks): such a comment keeps its command budget instead —
# only until a worker has published the commands it knows (``CommandNames``), and only then when the name
# is one of them.
_MAY_HOLD_A_COMMAND: Final = re.compile(
    r"^[ \t\u00a0\u200b\u200c\u200d\u2060\ufeff]*/[A-Za-z0-9]", re.MULTILINE
)
_BLANKS: Final = " \t\u00a0\u200b\u200c\u200d\u2060\ufeff"
# What the receiver reads of a comment to tell a command from text (the command grammar reads 128 KiB).
COMMAND_SCAN_CHARS: Final = 128 * 1024
# Where the workers publish the commands they run (``publish_command_names``), for the receiver.
COMMAND_NAMES_KEY: Final = "steward:command-names"


@dataclass(frozen=True)
class CommandNames:
    """The commands the workers run: ``/{prefix} NAME`` for each of ``names`` (and a bare ``/{prefix}``,
    help), ``/NAME`` for each of ``short``."""

    prefix: str
    names: frozenset[str]
    short: frozenset[str]

    def to_json(self) -> str:
        return json.dumps({"prefix": self.prefix, "names": sorted(self.names), "short": sorted(self.short)})

    @classmethod
    def from_json(cls, raw: str | bytes) -> CommandNames | None:
        try:
            data = json.loads(raw)
            return cls(
                str(data["prefix"]).lower(),
                frozenset(str(n).lower() for n in data["names"]),
                frozenset(str(n).lower() for n in data["short"]),
            )
        except (ValueError, KeyError, TypeError):
            return None


async def publish_command_names(redis: Redis, names: CommandNames) -> None:
    await redis.set(COMMAND_NAMES_KEY, names.to_json(), ex=EVENTS_LIMIT_SECONDS)


async def read_command_names(redis: Redis) -> CommandNames | None:
    raw = await redis.get(COMMAND_NAMES_KEY)
    return CommandNames.from_json(raw) if raw else None


def names_a_command(body: str, names: CommandNames) -> bool:
    """Whether a line of ``body`` (outside fenced code) starts with a command the workers run: linear, and
    never more than ``COMMAND_SCAN_CHARS`` read. ``/x`` or ``/steward x`` with an unknown ``x`` is text."""
    fence = ""
    for line in body[:COMMAND_SCAN_CHARS].splitlines():
        stripped = line.lstrip(_BLANKS)
        if stripped.startswith(("```", "~~~")):
            mark = stripped[:3]
            fence = "" if fence == mark else (fence or mark)
            continue
        if fence or not stripped.startswith("/"):
            continue
        words = stripped[1:].split(None, 2)
        if not words:
            continue
        first = words[0].lower()
        if first == names.prefix:
            if len(words) == 1 or words[1].lower() in names.names:
                return True
        elif first in names.short:
            return True
    return False


EVENTS_LIMIT_SECONDS: Final = 30 * 86_400


# The receiver names three keys per budgeted delivery, mostly for the same few senders, repositories and
# issues: their digests are remembered (a pure function; bounded).
@functools.lru_cache(maxsize=8192)
def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


def events_limit_key(forge: str, repo: str) -> str:
    """Where the worker publishes a repository's `limits.events_per_minute` for the receiver (``repo``:
    its ``repo_key``)."""
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


def event_budget_keys(event: Event, names: CommandNames | None = None) -> EventBudgetKeys | None:
    """None when ``event`` is not budgeted: not an edit, comment or label change, no sender or repository,
    or a comment with a command the workers run (``names``; before they published them, any ``/word``
    line): commands have their own per-person budget, and must not be coalesced away. Keys are digests: a
    login never becomes a Redis key as it is (DESIGN §3.9)."""
    if event.kind not in BUDGETED_EVENTS or not event.sender or event.repo is None:
        return None
    comment = event.comment if event.name == "issue_comment" else None
    if comment is not None:
        body = comment.body or ""
        if names_a_command(body, names) if names is not None else _MAY_HOLD_A_COMMAND.search(body):
            return None
    repo = repo_key(event.forge, event.repo)
    sender = event.sender.casefold()
    what = f"{event.issue_key}\0{event.kind}\0{event.label or ''}"
    return EventBudgetKeys(
        schedule=f"steward:events:{_digest(event.forge, repo, sender)}",
        limit=events_limit_key(event.forge, repo),
        pending=f"steward:events-pending:{_digest(event.forge, repo, sender, what)}",
    )
