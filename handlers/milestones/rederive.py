"""Re-deriving a milestone dashboard whose record does not verify (docs/integrity.md, "Re-derive, never
trust"): from the forge's facts and the people's command comments alone."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Final

from bot.commands.context import EventContext
from bot.commands.grammar import parse_cached
from bot.commands.permissions import check
from bot.forge import Issue, Milestone
from bot.records import sticky
from handlers.milestones.plan import NOTICE_KIND, UsageError, parse_gate, parse_time
from handlers.milestones.ratifications import comment_digest, unedited
from handlers.milestones.state import MAX_PROMISES, DashboardData, Override, Promise

# The command a `/gate override` is (handlers.milestones.bot registers it).
GATE_NAME: Final = "gate"


async def rederive(
    ctx: EventContext, key: int, ms: Milestone, dashboard: Issue, record: sticky.Record | None
) -> DashboardData:
    """A dashboard's state from its sources alone, for a record that does not verify (docs/integrity.md,
    "Re-derive, never trust"). The forge's facts: a closure before Steward started signing (``Keyring.since``)
    is history, settled as it stands; any later one is gated again. The record's own data is read only for
    the id of an override's command comment, and that comment must hold by itself (``override_from``)."""
    since = ctx.keyring.since
    closed = parse_time(ms.closed_at) if ms.state == "closed" else None
    # The forges give whole seconds: a closure in the very second signing started counts as after it.
    if closed is not None and since > 0 and closed.timestamp() < math.floor(since):
        data = DashboardData(key, "closed", ms.closed_at)
    else:
        data = DashboardData(key)
    shown = record.shown if record is not None else None
    pointer = Override.from_json(shown.get("override")) if isinstance(shown, dict) else None
    if pointer is not None and pointer.comment:
        data = replace(data, override=await override_from(ctx, dashboard, pointer.comment))
    return replace(data, promises=await promises_from(ctx, dashboard))


async def promises_from(ctx: EventContext, dashboard: Issue) -> tuple[Promise, ...] | None:
    """The promise list replayed from the dashboard's `/gate promise` comments, for a record that does not
    verify: dropping the list would loosen the gate (back to "at least one passing scenario"). Only commands
    of people who hold `milestones.label_permission` now count, as when they were run; an edited `add` still
    lists its promise, unconfirmed (it blocks until someone permitted removes or re-adds it), and an edited
    `remove` removes nothing."""
    comments = await ctx.forge.list_comments(ctx.repo, dashboard.number)
    me = ctx.me.login.casefold()
    permitted: dict[str, bool] = {}
    listed: list[Promise] = []
    for comment in sorted(comments, key=lambda c: (c.created_at or "", c.id)):
        if comment.author.casefold() == me:
            continue
        commands = parse_cached(
            comment.body, known=(GATE_NAME,), prefix=ctx.prefix, key=(comment.id, comment.updated_at)
        )
        for command in commands:
            if command.name != GATE_NAME:
                continue
            try:
                request = parse_gate(command.args, command.text)
            except UsageError:
                continue
            if request.action not in ("promise-add", "promise-remove"):
                continue
            who = comment.author.casefold()
            if who not in permitted:
                permission = ctx.settings.milestones.label_permission
                decision = await check(ctx.forge, ctx.repo, permission, actor=comment.author, author="")
                permitted[who] = decision.allowed
            if not permitted[who]:
                continue
            fresh = unedited(comment)
            if request.action == "promise-add":
                digest = comment_digest(comment.body) if fresh else ""
                at = comment.created_at or ""
                listed.append(Promise(request.reason, request.number, comment.author, at, comment.id, digest))
            elif fresh and 0 < request.number <= len(listed):
                del listed[request.number - 1]
    return tuple(listed[-MAX_PROMISES:]) or None


async def override_from(ctx: EventContext, dashboard: Issue, comment_id: int) -> Override | None:
    """The override a `/gate override <reason>` comment on ``dashboard`` gives, checked from the forge alone:
    on this dashboard's thread, never edited, a gate override of its author's, and written after the last
    reopening Steward noted there (an override ends when its milestone is reopened). The permission is checked
    by ``override_holds``, as for every override."""
    comments = await ctx.forge.list_comments(ctx.repo, dashboard.number)
    comment = next((c for c in comments if c.id == comment_id), None)
    me = ctx.me.login.casefold()
    if comment is None or comment.author.casefold() == me or not unedited(comment):
        return None
    commands = parse_cached(
        comment.body, known=(GATE_NAME,), prefix=ctx.prefix, key=(comment.id, comment.updated_at)
    )
    reason = ""
    for command in commands:
        if command.name == GATE_NAME:
            try:
                request = parse_gate(command.args, command.text)
            except UsageError:
                continue
            if request.action == "override":
                reason = request.reason
    if not reason:
        return None
    notices = [
        c.created_at
        for c in comments
        if c.author.casefold() == me and (sticky.marker_of(c.body) or ("", ""))[0] == NOTICE_KIND
    ]
    written = parse_time(comment.created_at)
    last_reopen = max((t for t in map(parse_time, notices) if t is not None), default=None)
    if written is None or (last_reopen is not None and written <= last_reopen):
        return None
    return Override(comment.author, comment.created_at, reason, (), comment.id, comment_digest(comment.body))
