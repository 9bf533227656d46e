"""The worker's clock: each periodic job a handler registered (``registry.every(...)``, declared in
``bot.commands.periodic``) becomes an arq cron job.

arq enqueues a cron job under the id ``<name>:<slot time in ms>`` from every worker that reaches the
slot, and refuses an id it already holds, so each slot runs once however many workers there are. The
result is kept a while so that a worker whose clock lags cannot enqueue a slot that already ran.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from arq.cron import CronJob, cron
from arq.worker import Function, func

from bot.catchup.dry_run import DryRunForge
from bot.commands.periodic import ForgeFinder, PeriodicContext, PeriodicSpec, Schedule
from bot.config import shadow
from bot.config.repo_settings import RepoConfigs
from bot.config.settings import HandlerSettings
from bot.forge import Forge, ForgeKind, RepoRef
from bot.queue.deferred import Deferred, SeenRepositories
from bot.telemetry import logs, metrics

log = logs.get("steward.periodic")


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
            would: dict[tuple[ForgeKind, RepoRef], list[str]] = {}

            async def shadowed(kind: ForgeKind, repo: RepoRef | None = None) -> Forge:
                """The forge for ``repo``; on a repository in shadow mode, one that writes nothing (what it
                would write is kept for `/steward config`: bot.config.shadow)."""
                forge = await find_forge(kind, repo)
                if repo is None or configs is None:
                    return forge
                if (await configs.get(forge, repo)).settings.mode != "shadow":
                    return forge
                return DryRunForge(forge, would.setdefault((kind, repo), []).append)

            pctx = PeriodicContext(
                spec.name, slot, settings, plog, shadowed, forges, deferred, seen, configs, registry
            )
            try:
                await spec.handler(pctx)
                for (kind, repo), lines in would.items():
                    if configs is not None:
                        await shadow.record(configs.redis, kind, repo, f"periodic {spec.name}", lines)
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


def off_the_clock(jobs: list[CronJob]) -> list[Function]:
    """The periodic jobs as plain functions: run when queued (``run_periodic_now``), never at a slot."""
    return [
        func(job.coroutine, name=job.name, timeout=job.timeout_s, keep_result=job.keep_result_s, max_tries=1)
        for job in jobs
    ]
