"""The milestone gate and dashboards in the forge: what starts the work (events, `/gate`, the periodic job,
`steward reconcile`). The work itself is ``effects.sync_milestone``.

- An event touching an item of a milestone (opened, edited, closed, reopened, (un)labelled, (de)milestoned,
  a pull request merged) asks for a coalesced refresh of that milestone's dashboard.
- GitHub's `milestone.closed` schedules the gate check of that closure after the grace period (a deferred
  job); `opened`, `edited` and `deleted` ask for a refresh.
- Every minute, per repository Steward has had events from, the periodic job reads the open milestones and
  the dashboards and schedules what fell behind: the gate of a closure not settled yet (Gitea sends no
  milestone webhooks; on GitHub a safety net), refreshes where a dashboard lags its milestone.
- The synthetic `milestone.steward-refresh` and `milestone.steward-gate` events those schedule run here,
  under the milestone's lock (the worker holds ``Event.issue_key``).
"""

from __future__ import annotations

from typing import Literal

from bot.commands.context import CommandContext, CommandError, EventContext
from bot.commands.periodic import PeriodicContext
from bot.commands.permissions import check, who_may
from bot.commands.registry import Registry
from bot.forge import ForgeError, ForgeKind, Milestone, NotFound, RepoRef
from handlers.milestones.boards import dashboard_of, find_dashboards, milestone_items
from handlers.milestones.effects import (
    GATE,
    OVERRIDE_NAME,
    REFRESH,
    gate_labels,
    holding_milestone,
    internal_holds,
    label_permission,
    now_utc,
    override_permission,
    promise_holds,
    request_refresh,
    schedule_gate,
    sync_milestone,
)
from handlers.milestones.gate import Promised, evaluate, is_internal
from handlers.milestones.gate_facts import gate_proof, look_at_names
from handlers.milestones.guard import guard_labels
from handlers.milestones.plan import (
    KIND,
    GateRequest,
    SeenDashboard,
    UsageError,
    closed_since,
    dashboard_key,
    gate_delay,
    iso,
    parse_gate,
    parse_time,
    watch_plan,
)
from handlers.milestones.ratifications import (
    comment_digest,
    read_ratifications,
    with_ratifications,
    without_void,
)
from handlers.milestones.render import gate_reply
from handlers.milestones.state import DashboardData, Promise
from handlers.milestones.watch_times import last_poll, note_poll, note_watching, watching_since

# This module's commands and events; `handlers.build_registry()` includes them (importing registers nothing).
plugin = Registry()


plugin.permission_name(
    OVERRIDE_NAME, what="who may let a milestone close despite a blocked gate (`/gate override`)"
)


def register(registry: Registry) -> None:
    registry.include(plugin)


ITEM_ACTIONS = (
    "opened",
    "edited",
    "closed",
    "reopened",
    "labeled",
    "unlabeled",
    "milestoned",
    "demilestoned",
)
CHECKS = "the dashboard of the milestone it is in"


def _enabled(ctx: EventContext) -> bool:
    return ctx.settings.milestones.enabled


@plugin.on("issues", *ITEM_ACTIONS, checks=CHECKS)
@plugin.on("pull_request", *ITEM_ACTIONS)
async def on_item(ctx: EventContext) -> None:
    """An item of a milestone changed: refresh that milestone's dashboard (coalesced). GitHub's
    `demilestoned` names the milestone the item left; Gitea's does not (the periodic job notices the
    milestone's counts moved)."""
    if not _enabled(ctx) or ctx.event.issue is None:
        return
    issue = ctx.event.issue
    board = dashboard_key(issue.body) if issue.author.casefold() == ctx.me.login.casefold() else None
    if board is not None and not issue.is_pull_request:
        # Someone changed a dashboard (Steward's own edits never reach here): check its record now, in this
        # event, so that a record that no longer verifies is rebuilt and the note can name who changed it.
        if ctx.event.action == "edited":
            async with holding_milestone(ctx, board):
                await sync_milestone(ctx, board)
        return
    await guard_labels(ctx)
    keys = {ctx.event.issue.milestone, ctx.event.milestone.number if ctx.event.milestone else None}
    if any(k is not None for k in keys):
        await note_watching(ctx.deferred, ctx.event.forge, ctx.repo, now_utc())
    for key in sorted(k for k in keys if k is not None):
        await request_refresh(ctx, key)


