"""Per-issue locks in Redis: jobs that touch the same issue never run at the same time.

The worker holds the lock of the issue its event names for the whole job. A handler that also writes on
another issue (an approved bug refining its stories) holds that issue's lock too, for as long as it writes
there (``IssueLocks.hold``), so it never interleaves with that issue's own events.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import uuid
from collections.abc import AsyncIterator, Awaitable, Sequence
from contextlib import asynccontextmanager
from typing import Any, cast

from redis import exceptions as redis_errors
from redis.asyncio import Redis

from bot.forge import RepoRef, repo_key


class Busy(Exception):
    """Another job holds an issue's lock: the job is deferred and runs again shortly."""


def issue_key(forge: str, repo: RepoRef, number: int) -> str:
    """The lock key of an issue (the same as ``Event.issue_key``): the repository by id (``repo_key``), so
    a job that still names the old name of a renamed repository waits for one naming the new."""
    return f"{repo_key(forge, repo)}#{number}"


# Gives the lock back if the caller still holds it. A job that ends well writes its last marks in the same
# call (KEYS[2..]: each key's value and lifetime in seconds in ARGV, in pairs), before the release, as the
# two round trips it replaces did.
_RELEASE = """
for i = 2, #KEYS do
  redis.call('SET', KEYS[i], ARGV[2 * i - 2], 'EX', ARGV[2 * i - 1])
end
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

# Takes the lock (or keeps it: the same owner). With KEYS[2], a mark that says the job's work was done
# already: 2 when it is there (the lock is taken all the same, and given back by the caller), so taking the
# lock and reading the mark cost one round trip.
_ACQUIRE = """
local current = redis.call('GET', KEYS[1])
if current == false or current == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  if KEYS[2] and redis.call('EXISTS', KEYS[2]) == 1 then return 2 end
  return 1
end
return 0
"""


class LuaScript:
    """A Lua script sent by its SHA-1 (EVALSHA), its source only when Redis does not know it yet (after a
    restart or a SCRIPT FLUSH: a NOSCRIPT answer), instead of the source with every call."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()

    async def __call__(self, redis: Redis, keys: Sequence[str], *args: str) -> Any:
        try:
            return await cast(Awaitable[Any], redis.evalsha(self.sha, len(keys), *keys, *args))
        except redis_errors.NoScriptError:
            return await cast(Awaitable[Any], redis.eval(self.source, len(keys), *keys, *args))


_ACQUIRE_SCRIPT = LuaScript(_ACQUIRE)
_RELEASE_SCRIPT = LuaScript(_RELEASE)
_REDIS_DOWN = (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError)


# A read sent in the same round trip as the first try for the lock: a script, its keys and its arguments.
Alongside = tuple[LuaScript, Sequence[str], Sequence[str]]


class Held:
    """An issue's lock as ``issue_lock`` yields it: true when taken; ``done`` when the mark asked about
    (``done_key``) was there; ``alongside()`` the answer of the read sent with the first try."""

    def __init__(
        self, redis: Redis, name: str, token: str, *, acquired: bool, done: bool, alongside: Any = None
    ) -> None:
        self._redis = redis
        self._name = name
        self._token = token
        self.acquired = acquired
        self.done = done
        self.released = not acquired
        self._alongside = alongside

    def alongside(self) -> Any:
        """What the ``alongside`` read answered (raises what it raised)."""
        if isinstance(self._alongside, BaseException):
            raise self._alongside
        return self._alongside

    def __bool__(self) -> bool:
        return self.acquired

    async def release(self, marks: Sequence[tuple[str, str, int]] = ()) -> None:
        """Write ``marks`` (key, value, lifetime in seconds), then give the lock back, in one call. Shielded:
        a job cancelled at shutdown still gives its lock back. Should Redis fail meanwhile, the lock is
        given back again on the way out of ``issue_lock`` (the release is idempotent)."""
        if self.released:
            return
        keys = [self._name, *(key for key, _, _ in marks)]
        args = [self._token]
        for _, value, seconds in marks:
            args += [value, str(int(seconds))]
        await asyncio.shield(_RELEASE_SCRIPT(self._redis, keys, *args))
        self.released = True


