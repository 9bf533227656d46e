"""Who may review a bugfix pull request, as other commands ask it (`/cc` refuses the people the independence
rule excludes) and as the bugfix's own reviewer requests need it: everyone who ran `/bugfix`, authored or
committed a commit of the branch, or pushed to it (``independence.modifiers``), read from the forge.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.commands.context import EventContext
from bot.forge import NotSupported, PermissionDenied, PullRequest, TooManyItems
from handlers.bugfix.independence import modifiers
from handlers.bugfix.record import Record, bugfix_of_branch
from handlers.bugfix.status import BranchCommit


@dataclass(frozen=True)
class Independence:
    """A bugfix pull request's bug and the people who may not review it, each with why (casefolded login →
    a few words); ``pushes_read``: False when the forge would not show who pushed (then pushers are
    unknown, and a caller that must be sure asks nobody it cannot clear)."""

    bug: int
    record: Record
    excluded: dict[str, str]
    pushes_read: bool = True


async def independence(ctx: EventContext, pull: PullRequest) -> Independence | None:
    """None when ``pull`` is not a bugfix pull request (its branch is no bug's, or it comes from a fork)."""
    if pull.from_fork:
        return None
    found = await bugfix_of_branch(ctx, pull.head_ref)
    if found is None:
        return None
    number, record = found
    # Who made the commits is all that counts here: their order and files are not read.
    commits = [
        BranchCommit(c.sha, c.parents, (), c.author_login or c.author_name, c.committer_login or "")
        for c in await ctx.forge.list_pr_commits(ctx.repo, pull.number)
    ]
    try:
        pushes = await ctx.forge.branch_pushes(ctx.repo, record.branch)
        read = True
    except (NotSupported, PermissionDenied, TooManyItems):
        pushes, read = [], False
    excluded = modifiers(commits, pushes, record.opened_by, ctx.me.login)
    return Independence(number, record, excluded, read)