@plugin.on("milestone", "closed", "opened", "edited", "deleted")
async def on_milestone(ctx: EventContext) -> None:
    """GitHub's milestone webhooks (Gitea sends none)."""
    if not _enabled(ctx) or ctx.event.milestone is None:
        return
    key = ctx.event.milestone.number
    if ctx.event.action != "closed":
        await request_refresh(ctx, key)
        return
    try:
        ms = await ctx.forge.get_milestone(ctx.repo, key)
    except NotFound:
        return
    if ms.state != "closed":
        await request_refresh(ctx, key)
        return
    delay = gate_delay(
        "github", ms.closed_at, ctx.settings.milestones.grace_period_seconds, now_utc(), webhook=True
    )
    await schedule_gate(ctx, key, ms.closed_at, delay=delay or 0.0, closer=ctx.event.sender)


@plugin.on("milestone", REFRESH)
async def run_refresh(ctx: EventContext) -> None:
    """A coalesced refresh, due (the worker holds the milestone's lock)."""
    if not _enabled(ctx) or ctx.event.milestone is None:
        return
    await sync_milestone(ctx, ctx.event.milestone.number, create=ctx.event.extra.get("create") == "1")


@plugin.on("milestone", GATE)
async def run_gate(ctx: EventContext) -> None:
    """The gate check of a closure, after its grace period (the worker holds the milestone's lock)."""
    if not _enabled(ctx) or ctx.event.milestone is None:
        return
    await sync_milestone(ctx, ctx.event.milestone.number, gating=True, closer=ctx.event.sender or None)


# --- commands -----------------------------------------------------------------------------------------------


def _usage(prefix: str) -> str:
    return (
        f"`/{prefix} gate` checks the milestone gate now; `/{prefix} gate override <reason>` on a "
        f"milestone's dashboard records a deliberate exception, e.g. `/{prefix} gate override abandoned: the "
        f"work moved to v2`; `/{prefix} gate internal` there exempts the milestone from field tests; "
        f"`/{prefix} gate promise add <text> — #<scenario>` there lists a user-visible promise and the "
        f"scenario issue that demonstrates it (`/{prefix} gate promise remove <number>` takes one off)."
    )


