"""Decision provenance in the forge: what starts the work (events, `/decide`, `/reopen-fork`, `steward
reconcile`). The work itself is ``effects.sync_forks``; the rules are ``parse`` and ``juror``.

- An issue or pull request opened, edited or reopened, or a comment created, edited or deleted on it,
  re-derives its reconciliation comment and labels (when it lists forks or carries a forks label).
- A comment edited or deleted anywhere also re-derives the issues whose records cite it as their source.
- A forks label (`forks:open`, `forks:resolved`) added or removed by hand is put back: the labels mirror the
  juror, so the issue is re-derived.
- `/decide`, `/reopen-fork` and `/drop-fork` re-derive, then answer: 👍, or why the record does not count.
"""

from __future__ import annotations

from bot.commands.context import CommandContext, CommandError, EventContext
from bot.commands.permissions import PermissionsUnreadable
from bot.commands.registry import Registry
from bot.forge import ForgeError
from handlers.forks.effects import (
    DEFAULT_PERMISSION,
    issues_citing,
    rebuild_citations,
    sync_forks,
    tracked,
)
from handlers.forks.juror import Record
from handlers.forks.parse import UsageError, normalise_id, parse_decide, parse_reopen
from handlers.forks.render import Hints, refusal

# This module's commands and events; `handlers.build_registry()` includes them (importing registers nothing).
plugin = Registry()


def register(registry: Registry) -> None:
    registry.include(plugin)


CHECKS = "the design forks' decision records"
SECTION = "forks"


def _hints(ctx: EventContext) -> Hints:
    from handlers.forks.effects import hints_for

    return hints_for(ctx)


@plugin.on("issues", "opened", "edited", "reopened", checks=CHECKS, section=SECTION)
@plugin.on("pull_request", "opened", "edited", "reopened", section=SECTION)
async def on_issue(ctx: EventContext) -> None:
    issue = ctx.event.issue
    if issue is None or not tracked(issue.body, issue.labels, ctx.settings):
        return
    await _sync_quietly(ctx, issue.number)


@plugin.on("issues", "labeled", "unlabeled", section=SECTION)
@plugin.on("pull_request", "labeled", "unlabeled", section=SECTION)
async def on_label(ctx: EventContext) -> None:
    """A forks label changed by hand is put back (the next sync writes the labels the juror wants)."""
    issue = ctx.event.issue
    cfg = ctx.settings.forks
    ours = {cfg.open_label.casefold(), cfg.resolved_label.casefold()}
    if issue is None:
        return
    label = ctx.event.label
    # Gitea's label events may carry the whole label set and no single label.
    if label is None and not tracked(issue.body, issue.labels, ctx.settings):
        return
    if label is not None and label.casefold() not in ours:
        return
    if ctx.event.sender and ctx.event.sender.casefold() == ctx.me.login.casefold():
        return  # Steward's own change
    await _sync_quietly(ctx, issue.number)


async def _sync_quietly(ctx: EventContext, number: int) -> None:
    """Re-derive on an event; when the forge will not say who may decide (Gitea, unless Steward is a
    repository admin) nothing can be judged: say so in the log, once per event, and leave things as they are
    (the commands answer it in the thread)."""
    try:
        await sync_forks(ctx, number)
    except PermissionsUnreadable:
        ctx.log.warning(
            "forks: the forge will not show permissions here, so records cannot be checked; Steward needs "
            "repository admin access",
            number=number,
        )


@plugin.on("issue_comment", "created", "edited", "deleted", section=SECTION)
async def on_comment(ctx: EventContext) -> None:
    issue = ctx.event.issue
    if issue is None:
        return
    if tracked(issue.body, issue.labels, ctx.settings):
        await _sync_quietly(ctx, issue.number)
    comment = ctx.event.comment
    if ctx.event.action in ("edited", "deleted") and comment is not None:
        for number in await issues_citing(ctx, comment.id, skip=issue.number):
            try:
                await _sync_quietly(ctx, number)
            except ForgeError as exc:
                ctx.log.warning("forks: could not re-derive a citing issue", number=number, error=str(exc))


def _usage(prefix: str) -> str:
    return (
        f"Write `/{prefix} decide F1 <resolution>` (this comment is the decision), or "
        f"`/{prefix} decide F1 <resolution> --source <link to the comment where it was decided>`."
    )


def _mine(ctx: CommandContext, records: tuple[Record, ...], fork: str, kind: str) -> Record | None:
    """This command's record: the last one of its kind for ``fork`` in this comment."""
    found = [
        r for r in records if r.key.startswith(f"{ctx.comment.id}:") and r.fork == fork and r.kind == kind
    ]
    return found[-1] if found else None


