"""`/close`, `/reopen` and `/duplicate` (issue 39): each reads the issue now, decides with ``closing`` and
writes only the difference, so a re-run of the job (a replayed delivery, a worker that died) writes nothing
twice. The forge's own rules for who may are kept (``closing``); `commands.<name>.permission` may ask for
more, never less (``PERMISSION_FLOORS``)."""

from __future__ import annotations

from typing import Final

from bot.commands.context import CommandContext, CommandError
from bot.commands.registry import Registry
from bot.forge import Issue, NotFound, PermissionDenied, PermissionLevel, RepoRef
from bot.records import sticky
from handlers.triage.bot import SECTION, SHORT_SETTING
from handlers.triage.closing import (
    UsageError,
    backlink_text,
    closed_as_duplicate,
    closed_text,
    closer_of,
    duplicate_refusal,
    duplicate_text,
    may_reopen,
    parse_close,
    parse_target,
    reopen_refusal,
    reopened_text,
)

# This module's commands; `handlers.build_registry()` includes them (importing registers nothing).
plugin = Registry()
DUPLICATE_COLOR: Final = "cfd3d7"  # GitHub's default `duplicate` label's colour


def register(registry: Registry) -> None:
    registry.include(plugin)


# Steward's record of a closing it made at someone's request: the reply, signed, naming who asked and the
# closing's time (`Issue.closed_at`), so that `/reopen` can tell it from a closing of Steward's own accord.
CLOSED_KIND: Final = "closed"


async def _closed_reply(ctx: CommandContext, text: str, closed: Issue, duplicate_of: int = 0) -> None:
    data: dict[str, object] = {"for": ctx.actor, "at": closed.closed_at}
    if duplicate_of:
        data["of"] = duplicate_of  # the issue that stays open, in this repository
    await ctx.upsert_sticky(CLOSED_KIND, ctx.reply_key, text, data=data)
    ctx.replied = True


async def _closing_record(ctx: CommandContext, issue: Issue) -> dict[str, object]:
    """Steward's signed record of the issue's current closing ({} when none, or none that verifies). The
    closing is known by the forge's `closed_at`, to the second: two closings within one second are one."""
    if issue.state != "closed" or not issue.closed_at:
        return {}
    for comment in reversed(await ctx.forge.list_comments(ctx.repo, issue.number)):
        found = sticky.marker_of(comment.body)
        if comment.author.casefold() != ctx.me.login.casefold() or found is None or found[0] != CLOSED_KIND:
            continue
        data = (await ctx.record(comment, CLOSED_KIND, found[1])).trusted
        if isinstance(data, dict) and data.get("at") == issue.closed_at:
            return data
    return {}


async def _closed_for(ctx: CommandContext, issue: Issue) -> str:
    """Whom Steward closed the issue for ("" when it closed it of its own accord, or someone else did)."""
    return str((await _closing_record(ctx, issue)).get("for") or "")


async def _first_run(ctx: CommandContext) -> bool:
    """False when this very command already ran (a re-run of its job): its reply is then written again as it
    was, not replaced by "closed already"."""
    return await ctx.once(f"triage-state:{ctx.reply_key}")


@plugin.command(
    "close",
    usage="close [not-planned] [reason]",
    help="Close this issue or pull request, with the reason given (`not-planned`: closed as not planned). "
    "Its author may, as on the forge.",
    permission="author",
    section=SECTION,
    short_setting=SHORT_SETTING,
)
async def close_command(ctx: CommandContext) -> None:
    request = parse_close(ctx.command.args)
    first = await _first_run(ctx)
    issue = await ctx.forge.get_issue(ctx.repo, ctx.number)
    if issue.state == "open" and issue.is_pull_request:  # a state reason is an issue's, not a pull request's
        issue = await ctx.forge.edit_issue(ctx.repo, ctx.number, state="closed")
    elif issue.state == "open":
        issue = await ctx.forge.close_issue(ctx.repo, ctx.number, reason=request.reason)
    elif first:
        await ctx.reply("This is closed already. Nothing to do.")
        return
    await _closed_reply(ctx, closed_text(ctx.actor, request, ctx.prefix), issue)


async def _level(ctx: CommandContext) -> PermissionLevel:
    try:
        return await ctx.forge.permission_of(ctx.repo, ctx.actor)
    except PermissionDenied:  # Gitea without admin: the author's own right is all that counts there
        return "none"


