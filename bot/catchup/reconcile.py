"""Catch-up after downtime: `steward reconcile` and its periodic job.

Neither forge retries a failed delivery, so an event that arrived while Steward was down (or that was
refused with 503) is lost unless someone looks. Reconciling re-derives, level-triggered, every open issue
that carries one of Steward's trigger or state labels (the ``issues.edited`` handlers, as `/steward
refresh` does) and every capability's repository-wide state (the registered reconcilers: dashboards, the
configuration error issue, …), writing only what differs. On GitHub it also asks GitHub to redeliver the
webhook deliveries that failed since the last run. ``dry_run`` prints what it would write, and writes
nothing.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from bot.catchup.comments import catch_up_comments, last_event, listing_since, updated_since
from bot.catchup.dry_run import DryRunForge
from bot.catchup.redeliver import (
    RedeliveryBudget,
    reconcile_app_deliveries,
    redeliver_failed,
)
from bot.catchup.report import Report
from bot.commands.context import EventContext
from bot.config import shadow
from bot.events.event import Event, IssueSnapshot
from bot.forge import (
    Forge,
    ForgeKind,
    Issue,
    RepoRef,
    repo_key,
)
from bot.forge.etag_store import catching_up
from bot.queue.deferred import SeenRepositories
from bot.queue.gauges import clear_outages, outages
from bot.queue.jobs import REDIS_ERRORS
from bot.queue.locks import Busy, IssueLocks, issue_key, issue_lock
from bot.queue.once_across_workers import Memo
from bot.queue.repo_keys import repo_slot
from bot.telemetry import logs, metrics

log = logs.get("steward.reconcile")

# Prefixes of the labels Steward sets (verdicts, states): an issue carrying one is Steward's to re-derive.
STATE_PREFIXES = ("refinement:", "forks:", "bugfix:", "debug:", "steward:")
LAST_RUN_KEY = "steward:reconcile:last"
# Per repository (``repo_slot``): the start of the last catch-up that covered it. `steward reconcile --repo R`
# without `--since` answers R's commands from there, not from the forge's last run (which R may not have
# been part of: a repository nobody heard from, a run that stopped before it).
REPO_LAST_KEY = "steward:reconcile:repo-last"
# Incremental: between full passes (one a day per repository, or `--full`) only the issues updated since
# the window began are re-derived (the forges' `since`); an unchanged issue's state is still what it was.
FULL_KEY = "steward:reconcile:full"
FULL_EVERY_SECONDS = 86_400
# Where a run that stopped (time or quota) left off, per forge: the next run starts there.
CURSOR_KEY = "steward:reconcile:cursor"
# The repositories the runs of an unfinished pass covered, per forge (a set), and when the pass began with the
# outages it saw (JSON): the next run skips those, and the window moves only once the pass is done.
DONE_KEY = "steward:reconcile:done"
PASS_KEY = "steward:reconcile:pass"
PASS_TTL = 7 * 86_400
# A run stops once it has used this share of its time limit, or when a forge has less than
# STEWARD_RECONCILE_QUOTA_FLOOR of its hourly quota left (the rest is people's): it goes on from there in
# the next run.
TIME_SHARE = 0.8


def trigger_labels(settings: Any) -> set[str]:
    """The trigger labels a repository's settings name (the state labels go by prefix)."""
    names = {
        settings.bug_refinement.refine_label,
        settings.backlog.refine_label,
        settings.backlog.approved_label,
        settings.milestones.labels.dashboard,
    }
    return {n.casefold() for n in names}


def concerns_steward(issue: Issue, settings: Any) -> bool:
    wanted = trigger_labels(settings)
    return any(
        label.casefold() in wanted or label.casefold().startswith(STATE_PREFIXES) for label in issue.labels
    )


def _failed(report: Report, say: Callable[[str], None], note: str) -> None:
    report.errors.append(note)
    say(note)
    log.warning("reconcile: a step failed", detail=note[:300])


