"""What other capabilities ask of decision provenance (`/approve-spec`, `/bugfix`, the milestone gate): the
juror's answer from forge state, never from Steward's own comment or the forks labels (a label anyone with
triage can change by hand; Steward puts it back, but a gate reads the juror)."""

from __future__ import annotations

from bot.commands.context import EventContext
from bot.forge import Issue, RepoRef
from handlers.forks.effects import Judged, judge, tracked


async def unresolved_forks(
    ctx: EventContext, repo: RepoRef, number: int, *, issue: Issue | None = None
) -> tuple[str, ...]:
    """The ids of the forks of issue ``number`` that no checked record resolves (open, claimed, invalid,
    a question changed after its decision, or removed from the description without a decision), in the
    order the issue lists them, the removed ones last; empty when it lists none (and carries no forks label)
    or all are resolved, or when the repository switches decision provenance off (`forks.enabled: false`).
    ``issue``: the issue when the caller has read it (saves one read). Raises ``PermissionsUnreadable``
    when the forge will not say who may decide.

    The milestone gate asks this for each item instead of reading the `forks:open` label."""
    if not ctx.settings.forks.enabled:
        return ()
    if issue is None:
        issue = await ctx.forge.get_issue(repo, number)
    if not tracked(issue.body, issue.labels, ctx.settings):
        return ()
    judged = await _judged(ctx, repo, number, issue)
    return judged.verdict.unresolved


async def decision_texts(ctx: EventContext, repo: RepoRef, number: int) -> tuple[str, ...]:
    """What the valid records of issue ``number``'s resolved forks say (each decision's text): the codebase
    facts a spec's grounding check reads besides the spec (seed 003). Empty when decision provenance is off
    or the issue lists no forks. Raises ``PermissionsUnreadable`` like ``unresolved_forks``."""
    if not ctx.settings.forks.enabled:
        return ()
    issue = await ctx.forge.get_issue(repo, number)
    if not tracked(issue.body, issue.labels, ctx.settings):
        return ()
    judged = await _judged(ctx, repo, number, issue)
    return tuple(
        f"{f.record.text} {f.record.quote}".strip()
        for f in judged.verdict.forks
        if f.status == "resolved" and f.record is not None
    )


async def _judged(ctx: EventContext, repo: RepoRef, number: int, issue: Issue) -> Judged:
    """The juror's judgement of issue ``number``'s forks, from forge state, with the repository's verifier."""
    return await judge(
        ctx.forge,
        repo,
        number,
        ctx.settings,
        bot_login=ctx.me.login,
        prefix=ctx.prefix,
        issue=issue,
        verifier=await ctx.verifier(repo),
    )
