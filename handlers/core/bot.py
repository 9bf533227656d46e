"""The first commands: ``help`` and ``ping``."""

from __future__ import annotations

from dataclasses import replace

from bot.commands.context import CommandContext
from bot.commands.dispatch import not_invited
from bot.commands.permissions import who_may
from bot.commands.registry import Registry
from bot.config.settings import Permission
from bot.events.event import IssueSnapshot
from bot.forge import ForgeKind
from bot.version import steward_version

# This module's commands and events; `handlers.build_registry()` includes them (importing registers nothing).
plugin = Registry()


def register(registry: Registry) -> None:
    registry.include(plugin)


def render_help(
    prefix: str, commands: list[tuple[str, str, str, Permission]], forge: ForgeKind = "github"
) -> str:
    """The help text, from (name, usage, help, permission) rows."""
    floor = who_may("triage", short=True, forge=forge)
    lines = [
        "**Steward commands**",
        "",
        f"Write a command on its own line. `/{prefix} <command>` always works; the short form "
        f"`/<command>` works too. *{floor}* means {floor.rstrip('+')} access or more.",
        "",
        "| Command | What it does | Who may run it |",
        "|---|---|---|",
    ]
    for _name, usage, text, permission in sorted(commands):
        cells = (f"`/{prefix} {usage}`", text, who_may(permission, short=True, forge=forge))
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines)


@plugin.command(
    "help",
    usage="help",
    help="List the commands and who may run them.",
    permission="anyone",
    uninvited=True,
)
async def help_command(ctx: CommandContext) -> None:
    rows = [
        (spec.name, spec.usage, spec.help, ctx.settings.permission(spec.name, spec.permission))
        for spec in ctx.registry.commands.values()
    ]
    text = render_help(ctx.prefix, rows, ctx.event.forge)
    if ctx.config is not None and ctx.config.waiting:  # say first that most of the table does not run yet
        text = f"**Note:** {not_invited(ctx, ctx.prefix)}\n\n{text}"
    await ctx.reply(text)


@plugin.command(
    "ping",
    usage="ping",
    help="Check that Steward is listening; replies with its version.",
    permission="anyone",
    uninvited=True,
)
async def ping_command(ctx: CommandContext) -> None:
    await ctx.reply(f"pong — Steward {steward_version()}")


@plugin.command(
    "refresh",
    usage="refresh",
    help="Re-run Steward's checks on this issue now, from its current state.",
    permission="triage",
)
async def refresh_command(ctx: CommandContext) -> None:
    issue = await ctx.forge.get_issue(ctx.repo, ctx.number)
    event = replace(
        ctx.event,
        name="issues",
        action="edited",
        issue=IssueSnapshot.of(issue),
        comment=None,
        previous_body=None,
    )
    checked: list[str] = []
    for spec in ctx.registry.handlers_for("issues", "edited"):
        if not ctx.enabled(spec.section):
            continue
        await spec.handler(ctx.for_event(event))
        if spec.checks and spec.checks not in checked:
            checked.append(spec.checks)
    if checked:
        await ctx.reply(f"Re-checked this issue from its current state: {'; '.join(checked)}.")
    else:
        await ctx.reply("Re-checked this issue: no check applies to it yet.")
