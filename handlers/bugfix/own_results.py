"""Steward's own `steward/*` results set by someone else (issue 35 item 7): a commit status another account
posted, or on GitHub a check run of that name from another app (or from any app, when Steward runs with a
token and posts none). Every `steward/*` context is Steward's — a required check must not pass on a writer's
word — so Steward posts its own state again at once and, on a bugfix pull request, its ledger records who set
what (``restorations``). Steward's own state is read back from its own commit statuses: it posts one for
every result, beside its check run when it is a GitHub App (``bot.forge.own_results``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import cast

from bot.commands.context import EventContext
from bot.events.event import ReportSnapshot
from bot.forge import PullRequest, StatusState
from bot.forge.own_results import set_own_result
from handlers.bugfix.restorations import Restoration
from handlers.bugfix.status import CONTEXT

Sync = Callable[[EventContext, PullRequest, Restoration | None], Awaitable[None]]


def same_login(a: str, b: str) -> bool:
    return a.casefold() == b.casefold()


def forged(ctx: EventContext, report: ReportSnapshot) -> bool:
    """Whether someone other than Steward set this result: a status by another account; a check run by
    another app (Steward's App acts as `<slug>[bot]`; with a token Steward posts no check run at all)."""
    if ctx.event.name == "status":
        return bool(ctx.event.sender) and not same_login(ctx.event.sender or "", ctx.me.login)
    if ctx.event.name == "check_run":
        return not same_login(f"{report.app}[bot]", ctx.me.login)
    return False


async def restore_own_result(
    ctx: EventContext, report: ReportSnapshot, heads: Sequence[PullRequest], sync: Sync
) -> None:
    """Steward's own state again at once: on a bugfix pull request's head (``heads``: the pull requests
    whose head the commit is), the state it computes, and the ledger records it (``sync``); elsewhere the
    last state Steward itself set for that context there, or a failure when it never set one."""
    sha, context = report.sha, report.context
    pulls = [p for p in heads if p.state == "open"]
    if context.casefold() != CONTEXT or not pulls:
        # One answer at a time: a run created completed may arrive as `created` and as `completed` (the
        # sandbox sends both), each answered by a job of its own.
        async with ctx.holding_repo(f"own-result:{sha}:{context.casefold()}"):
            await _post_last_own(ctx, sha, context)
    kind = "check run" if ctx.event.name == "check_run" else "status"
    ctx.log.warning(f"a steward/* {kind} set by someone else; Steward's own posted again", context=context)
    who = (f"{report.app}[bot]" if kind == "check run" and report.app else ctx.event.sender) or ""
    said = (report.conclusion or report.state or "") if kind == "check run" else report.state
    at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    restored = Restoration(who, context, said or "", sha, at, kind)
    for pull in pulls:
        await sync(ctx, pull, restored)


async def _post_last_own(ctx: EventContext, sha: str, context: str) -> None:
    """The last state Steward itself set for ``context`` on ``sha``, or a failure when it never set one."""
    statuses = await ctx.forge.commit_statuses(ctx.repo, sha)
    mine = [s for s in statuses if s.context == context and same_login(s.creator, ctx.me.login)]
    own = max(mine, key=lambda s: (s.updated_at, s.id)) if mine else None
    if own is not None:
        state = own.state if own.state in ("pending", "success", "failure", "error") else "failure"
        await set_own_result(
            ctx.forge, ctx.repo, sha, context, cast(StatusState, state), own.description, own.target_url
        )
    else:
        why = f"Not Steward's: {context} is set by Steward only"[:140]
        await set_own_result(ctx.forge, ctx.repo, sha, context, "failure", why)
