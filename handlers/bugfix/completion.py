"""The fix merged: an honest completion (the bug closed with its summary) or `bugfix:merged-unproven`."""

from __future__ import annotations

from dataclasses import replace

from bot.commands.context import EventContext
from bot.forge import PullRequest
from handlers.bugfix import other_capabilities
from handlers.bugfix.effects import Evidence, assess
from handlers.bugfix.record import (
    MERGED_LABEL,
    OPEN_LABEL,
    SUMMARY_KIND,
    UNPROVEN_LABEL,
    Record,
    add_label,
    opened_of,
    write_record,
)
from handlers.bugfix.regression_slot import recipe_part
from handlers.bugfix.render import Summary, summary_text
from handlers.bugfix.status import CONTEXT


def missing_proof(ev: Evidence, head_sha: str) -> list[str]:
    """What the merged head lacked for an honest completion (empty: nothing)."""
    missing = []
    if ev.status.state != "success":
        missing.append(
            f"`{CONTEXT}` was **{ev.status.state}** at the merged head `{head_sha[:10]}`: "
            f"{ev.status.description}"
        )
    if ev.head_ci != "green":
        word = ev.head_ci or "not reported"
        missing.append(
            "the CI contexts Steward counts (`bugfix.required_contexts`; every context when it is empty) had "
            f"not all passed at the merged head (CI: {word})"
        )
    return missing


async def close_bug(ctx: EventContext, pull: PullRequest, number: int, record: Record) -> None:
    """The fix merged. Completion is claimed only when the status was success at the merged head and every
    required check passed: then the bug gets the summary, `bugfix:merged`, and is closed. Otherwise it stays
    open, labelled `bugfix:merged-unproven`, with a comment that lists exactly what was missing."""
    ev = await assess(ctx, pull, number, record)
    # Read once, as its verdict reads it: an answer the reporter gave in a comment is in.
    body = await other_capabilities.bug_read(ctx, ev.bug, ev.comments.get(number))
    root = await other_capabilities.root_cause(ctx, ctx.repo, ev.bug, record.hypothesis or None, body)
    missing = missing_proof(ev, pull.head_sha)
    summary = Summary(
        number=number,
        pull=pull.number,
        steps=recipe_part(body, "5.2"),
        observed_expected=recipe_part(body, "5.3"),
        # The confirmed hypothesis the branch was opened for, as the hypotheses board states it.
        hypothesis=(
            root.hypothesis if root.evidenced and root.hypothesis else other_capabilities.hypothesis_of(body)
        ),
        path=record.path,
        red_sha=ev.red_sha,
        red_ci=ev.red_ci or "—",
        head_sha=pull.head_sha,
        head_ci=ev.head_ci or "—",
        status=f"{ev.status.state} ({ev.status.description})",
        missing=tuple(missing),
        refuted=root.refuted,
        conflicts=ev.conflicts,
    )
    await ctx.upsert_sticky(
        SUMMARY_KIND,
        str(number),
        summary_text(summary, ev.ledger),
        number=number,
        comments=ev.comments.get(number),
    )
    repository = await ctx.forge.get_repo(ctx.repo)
    done = replace(
        opened_of(ctx, number, record, pull, repository.html_url), merged=True, unproven=bool(missing)
    )
    await write_record(ctx, number, record, done, ev.comments.get(number))
    await add_label(ctx, number, UNPROVEN_LABEL if missing else MERGED_LABEL, ev.bug.labels)
    if any(label.casefold() == OPEN_LABEL for label in ev.bug.labels):
        await ctx.forge.remove_label(ctx.repo, number, OPEN_LABEL)
    if not missing and ev.bug.state != "closed":
        await ctx.forge.edit_issue(ctx.repo, number, state="closed")