async def reconcile_repo(
    runtime: Any,
    kind: ForgeKind,
    repo: RepoRef,
    *,
    dry_run: bool = False,
    since: datetime | None = None,
    report: Report | None = None,
    say: Callable[[str], None] = lambda _: None,
    budget: RedeliveryBudget | None = None,
    full: bool = False,
) -> Report:
    """Re-derive one repository (see the module docstring). ``runtime`` is the worker's ``Runtime``."""
    report = report or Report()
    report.repos += 1
    forge: Forge = await runtime.forge(kind, repo)
    me = await forge.whoami()
    config = await runtime.configs.get(forge, repo)
    would: list[str] = []
    if config.settings.mode == "shadow" and not dry_run:  # writes nothing; kept for `/steward config`
        forge = DryRunForge(forge, would.append)
    if dry_run:

        def noted(line: str) -> None:
            report.writes.append(line)
            say(f"{kind}:{repo}: {line}")

        forge = DryRunForge(forge, noted)
    base = Event(
        forge=kind,
        delivery_id=f"reconcile-{uuid.uuid4().hex[:12]}",
        name="reconcile",
        action="",
        sender="",
        repo=repo,
        # Since when events may have been missed (the capabilities' reconcilers may look at what changed
        # since then, e.g. a milestone closed meanwhile).
        extra={"since": since.strftime("%Y-%m-%dT%H:%M:%SZ")} if since is not None else {},
    )
    rlog = log.bind(repo=repo.full_name, forge=kind, dry_run=dry_run)

    owner = f"reconcile-{uuid.uuid4().hex[:12]}"
    ttl = runtime.settings.job_timeout_seconds + runtime.settings.job_timeout_backstop_seconds
    locks = IssueLocks(runtime.redis, owner=owner, ttl=ttl)

    def context(event: Event) -> EventContext:
        return EventContext(
            event=event,
            forge=forge,
            me=me,
            settings=config.settings,
            registry=runtime.registry,
            log=rlog,
            prefix=runtime.settings.command_prefix,
            locks=locks,
            config=config,
            memo=None if dry_run else Memo(runtime.redis),
            # Work for later (a gate check due when a grace period ends) goes on the worker's queue; a
            # dry run queues nothing.
            deferred=None if dry_run else runtime.deferred,
        )

    handlers = [
        s for s in runtime.registry.handlers_for("issues", "edited") if context(base).enabled(s.section)
    ]
    full_key = f"{FULL_KEY}:{repo_key(kind, repo)}"
    last_full = await runtime.redis.get(full_key)
    incremental = (
        not full
        and since is not None
        and last_full is not None
        and time.time() - float(last_full) < FULL_EVERY_SECONDS
    )
    if incremental:
        report.incremental += 1
    if incremental and since is not None:
        # The listing starts on the catch-up's grid (cheap when unchanged); the window is applied here.
        start = listing_since(kind, since)
        found = await forge.list_issues(repo, state="open", kind="issues", since=start)
        listed = [i for i in found if updated_since(i.updated_at, since)]
    else:
        listed = await forge.list_issues(repo, state="open", kind="issues")
    if not incremental and not dry_run:
        await runtime.redis.set(full_key, repr(time.time()), ex=7 * 86_400)
    for issue in listed:
        if not concerns_steward(issue, config.settings):
            continue
        where = f"{kind}:{repo}#{issue.number}"
        event = replace(base, name="issues", action="edited", issue=IssueSnapshot.of(issue))
        key = issue_key(kind, repo, issue.number)
        async with issue_lock(runtime.redis, key, ttl=ttl, wait=10.0, owner=owner) as got:
            if not got:
                report.skipped_busy.append(where)
                continue
            report.issues += 1
            for spec in handlers:
                try:
                    await spec.handler(context(event))
                except Busy:
                    report.skipped_busy.append(where)
                except REDIS_ERRORS:
                    raise
                except Exception as exc:  # one issue's failure does not stop the others
                    _failed(report, say, f"{where}: {type(exc).__name__}: {exc}")
    window = since
    if window is None and (last := await last_event(runtime.redis, kind)) is not None:
        window = datetime.fromtimestamp(last, UTC)
    if window is not None:
        try:
            await catch_up_comments(
                runtime,
                forge,
                kind,
                repo,
                window,
                me=me.login,
                dry_run=dry_run,
                queued=report.commands,
                say=say,
            )
        except REDIS_ERRORS:
            raise
        except Exception as exc:
            _failed(
                report,
                say,
                f"{kind}:{repo} (comments since {window:%Y-%m-%d %H:%M}): {type(exc).__name__}: {exc}",
            )
    for spec in runtime.registry.reconcilers:
        if not context(base).enabled(spec.section):
            continue
        try:
            await spec.handler(context(base))
        except REDIS_ERRORS:
            raise
        except Exception as exc:
            _failed(report, say, f"{kind}:{repo} ({spec.name}): {type(exc).__name__}: {exc}")
    if kind == "github" and not (runtime.github is not None and runtime.github.is_app):
        # With a token Steward reads the repository's own hooks; an App's deliveries are the App's
        # (reconcile_app_deliveries).
        await redeliver_failed(
            forge, repo, since, report, dry_run=dry_run, say=say, budget=budget, redis=runtime.redis
        )
    await shadow.record(runtime.redis, kind, repo, "the catch-up (steward reconcile)", would)
    return report


