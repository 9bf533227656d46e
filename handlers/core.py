"""The first commands: ``help`` and ``ping``."""

from __future__ import annotations

from bot.context import CommandContext
from bot.permissions import who_may
from bot.version import steward_version
from handlers import registry


def render_help(prefix: str, commands: list[tuple[str, str, str, str]]) -> str:
    """The help text, from (name, usage, help, permission) rows."""
    lines = [
        "**Steward commands**",
        "",
        f"Write a command on its own line. `/{prefix} <command>` always works; the short form "
        "`/<command>` works too.",
        "",
        "| Command | What it does | Who may run it |",
        "|---|---|---|",
    ]
    for _name, usage, text, permission in sorted(commands):
        lines.append(f"| `/{prefix} {usage}` | {text} | {who_may(permission)} |")  # type: ignore[arg-type]
    return "\n".join(lines)


@registry.command("help", usage="help", help="List the commands and who may run them.", permission="anyone")
async def help_command(ctx: CommandContext) -> None:
    rows = [
        (spec.name, spec.usage, spec.help, ctx.settings.command_permissions.get(spec.name, spec.permission))
        for spec in ctx.registry.commands.values()
    ]
    await ctx.reply(render_help(ctx.prefix, rows))


@registry.command("ping", usage="ping", help="Check that Steward is listening; replies with its version.",
                  permission="anyone")
async def ping_command(ctx: CommandContext) -> None:
    await ctx.reply(f"pong — Steward {steward_version()}")
