"""The fix merged: the bug gets its summary, `bugfix:merged`, and is closed."""

from __future__ import annotations

from dataclasses import replace

from bot.context import EventContext
from bot.forge import PullRequest
from handlers.bugfix import inputs
from handlers.bugfix.evidence import assess
from handlers.bugfix.record import (
    MERGED_LABEL,
    OPEN_LABEL,
    SUMMARY_KIND,
    Record,
    add_label,
    opened_of,
    write_record,
)
from handlers.bugfix.render import Summary, summary_text
from handlers.bugfix.slot import recipe_part


async def close_bug(ctx: EventContext, pull: PullRequest, number: int, record: Record) -> None:
    """The fix merged: the bug gets the summary, `bugfix:merged`, and is closed."""
    ev = await assess(ctx, pull, number, record)
    body = ev.bug.body
    summary = Summary(
        number=number,
        pull=pull.number,
        steps=recipe_part(body, "5.2"),
        observed_expected=recipe_part(body, "5.3"),
        hypothesis=inputs.hypothesis_of(body),
        path=record.path,
        red_sha=ev.red_sha,
        red_ci=ev.red_ci or "—",
        head_sha=pull.head_sha,
        head_ci=ev.head_ci or "—",
        status=f"{ev.status.state} ({ev.status.description})",
    )
    await ctx.upsert_sticky(
        SUMMARY_KIND,
        str(number),
        summary_text(summary, ev.ledger),
        number=number,
        comments=ev.comments.get(number),
    )
    repository = await ctx.forge.get_repo(ctx.repo)
    done = replace(opened_of(ctx, number, record, pull, repository.html_url), merged=True)
    await write_record(ctx, number, record, done, ev.comments.get(number))
    await add_label(ctx, number, MERGED_LABEL, ev.bug.labels)
    if any(label.casefold() == OPEN_LABEL for label in ev.bug.labels):
        await ctx.forge.remove_label(ctx.repo, number, OPEN_LABEL)
    if ev.bug.state != "closed":
        await ctx.forge.edit_issue(ctx.repo, number, state="closed")
