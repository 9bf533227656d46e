"""The first commands: ``help`` and ``ping``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from bot.commands.context import CommandContext, CommandSpec
from bot.commands.dispatch import not_invited, setting_on
from bot.commands.permissions import decide, who_may
from bot.commands.registry import Registry
from bot.config.settings import Permission
from bot.events.event import IssueSnapshot
from bot.forge import ForgeKind, PermissionDenied, PermissionLevel
from bot.records.neutralise import placeholders
from bot.version import steward_version

# This module's commands and events; `handlers.build_registry()` includes them (importing registers nothing).
plugin = Registry()


def register(registry: Registry) -> None:
    registry.include(plugin)


# The capabilities' names in the help, by settings section ("" is Steward's own commands); a section not
# listed shows under its own name.
CAPABILITY_NAMES: Final = {
    "": "Steward itself",
    "backlog": "Refining issues",
    "bug_refinement": "Bug refinement (RA9)",
    "debug": "Root cause (the hypotheses board)",
    "bugfix": "Regression-first bugfixes",
    "forks": "Design forks",
    "milestones": "Milestones",
    "triage": "Everyday commands (assign, label …)",
}


@dataclass(frozen=True)
class HelpRow:
    name: str
    usage: str
    help: str
    permission: Permission
    section: str = ""
    runnable: bool = False  # the asker may run it here, now


def capability_of(spec: CommandSpec) -> str:
    """The capability a command is listed under in the help: its settings section, else its capability's
    folder (`handlers.milestones.ratify` → milestones); `/refine` (bugs and the backlog) with the refining
    commands, `/init` with Steward's own."""
    if spec.section:
        return spec.section
    folder, _, module = spec.handler.__module__.removeprefix("handlers.").partition(".")
    if folder == "core":
        return "backlog" if module == "refine" else ""
    return "" if folder == "onboarding" else folder


def _capability(section: str) -> str:
    return CAPABILITY_NAMES.get(section) or section.replace("_", " ").capitalize()


def _first_sentence(text: str) -> str:
    """The help's first sentence (cut only outside code), for the short list of what the asker may run."""
    for stop in re.finditer(r"[.:;](?=\s)", text):
        if text[: stop.start()].count("`") % 2 == 0 and not text[: stop.end()].endswith(("e.g.", "i.e.")):
            return text[: stop.start()] + "."
    return text


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


SHORT_LIST: Final = (
    10  # up to this many commands the asker may run are listed one a line, with what each does
)


def render_help(
    prefix: str, rows: Sequence[HelpRow], forge: ForgeKind = "github", short_off: Sequence[str] = ()
) -> str:
    """The help: first what the asker may run here — one line each (its first sentence), or, when they may
    run many, their names by capability — then every command folded, by capability, with what it does and
    who may run it. Placeholders (`<n>`) stay visible (`placeholders`)."""
    mine = [row for row in rows if row.runnable]
    known = list(CAPABILITY_NAMES)
    sections = sorted(
        dict.fromkeys(row.section for row in rows), key=lambda s: known.index(s) if s in known else len(known)
    )
    lines = [
        "**Steward commands** — write one on its own line in a comment: "
        f"`/{prefix} <command>`, or the short form `/<command>`.",
        "",
        "**What you can run here:**",
        "",
    ]
    if short_off:
        names = ", ".join(f"`/{name}`" for name in short_off[:3]) + (" …" if len(short_off) > 3 else "")
        lines[1:1] = [
            "",
            f"The short forms {names} are off on this repository, so other bots' commands of those names are "
            f"left to them: write `/{prefix} {short_off[0]}`.",
        ]
    if not mine:
        lines.append("- nothing on this issue yet.")
    elif len(mine) <= SHORT_LIST:
        lines += [f"- `/{prefix} {row.usage}` — {placeholders(_first_sentence(row.help))}" for row in mine]
    else:
        for section in sections:
            names = ", ".join(f"`{row.name}`" for row in mine if row.section == section)
            if names:
                lines.append(f"- **{_capability(section)}**: {names}")
    floor = who_may("triage", short=True, forge=forge)
    lines += [
        "",
        f"<details><summary>Every command ({len(rows)}), by capability: what it does and who may run it"
        "</summary>",
        "",
        f"*{floor}* means {floor.rstrip('+')} access or more.",
    ]
    for section in sections:
        lines += [
            "",
            f"**{_capability(section)}**",
            "",
            "| Command | What it does | Who may run it |",
            "|---|---|---|",
        ]
        for row in (r for r in rows if r.section == section):
            cells = (
                f"`/{prefix} {row.usage}`",
                placeholders(row.help),
                who_may(row.permission, short=True, forge=forge),
            )
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    lines += ["", "</details>"]
    return "\n".join(lines)


async def _runnable(
    ctx: CommandContext, spec: CommandSpec, permission: Permission, level: PermissionLevel
) -> bool:
    if ctx.config is not None and ctx.config.waiting and not spec.uninvited:
        return False
    if not ctx.enabled(spec.section):
        return False
    issue = ctx.event.issue
    on_pull = issue is not None and issue.is_pull_request
    if not (spec.on_pulls if on_pull else spec.on_issues):
        return False
    author = issue.author if issue is not None else ""
    return decide(permission, actor=ctx.actor, author=author, actor_level=level).allowed


@plugin.command(
    "help",
    usage="help",
    help="List the commands and who may run them.",
    permission="anyone",
    uninvited=True,
)
async def help_command(ctx: CommandContext) -> None:
    try:  # one read: what the asker may run depends on their access
        level: PermissionLevel = await ctx.forge.permission_of(ctx.repo, ctx.actor)
    except PermissionDenied:  # Gitea, without admin: show what needs no access
        level = "none"
    rows = []
    for spec in ctx.registry.commands.values():
        permission = ctx.settings.permission(spec.name, spec.permission)
        runnable = await _runnable(ctx, spec, permission, level)
        rows.append(HelpRow(spec.name, spec.usage, spec.help, permission, capability_of(spec), runnable))
    short_off = [
        spec.name
        for spec in ctx.registry.commands.values()
        if spec.short and spec.short_setting and not setting_on(ctx.settings, spec.short_setting)
    ]
    text = render_help(ctx.prefix, rows, ctx.event.forge, short_off)
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