@plugin.command(
    "gate",
    usage="gate [override <reason> | internal [off] | promise add <text> — #<scenario> | promise remove <n>]",
    help="Check the milestone gate now and reply with the result (changes nothing). On a milestone's "
    "dashboard, `gate override <reason>` records a deliberate exception: Steward then does not reopen the "
    "milestone (maintain+ by default, on Gitea admins: `commands.gate-override`); `gate internal` exempts "
    "the milestone from the functional leg, and `gate promise add <text> — #<scenario>` / `gate promise "
    "remove <n>` keep its list of user-visible promises, each needing its scenario to pass (both by "
    "whoever may set the passing labels, `milestones.label_permission`).",
    permission="anyone",
)
async def gate_command(ctx: CommandContext) -> None:
    if not _enabled(ctx):
        await ctx.reply("The milestone gate is switched off on this repository (`milestones.enabled`).")
        return
    try:
        request = parse_gate(ctx.command.args, ctx.command.text)
    except UsageError as exc:
        raise CommandError(f"{exc}. {_usage(ctx.prefix)}") from None
    issue = await ctx.forge.get_issue(ctx.repo, ctx.number)
    on_dashboard = dashboard_of(issue, ctx.me.login)
    if request.action == "override":
        await _override(ctx, on_dashboard, issue.milestone, request.reason)
        return
    if request.action in ("internal", "internal-off"):
        await _internal(ctx, on_dashboard, request.action == "internal-off")
        return
    if request.action in ("promise-add", "promise-remove"):
        await _promise(ctx, on_dashboard, request)
        return
    key = on_dashboard if on_dashboard is not None else issue.milestone
    if key is None:
        raise CommandError(
            f"this {'pull request' if issue.is_pull_request else 'issue'} is in no milestone. Run "
            f"`/{ctx.prefix} gate` on an issue or pull request of a milestone, or on its dashboard."
        )
    try:
        ms = await ctx.forge.get_milestone(ctx.repo, key)
    except NotFound:
        raise CommandError("its milestone no longer exists.") from None
    settings = ctx.settings.milestones
    dashboards = await find_dashboards(
        ctx.forge, ctx.repo, ctx.me.login, settings.labels.dashboard, verifier=await ctx.verifier()
    )
    items = await milestone_items(ctx.forge, ctx.repo, key, ctx.me.login)
    ratifications = await read_ratifications(ctx, items, gate_labels(ctx.settings))
    seen = without_void(items, ratifications)
    dashboard = dashboards.get(key)
    record = await ctx.record_of_issue(dashboard, KIND, str(key)) if dashboard else None
    data = DashboardData.from_json(record.trusted, key) if record is not None and record.trusted else None
    known, trusted = (data.names if data else None), dashboard is None or data is not None
    names = await look_at_names(
        ctx, gate_labels(ctx.settings), known, trusted=trusted, now=iso(now_utc()), milestone=ms
    )
    checked = with_ratifications(
        await gate_proof(ctx, seen, gate_labels(ctx.settings), ms, names), ratifications
    )
    exempt = bool(data and data.internal_by and await internal_holds(ctx, data.internal_by))
    promised = (
        [Promised(p.text, p.scenario, await promise_holds(ctx, p)) for p in data.promises]
        if data is not None and data.promises
        else None
    )
    result = evaluate(
        seen,
        description=ms.description,
        labels=gate_labels(ctx.settings),
        internal_marker=settings.internal_marker,
        facts=checked.facts,
        exempt=exempt,
        promises=promised,
    )
    await ctx.reply(
        gate_reply(
            milestone_title=ms.title,
            result=result,
            dashboard=dashboard.number if dashboard else None,
            data=data,
        )
    )
    if dashboard is None:
        await request_refresh(ctx, key, create=True)


async def _on_dashboard_by_a_label_setter(ctx: CommandContext, key: int | None, word: str) -> int:
    """``/gate <word>`` runs only on a milestone's dashboard and only for someone who may set the gate's
    passing labels (`milestones.label_permission`, asked of the forge now): the milestone's key, or a refusal
    saying where to write it or who may run it."""
    if key is None:
        raise CommandError(
            f"`/{ctx.prefix} gate {word}` works on a milestone's dashboard (the issue labelled "
            f"`{ctx.settings.milestones.labels.dashboard}`): write it there."
        )
    permission = label_permission(ctx)
    decision = await check(ctx.forge, ctx.repo, permission, actor=ctx.actor, author="")
    if not decision.allowed:
        raise CommandError(
            f"`/{ctx.prefix} gate {word}` can only be run by {who_may(permission, forge=ctx.event.forge)}, "
            f"who may set the gate's passing labels; your access to this repository is "
            f"`{decision.actor_level}`. Ask someone who may run it."
        )
    return key


async def _internal(ctx: CommandContext, key: int | None, off: bool) -> None:
    """`/gate internal [off]`: on the dashboard only, by someone who may set the gate's passing labels
    (`milestones.label_permission`). The milestone is then exempt from the functional leg while the command
    comment stands; the description's line alone exempts nothing (anyone with write may edit it)."""
    key = await _on_dashboard_by_a_label_setter(ctx, key, "internal")
    async with holding_milestone(ctx, key):
        recorded: tuple[str, int, str] | Literal["off"] = (
            "off" if off else (ctx.actor, ctx.comment.id, comment_digest(ctx.comment.body))
        )
        synced = await sync_milestone(ctx, key, create=True, internal_cmd=recorded)
    if synced.result is None:
        raise CommandError("its milestone no longer exists.")
    if off:
        await ctx.reply("The milestone is no longer exempt: its functional leg counts again.")
        return
    await ctx.reply(
        "Recorded: this milestone is internal, exempt from the functional leg (no field test is asked of it) "
        "while this comment stands — editing or deleting it, or losing the access to set passing labels, "
        f"ends it; `/{ctx.prefix} gate internal off` ends it too."
    )


