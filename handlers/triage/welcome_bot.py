"""The welcome (issue 39, `triage.welcome`): a first-time contributor's first issue or pull request gets the
configured words once. See ``welcome`` for what "first-time" means and why it is never said twice."""

from __future__ import annotations

from bot.commands.context import EventContext
from bot.commands.registry import Registry
from bot.forge import PermissionDenied, permission_at_least
from handlers.triage.bot import SECTION
from handlers.triage.welcome import may_be_first_time, welcome_text

# This module's events; `handlers.build_registry()` includes them (importing registers nothing).
plugin = Registry()


def register(registry: Registry) -> None:
    registry.include(plugin)


async def _writer(ctx: EventContext, login: str) -> bool:
    """Gitea has no `author_association`: whether the person has write access (unknown: no)."""
    try:
        return permission_at_least(await ctx.forge.permission_of(ctx.repo, login), "write")
    except PermissionDenied:
        return False


@plugin.on("issues", "opened", section=SECTION)
@plugin.on("pull_request", "opened", section=SECTION)
async def welcome(ctx: EventContext) -> None:
    text = ctx.settings.triage.welcome
    issue = ctx.event.issue
    if not text.strip() or issue is None:
        return
    if not may_be_first_time(
        issue.author, issue.author_association, owner=ctx.repo.owner, bot_login=ctx.me.login
    ):
        return
    if await ctx.forge.opened_before(ctx.repo, issue.author, issue.number):
        return
    if ctx.event.forge == "gitea" and await _writer(ctx, issue.author):
        return
    await ctx.upsert_sticky("welcome", issue.author.casefold(), welcome_text(issue.author, text))
    ctx.log.info("welcomed a first-time contributor", number=issue.number)
