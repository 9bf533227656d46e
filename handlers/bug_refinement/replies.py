"""The comments whose answers count for a bug's report, and the bug as its verdict reads it (issue 34 §1).

A reporter's answer in a comment counts as if they had written it in the description: the verdict reads the
description (with the repository's issue templates) and those answers, and so does everything else that shows
the bug (``bug_as_read``: the bugfix pull request, the hypothesis it quotes, the fix's summary).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.commands.context import EventContext
from bot.forge import Comment, Issue, permission_at_least
from bot.records import sticky
from handlers.bug_refinement.document import Document
from handlers.bug_refinement.merged import merged_document
from handlers.bug_refinement.reading import Reading, Reply, read
from handlers.bug_refinement.report import Report, report_of
from handlers.bug_refinement.template_reads import repo_templates

__all__ = [
    "FOREIGN_EDIT",
    "MAX_REPLIES",
    "answers",
    "bug_as_read",
    "foreign_edit_key",
    "may_answer",
    "note_foreign_edit",
    "reporter_of",
    "reporter_replies",
]

FOREIGN_EDIT = "ra9-foreign-edit"
MAX_REPLIES = 20


def foreign_edit_key(comment_id: int) -> str:
    return f"{FOREIGN_EDIT}:{comment_id}"


def reporter_of(ctx: EventContext, issue: Issue) -> str | None:
    """Who reported the bug, when a person other than Steward did."""
    if not issue.author or issue.author.casefold() == ctx.me.login.casefold():
        return None
    return issue.author


async def reporter_replies(
    ctx: EventContext, issue: Issue, comments: Sequence[Comment], *, triage: bool = False
) -> tuple[Reply, ...]:
    """The comments on a bug whose answers count (issue 34 §1): the reporter's — and, with ``triage``, those
    of people with triage access or more (one permission read per person) — not Steward's, not a command, and
    never edited by someone else since (an edit by another person is remembered when its event arrives:
    ``note_foreign_edit``). The latest ``MAX_REPLIES``, oldest first."""
    author = reporter_of(ctx, issue)
    me = ctx.me.login.casefold()
    candidates = [
        c
        for c in comments
        if c.author.casefold() != me and not sticky.marker_of(c.body) and not c.body.lstrip().startswith("/")
    ]
    levels: dict[str, bool] = {}
    out = []
    for comment in candidates:
        who = comment.author.casefold()
        if author is None or who != author.casefold():
            if not triage:
                continue
            if who not in levels:
                levels[who] = await may_answer(ctx, comment.author)
            if not levels[who]:
                continue
        if await ctx.was_once(foreign_edit_key(comment.id)):
            continue
        out.append(Reply(comment.id, comment.author, comment.html_url, comment.body))
    return tuple(out[-MAX_REPLIES:])


async def answers(
    ctx: EventContext, issue: Issue, comments: Sequence[Comment], report: Report
) -> tuple[tuple[Reply, ...], Reading]:
    """The replies whose answers count for ``report``, and the reporter's items read with them: the
    reporter's own; and, while an item is still missing and someone else has commented, those of people with
    triage access or more too (who may answer for the reporter)."""
    replies = await reporter_replies(ctx, issue, comments)
    reading = read(report, replies)
    me = ctx.me.login.casefold()
    others = any(c.author.casefold() not in (issue.author.casefold(), me) for c in comments)
    if reading.missing and others:
        replies = await reporter_replies(ctx, issue, comments, triage=True)
        reading = read(report, replies)
    return replies, reading


async def bug_as_read(ctx: EventContext, issue: Issue, comments: Sequence[Comment] | None = None) -> Document:
    """Bug ``issue`` as its verdict reads it, as one RA9 document: its description read with the repository's
    issue templates, and the answers its reporter (or someone with triage access) gave in ``comments`` (the
    issue's, read when not given) written in where RA9 keeps them (``merged.merged_document``)."""
    if comments is None:
        comments = await ctx.forge.list_comments(ctx.repo, issue.number)
    report = report_of(issue.body, await repo_templates(ctx))
    _, reading = await answers(ctx, issue, comments, report)
    return merged_document(report, reading)


async def may_answer(ctx: EventContext, login: str) -> bool:
    """Whether someone other than the reporter answers for the report: triage access or more."""
    return permission_at_least(await ctx.forge.permission_of(ctx.repo, login), "triage")


async def note_foreign_edit(ctx: EventContext, comment_id: int) -> None:
    """Someone other than its author edited a comment: it no longer counts as the reporter's answer."""
    await ctx.once(foreign_edit_key(comment_id), ttl=5 * 365 * 86_400)