async def _promise(ctx: CommandContext, key: int | None, request: GateRequest) -> None:
    """`/gate promise add <text> — #<scenario>` / `/gate promise remove <n>`: on the dashboard only, by
    someone who may set the gate's passing labels (`milestones.label_permission`), as `/gate internal`. The
    list lives in the dashboard's signed record, never in the milestone's description (anyone with write may
    edit it)."""
    key = await _on_dashboard_by_a_label_setter(ctx, key, "promise")
    async with holding_milestone(ctx, key):
        if request.action == "promise-add":
            promise = Promise(
                request.reason,
                request.number,
                ctx.actor,
                iso(now_utc()),
                ctx.comment.id,
                comment_digest(ctx.comment.body),
            )
            synced = await sync_milestone(ctx, key, create=True, promise_add=promise)
        else:
            synced = await sync_milestone(ctx, key, create=True, promise_remove=request.number)
    if synced.result is None:
        raise CommandError("its milestone no longer exists.")
    if synced.no_such_promise:
        raise CommandError(
            f"there is no promise {request.number} on this milestone's list (the dashboard numbers them)."
        )
    cover = synced.result.coverage or ()
    left = sum(1 for c in cover if not c.covered)
    status = (
        f"{len(cover) - left} of {len(cover)} promises have a passing scenario"
        if cover
        else "the list is empty: the functional leg asks again for at least one passing scenario"
    )
    if request.action == "promise-remove":
        await ctx.reply(f"Promise {request.number} removed; {status} (the dashboard shows each).")
        return
    await ctx.reply(
        f"Promise recorded, demonstrated by the scenario #{request.number}; {status}. While a promise has no "
        "passing scenario the functional leg is blocked. It counts as this comment: if it is edited or "
        f"deleted, or you lose the access to set passing labels, the promise stays and blocks until "
        f"`/{ctx.prefix} gate promise remove <number>` or a new `add`."
    )


async def _override(ctx: CommandContext, key: int | None, milestone: int | None, reason: str) -> None:
    """`/gate override <reason>`: on the dashboard only, maintain+ (overridable as `gate-override`)."""
    if key is None:
        where = "its dashboard" if milestone is not None else "the dashboard of the milestone"
        raise CommandError(
            f"`/{ctx.prefix} gate override` works on a milestone's dashboard (the issue labelled "
            f"`{ctx.settings.milestones.labels.dashboard}`): write it on {where}."
        )
    permission = override_permission(ctx)
    decision = await check(ctx.forge, ctx.repo, permission, actor=ctx.actor, author="")
    if not decision.allowed:
        raise CommandError(
            f"`/{ctx.prefix} gate override` can only be run by {who_may(permission, forge=ctx.event.forge)}; "
            f"your access to this repository is `{decision.actor_level}`. Ask someone who may run it."
        )
    async with holding_milestone(ctx, key):
        recorded = (ctx.actor, reason, ctx.comment.id, comment_digest(ctx.comment.body))
        synced = await sync_milestone(ctx, key, create=True, override=recorded)
    if synced.result is None:
        raise CommandError("its milestone no longer exists.")
    if synced.result.passed:
        await ctx.reply(
            "The gate passes already: there is nothing to override. Close the milestone when ready."
        )
        return
    await ctx.reply(
        f"Override recorded: Steward will not reopen this milestone while the override stands (the dashboard "
        f"shows it, with the {len(synced.result.blockers)} reasons it sets aside). It counts as this very "
        "comment: editing or deleting it, or losing the permission to override, ends it. Close the milestone "
        "when you are ready; reopening it after that ends the override."
    )


# --- periodic and reconcile ------------------------------------------------------------------------------


