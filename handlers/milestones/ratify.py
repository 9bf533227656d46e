"""`/ratify <reason>`: accept a finding, or a cycle item's audit, as it is — with who, when and why on record.

On a `finding:friction` / `finding:spec-gap` item Steward applies `ratified` (the gate then counts the open
finding as settled, for both legs); on an item labelled `cycle` it applies `audit:ratified` (its audit is
accepted); on an item that is both, both. It keeps a signed record on the item (``handlers.milestones.
ratified``: what it is worth, and when it stops counting), and asks for a refresh of the milestone's
dashboard, which lists each ratification with its reason.
"""

from __future__ import annotations

from bot.context import CommandContext, CommandError, EventContext
from bot.forge import Comment, Issue
from bot.neutralise import line
from bot.registry import Registry
from handlers.milestones.effects import gate_labels, now_utc, request_refresh
from handlers.milestones.plan import iso
from handlers.milestones.ratified import (
    MAX_REASON,
    RATIFY_NAME,
    RATIFY_PERMISSION,
    RECORD_KIND,
    ratifying_labels,
    record_data,
)

# This module's command and event (part of the milestone gate's capability); `handlers.build_registry()`
# includes them (importing registers nothing).
plugin = Registry()


def register(registry: Registry) -> None:
    registry.include(plugin)


LABEL_COLOR = "ededed"


def _reason(text: str) -> str:
    return " ".join(text.split())[:MAX_REASON]


def _neither(ctx: CommandContext, issue: Issue) -> str:
    labels = gate_labels(ctx.settings)
    if issue.has_label(labels.finding_bug):
        return (
            f"a `{labels.finding_bug}` is not settled by ratifying it: fix it and close it. `/{ctx.prefix} "
            f"ratify` accepts a `{labels.finding_friction}` or `{labels.finding_spec_gap}` finding, or the "
            f"audit of an item labelled `{labels.cycle}`, as it is."
        )
    return (
        f"`/{ctx.prefix} ratify` accepts a `{labels.finding_friction}` or `{labels.finding_spec_gap}` "
        f"finding, or the audit of an item labelled `{labels.cycle}`, as it is; this "
        f"{'pull request' if issue.is_pull_request else 'issue'} carries none of those labels. Label it "
        "first, then ratify it."
    )


def record_text(ctx: CommandContext, actor: str, reason: str, url: str, labels: tuple[str, ...]) -> str:
    names = " and ".join(f"`{name}`" for name in labels)
    return (
        f"Ratified by {actor}, labelled {names}: “{line(reason, MAX_REASON)}”. The milestone's dashboard "
        f"lists it with this reason. Nothing to do.\n\nIt counts as [the `/{ctx.prefix} ratify` "
        f"comment]({url}): editing or deleting that comment, removing the label, or {actor} losing the "
        "permission to ratify ends it."
    )


@plugin.command(
    RATIFY_NAME,
    usage="ratify <reason>",
    help="Accept a `finding:friction` / `finding:spec-gap` item (label `ratified`) or the audit of a `cycle` "
    "item (label `audit:ratified`) as it is, with the reason on record; the milestone's dashboard lists it "
    "(maintain+ by default, on Gitea admins; never below write: `commands.ratify`).",
    permission=RATIFY_PERMISSION,
)
async def ratify_command(ctx: CommandContext) -> None:
    if not ctx.settings.milestones.enabled:
        await ctx.reply("The milestone gate is switched off on this repository (`milestones.enabled`).")
        return
    reason = _reason(ctx.command.text)
    if not reason:
        raise CommandError(
            f"a ratification needs a reason: `/{ctx.prefix} ratify <why it is accepted as it is>`, e.g. "
            f"`/{ctx.prefix} ratify the extra click is the price of the confirmation step`."
        )
    issue = await ctx.forge.get_issue(ctx.repo, ctx.number)
    applied = ratifying_labels(issue, gate_labels(ctx.settings))
    if not applied:
        raise CommandError(_neither(ctx, issue))
    comments = await ctx.forge.list_comments(ctx.repo, ctx.number)
    said: Comment | None = next((c for c in comments if c.id == ctx.comment.id), None)
    if said is None or said.author.casefold() != ctx.actor.casefold():
        raise CommandError("your comment is gone: nothing was recorded.")
    data = record_data(by=ctx.actor, at=iso(now_utc()), reason=reason, comment=said, labels=applied)
    text = record_text(ctx, ctx.actor, reason, said.html_url, applied)
    await ctx.upsert_sticky(RECORD_KIND, str(ctx.number), text, data=data, comments=comments)
    ctx.replied = True
    missing = [name for name in applied if not issue.has_label(name)]
    for name in missing:
        await ctx.forge.ensure_label(
            ctx.repo, name, color=LABEL_COLOR, description="Steward: accepted as it is (`/ratify`)"
        )
    if missing:
        await ctx.forge.add_labels(ctx.repo, ctx.number, missing)
    if issue.milestone is not None:
        await request_refresh(ctx, issue.milestone)


@plugin.on("issue_comment", "edited", "deleted", checks="the ratifications the milestone's dashboard lists")
async def on_comment_changed(ctx: EventContext) -> None:
    """A comment changed on a ratified item of a milestone: its `/ratify` comment may be the one, and a
    ratification counts only as that comment — refresh the dashboard (coalesced; it reads what holds)."""
    issue = ctx.event.issue
    if not ctx.settings.milestones.enabled or issue is None or issue.milestone is None:
        return
    labels = gate_labels(ctx.settings)
    wanted = {labels.ratified.casefold(), labels.audit_ratified.casefold()}
    if any(name.casefold() in wanted for name in issue.labels):
        await request_refresh(ctx, issue.milestone)
