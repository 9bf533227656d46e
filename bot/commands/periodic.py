"""Periodic work as a handler declares it: ``PeriodicSpec`` (registered with ``registry.every(...)``) and
the ``PeriodicContext`` its handler is given. The worker's clock runs them (``bot.worker.cron``).

A periodic job reads the forge and writes the difference like any handler (DESIGN §3.2): a skipped or
repeated slot is harmless.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from bot.commands.context import EventContext, RegistryView
from bot.config.repo_settings import RepoConfigs, RepoSettings
from bot.config.settings import HandlerSettings
from bot.events.event import Event
from bot.forge import Forge, ForgeKind, RepoRef, User
from bot.queue.deferred import Deferred, SeenRepositories

ForgeFinder = Callable[[ForgeKind, RepoRef | None], Awaitable[Forge]]
PeriodicHandler = Callable[["PeriodicContext"], Awaitable[None]]


@dataclass(frozen=True)
class PeriodicSpec:
    """A job run every ``seconds`` (aligned to the clock: every 5 minutes runs at :00, :05, …)."""

    name: str
    seconds: int
    handler: PeriodicHandler


class Schedule(RegistryView, Protocol):
    """A registry as the worker's clock sees it (``bot.commands.registry.Registry`` is one): its periodic jobs
    (with their handlers), and what a job's ``repo_context`` dispatches through."""

    @property
    def periodic(self) -> Sequence[PeriodicSpec]: ...


@dataclass
class PeriodicContext:
    """What a periodic handler is given: its slot, settings, a logger, the configured forges, the
    repositories Steward has had events from, and a way to queue work for later (``bot.queue.deferred``)."""

    name: str
    slot: datetime
    settings: HandlerSettings
    log: Any
    find_forge: ForgeFinder
    forges: tuple[ForgeKind, ...]
    deferred: Deferred | None = None
    seen: SeenRepositories | None = None
    configs: RepoConfigs | None = None
    # The registry the worker runs (what a context built by ``repo_context`` dispatches through).
    registry: RegistryView | None = None

    async def settings_for(self, forge: Forge, repo: RepoRef) -> RepoSettings:
        """One repository's settings: its configuration file over the defaults (``settings``)."""
        if self.configs is None:
            return RepoSettings(self.settings)
        return await self.configs.get(forge, repo)

    def repo_context(
        self, kind: ForgeKind, repo: RepoRef, forge: Forge, me: User, config: RepoSettings
    ) -> EventContext:
        """A handler's context for work on one repository from this job, as if a `reconcile` event came."""
        if self.registry is None:
            raise RuntimeError("this periodic context has no registry to dispatch through")
        event = Event(
            forge=kind,
            delivery_id=f"periodic:{self.name}:{self.slot.isoformat()}",
            name="reconcile",
            action="periodic",
            sender="",
            repo=repo,
        )
        return EventContext(
            event=event,
            forge=forge,
            me=me,
            settings=config.settings,
            registry=self.registry,
            log=self.log.bind(repo=repo.full_name),
            deferred=self.deferred,
            config=config,
        )

    async def forge(self, kind: ForgeKind, repo: RepoRef | None = None) -> Forge:
        """The forge port for `kind` (for a GitHub App, the installation on `repo`)."""
        return await self.find_forge(kind, repo)

    async def repositories(self, kind: ForgeKind) -> list[RepoRef]:
        """The repositories of forge `kind` that Steward has had events from lately (a cache: after Redis
        is flushed, a repository is back with its next event)."""
        return await self.seen.recent(kind) if self.seen is not None else []
