"""`/ratify <reason>`: accept a finding, or a cycle item's audit, as it is — with who, when and why on record.

On a `finding:friction` / `finding:spec-gap` item Steward applies `ratified` (the gate then counts the open
finding as settled, for both legs); on an item labelled `cycle` it applies `audit:ratified` (its audit is
accepted); on an item that is both, both. It keeps a signed record on the item (``handlers.milestones.
ratified``: what it is worth, and when it stops counting), and asks for a refresh of the milestone's
dashboard, which lists each ratification with its reason.
"""

from __future__ import annotations

from bot.commands.context import CommandContext, CommandError, EventContext
from bot.commands.registry import Registry
from bot.forge import Comment, Issue
from bot.records import sticky
from handlers.milestones.effects import gate_labels, now_utc, request_refresh
from handlers.milestones.plan import iso
from handlers.milestones.ratifications import (
    RATIFY_NAME,
    RATIFY_PERMISSION,
    RECORD_KIND,
    item_ratifications,
    ratifying_labels,
    reason_of,
    record_data,
    record_text,
)

# This module's command and event (part of the milestone gate's capability); `handlers.build_registry()`
# includes them (importing registers nothing).
plugin = Registry()


def register(registry: Registry) -> None:
    registry.include(plugin)


LABEL_COLOR = "ededed"


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
    reason = reason_of(ctx.command.text)
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
    text = record_text(ctx.prefix, ctx.actor, reason, said.html_url, applied)
    # The signature pins the visible text too: a reader sees who ratified and why; editing it is tampering.
    await ctx.upsert_sticky(RECORD_KIND, str(ctx.number), text, data=data, comments=comments, pin_text=True)
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
    """A comment changed on a ratified item. Steward's own ratification record edited or deleted: it is
    checked now, in this event (so the note can name who changed it), and rebuilt from the `/ratify`
    comment that still holds, or made void (``ratified.item_ratifications``). Any other comment may be the
    `/ratify` comment a ratification counts as: the milestone's dashboard is refreshed (coalesced)."""
    issue = ctx.event.issue
    if not ctx.settings.milestones.enabled or issue is None:
        return
    labels = gate_labels(ctx.settings)
    comment = ctx.event.comment
    ours = (
        comment is not None
        and comment.author.casefold() == ctx.me.login.casefold()
        and sticky.marker_of(comment.body) == (RECORD_KIND, str(issue.number))
    )
    if ours:
        item = await ctx.forge.get_issue(ctx.repo, issue.number)
        await item_ratifications(ctx, item, labels)
        if item.milestone is not None:
            await request_refresh(ctx, item.milestone)
        return
    if issue.milestone is None:
        return
    wanted = {labels.ratified.casefold(), labels.audit_ratified.casefold()}
    if any(name.casefold() in wanted for name in issue.labels):
        await request_refresh(ctx, issue.milestone)