def _not_listed(ctx: CommandContext, fork: str, listed: tuple[str, ...]) -> CommandError:
    headings = ctx.settings.forks.headings
    if not listed:
        return CommandError(
            f"this {'pull request' if ctx.event.issue and ctx.event.issue.is_pull_request else 'issue'} "
            "lists "
            f"no design forks. Add a section `## {headings[0]}` to its description with items like "
            f"`- [ ] {fork}: <question>`, then decide."
        )
    return CommandError(
        f"{fork} is not a fork listed on this issue (it lists {', '.join(listed)}). Use one of those ids, "
        "or add "
        f"`- [ ] {fork}: <question>` under `## {headings[0]}` in the description first."
    )


@plugin.command(
    "decide",
    usage="decide F1 <resolution> [--source <comment link>]",
    help="Record how a design fork was settled: this comment is the decision, or `--source` names the "
    "comment where it was decided (its author must be allowed to decide and it must contain the "
    "resolution). A later `/decide` supersedes; the history is kept.",
    permission=DEFAULT_PERMISSION,
    section=SECTION,
)
async def decide_command(ctx: CommandContext) -> None:
    try:
        args = parse_decide(ctx.command.text)
    except UsageError as exc:
        raise CommandError(f"{exc}. {_usage(ctx.prefix)}") from None
    judged = await sync_forks(ctx, ctx.number)
    listed = judged.forks.ids if judged else ()
    if args.fork not in listed:
        raise _not_listed(ctx, args.fork, listed)
    assert judged is not None
    record = _mine(ctx, judged.verdict.records, args.fork, "decide")
    if record is None:
        raise CommandError(f"I could not find this decision in the thread any more. {_usage(ctx.prefix)}")
    if record.state != "valid":
        raise CommandError(refusal(record, _hints(ctx)))
    status = judged.verdict.get(args.fork)
    if status is not None and status.record is not None and status.record.key != record.key:
        await ctx.reply(
            f"Recorded, but a later record for {args.fork} in this thread supersedes this one; see the "
            "reconciliation comment."
        )


@plugin.command(
    "reopen-fork",
    usage="reopen-fork F1 <reason>",
    help="Reopen a resolved design fork (the earlier records stay in its history).",
    permission=DEFAULT_PERMISSION,
    section=SECTION,
)
async def reopen_command(ctx: CommandContext) -> None:
    try:
        fork, _reason = parse_reopen(ctx.command.text)
    except UsageError as exc:
        raise CommandError(f"{exc}. Write `/{ctx.prefix} reopen-fork F1 <reason>`.") from None
    judged = await sync_forks(ctx, ctx.number)
    listed = judged.forks.ids if judged else ()
    if fork not in listed:
        raise _not_listed(ctx, fork, listed)
    assert judged is not None
    status = judged.verdict.get(fork)
    if (
        status is not None
        and status.history == ()
        and status.record is not None
        and status.record.kind == "reopen"
    ):
        await ctx.reply(f"{fork} had no record to reopen: it stays open.")


def _number(fork_id: str) -> int:
    found = normalise_id(fork_id)
    return int(found[1:]) if found else 0


@plugin.command(
    "drop-fork",
    usage="drop-fork F2 <reason>",
    help="Settle a design fork that was removed from the description without a decision (recorded with "
    "who, when and why, like `/decide`).",
    permission=DEFAULT_PERMISSION,
    section=SECTION,
)
async def drop_command(ctx: CommandContext) -> None:
    try:
        fork, _reason = parse_reopen(ctx.command.text)
    except UsageError as exc:
        raise CommandError(f"{exc}. Write `/{ctx.prefix} drop-fork F2 <reason>`.") from None
    judged = await sync_forks(ctx, ctx.number)
    listed = judged.forks.ids if judged else ()
    if fork in listed:
        raise CommandError(
            f"{fork} is still listed in the description, so it cannot be dropped: decide it with "
            f"`/{ctx.prefix} decide {fork} <resolution>`, or remove it from the description first."
        )
    remembered = judged.remembered if judged else {}
    if fork not in remembered:
        known = ", ".join(sorted(remembered, key=_number))
        raise CommandError(
            f"{fork} was never listed on this issue as far as Steward knows"
            + (f" (it knows {known})" if known else "")
            + ", so there is nothing to drop."
        )


@plugin.reconcile(
    "forks", checks="the decision records of every open issue and pull request listing forks", section=SECTION
)
async def reconcile_forks(ctx: EventContext) -> None:
    for issue in await ctx.forge.list_issues(ctx.repo, state="open", kind="all"):
        if not tracked(issue.body, issue.labels, ctx.settings):
            continue
        try:
            async with ctx.holding_unless_busy(issue.number) as held:
                if held:
                    await sync_forks(ctx.for_event(ctx.event), issue.number, issue=issue)
        except PermissionsUnreadable:
            ctx.log.warning("forks: permissions unreadable; records not checked", number=issue.number)
            return
        except ForgeError as exc:
            ctx.log.warning("forks: could not re-derive an issue", number=issue.number, error=str(exc))
    try:
        await rebuild_citations(ctx)
    except ForgeError as exc:
        ctx.log.warning("forks: could not rebuild the index of cited comments", error=str(exc))
