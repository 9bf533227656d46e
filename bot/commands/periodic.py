"""Periodic work: handlers registered with ``registry.every(...)`` run as arq cron jobs.

arq enqueues a cron job under the id ``<name>:<slot time in ms>`` from every worker that reaches the
slot, and refuses an id it already holds, so each slot runs once however many workers there are. The
result is kept a while so that a worker whose clock lags cannot enqueue a slot that already ran.
A periodic job reads the forge and writes the difference like any handler (DESIGN §3.2): a skipped or
repeated slot is harmless.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from arq.cron import CronJob, cron

from bot import logs, metrics
from bot.config_service import RepoConfigs, RepoSettings
from bot.context import EventContext, RegistryView
from bot.deferred import Deferred, SeenRepositories
from bot.event_types import Event
from bot.forge import Forge, ForgeKind, RepoRef, User
from bot.settings import HandlerSettings

log = logs.get("steward.periodic")
ForgeFinder = Callable[[ForgeKind, RepoRef | None], Awaitable[Forge]]
PeriodicHandler = Callable[["PeriodicContext"], Awaitable[None]]


@dataclass(frozen=True)
class PeriodicSpec:
    """A job run every ``seconds`` (aligned to the clock: every 5 minutes runs at :00, :05, …)."""

    name: str
    seconds: int
    handler: PeriodicHandler


class Schedule(RegistryView, Protocol):
    """A registry as the worker's clock sees it (``bot.registry.Registry`` is one): its periodic jobs (with
    their handlers), and what a job's ``repo_context`` dispatches through."""

    @property
    def periodic(self) -> Sequence[PeriodicSpec]: ...


@dataclass
class PeriodicContext:
    """What a periodic handler is given: its slot, settings, a logger, the configured forges, the
    repositories Steward has had events from, and a way to queue work for later (``bot.deferred``)."""

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


def schedule(seconds: int) -> dict[str, set[int] | int]:
    """arq cron fields for a clock-aligned interval (see ``Registry.every``)."""
    if seconds < 60:
        return {"second": set(range(0, 60, seconds))}
    if seconds < 3600:
        return {"second": 0, "minute": set(range(0, 60, seconds // 60))}
    return {"second": 0, "minute": 0, "hour": set(range(0, 24, seconds // 3600))}


def job_name(spec: PeriodicSpec) -> str:
    return f"periodic:{spec.name}"


def cron_jobs(
    registry: Schedule,
    *,
    settings: HandlerSettings,
    find_forge: ForgeFinder,
    forges: tuple[ForgeKind, ...],
    timeout: float,
    deferred: Deferred | None = None,
    seen: SeenRepositories | None = None,
    configs: RepoConfigs | None = None,
) -> list[CronJob]:
    jobs = []
    for spec in registry.periodic:

        async def run(ctx: dict[str, Any], spec: PeriodicSpec = spec) -> str:
            score = ctx.get("score")
            slot = datetime.fromtimestamp(score / 1000, UTC) if isinstance(score, int) else datetime.now(UTC)
            plog = log.bind(periodic=spec.name, slot=slot.isoformat(), job=str(ctx.get("job_id", "")))
            pctx = PeriodicContext(
                spec.name, slot, settings, plog, find_forge, forges, deferred, seen, configs, registry
            )
            try:
                await spec.handler(pctx)
            except Exception as exc:
                metrics.JOBS.labels(job_name(spec), "failed").inc()
                plog.error("periodic job failed", error=str(exc), error_type=type(exc).__name__)
                return f"failed: {type(exc).__name__}"
            metrics.JOBS.labels(job_name(spec), "ok").inc()
            return "ok"

        run.__qualname__ = run.__name__ = job_name(spec)
        jobs.append(
            cron(
                run,
                name=job_name(spec),
                unique=True,
                timeout=timeout,
                keep_result=max(60.0, float(spec.seconds)),
                max_tries=1,
                **schedule(spec.seconds),  # type: ignore[arg-type]
            )
        )
    return jobs
