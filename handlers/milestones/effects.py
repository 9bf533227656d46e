"""The milestone gate's forge effects: one level-triggered routine per milestone (``sync_milestone``) that
reads the milestone, its items and its dashboard, and writes only the difference — the dashboard's body,
title and state, and when a closure's gate is blocked, a notice and the reopening.

Every write to a dashboard happens under the milestone's lock (the key ``Event.issue_key`` gives a
milestone event: the worker holds it for the synthetic refresh and gate jobs, and ``holding_milestone``
takes it elsewhere), so two jobs never race to create a second dashboard or overwrite each other's data.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Final, Literal

from bot.commands.context import EventContext
from bot.commands.permissions import check, who_may
from bot.config.settings import HandlerSettings, MilestoneSettings, Permission
from bot.events.event import Event, MilestoneSnapshot
from bot.forge import (
    ForgeError,
    ForgeUnavailable,
    Issue,
    Milestone,
    NotFound,
    PermissionDenied,
    RateLimited,
    repo_key,
)
from bot.records import sticky
from handlers.milestones.boards import dashboard_now, find_dashboards, milestone_items
from handlers.milestones.gate import GateLabels, GateResult, Promised, evaluate, is_internal
from handlers.milestones.gate_facts import gate_proof, look_at_names
from handlers.milestones.plan import (
    KIND,
    NOTICE_KIND,
    closed_since,
    closure_decision,
    gate_delay,
    gate_due,
    iso,
    refresh_run_at,
)
from handlers.milestones.ratifications import (
    comment_digest,
    ratification_lines,
    read_ratifications,
    with_ratifications,
    without_void,
)
from handlers.milestones.rederive import rederive
from handlers.milestones.render import (
    Columns,
    Commands,
    DashboardView,
    dashboard_title,
    render_dashboard,
    reopen_notice,
    summary_lines,
    without_stamp,
)
from handlers.milestones.state import (
    MAX_PROMISES,
    Closure,
    DashboardData,
    Internal,
    Override,
    Promise,
    Reopened,
)
from handlers.milestones.watch_times import watching_since

REFRESH = "steward-refresh"
GATE = "steward-gate"
OVERRIDE_PERMISSION: Final[Permission] = "maintain"
# Declared as a configurable permission by ``handlers.milestones.bot``.
OVERRIDE_NAME: Final = "gate-override"
DASHBOARD_COLOR = "5319e7"


def gate_labels(settings: HandlerSettings) -> GateLabels:
    return GateLabels.from_settings(settings.milestones.labels, settings.forks.open_label)


def columns(settings: HandlerSettings) -> Columns:
    refinement = settings.bug_refinement
    return Columns(
        gate_labels(settings),
        (
            (refinement.approved_label, "approved"),
            (refinement.needs_info_label, "rejected"),
            (refinement.needs_triage_label, "rejected"),
            (refinement.rejected_label, "rejected"),
            (refinement.pending_label, "pending"),
        ),
        settings.forks.resolved_label,
    )


def override_permission(ctx: EventContext) -> Permission:
    """Who may `/gate override`: maintain+ unless the repository says otherwise (`commands.gate-override`)."""
    return ctx.settings.permission(OVERRIDE_NAME, OVERRIDE_PERMISSION)


def commands_for(ctx: EventContext) -> Commands:
    permission = override_permission(ctx)
    labels = who_may(ctx.settings.milestones.label_permission, forge=ctx.event.forge)
    return Commands(ctx.prefix, who_may(permission, short=True, forge=ctx.event.forge), labels)


def _ms(ctx: EventContext) -> MilestoneSettings:
    return ctx.settings.milestones


def now_utc() -> datetime:
    return datetime.now(UTC)


def milestone_lock_key(ctx: EventContext, key: int) -> str:
    """The same key as ``Event.issue_key`` of an event about milestone ``key``."""
    return f"{repo_key(ctx.event.forge, ctx.repo)}%{key}"


@asynccontextmanager
async def holding_milestone(ctx: EventContext, key: int) -> AsyncIterator[None]:
    """Hold milestone ``key``'s lock (unless this job's own event is about that milestone: the worker holds
    it then)."""
    lock = milestone_lock_key(ctx, key)
    if ctx.locks is None or ctx.event.issue_key == lock:
        yield
        return
    async with ctx.locks.hold(lock):
        yield


# --- later: coalesced refreshes and gate checks ----------------------------------------------------------


def milestone_event(
    ctx: EventContext,
    action: str,
    key: int,
    *,
    job: str,
    sender: str = "",
    extra: dict[str, str] | None = None,
) -> Event:
    """A synthetic event about milestone ``key`` for the worker's queue (see ``bot.queue.deferred``)."""
    return Event(
        forge=ctx.event.forge,
        delivery_id=job,
        name="milestone",
        action=action,
        sender=sender,
        repo=ctx.repo,
        installation_id=ctx.event.installation_id,
        milestone=MilestoneSnapshot(number=key, title="", state=""),
        extra=extra or {},
    )


