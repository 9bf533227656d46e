"""Shadow mode (`mode: shadow` in a repository's configuration): what Steward would have written there.

A job on a repository in shadow mode runs its handlers against a forge that reads for real and writes nothing
(``bot.catchup.dry_run.DryRunForge``); each write it would have made is logged and kept here, newest first,
the last ``KEPT`` per repository, for `/steward config` to show."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Final

from bot.forge import ForgeKind, RepoRef, repo_key

KEPT: Final = 20
TTL: Final = 30 * 86_400


def key(kind: ForgeKind, repo: RepoRef) -> str:
    # By the repository's id (``repo_key``): a renamed repository keeps what it would have done.
    return f"steward:shadow:{repo_key(kind, repo)}"


async def record(redis: Any, kind: ForgeKind, repo: RepoRef, what: str, lines: Sequence[str]) -> None:
    """Keep ``lines`` (each "would …"), written in answer to ``what`` (e.g. "issues.labeled #12")."""
    if not lines:
        return
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    entries = [f"{when} UTC, on {what}: {line}" for line in lines]
    name = key(kind, repo)
    async with redis.pipeline(transaction=True) as pipe:
        pipe.lpush(name, *reversed(entries))
        pipe.ltrim(name, 0, KEPT - 1)
        pipe.expire(name, TTL)
        await pipe.execute()


async def recent(redis: Any, kind: ForgeKind, repo: RepoRef, count: int = 10) -> list[str]:
    """The last ``count`` things Steward would have done on ``repo``, newest first."""
    found = await redis.lrange(key(kind, repo), 0, count - 1)
    return [v.decode() if isinstance(v, bytes) else str(v) for v in found]