@asynccontextmanager
async def issue_lock(
    redis: Redis,
    key: str,
    *,
    ttl: float,
    wait: float,
    owner: str | None = None,
    done_key: str | None = None,
    alongside: Alongside | None = None,
) -> AsyncIterator[Held]:
    """Hold the per-issue lock; yields a false ``Held`` when it stayed taken for ``wait`` seconds.

    ``owner`` is the job id: a job re-run after its worker died or was cut off by shutdown
    takes back its own lock instead of waiting for it to expire. ``done_key``: a mark read in the same
    call as the lock is taken (``Held.done``). ``alongside``: a read sent in the same round trip as the
    first try (``Held.alongside()``), e.g. the repository's cached settings.
    """
    token = owner or uuid.uuid4().hex
    name = f"steward:lock:{key}"
    keys = [name] if done_key is None else [name, done_key]
    args = (token, str(int(ttl * 1000)))
    deadline = asyncio.get_running_loop().time() + wait
    answer: Any = None
    if alongside is None:
        taken = int(await _ACQUIRE_SCRIPT(redis, keys, *args))
    else:
        taken, answer = await _acquire_alongside(redis, keys, args, alongside)
    while not taken and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.02 + random.random() * 0.03)
        taken = int(await _ACQUIRE_SCRIPT(redis, keys, *args))
    held = Held(redis, name, token, acquired=bool(taken), done=taken == 2, alongside=answer)
    try:
        yield held
    finally:
        if not held.released:
            # With Redis gone the lock is given back once Redis is back (``release_pending``): the job may
            # have finished, and the issue's other events must not wait for the lock to expire.
            try:
                await held.release()
            except _REDIS_DOWN:
                _PENDING.add((name, token))


async def _acquire_alongside(
    redis: Redis, keys: Sequence[str], args: Sequence[str], alongside: Alongside
) -> tuple[int, Any]:
    """The first try for the lock and the ``alongside`` read, pipelined: one round trip. A script Redis
    does not know yet (NOSCRIPT: it ran nothing) is sent again by itself; the read's other errors are
    kept for ``Held.alongside()``, so a lock that was taken is always given back."""
    script, other_keys, other_args = alongside
    async with redis.pipeline(transaction=False) as pipe:
        pipe.evalsha(_ACQUIRE_SCRIPT.sha, len(keys), *keys, *args)
        pipe.evalsha(script.sha, len(other_keys), *other_keys, *other_args)
        taken, answer = await pipe.execute(raise_on_error=False)
    if isinstance(taken, redis_errors.NoScriptError):
        taken = await _ACQUIRE_SCRIPT(redis, keys, *args)
    elif isinstance(taken, BaseException):
        raise taken
    if isinstance(answer, redis_errors.NoScriptError):
        try:
            answer = await script(redis, other_keys, *other_args)
        except Exception as exc:  # kept for the caller, who holds the lock by now
            answer = exc
    return int(taken), answer


# Locks whose release failed because Redis was unreachable, given back once it answers again.
_PENDING: set[tuple[str, str]] = set()


def pending_releases() -> int:
    return len(_PENDING)


async def release_pending(redis: Redis) -> int:
    """Give back the locks this process could not release during an outage; returns how many."""
    released = 0
    for name, token in list(_PENDING):
        await _RELEASE_SCRIPT(redis, [name], token)
        _PENDING.discard((name, token))
        released += 1
    return released


class IssueLocks:
    """What a job needs to hold other issues' locks: Redis, the job's id (re-runs take back their own
    locks) and the lock lifetime."""

    def __init__(self, redis: Redis, *, owner: str, ttl: float, wait: float = 2.0) -> None:
        self._redis = redis
        self._owner = owner or uuid.uuid4().hex
        self._ttl = ttl
        self._wait = wait
        self._held: set[str] = set()

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        """Hold ``key``'s lock, or raise ``Busy`` when another job keeps it for longer than ``wait``. Held
        again inside itself (a pass that holds an issue calls an effect that holds it too), it is kept, and
        given back once, by the outermost hold."""
        if key in self._held:
            yield
            return
        async with issue_lock(
            self._redis, key, ttl=self._ttl, wait=self._wait, owner=f"{self._owner}>{key}"
        ) as got:
            if not got:
                raise Busy(f"{key} is being changed by another job")
            self._held.add(key)
            try:
                yield
            finally:
                self._held.discard(key)
