"""What other capabilities ask of decision provenance (`/approve-spec`, `/bugfix`): the juror's answer
from forge state, never from Steward's own comment."""

from __future__ import annotations

from bot.context import EventContext
from bot.forge import RepoRef
from handlers.forks.effects import judge
from handlers.forks.parse import parse_forks


async def unresolved_forks(ctx: EventContext, repo: RepoRef, number: int) -> tuple[str, ...]:
    """The ids of the forks of issue ``number`` that no checked record resolves (open, claimed or
    invalid), in the order the issue lists them; empty when it lists none or all are resolved, or when the
    repository switches decision provenance off (`forks.enabled: false`). Raises
    ``PermissionsUnreadable`` when the forge will not say who may decide."""
    if not ctx.settings.forks.enabled:
        return ()
    issue = await ctx.forge.get_issue(repo, number)
    if not parse_forks(issue.body, ctx.settings.forks.headings).forks:
        return ()
    judged = await judge(
        ctx.forge,
        repo,
        number,
        ctx.settings,
        bot_login=ctx.me.login,
        prefix=ctx.prefix,
        issue=issue,
        verifier=await ctx.verifier(repo),
    )
    return judged.verdict.unresolved
