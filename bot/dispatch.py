"""Routes one Event to the registered handlers, and comment commands to their handlers.

Commands follow DESIGN §3.4: an accepted command gets 👀 at once and then a result (a
reply, or 👍 / 😕); a refusal says why and who may run it; an unknown command is answered
with the closest known one.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from bot.commands import Command, added_commands, closest_command, parse_commands
from bot.context import CommandContext, CommandError, EventContext
from bot.permissions import check, who_may

# Commands are read from the first 128 KiB of a comment: GitHub caps comments at 65,536
# characters, and a hostile Gitea comment must not hold a worker's event loop for seconds.
MAX_COMMAND_SCAN = 128 * 1024


def _format(prefix: str, name: str) -> str:
    return f"`/{prefix} {name}`"


async def dispatch(ctx: EventContext, *, prefix: str) -> list[str]:
    """Run every handler registered for the event; returns the names of the handlers run."""
    ran: list[str] = []
    for spec in ctx.registry.handlers_for(ctx.event.name, ctx.event.action):
        await spec.handler(ctx)
        ran.append(spec.handler.__name__)
    if ctx.event.name == "issue_comment" and ctx.event.action in ("created", "edited"):
        ran += await run_commands(ctx, prefix=prefix)
    return ran


def _commands_of(ctx: EventContext, prefix: str) -> list[Command]:
    comment = ctx.event.comment
    if comment is None:
        return []
    known = ctx.registry.short_names()
    body = comment.body[:MAX_COMMAND_SCAN]
    if ctx.event.action == "edited":
        previous = (ctx.event.previous_body or "")[:MAX_COMMAND_SCAN]
        return added_commands(previous, body, known=known, prefix=prefix)
    return parse_commands(body, known=known, prefix=prefix)


async def run_commands(ctx: EventContext, *, prefix: str) -> list[str]:
    comment = ctx.event.comment
    issue = ctx.event.issue
    if comment is None or issue is None:
        return []
    if comment.author.casefold() == ctx.me.login.casefold():
        return []
    ran: list[str] = []
    seen: Counter[tuple[str, tuple[str, ...]]] = Counter()
    for command in _commands_of(ctx, prefix):
        occurrence = seen[(command.name, command.args)]
        seen[(command.name, command.args)] += 1
        name = command.name or "help"
        cctx = CommandContext(
            **{f: getattr(ctx, f) for f in ("event", "forge", "me", "settings", "registry", "prefix")},
            log=ctx.log.bind(command=name),
            command=replace(command, name=name),
            comment=comment,
            occurrence=occurrence,
        )
        spec = ctx.registry.commands.get(name)
        if spec is None:
            suggestion = closest_command(name, list(ctx.registry.commands))
            hint = f" Did you mean {_format(prefix, suggestion)}?" if suggestion else ""
            await cctx.react("confused")
            await cctx.reply(
                f"@{comment.author}: I don't know the command {_format(prefix, name)}.{hint} "
                f"{_format(prefix, 'help')} lists the commands I know."
            )
            ran.append(f"unknown:{name}")
            continue
        where_ok = spec.on_pulls if issue.is_pull_request else spec.on_issues
        if not where_ok:
            place = "pull requests" if issue.is_pull_request else "issues"
            await cctx.react("confused")
            await cctx.reply(f"@{comment.author}: {_format(prefix, name)} does not work on {place}.")
            ran.append(f"misplaced:{name}")
            continue
        permission = ctx.settings.command_permissions.get(name, spec.permission)
        decision = await check(ctx.forge, ctx.repo, permission, actor=comment.author, author=issue.author)
        if not decision.allowed:
            await cctx.react("confused")
            await cctx.reply(
                f"@{comment.author}: {_format(prefix, name)} can only be run by {who_may(permission)}; "
                f"your access to this repository is `{decision.actor_level}`. "
                f"Ask someone who may run it, or a maintainer to change `{name}` in the repository's "
                "Steward configuration."
            )
            ran.append(f"refused:{name}")
            continue
        await cctx.react("eyes")
        try:
            await spec.handler(cctx)
        except CommandError as exc:
            await cctx.react("confused")
            await cctx.reply(f"@{comment.author}: {exc}")
            ran.append(f"error:{name}")
            continue
        if not cctx.replied:
            await cctx.react("+1")
        ran.append(name)
    return ran
