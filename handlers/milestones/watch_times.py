"""Since when Steward has watched a repository's milestones, and when the periodic job last looked — two
times kept in Redis (a cache, DESIGN §3.1) so that a milestone closed before Steward's first look at it, or
while Steward was not running, is still checked, and a milestone closed before Steward watched is not.

- *watching since*: the first item event or periodic look of the milestone gate on the repository (it is
  only invited then: nothing acts before, DESIGN §3.15). Set once; forgotten after 30 days (then set anew).
- *last poll*: when the periodic job last listed the repository's milestones.

After Redis is flushed both start over at the next event or look: a closure from before that, on a
milestone Steward had no dashboard for, is left alone (Steward never reopens history; docs/milestones.md).
"""

from __future__ import annotations

from datetime import UTC, datetime

from bot.forge import ForgeKind, RepoRef, repo_key
from bot.queue.deferred import Deferred

KEEP_SECONDS = 30 * 86_400


def _key(what: str, kind: ForgeKind, repo: RepoRef) -> str:
    return f"milestones:{what}:{repo_key(kind, repo)}"


def _time(value: float | None) -> datetime | None:
    return datetime.fromtimestamp(value, UTC) if value is not None else None


async def note_watching(deferred: Deferred | None, kind: ForgeKind, repo: RepoRef, now: datetime) -> None:
    """Steward watches this repository's milestones from ``now`` on, unless it did already."""
    if deferred is not None:
        await deferred.mark(_key("since", kind, repo), now.timestamp(), ttl=KEEP_SECONDS, only_new=True)


async def watching_since(deferred: Deferred | None, kind: ForgeKind, repo: RepoRef) -> datetime | None:
    return _time(await deferred.marked(_key("since", kind, repo))) if deferred is not None else None


async def last_poll(deferred: Deferred | None, kind: ForgeKind, repo: RepoRef) -> datetime | None:
    return _time(await deferred.marked(_key("polled", kind, repo))) if deferred is not None else None


async def note_poll(deferred: Deferred | None, kind: ForgeKind, repo: RepoRef, when: datetime) -> None:
    if deferred is not None:
        await deferred.mark(_key("polled", kind, repo), when.timestamp(), ttl=KEEP_SECONDS)
        await deferred.mark(_key("since", kind, repo), when.timestamp(), ttl=KEEP_SECONDS, only_new=True)
