"""`/label foo -bar` (issue 39): sets and removes labels that exist here, each by whoever `triage.labels`
lets (triage and more unless an entry names the label, as the forge does — Prow's restricted labels when a
repository narrows or widens it), never a label Steward manages itself (``rules.is_managed``, derived from
the settings).
All or nothing: when one label is refused, nothing changes and the reply says why and who may."""

from __future__ import annotations

from bot.commands.context import CommandContext, CommandError
from bot.commands.permissions import check, who_may
from bot.commands.registry import Registry
from bot.config.triage import LabelRole
from handlers.triage.bot import SECTION, SHORT_SETTING
from handlers.triage.render import label_refusals
from handlers.triage.rules import is_managed, label_role, nearest, parse_label_args

# This module's commands; `handlers.build_registry()` includes them (importing registers nothing).
plugin = Registry()


def register(registry: Registry) -> None:
    registry.include(plugin)


# The most labels one `/label` changes.
MAX_LABELS = 20


def _who(role: LabelRole, ctx: CommandContext) -> str:
    return who_may(role, forge=ctx.event.forge)


@plugin.command(
    "label",
    usage="label <name> -<name> …",
    help="Add labels to this issue or pull request, or remove them with a leading `-`; only labels that "
    "exist here, each by whoever `triage.labels` lets (by default triage+), never one Steward manages.",
    permission="anyone",
    section=SECTION,
    short_setting=SHORT_SETTING,
)
async def label_command(ctx: CommandContext) -> None:
    change = parse_label_args(ctx.command.args)
    if not change.add and not change.remove:
        raise CommandError(f"name the labels: e.g. `/{ctx.prefix} label bug -wontfix`.")
    if len(change.add) + len(change.remove) > MAX_LABELS:
        raise CommandError(f"change at most {MAX_LABELS} labels at once.")
    existing = {label.name.casefold(): label.name for label in await ctx.forge.list_repo_labels(ctx.repo)}
    issue = await ctx.forge.get_issue(ctx.repo, ctx.number)
    unknown: list[tuple[str, list[str]]] = []
    managed: list[str] = []
    denied: list[tuple[str, str]] = []
    allowed: dict[LabelRole, bool] = {}
    for name in (*change.add, *change.remove):
        real = existing.get(name.casefold())
        if real is None:
            unknown.append((name, nearest(name, existing.values())))
            continue
        if is_managed(ctx.settings, real):
            managed.append(real)
            continue
        role = label_role(ctx.settings, real)
        if role not in allowed:
            decision = await check(ctx.forge, ctx.repo, role, actor=ctx.actor, author=issue.author)
            allowed[role] = decision.allowed
        if not allowed[role]:
            denied.append((real, _who(role, ctx)))
    if unknown or managed or denied or change.bad:
        raise CommandError(label_refusals(unknown, managed, denied, change.bad, ctx.prefix))
    have = {label.casefold() for label in issue.labels}
    adding = [existing[n.casefold()] for n in change.add if n.casefold() not in have]
    if adding:
        await ctx.forge.add_labels(ctx.repo, ctx.number, adding)
    for name in change.remove:
        if name.casefold() in have:
            await ctx.forge.remove_label(ctx.repo, ctx.number, existing[name.casefold()])