async def watch_repository(pctx: PeriodicContext, kind: ForgeKind, repo: RepoRef) -> int:
    """Schedule what fell behind on one repository; returns how many jobs it asked for."""
    forge = await pctx.forge(kind, repo)
    config = await pctx.settings_for(forge, repo)
    settings = config.settings.milestones
    if not settings.enabled:
        return 0
    me = await forge.whoami()
    polled_at = now_utc()
    # Since when a closed milestone without a dashboard is one to check: closed after Steward's last look
    # (or, before the first, after it began watching) — see ``handlers.milestones.watch_times``.
    since = await last_poll(pctx.deferred, kind, repo) or await watching_since(pctx.deferred, kind, repo)
    opened = await forge.list_milestones(repo, state="open")
    untracked = [
        ms
        for ms in await forge.list_milestones(repo, state="closed")
        if closed_since(ms.closed_at, since or polled_at)
    ]
    ctx = pctx.repo_context(kind, repo, forge, me, config)
    dashboards = await find_dashboards(
        forge, repo, me.login, settings.labels.dashboard, verifier=await ctx.verifier()
    )
    open_keys = {ms.key for ms in opened}
    others: list[Milestone] = []
    gone: list[int] = []
    seen: dict[int, SeenDashboard] = {}
    for key, issue in dashboards.items():
        # A dashboard whose record does not verify is seen as having none: refreshed, and its closure gated.
        decoded = (await ctx.record_of_issue(issue, KIND, str(key))).trusted
        data = DashboardData.from_json(decoded, key) if isinstance(decoded, dict) else None
        seen[key] = SeenDashboard(issue.number, issue.title, issue.state, data)
        if key in open_keys or (issue.state == "closed" and data is not None and data.state == "closed"):
            continue
        try:
            others.append(await forge.get_milestone(repo, key))
        except NotFound:
            gone.append(key)
    milestones = [*opened, *others, *(ms for ms in untracked if ms.key not in dashboards)]
    internal = {ms.key: is_internal(ms.description, settings.internal_marker) for ms in milestones}
    actions = watch_plan(
        milestones,
        seen,
        gone=gone,
        forge=kind,
        now=now_utc(),
        grace=settings.grace_period_seconds,
        internal=internal,
        since=since or polled_at,
    )
    for action in actions:
        if action.what == "gate":
            await schedule_gate(ctx, action.key, action.closed_at, delay=action.delay)
        else:
            await request_refresh(ctx, action.key)
    await note_poll(pctx.deferred, kind, repo, polled_at)
    return len(actions)


@plugin.every(minutes=1, name="milestones")
async def watch_milestones(pctx: PeriodicContext) -> None:
    """Gitea has no milestone webhook: notice closures (and dashboards that fell behind) by looking."""
    if pctx.deferred is None:
        return
    for kind in pctx.forges:
        for repo in await pctx.repositories(kind):
            try:
                asked = await watch_repository(pctx, kind, repo)
            except ForgeError as exc:
                pctx.log.warning(
                    "milestones: could not look at a repository", repo=repo.full_name, error=str(exc)
                )
                continue
            if asked:
                pctx.log.info("milestones: work scheduled", repo=repo.full_name, jobs=asked)


@plugin.reconcile(
    "milestones",
    checks="every milestone's dashboard, and the gate of milestones closed while nobody looked",
)
async def reconcile_milestones(ctx: EventContext) -> None:
    """Re-derive every dashboard of the repository, and settle closures nobody checked (grace permitting)."""
    if not _enabled(ctx):
        return
    settings = ctx.settings.milestones
    dashboards = await find_dashboards(
        ctx.forge, ctx.repo, ctx.me.login, settings.labels.dashboard, verifier=await ctx.verifier()
    )
    milestones = await ctx.forge.list_milestones(ctx.repo, state="all")
    # Since when nobody looked (the reconcile's window): a milestone closed since then before it had a
    # dashboard is checked like any other closure; one closed before that is history, left alone.
    unseen_since = parse_time(ctx.event.extra.get("since"))
    for ms in milestones:
        has_items = ms.open_issues + ms.closed_issues > 0
        closed_unseen = (
            ms.state == "closed"
            and unseen_since is not None
            and (parse_time(ms.closed_at) or unseen_since) >= unseen_since
        )
        tracked = ms.key in dashboards or (has_items and (ms.state == "open" or closed_unseen))
        if not tracked:
            continue
        async with holding_milestone(ctx, ms.key):
            await sync_milestone(
                ctx, ms.key, gating=ms.state == "closed", milestone=ms, dashboards=dashboards
            )
    known = {ms.key for ms in milestones}
    for key in [key for key in dashboards if key not in known]:
        async with holding_milestone(ctx, key):
            await sync_milestone(ctx, key, dashboards=dashboards)
