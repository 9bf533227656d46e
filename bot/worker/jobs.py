"""The arq worker: one job per delivery, dispatched to the registered handlers.

- Jobs that touch the same issue never run at once: a Redis lock per issue. A job that
  finds the lock taken waits briefly, then defers itself, so an event that arrives while
  another runs is processed after it (no lost update) without holding a worker slot.
- Failures: ``RateLimited`` (the forge's limit, or a write budget that would keep the job
  waiting) defers the job until there is room. A refusal another try cannot change (404, 403,
  422) parks the job in the dead-letter list at once. Everything else — the forge down, a
  dropped connection, Redis gone, a job out of time, an error in Steward — re-runs the job
  with backoff up to ``STEWARD_JOB_TRIES`` times, then parks it (``bot.queue.dead_letters``).
- SIGTERM: in-flight jobs get ``job_completion_wait`` seconds to finish, then are cancelled
  and re-queued by arq; handlers are idempotent, so a re-run writes nothing twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from arq import Retry
from arq.connections import ArqRedis
from arq.cron import cron
from arq.worker import Worker, func

from bot.catchup.comments import COMMENT_DONE_TTL, LAST_EVENT_KEY, done_key_of
from bot.catchup.dry_run import DryRunForge
from bot.catchup.installed import repos_to_catch_up
from bot.catchup.reconcile import last_run, reconcile_all
from bot.commands.context import EventContext
from bot.commands.dispatch import dispatch
from bot.commands.registry import Registry, load_registry
from bot.config import shadow
from bot.config.repo_settings import RepoConfigs, RepoSettings
from bot.config.settings import HandlerSettings, Settings
from bot.events.event import CUT, Event, NewerEventFormat
from bot.forge import (
    Forge,
    ForgeError,
    ForgeKind,
    NotFound,
    PermissionDenied,
    RateLimited,
    RepoRef,
    Unauthorized,
    User,
    ValidationFailed,
)
from bot.forge.etag_store import EtagStore
from bot.forge.gitea import GiteaForge
from bot.forge.github import GitHubForges
from bot.forge.github_transport import SharedSession
from bot.forge.write_budget import WriteBudget, writes_for
from bot.queue.budgets import CommandBudget, CommandNames, publish_command_names
from bot.queue.dead_letters import DeadLetters
from bot.queue.deferred import Deferred, SeenRepositories
from bot.queue.jobs import CATCH_UP_KEY as CATCH_UP_KEY  # re-exported: tests and operators know it here
from bot.queue.jobs import (
    JOB_FUNCTION,
    QUEUE_NAME,
    RECONCILE_FUNCTION,
    REDIS_ERRORS,
    make_redis,
    queue_catch_up,
)
from bot.queue.locks import Busy, IssueLocks, issue_lock
from bot.queue.once_across_workers import Memo
from bot.records.signing import Keyring, install_from_settings
from bot.records.signing_since import signing_start
from bot.telemetry import logs, metrics
from bot.worker import forge_auth
from bot.worker.claims import ALIVE_KEY, ALIVE_SECONDS, ResilientWorker
from bot.worker.cron import cron_jobs, off_the_clock, schedule
from bot.worker.health import serve as serve_status
from bot.worker.redis_watch import RedisWatch
from bot.worker.state_file import BEAT_SECONDS, StateFile, check_redis
from bot.worker.texts import whole

log = logs.get("steward.worker")

JOB_MAX_TRIES = 1000


@dataclass
class Runtime:
    """What every job shares in one process."""

    settings: Settings
    redis: ArqRedis
    http: SharedSession
    registry: Registry
    github: GitHubForges | None = None
    gitea: GiteaForge | None = None
    handler_settings: HandlerSettings = field(default_factory=HandlerSettings)
    command_budget: CommandBudget | None = None
    dead: DeadLetters = field(init=False)
    configs: RepoConfigs = field(init=False)
    deferred: Deferred = field(init=False)
    seen: SeenRepositories = field(init=False)
    state: StateFile = field(init=False)

    def __post_init__(self) -> None:
        self.dead = DeadLetters(self.redis, max_bytes=self.settings.dead_max_bytes)
        self.configs = RepoConfigs(
            self.redis,
            self.handler_settings,
            commands=self.registry.configurable,
            require=self.settings.require_config,
            org_repos={
                "github": self.settings.github_org_config_repo,
                "gitea": self.settings.gitea_org_config_repo,
            },
        )
        self.deferred = Deferred(self.redis)
        self.seen = SeenRepositories(self.redis)
        self.state = StateFile(getattr(self.settings, "state_file", None))

    async def forge_for(self, event: Event) -> Forge:
        return await self.forge(event.forge, event.repo, installation_id=event.installation_id)

    async def forge(
        self, kind: ForgeKind, repo: RepoRef | None = None, *, installation_id: int | None = None
    ) -> Forge:
        """The forge for an event, or for periodic work (GitHub: the token, or the App's installation)."""
        if kind == "github":
            if self.github is None:
                raise ForgeError("GitHub is not configured (STEWARD_GITHUB_TOKEN or STEWARD_GITHUB_APP_ID)")
            return await self.github.for_event(installation_id, repo)
        if kind == "gitea":
            if self.gitea is None:
                raise ForgeError("Gitea is not configured (STEWARD_GITEA_URL and STEWARD_GITEA_TOKEN)")
            return self.gitea
        raise ForgeError(f"forge {kind!r} is not configured")

    @property
    def forge_kinds(self) -> tuple[ForgeKind, ...]:
        kinds: list[ForgeKind] = []
        if self.github is not None:
            kinds.append("github")
        if self.gitea is not None:
            kinds.append("gitea")
        return tuple(kinds)

    async def aclose(self) -> None:
        await self.http.aclose()
        if self.gitea is not None:
            self.gitea.close()


def build_runtime(
    settings: Settings,
    redis: ArqRedis,
    registry: Registry | None = None,
    *,
    on_budget_wait: Callable[[float], None] | None = None,
) -> Runtime:
    """``on_budget_wait``: a caller that waits for the write budget however long it takes (`steward
    reconcile`: told each wait's length) rather than deferring the work as a job does."""
    http = SharedSession(timeout=settings.http_timeout_seconds, max_connections=settings.max_jobs * 4)
    budget = WriteBudget(
        redis,
        [(settings.write_budget_per_minute, 60.0), (settings.write_budget_per_hour, 3600.0)],
        max_wait=None if on_budget_wait is not None else settings.budget_max_wait_seconds,
        on_wait=on_budget_wait,
    ).share(repository=settings.write_share_per_repository, person=settings.write_share_per_person)
    github = None
    if settings.github_token or settings.github_app_id:
        github = GitHubForges.from_settings(settings, http, budget, etags=EtagStore(redis))
    gitea = None
    if settings.gitea_url and settings.gitea_token:
        gitea = GiteaForge.from_settings(settings, budget)
    return Runtime(
        settings, redis, http, registry or load_registry(), github, gitea, command_budget=CommandBudget(redis)
    )


async def _failures(redis: ArqRedis, job_id: str) -> int:
    key = f"steward:failures:{job_id}"
    count = int(await redis.incr(key))
    await redis.expire(key, 86400)
    return count


# Forge answers that another try cannot change: the request itself was refused (the thing is gone, the
# bot may not do it, the forge rejected the content). Anything else — the forge down or slow, Redis gone,
# a job that ran out of time, an error in Steward — may pass, so the job is tried again.
_PERMANENT = (NotFound, PermissionDenied, ValidationFailed)


def _is_permanent(exc: BaseException) -> bool:
    if isinstance(exc, _PERMANENT):
        return True
    status = getattr(exc, "status", None)
    return isinstance(exc, ForgeError) and isinstance(status, int) and 400 <= status < 500 and status != 429


async def process_event(ctx: dict[str, Any], raw_event: str) -> str:
    """One delivery's job. Failures the bot did not cause are retried with backoff up to
    ``STEWARD_JOB_TRIES`` times; a job that fails for good goes to the dead-letter list."""
    runtime: Runtime = ctx["runtime"]
    job_id = str(ctx.get("job_id", ""))
    try:
        event = Event.from_json(raw_event)
    except NewerEventFormat as exc:
        # A newer Steward queued it (a rolling upgrade): it waits for a worker that reads it, never dropped.
        log.warning("a job of a newer Steward waits for an upgraded worker", job=job_id, error=str(exc))
        metrics.child(metrics.JOBS, "-", "deferred_newer_format").inc()
        raise Retry(defer=30.0 + random.random() * 10) from None
    except Exception as exc:  # unreadable: parked where an operator sees it, not dropped by arq
        unreadable = Event(
            forge="github", delivery_id=job_id, name="reconcile", action="unreadable", sender=""
        )
        return await _dead(runtime, unreadable, raw_event, job_id, log.bind(job=job_id), exc, 1)
    jlog = log.bind(delivery=event.delivery_id, kind=event.kind, repo=str(event.repo), job=job_id)
    try:
        async with asyncio.timeout(runtime.settings.job_timeout_seconds):
            outcome = await _handle(runtime, event, job_id, jlog, int(ctx.get("job_try") or 1))
    except Retry:
        raise
    except REDIS_ERRORS as exc:
        # Redis went away mid-job (the lock, the budget, the failure count): the job runs again once it
        # is back — the worker records the deferral when it can. Nothing here may touch Redis.
        # One warning per outage comes from the worker's loop; each job only notes it.
        jlog.info("Redis is unreachable; the job will run again", error=type(exc).__name__)
        metrics.child(metrics.JOBS, "-", "retried").inc()
        raise Retry(defer=1.0 + random.random()) from None
    except Unauthorized as exc:
        # The forge refuses Steward's credentials: an outage, not this job's failure (bot.worker.forge_auth).
        try:
            pause = await forge_auth.unauthorized(runtime.redis, event.forge, str(exc))
        except REDIS_ERRORS:
            pause = forge_auth.MIN_PAUSE
        metrics.child(metrics.JOBS, "-", "deferred_auth").inc()
        raise Retry(defer=pause * (1.0 + random.random() / 4)) from None
    except RateLimited as exc:
        jlog.warning("rate limited; job deferred", retry_after=round(exc.retry_after, 2))
        metrics.child(metrics.JOBS, "-", "rate_limited").inc()
        raise Retry(defer=exc.retry_after) from None
    except Exception as exc:
        # Runs of this job so far, this one included: a permanent refusal ends it on its first.
        runs: int | None = None
        if not _is_permanent(exc):
            try:
                failures = runs = await _failures(runtime.redis, job_id)
            except REDIS_ERRORS:
                raise Retry(defer=1.0 + random.random()) from None
            if failures < runtime.settings.job_tries:
                base = runtime.settings.job_retry_base_seconds
                delay = min(60.0, base * 2.0**failures) * (0.5 + random.random() / 2)
                jlog.warning(
                    "job failed; it will run again",
                    error=_describe(exc),
                    error_type=type(exc).__name__,
                    failure=failures,
                    defer=round(delay, 2),
                    **_trace(exc),
                )
                metrics.child(metrics.JOBS, "-", "retried").inc()
                raise Retry(defer=delay) from None
        try:
            return await _dead(runtime, event, raw_event, job_id, jlog, exc, runs)
        except REDIS_ERRORS:
            raise Retry(defer=1.0 + random.random()) from None
    # A first try has no failures counted (a job that failed is deferred and tried again; a dead letter's
    # retry starts after _dead cleared them): one Redis call fewer per job.
    if int(ctx.get("job_try") or 2) > 1:
        with contextlib.suppress(*REDIS_ERRORS):
            await runtime.redis.delete(f"steward:failures:{job_id}")
    return outcome


def _trace(exc: BaseException) -> dict[str, BaseException]:
    """An error in Steward itself carries its stack trace into the log line (``exception``); a forge's
    refusal or a time limit says all there is in its message."""
    return {} if isinstance(exc, ForgeError | TimeoutError) else {"exc_info": exc}


def _describe(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return f"the job ran out of time ({type(exc).__name__})"
    return str(exc) or type(exc).__name__


async def _busy_defer(redis: Any, lock: str | None, job_try: int) -> float:
    """How long a job kept from its issue by another job's lock waits before it is tried again: a backoff
    that doubles with each try (0.5 s, 1 s, 2 s … at most ``BUSY_MAX_DEFER``), never past the lock's own
    expiry — not a claim every half second for as long as a long job (or a dead worker's) holds the lock."""
    backoff = min(BUSY_MAX_DEFER, 0.25 * 2.0 ** min(max(job_try, 1), 8))
    if lock is not None:
        left = await redis.pttl(f"steward:lock:{lock}")
        if isinstance(left, int) and left >= 0:
            backoff = min(backoff, left / 1000.0)
    return max(0.1, backoff) * (0.8 + random.random() * 0.4)


# The longest a job blocked on another job's issue lock waits between tries (a lock given back sooner is
# found on the next try; a dead worker's job is re-run within seconds: bot.queue.liveness).
BUSY_MAX_DEFER = 30.0


async def _handle(runtime: Runtime, event: Event, job_id: str, jlog: Any, job_try: int = 1) -> str:
    if (wait := await forge_auth.paused(runtime.redis, event.forge)) > 0:
        # The forge refused Steward's credentials a moment ago: wait with everyone else, ask it nothing.
        metrics.child(metrics.JOBS, "-", "deferred_auth").inc()
        raise Retry(defer=wait + random.random())
    forge = await runtime.forge_for(event)
    me: User = await forge.whoami()
    await forge_auth.accepted(runtime.redis, event.forge)
    if event.extra.get(CUT) and event.repo is not None:
        event = await whole(forge, event)
    if event.sender and event.sender.casefold() == me.login.casefold():
        metrics.child(metrics.JOBS, "-", "own_event").inc()
        return "ignored: sent by Steward itself"
    repo_settings = RepoSettings(runtime.handler_settings)
    if event.repo is not None:
        # For work that no event starts: Gitea's milestones (no webhooks), the catch-up after downtime.
        await runtime.seen.note(event.forge, event.repo)
        if event.name == "repository" and not event.action.startswith("steward-"):
            # Renamed or transferred: what Steward keeps of it is keyed by its id (bot.forge.repo_key) and
            # follows it; noting it above put its new name in the list of repositories seen.
            jlog.info("repository renamed or transferred", renamed_from=event.extra.get("renamed_from", ""))
        if event.name == "push" or (event.name == "pull_request" and event.action == "closed"):
            # Any push may have changed the file (a payload's commit list can be cut short): read it again. So
            # may a merge, whose push event can come after it (the onboarding pull request's merge acts on
            # the settings it switched on: handlers.onboarding.bot).
            await runtime.configs.invalidate(event.forge, event.repo)
    key = event.issue_key or f"{event.forge}:global"
    lock_ttl = runtime.settings.job_timeout_seconds + runtime.settings.job_timeout_backstop_seconds
    done = done_key_of(event)
    # One round trip takes the lock, reads the comment's mark and the repository's cached settings; a job
    # that ends well writes its marks and gives the lock back in one more (bot.queue.locks).
    lookup = runtime.configs.lookup(event.forge, event.repo) if event.repo is not None else None
    async with issue_lock(
        runtime.redis, key, ttl=lock_ttl, wait=2.0, owner=job_id or None, done_key=done, alongside=lookup
    ) as held:
        if not held:
            metrics.child(metrics.JOBS, "-", "deferred_busy").inc()
            raise Retry(defer=await _busy_defer(runtime.redis, key, job_try))
        if event.repo is not None:
            repo_settings = await runtime.configs.get(forge, event.repo, looked_up=held.alongside())
        if held.done:
            # Its commands ran already (the catch-up queued this comment, or the forge redelivered it).
            metrics.child(metrics.JOBS, "-", "duplicate_comment").inc()
            return "ignored: this comment's commands were handled already"
        locks = IssueLocks(runtime.redis, owner=job_id, ttl=lock_ttl)
        # Shadow mode: the handlers run against a forge that writes nothing; what it would write is logged and
        # kept for `/steward config` (bot.config.shadow).
        would: list[str] = []
        shadowed = repo_settings.settings.mode == "shadow" and event.repo is not None
        ectx = EventContext(
            event=event,
            forge=DryRunForge(forge, would.append) if shadowed else forge,
            live_forge=forge if shadowed else None,
            me=me,
            settings=repo_settings.settings,
            registry=runtime.registry,
            log=jlog,
            prefix=runtime.settings.command_prefix,
            command_budget=runtime.command_budget,
            locks=locks,
            config=repo_settings,
            memo=Memo(runtime.redis),
            deferred=runtime.deferred,
        )
        try:
            # The writes are this repository's and this person's, each held to a share of the budget.
            with writes_for(event.repo.full_name if event.repo else "", event.sender or ""):
                ran = await dispatch(ectx, prefix=runtime.settings.command_prefix)
        except Busy:
            metrics.child(metrics.JOBS, "-", "deferred_busy").inc()
            raise Retry(defer=await _busy_defer(runtime.redis, None, job_try)) from None
        if would and event.repo is not None:
            what = f"{event.name}.{event.action}" if event.action else event.name
            what += f" #{event.issue.number}" if event.issue is not None else ""
            for line in would:
                jlog.info("shadow mode: not written", would=line)
            await shadow.record(runtime.redis, event.forge, event.repo, what, would)
        marks = [(f"{LAST_EVENT_KEY}:{event.forge}", repr(time.time()), 30 * 86_400)]
        if done is not None:
            marks.insert(0, (done, "1", COMMENT_DONE_TTL))
        await held.release(marks)
    for name in ran:
        metrics.child(metrics.JOBS, name, "ok").inc()
    jlog.info("event handled", handlers=ran)
    return f"ok: {', '.join(ran) or 'nothing to do'}"


async def _dead(
    runtime: Runtime,
    event: Event,
    raw_event: str,
    job_id: str,
    jlog: Any,
    exc: BaseException,
    runs: int | None = None,
) -> str:
    # ``runs``: counted already (a failure that may pass); else the earlier failures and this run.
    tries = runs if runs is not None else int(await runtime.redis.get(f"steward:failures:{job_id}") or 0) + 1
    # A comment's commands are one subject whichever job ran them (its delivery, a catch-up, a retry).
    subject = done_key_of(event) or ""
    await runtime.dead.add(
        job_id=job_id, event=event, raw_event=raw_event, exc=exc, tries=tries, subject=subject
    )
    await runtime.redis.delete(f"steward:failures:{job_id}")
    metrics.child(metrics.JOBS, "-", "dead").inc()
    jlog.error(
        "job failed for good; parked in the dead-letter list (steward dead list)",
        error=_describe(exc),
        error_type=type(exc).__name__,
        tries=tries,
        **_trace(exc),
    )
    return f"dead: {type(exc).__name__}"


async def reconcile_job(ctx: dict[str, Any], reason: str = "periodic") -> str:
    """`steward reconcile` for every repository Steward is installed on (``bot.catchup.installed``), as a job
    (periodic, or a catch-up)."""
    runtime: Runtime = ctx["runtime"]
    repos = await repos_to_catch_up(runtime, runtime.forge_kinds)
    if not repos:
        return "nothing to reconcile"
    owner = str(ctx.get("job_id") or uuid.uuid4())
    ttl = runtime.settings.reconcile_timeout_seconds + 10
    if not await runtime.redis.set(RECONCILE_RUNNING_KEY, owner, nx=True, ex=ttl):
        return "a reconcile is already running"
    try:
        report = await reconcile_all(runtime, repos)
    finally:
        with contextlib.suppress(*REDIS_ERRORS):
            if await runtime.redis.get(RECONCILE_RUNNING_KEY) in (owner, owner.encode()):
                await runtime.redis.delete(RECONCILE_RUNNING_KEY)
    (log.warning if report.errors else log.info)(
        "reconciled",
        reason=reason,
        repos=report.repos,
        issues=report.issues,
        redelivered=len(report.redelivered),
        commands=len(report.commands),
        left=report.left,
        incremental=report.incremental,
        stopped=report.stopped,
        busy=len(report.skipped_busy),
        notes=report.notes[:5],
        errors=report.errors[:5],
    )
    if report.left or report.stopped:
        # Redeliveries are paced, and a run stops at its time or quota share: the rest go in the next
        # minute's run rather than the next hour's.
        await runtime.redis.enqueue_job(
            RECONCILE_FUNCTION,
            "redeliveries-left",
            _job_id=f"steward:reconcile:left:{uuid.uuid4().hex}",
            _defer_by=60.0,
        )
    if not report.stopped:
        # The window a lost Redis would take with it (bot.worker.state_file).
        for kind in runtime.forge_kinds:
            if (until := await last_run(runtime.redis, kind)) is not None:
                runtime.state.caught_up(kind, until.timestamp())
    metrics.child(metrics.JOBS, RECONCILE_FUNCTION, "failed" if report.errors else "ok").inc()
    return f"{report.repos} repositories, {report.issues} issues, {len(report.redelivered)} redelivered"


async def _beat(state: StateFile) -> None:
    """The worker's heartbeat in the state file, for as long as it runs (``bot.worker.state_file``)."""
    while True:
        state.beat(force=True)
        await asyncio.sleep(BEAT_SECONDS)


# Held while a reconcile job runs: arq's in-progress mark lasts an event job's timeout, shorter than a
# reconcile may take, and a second worker must not start the same reconcile beside it.
RECONCILE_RUNNING_KEY = "steward:reconcile:running"


def create_worker(
    settings: Settings,
    *,
    handle_signals: bool = True,
    registry: Registry | None = None,
    burst: bool = False,
    handler_settings: HandlerSettings | None = None,
    clock: bool = True,
) -> Worker:
    """``handler_settings``: the defaults every repository starts from (tests and the demo lift limits).
    ``clock``: run the periodic jobs at their slots (``steward worker``); without it they run only when queued
    (``run_periodic_now``: the demo and the tests, whose request counts a slot passing mid-test changes)."""
    redis = make_redis(settings.redis_url)
    runtime = build_runtime(settings, redis, registry)
    if handler_settings is not None:
        runtime.handler_settings = runtime.configs.defaults = handler_settings
    watch = RedisWatch(redis, name="worker")
    started: list[object] = []
    beating: list[asyncio.Task[None]] = []
    keyrings: list[Keyring] = []

    async def startup(ctx: dict[str, Any]) -> None:
        # Runs again when the worker starts over after Redis went away before its polling loop.
        ctx["runtime"] = runtime
        if await check_redis(redis, runtime.state, process="worker", catch_up=settings.reconcile_on_start):
            await redis.set(ALIVE_KEY, "starting", ex=ALIVE_SECONDS)  # that catch-up is the start's too
        ctx["keyring"] = await install_from_settings(settings, redis, runtime.state)
        keyrings[:] = [ctx["keyring"]]
        # The receiver exempts from the event budget only comments with one of these (issue 35 item 10).
        registry = runtime.registry
        await publish_command_names(
            redis,
            CommandNames(
                settings.command_prefix.lower(),
                frozenset(n.lower() for n in registry.commands),
                frozenset(n.lower() for n in registry.short_names()),
            ),
        )
        if settings.worker_metrics_port and not started:
            started.append(await serve_status(settings.worker_metrics_port, watch))
        if runtime.state.path is not None and not beating:
            beating.append(asyncio.create_task(_beat(runtime.state)))
        if settings.reconcile_on_start:
            # No worker ran for a while: events may have been refused or lost meanwhile.
            if not await redis.set(ALIVE_KEY, "starting", ex=ALIVE_SECONDS, nx=True):
                return
            log.info("no worker ran for a while; catching up (steward reconcile)")
            await queue_catch_up(redis, "start")

    async def redis_back() -> None:
        if await check_redis(redis, runtime.state, process="worker", catch_up=settings.reconcile_on_start):
            # Emptied: that catch-up reaches back to the last one completed; Redis learns the signing start.
            for keyring in (k for k in keyrings if k.since > 0):  # a start known, never made up
                await signing_start(redis, keyring.since, runtime.state, warn=False)
            return
        if settings.reconcile_on_start:
            await queue_catch_up(redis, "redis-back")  # the receiver answered 503 meanwhile

    async def shutdown(ctx: dict[str, Any]) -> None:
        for task in beating:
            task.cancel()
        for server in started:
            server.close()  # type: ignore[attr-defined]
        await runtime.aclose()

    periodic = cron_jobs(
        runtime.registry,
        settings=runtime.handler_settings,
        find_forge=runtime.forge,
        forges=runtime.forge_kinds,
        timeout=settings.job_timeout_seconds,
        deferred=runtime.deferred,
        seen=runtime.seen,
        configs=runtime.configs,
    )
    if settings.reconcile_interval_seconds:
        periodic.append(
            cron(
                reconcile_job,
                name=f"cron:{RECONCILE_FUNCTION}",
                unique=True,
                timeout=settings.reconcile_timeout_seconds,
                keep_result=60.0,
                max_tries=1,
                **schedule(settings.reconcile_interval_seconds),  # type: ignore[arg-type]
            )
        )
    watch.on_back.append(redis_back)
    functions = [
        func(process_event, name=JOB_FUNCTION, max_tries=JOB_MAX_TRIES),
        func(reconcile_job, name=RECONCILE_FUNCTION, max_tries=1, timeout=settings.reconcile_timeout_seconds),
    ]
    if not clock:
        functions += off_the_clock(periodic)
    worker = ResilientWorker(
        functions=functions,
        cron_jobs=periodic if clock else [],
        redis_pool=redis,
        queue_name=QUEUE_NAME,
        on_startup=startup,
        on_shutdown=shutdown,
        poll_delay=settings.worker_poll_delay_seconds,
        keep_result=60,
        max_jobs=settings.max_jobs,
        # Steward's own time limit (in process_event) fires first and retries the job; arq's is a backstop.
        job_timeout=settings.job_timeout_seconds + settings.job_timeout_backstop_seconds,
        job_completion_wait=20,
        handle_signals=handle_signals,
        burst=burst,
        health_check_interval=30,
        watch=watch,
    )
    # arq marks a running job "in progress" for its longest function timeout plus 10 s — the reconcile's
    # 30 minutes — so a job whose worker was killed (SIGKILL, OOM) waited half an hour to run again
    # (tests/faults/test_worker_killed.py). An event job's mark now lasts its own timeout; a reconcile
    # that outlives it is kept from running twice by its own lock (RECONCILE_RUNNING_KEY).
    worker.in_progress_timeout_s = settings.job_timeout_seconds + settings.job_timeout_backstop_seconds + 10
    return worker