async def last_run(redis: Any, kind: ForgeKind) -> datetime | None:
    raw = await redis.get(f"{LAST_RUN_KEY}:{kind}")
    return datetime.fromtimestamp(float(raw), UTC) if raw else None


async def record_run(redis: Any, kind: ForgeKind, started: float) -> None:
    await redis.set(f"{LAST_RUN_KEY}:{kind}", str(started), ex=30 * 86_400)


async def repo_last_run(redis: Any, kind: ForgeKind, repo: RepoRef) -> datetime | None:
    raw = await redis.get(f"{REPO_LAST_KEY}:{repo_slot(kind, repo)}")
    return datetime.fromtimestamp(float(raw), UTC) if raw else None


async def seen_repos(seen: SeenRepositories, kinds: Sequence[ForgeKind]) -> list[tuple[ForgeKind, RepoRef]]:
    """The repositories Steward has had an event from lately (``bot.queue.deferred.SeenRepositories``)."""
    return [(kind, repo) for kind in kinds for repo in await seen.recent(kind)]


async def reconcile_all(
    runtime: Any,
    repos: Sequence[tuple[ForgeKind, RepoRef]],
    *,
    dry_run: bool = False,
    since: datetime | None = None,
    say: Callable[[str], None] = lambda _: None,
    full: bool = False,
) -> Report:
    """Reconcile ``repos``; ``since`` defaults to each forge's last recorded run. ``full``: re-derive every
    tracked issue, not only those updated since the window began."""
    report = Report()
    started = time.time()
    budget_seconds = time_budget(runtime.settings)
    deadline = started + budget_seconds
    per_minute = getattr(runtime.settings, "write_budget_per_minute", 0) // 4
    budget = RedeliveryBudget(runtime.redis, per_minute) if per_minute > 0 else None
    # A pass over every repository may take several runs (each stops at its time or quota share): the
    # repositories a run covered are remembered per forge, and the next run does only the others. The pass
    # keeps the window and the receiver outages it began with until its last run ends.
    began = None if dry_run else await _pass_began(runtime.redis)
    # The receiver outages noticed so far widen the window; the pass clears only those noticed before it
    # began (the repositories its earlier runs covered did not look at a later one: it stays for the next).
    noticed = await outages(runtime.redis)
    outage = min(noticed.values()) if noticed else None
    seen_outages = {m: at for m, at in noticed.items() if began is None or m in began[1]}
    floor = getattr(runtime.settings, "reconcile_quota_floor", 0.5)
    for kind in sorted({k for k, _ in repos} | set(runtime.forge_kinds)):
        window = since or await last_run(runtime.redis, kind)
        if outage is not None and since is None:
            # No receiver listened from then on (bot.queue.gauges.receiver_heartbeat): look back that far at
            # least.
            down = datetime.fromtimestamp(outage, UTC)
            window = down if window is None else min(window, down)
        named = await _by_id(runtime, kind, [r for k, r in repos if k == kind], report, say)
        mine = await _from_cursor(runtime.redis, kind, named)
        done_key = f"{DONE_KEY}:{kind}"
        # An operator's `--since` or `--full` asks for every repository named, covered in this pass or not.
        resume = not dry_run and not full and since is None
        done = {_text(m) for m in await runtime.redis.smembers(done_key)} if resume else set()
        covered = 0
        for n, repo in enumerate(mine):
            if repo_key(kind, repo) in done:
                continue  # covered by an earlier run of this pass
            # On time, a run covers at least one repository before it stops, so every run gets further.
            why = _should_stop(kind, deadline if covered else None, floor, budget_seconds)
            if why:
                report.stopped = f"{why}; the next run goes on from {kind}:{repo}"
                say(f"note: stopped: {report.stopped}")
                log.warning("reconcile stopped early", reason=why, repo=str(repo), left=len(mine) - n)
                if not dry_run:
                    await runtime.redis.set(f"{CURSOR_KEY}:{kind}", repo_key(kind, repo), ex=PASS_TTL)
                    record = {"started": started, "outages": sorted(seen_outages)}
                    await runtime.redis.set(PASS_KEY, json.dumps(record), nx=True, ex=PASS_TTL)
                break
            own = window
            if since is None and (last := await repo_last_run(runtime.redis, kind, repo)) is not None:
                # The repository's own last catch-up (it may not have been part of the forge's last run),
                # moved back to an outage's start.
                own = last if outage is None else min(last, datetime.fromtimestamp(outage, UTC))
            failures = len(report.errors)
            try:
                with catching_up():  # its listings keep their ETags for the next run (GitHub: 304s)
                    await reconcile_repo(
                        runtime,
                        kind,
                        repo,
                        dry_run=dry_run,
                        since=own,
                        report=report,
                        say=say,
                        budget=budget,
                        full=full,
                    )
            except Exception as exc:  # one repository's failure does not stop the others
                note = f"{kind}:{repo}: {type(exc).__name__}: {exc}"
                report.errors.append(note)
                say(note)
                log.warning("reconcile failed for a repository", repo=str(repo), error=str(exc))
            else:
                # A step that failed, or deliveries left for later, keep the repository's window where it was.
                if not dry_run and len(report.errors) == failures and kind not in report.hold:
                    key = f"{REPO_LAST_KEY}:{repo_slot(kind, repo)}"
                    await runtime.redis.set(key, repr(started), ex=30 * 86_400)
            covered += 1
            if not dry_run:
                await runtime.redis.sadd(done_key, repo_key(kind, repo))
                await runtime.redis.expire(done_key, PASS_TTL)
        if report.stopped:
            break  # the window stays where it was: the next run covers the rest of it
        if not dry_run:
            await runtime.redis.delete(f"{CURSOR_KEY}:{kind}", done_key)
        if kind == "github" and mine:
            try:
                await reconcile_app_deliveries(
                    runtime, mine[0], window, report, dry_run=dry_run, say=say, budget=budget
                )
            except Exception as exc:
                report.errors.append(f"the App's deliveries: {type(exc).__name__}: {exc}")
        if not dry_run:
            # The window moves only past what was redelivered (what was left starts the next one), and
            # never past the start of the pass: what changed while its earlier runs went on is looked at.
            end = min(started, began[0]) if began is not None else started
            held = report.hold.get(kind)
            await record_run(runtime.redis, kind, min(end, held.timestamp()) if held else end)
    if not dry_run and not report.stopped:
        await runtime.redis.delete(PASS_KEY)
        if seen_outages:
            await clear_outages(runtime.redis, seen_outages)
    return report