def _job_base(ctx: EventContext, what: str, key: int) -> str:
    return f"milestones:{what}:{repo_key(ctx.event.forge, ctx.repo)}:{key}"


async def request_refresh(ctx: EventContext, key: int, *, create: bool = False) -> None:
    """Refresh milestone ``key``'s dashboard soon, once for a whole burst of changes: the first request
    claims the milestone's pending refresh until the slot's end and queues one job for it; the others find
    the claim and do nothing. A request after the slot's end queues the next one, so nothing is lost.
    Without Redis (unit tests) the refresh runs at once."""
    if ctx.deferred is None:
        async with holding_milestone(ctx, key):
            await sync_milestone(ctx, key, create=create)
        return
    now = now_utc().timestamp()
    run_at = refresh_run_at(now, _ms(ctx).refresh_debounce_seconds)
    base = _job_base(ctx, "refresh", key)
    if not create and not await ctx.deferred.claim(base, ttl=max(0.001, run_at - now)):
        return
    job = f"{base}:{int(run_at * 1000)}" + (":create" if create else "")
    extra = {"create": "1"} if create else {}
    event = milestone_event(ctx, REFRESH, key, job=job, extra=extra)
    await ctx.deferred.run_later(event, delay=run_at - now, job_id=job)


async def schedule_gate(
    ctx: EventContext, key: int, closed_at: str | None, *, delay: float, closer: str = "", suffix: str = ""
) -> None:
    """Check the gate of this closure of milestone ``key`` in ``delay`` seconds — one job per closure, so a
    replayed `milestone.closed` or the periodic job asking again queues nothing new."""
    job = f"{_job_base(ctx, 'gate', key)}:{closed_at or 'unknown'}{suffix}"
    event = milestone_event(ctx, GATE, key, job=job, sender=closer, extra={"closed_at": closed_at or ""})
    if ctx.deferred is None:
        async with holding_milestone(ctx, key):
            await sync_milestone(ctx.for_event(event), key, gating=True, closer=closer or None)
        return
    queued = await ctx.deferred.run_later(event, delay=delay, job_id=job)
    ctx.log.info("milestone gate scheduled", milestone=key, delay=round(delay, 1), queued=queued)


# --- the one routine ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Synced:
    outcome: Literal["gone", "untracked", "unchanged", "written", "created"]
    decision: str = "none"
    result: GateResult | None = None
    dashboard: int | None = None
    # `/gate promise remove N` named no promise on the list.
    no_such_promise: bool = False


def _notice_key(key: int, closed_at: str | None) -> str:
    digest = hashlib.sha256((closed_at or "unknown").encode()).hexdigest()[:12]
    return f"{key}-reopened-{digest}"