@plugin.command(
    "reopen",
    usage="reopen",
    help="Reopen this issue or pull request. Its author may where the forge would let them (GitHub: when "
    "they closed it themselves; Gitea: always), and when Steward closed it on its own (a report left "
    "without an answer).",
    permission="author",
    section=SECTION,
    short_setting=SHORT_SETTING,
)
async def reopen_command(ctx: CommandContext) -> None:
    first = await _first_run(ctx)
    issue = await ctx.forge.get_issue(ctx.repo, ctx.number)
    if issue.state == "open":
        await ctx.reply("This is open already. Nothing to do." if first else reopened_text(ctx.actor))
        return
    level = await _level(ctx)
    by_steward = issue.closed_by.casefold() == ctx.me.login.casefold()
    author_only = ctx.actor.casefold() == issue.author.casefold() and level in ("none", "read")
    closed_for = await _closed_for(ctx, issue) if by_steward and author_only else ""
    allowed = may_reopen(
        ctx.event.forge,
        actor=ctx.actor,
        author=issue.author,
        actor_level=level,
        closed_by=issue.closed_by,
        bot_login=ctx.me.login,
        closed_for=closed_for,
    )
    if not allowed:
        closer = closer_of(issue.closed_by, closed_for, ctx.me.login)
        raise CommandError(reopen_refusal(ctx.event.forge, closer=closer))
    if issue.is_pull_request and (await ctx.forge.get_pull_request(ctx.repo, ctx.number)).merged:
        raise CommandError("a merged pull request cannot be reopened; open a new one for further changes.")
    await ctx.forge.edit_issue(ctx.repo, ctx.number, state="open")
    label = ctx.settings.triage.duplicate_label
    if ctx.event.forge == "gitea" and label and closed_as_duplicate(issue, label):
        await ctx.forge.remove_label(ctx.repo, ctx.number, label)  # Steward's mark of a duplicate there
    await ctx.reply(reopened_text(ctx.actor))


async def _target_issue(ctx: CommandContext, repo: RepoRef, number: int, ref: str) -> Issue:
    try:
        return await ctx.forge.get_issue(repo, number)
    except (NotFound, PermissionDenied):
        raise CommandError(
            f"I cannot read {ref}: it does not exist, or Steward has no access to that repository. Name an "
            "issue Steward can read."
        ) from None


async def _private_leak(ctx: CommandContext, target_repo: RepoRef) -> bool:
    """A public issue naming an issue of a private repository would show that repository's name."""
    if target_repo.full_name.casefold() == ctx.repo.full_name.casefold():
        return False
    there = await ctx.forge.get_repo(target_repo)
    return there.private and not (await ctx.forge.get_repo(ctx.repo)).private


@plugin.command(
    "duplicate",
    usage="duplicate #<n>",
    help="Close this issue as a duplicate of issue #<n> (or owner/repo#<n>), with a link both ways. Its "
    "author may, as on the forge.",
    permission="author",
    on_pulls=False,
    section=SECTION,
    short_setting=SHORT_SETTING,
)
async def duplicate_command(ctx: CommandContext) -> None:
    try:
        target = parse_target(ctx.command.args, ctx.prefix)
    except UsageError as exc:
        raise CommandError(str(exc)) from None
    first = await _first_run(ctx)
    target_repo = target.repo or ctx.repo
    ref = target.ref(ctx.repo)
    other = await _target_issue(ctx, target_repo, target.number, ref)
    if other.is_pull_request:
        raise CommandError(f"{ref} is a pull request; name the issue this one repeats.")
    if await _private_leak(ctx, target_repo):
        raise CommandError(
            "The issue you named is in a private repository and this one is public: a link here would show "
            "its name (so this reply does not repeat it). Close this issue with `close` and a reason instead."
        )
    issue = await ctx.forge.get_issue(ctx.repo, ctx.number)
    label = ctx.settings.triage.duplicate_label
    rerun = not first and issue.state == "closed"
    same_repo = target_repo.full_name.casefold() == ctx.repo.full_name.casefold()
    if not rerun:
        canonical = 0
        if closed_as_duplicate(other, label) and same_repo:
            canonical = int(str((await _closing_record(ctx, other)).get("of") or 0))
        refusal = duplicate_refusal(ctx.repo, issue, target_repo, other, label, canonical=canonical)
        if refusal is not None:
            raise CommandError(refusal)
    if ctx.event.forge == "gitea" and label and not issue.has_label(label):
        # Gitea keeps no close reason: the label says it (put on before closing, so a re-run finds it).
        await ctx.forge.ensure_label(
            ctx.repo, label, color=DUPLICATE_COLOR, description="This issue or pull request already exists"
        )
        await ctx.forge.add_labels(ctx.repo, ctx.number, [label])
    if issue.state == "open":
        issue = await ctx.forge.close_issue(ctx.repo, ctx.number, reason="duplicate", duplicate_of=other.id)
    await _closed_reply(ctx, duplicate_text(ctx.actor, ref), issue, other.number if same_repo else 0)
    if same_repo:
        # The link back, on the issue that stays open (another repository's issue is linked by the forge
        # itself: both forges show a mention of it in its timeline).
        async with ctx.holding(other.number):
            await ctx.upsert_sticky(
                "duplicate", str(ctx.number), backlink_text(f"#{ctx.number}"), number=other.number
            )