async def _pass_began(redis: Any) -> tuple[float, set[str]] | None:
    """When the pass an earlier run stopped in began, and the outages it saw then (None: no pass is open)."""
    raw = await redis.get(PASS_KEY)
    if not raw:
        return None
    try:
        record = json.loads(raw)
        return float(record["started"]), {str(m) for m in record["outages"]}
    except (ValueError, KeyError, TypeError):
        return None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def time_budget(settings: Any) -> float:
    """A run's time budget in seconds (``STEWARD_RECONCILE_BUDGET_SECONDS``, at most 80% of the job's time
    limit, which is also the default)."""
    share = TIME_SHARE * getattr(settings, "reconcile_timeout_seconds", 1800)
    own = getattr(settings, "reconcile_budget_seconds", None)
    return min(float(own), share) if own else share


def _should_stop(kind: str, deadline: float | None, floor: float, budget_seconds: float) -> str:
    if deadline is not None and time.time() > deadline:
        return f"the run's time budget ({budget_seconds:g} s) is used"
    share = metrics.headroom(kind)
    if share is not None and share < floor:
        return f"less than {int(floor * 100)}% of the {kind} rate limit is left for this hour"
    return ""


async def _from_cursor(redis: Any, kind: ForgeKind, repos: list[RepoRef]) -> list[RepoRef]:
    """``repos`` starting where the last stopped run left off (then the ones before it)."""
    raw = await redis.get(f"{CURSOR_KEY}:{kind}")
    name = raw.decode() if isinstance(raw, bytes) else raw
    at = next((i for i, r in enumerate(repos) if repo_key(kind, r) == name), 0)
    return repos[at:] + repos[:at]


async def _by_id(
    runtime: Any, kind: ForgeKind, repos: list[RepoRef], report: Report, say: Callable[[str], None]
) -> list[RepoRef]:
    """``repos`` each with its id and its current name, once: a pass keeps its marks by id (``repo_key``),
    and an operator may name a repository by a name it had before a rename (the forge redirects it). Those
    that came with an id (the repositories Steward has seen) are not asked about."""
    found: list[RepoRef] = []
    keys: set[str] = set()
    for repo in repos:
        if not repo.id:
            try:
                forge: Forge = await runtime.forge(kind, repo)
                repo = (await forge.get_repo(repo)).ref
            except REDIS_ERRORS:
                raise
            except Exception as exc:  # reconcile_repo says what is wrong with it
                log.info("reconcile: the repository's id is not known", repo=str(repo), error=str(exc))
        if repo_key(kind, repo) not in keys:
            keys.add(repo_key(kind, repo))
            found.append(repo)
    return found