async def _close_orphan(ctx: EventContext, key: int) -> Synced:
    dashboards = await find_dashboards(
        ctx.forge, ctx.repo, ctx.me.login, _ms(ctx).labels.dashboard, verifier=await ctx.verifier()
    )
    found = dashboards.get(key)
    if found is not None and found.state == "open":
        record = await ctx.record_of_issue(found, KIND, str(key))
        data = record.trusted if record.trusted is not None else DashboardData(key).to_json()
        body = await ctx.signed_issue_body(
            found.id, KIND, str(key), "This milestone was deleted; nothing to do.", data
        )
        await ctx.forge.edit_issue(ctx.repo, found.number, body=body, state="closed")
        return Synced("written", dashboard=found.number)
    return Synced("gone")


async def sync_milestone(
    ctx: EventContext,
    key: int,
    *,
    create: bool = False,
    gating: bool = False,
    closer: str | None = None,
    override: tuple[str, str, int, str] | None = None,
    internal_cmd: tuple[str, int, str] | Literal["off"] | None = None,
    promise_add: Promise | None = None,
    promise_remove: int | None = None,
    milestone: Milestone | None = None,
    dashboards: dict[int, Issue] | None = None,
    now: datetime | None = None,
) -> Synced:
    """Bring milestone ``key``'s dashboard up to date and settle its closure when it is due.

    ``gating``: this is the gate check of a closure (its grace period is over: a blocked gate reopens the
    milestone); otherwise an unsettled closure only gets its gate check scheduled. ``create``: open a
    dashboard even for a milestone without items (``/gate``). ``override``: (who, why, the command comment's
    id, ``comment_digest`` of its body) — record this override
    first, unless the gate passes (there is nothing to override then). ``internal_cmd``: (who, the
    `/gate internal` comment's id, its digest) — record the exemption; "off": drop it. ``promise_add``:
    append this promise to the list; ``promise_remove``: drop the promise with this number (from 1).
    ``closer``: who closed the milestone (GitHub's webhook says; Gitea never does)."""
    settings = _ms(ctx)
    now = now or now_utc()
    try:
        ms = milestone or await ctx.forge.get_milestone(ctx.repo, key)
    except NotFound:
        return await _close_orphan(ctx, key)
    snapshot = dashboards is not None  # read by the caller, perhaps before it held the lock
    if dashboards is None:
        dashboards = await find_dashboards(
            ctx.forge, ctx.repo, ctx.me.login, settings.labels.dashboard, verifier=await ctx.verifier()
        )
    current, record = await dashboard_now(ctx, key, dashboards, snapshot=snapshot)
    items = await milestone_items(ctx.forge, ctx.repo, key, ctx.me.login)
    # A milestone is tracked once it has a dashboard: opened for its first item (or by `/gate`).
    if current is None and not (create or bool(items)):
        return Synced("untracked")
    # A ratifying label whose `/ratify` record no longer holds does not count; one whose record holds counts
    # as the ratifier's (handlers.milestones.ratifications).
    ratifications = await read_ratifications(ctx, items, gate_labels(ctx.settings))
    seen = without_void(items, ratifications)
    decoded = record.trusted if record is not None else None
    known = DashboardData.from_json(decoded, key).names if isinstance(decoded, dict) else None
    trusted = current is None or isinstance(decoded, dict)  # else re-derived: no label's name is known
    names = await look_at_names(
        ctx, gate_labels(ctx.settings), known, trusted=trusted, now=iso(now), milestone=ms
    )
    proof = await gate_proof(ctx, seen, gate_labels(ctx.settings), ms, names)
    checked = with_ratifications(proof, ratifications)
    if isinstance(decoded, dict):
        data = DashboardData.from_json(decoded, key)
    elif current is not None:
        # A dashboard whose record does not verify (edited, deleted, replayed, legacy, an unknown key):
        # nothing in it is trusted. It is re-derived from its sources (``rederive``): a closure counts as
        # settled only when it happened before Steward signed anything; any other is gated again, as if the
        # milestone had just closed; an override only as the `/gate override` comment it points at, checked
        # from scratch.
        data = await rederive(ctx, key, ms, current, record)
    else:
        # A new dashboard. A closure Steward did not see happen is taken as settled — it never reopens
        # history — except by the gate check of that very closure.
        seen_closed = ms.state == "closed" and not gating
        if seen_closed and current is None and await _closed_while_watching(ctx, ms.closed_at):
            seen_closed = False  # it closed while Steward watched (before its dashboard was made): check it
        data = DashboardData(key, "closed" if seen_closed else "open", ms.closed_at if seen_closed else None)
    if ms.state == "open" and data.state == "closed":
        data = data.reopen_seen()
    if data.override is not None and not await override_holds(ctx, data.override):
        ctx.log.info("milestones: an override no longer holds; dropped", milestone=key)
        data = replace(data, override=None)
    if internal_cmd == "off":
        data = replace(data, internal_by=None)
    elif internal_cmd is not None:
        actor, comment, digest = internal_cmd
        data = replace(data, internal_by=Internal(actor, iso(now), comment, digest))
    if data.internal_by is not None and not await internal_holds(ctx, data.internal_by):
        ctx.log.info("milestones: a /gate internal no longer holds; dropped", milestone=key)
        data = replace(data, internal_by=None)
    no_such_promise = False
    if promise_add is not None:
        listed = (*(data.promises or ()), promise_add)[-MAX_PROMISES:]
        data = replace(data, promises=listed)
    if promise_remove is not None:
        listed = data.promises or ()
        if 0 < promise_remove <= len(listed):
            kept = listed[: promise_remove - 1] + listed[promise_remove:]
            data = replace(data, promises=kept or None)
        else:
            no_such_promise = True
    # A promise counts as the command comment it is; one that no longer holds stays on the list, unconfirmed
    # (dropping it would loosen the gate), and blocks until someone permitted removes or re-adds it.
    promised = (
        [Promised(p.text, p.scenario, await promise_holds(ctx, p)) for p in data.promises]
        if data.promises
        else None
    )
    # Exempt from the functional leg only by a `/gate internal` that holds: anyone with write may edit a
    # milestone's description, and neither forge keeps its history (issue 35 item 6).
    result = evaluate(
        seen,
        description=ms.description,
        labels=gate_labels(ctx.settings),
        internal_marker=settings.internal_marker,
        facts=checked.facts,
        exempt=data.internal_by is not None,
        promises=promised,
    )
    if override is not None and not result.passed:
        actor, reason, comment, digest = override
        if data.override is None or (data.override.by, data.override.reason) != (actor, reason):
            record_now = override_record(actor, reason, result, now)
            data = replace(data, override=replace(record_now, comment=comment, digest=digest))
    counts, gate = (ms.open_issues, ms.closed_issues), (result.verdict, len(result.blockers))
    internal = is_internal(ms.description, settings.internal_marker)
    data = replace(data, counts=counts, internal=internal, names=names, gate=gate)
    decision = closure_decision(
        state=ms.state,
        closed_at=ms.closed_at,
        data=data,
        passed=result.passed,
        grace=settings.grace_period_seconds,
        now=now,
    )
    state = ms.state
    gate_at: str | None = None
    if decision != "none" and not gating:
        # A closure whose record did not verify is gated as if it had just closed (no webhook will come).
        rebuilt = record is not None and record.trusted is None
        delay = gate_delay(ctx.event.forge, ms.closed_at, settings.grace_period_seconds, now, webhook=rebuilt)
        if delay is not None:
            # The gate of a closure re-derived from an untrusted record is a job of its own: the closure's
            # first gate job (its id kept a while by the queue) may have run already.
            suffix = f":rederived-{record.outcome}-{record.seq}" if rebuilt and record is not None else ""
            await schedule_gate(ctx, key, ms.closed_at, delay=delay, suffix=suffix)
        decision = "wait"
    if decision == "wait":
        due = gate_due(ms.closed_at, settings.grace_period_seconds, now)
        gate_at = iso(due)
        if gating and ctx.deferred is not None:
            # This check ran early (the clocks of the forge and the worker differ): once more, when it is due.
            # Without a queue (a dry run) there is no later: the next look settles it (scheduling here
            # would run this very check again at once, without end).
            wait = max(1.0, (due - now).total_seconds())
            suffix = f":{int(now.timestamp())}"
            await schedule_gate(ctx, key, ms.closed_at, delay=wait, closer=closer or "", suffix=suffix)
    elif decision in ("accept-pass", "accept-override"):
        verdict: Literal["passed", "overridden"] = "passed" if decision == "accept-pass" else "overridden"
        by = closer if gating and ctx.event.extra.get("closed_at") == (ms.closed_at or "") else None
        data = replace(
            data,
            state="closed",
            closed_at=ms.closed_at,
            closure=Closure(ms.closed_at or iso(now), by, verdict),
        )
    elif decision == "reopen":
        closure = ms.closed_at or iso(now)
        if data.reopened is None or data.reopened.closed_at != closure:  # else a re-run: keep the record
            by = closer if ctx.event.extra.get("closed_at") == (ms.closed_at or "") else None
            data = replace(data, reopened=Reopened(closure, by, iso(now)))
        data = replace(data, state="open", closed_at=None)
        state = "open"
    view = DashboardView(
        milestone_title=ms.title,
        milestone_url=ms.html_url,
        state=state,
        closed_at=ms.closed_at,
        items=tuple(items),
        result=result,
        data=data,
        internal_marker=settings.internal_marker,
        columns=columns(ctx.settings),
        commands=commands_for(ctx),
        gate_at=gate_at,
        facts=checked.facts,
        proofs=checked.labels,
        ratifications=tuple(ratification_lines(ratifications, ctx.prefix)),
    )
    text = render_dashboard(view, updated_at=iso(now))
    # What the body says, unsigned (to compare); the body written is signed for the dashboard issue.
    body = sticky.fit(KIND, str(key), text, data.to_json())
    title = dashboard_title(ms.title)
    issue_state: Literal["open", "closed"] = (
        "closed" if data.state == "closed" and state == "closed" else "open"
    )
    outcome: Literal["unchanged", "written", "created"] = "unchanged"
    if current is None:
        await ctx.forge.ensure_label(
            ctx.repo,
            settings.labels.dashboard,
            color=DASHBOARD_COLOR,
            description="Steward: a milestone's dashboard",
        )
        # The signature names the issue's id: create it without the record, then sign it in (one more write).
        current = await ctx.forge.create_issue(
            ctx.repo, title, sticky.fit(KIND, str(key), text), labels=[settings.labels.dashboard]
        )
        signed_body = await ctx.signed_issue_body(current.id, KIND, str(key), text, data.to_json())
        current = await ctx.forge.edit_issue(
            ctx.repo, current.number, body=signed_body, state="closed" if issue_state == "closed" else None
        )
        dashboards[key] = current
        outcome = "created"
    else:
        changes: dict[str, str] = {}
        same = without_stamp(sticky.unsigned(current.body)) == without_stamp(body)
        if not same or record is None or record.outcome != "verified":
            changes["body"] = await ctx.signed_issue_body(current.id, KIND, str(key), text, data.to_json())
        if current.title != title:
            changes["title"] = title
        if current.state != issue_state:
            changes["state"] = issue_state
        if changes:
            current = await ctx.forge.edit_issue(
                ctx.repo,
                current.number,
                title=changes.get("title"),
                body=changes.get("body"),
                state=issue_state if "state" in changes else None,
            )
            dashboards[key] = current
            outcome = "written"
    if record is not None and record.broken:
        await ctx.report_rebuilt(record, current.html_url or "the dashboard", number=current.number)
    if decision == "reopen":
        closer_now = data.reopened.by if data.reopened else None
        notice = reopen_notice(
            milestone_title=ms.title,
            closer=closer_now,
            notify=settings.notify,
            forge=ctx.event.forge,
            result=result,
            cmds=commands_for(ctx),
            admins=await admins_to_mention(ctx) if not closer_now and not settings.notify else (),
        )
        await ctx.upsert_sticky(NOTICE_KIND, _notice_key(key, ms.closed_at), notice, number=current.number)
        await ctx.forge.set_milestone_state(ctx.repo, key, "open")
    ctx.log.info(
        "milestone dashboard", milestone=key, outcome=outcome, decision=decision, gate=result.verdict
    )
    return Synced(outcome, decision, result, current.number, no_such_promise)


async def override_holds(ctx: EventContext, override: Override) -> bool:
    """An override counts only as the command comment it is: the comment still exists, unedited since Steward
    recorded it, written by the person the override names, who holds the override permission *now*. An
    override without a command comment (kept by a version before comments were) counts for nothing once
    Steward signs: nothing outside the record shows it was ever given. The dashboard's record never carries
    authority on its own."""
    if not override.comment:
        return False
    try:
        comment = await ctx.forge.get_comment(ctx.repo, override.comment)
    except NotFound:
        return False
    if comment.author.casefold() != override.by.casefold():
        return False
    if comment_digest(comment.body) != override.digest:
        return False
    decision = await check(ctx.forge, ctx.repo, override_permission(ctx), actor=override.by, author="")
    return decision.allowed


async def internal_holds(ctx: EventContext, internal: Internal) -> bool:
    """A `/gate internal` counts only as the command comment it is: it still exists, unedited since Steward
    recorded it, by the person it names, who holds `milestones.label_permission` now."""
    try:
        comment = await ctx.forge.get_comment(ctx.repo, internal.comment)
    except NotFound:
        return False
    if comment.author.casefold() != internal.by.casefold() or comment_digest(comment.body) != internal.digest:
        return False
    decision = await check(ctx.forge, ctx.repo, label_permission(ctx), actor=internal.by, author="")
    return decision.allowed


async def promise_holds(ctx: EventContext, promise: Promise) -> bool:
    """A promise is confirmed while its `/gate promise add` comment stands as Steward recorded it (by the
    person it names, unedited) and that person holds `milestones.label_permission` now."""
    if not promise.digest:
        return False
    return await internal_holds(ctx, Internal(promise.by, promise.at, promise.comment, promise.digest))


def label_permission(ctx: EventContext) -> Permission:
    """Who may set the gate's passing labels, and so say a milestone is internal."""
    return _ms(ctx).label_permission


async def _closed_while_watching(ctx: EventContext, closed_at: str | None) -> bool:
    since = await watching_since(ctx.deferred, ctx.event.forge, ctx.repo)
    return closed_since(closed_at, since)


async def admins_to_mention(ctx: EventContext) -> tuple[str, ...] | None:
    """The repository's admins (Steward's own account left out) for a reopen notice that knows no closer
    and has no `milestones.notify`; None when the forge refuses to say (Gitea, unless Steward is an admin)."""
    try:
        found = await ctx.forge.repo_admins(ctx.repo)
    except PermissionDenied as exc:
        ctx.log.warning("milestones: could not read the repository's admins", error=str(exc))
        return None
    except (ForgeUnavailable, RateLimited):
        raise  # the gate job is retried
    except ForgeError as exc:
        # Anything else (e.g. more collaborators than Steward lists) must not keep the milestone closed:
        # the notice then mentions nobody and says how to have someone mentioned.
        ctx.log.warning("milestones: could not list the repository's admins", error=str(exc))
        return ()
    return tuple(login for login in found if login.casefold() != ctx.me.login.casefold())


def override_record(actor: str, reason: str, result: GateResult, now: datetime) -> Override:
    lines = [line.removeprefix("- ") for line in summary_lines(result, 14)]
    return Override(actor, iso(now), reason, tuple(lines))
