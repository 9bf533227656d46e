"""Commands written while Steward was not listening, answered without the forge's redelivery (issue 26).

GitHub redelivers a failed delivery only when asked with an App or an admin token, and Gitea cannot at all.
So the catch-up lists the comments written since the window began (``GET …/issues/comments?since=`` on
both forges: one request per hundred comments) and queues, for each comment with a command that no job
handled yet, the job its ``issue_comment.created`` delivery would have queued. The worker marks each
comment it handled (``comment_done_key``, per comment id), so the catch-up skips those, and a later
redelivery of the original delivery is a no-op.

Only a comment never edited after it was written runs (its ``updated_at`` is its ``created_at``: both forges
set them together when a comment is made and move ``updated_at`` on an edit). Anyone with write access may
edit anyone's comment, and the listing shows neither who edited nor what the comment said when it was
made, so an edited comment's commands cannot be proven to be its author's (issue 35 item 2). Its job is
queued all the same, marked ``CATCH_UP_EDITED``: the worker runs nothing of it and answers once, within the
write budget, "not run: edited after it was written" (``bot.commands.dispatch``); the comment's mark then
keeps every later catch-up from answering again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, cast

from bot.commands.dispatch import CATCH_UP_EDITED
from bot.commands.grammar import parse_commands
from bot.events.event import CommentSnapshot, Event, IssueSnapshot
from bot.forge import Comment, Forge, ForgeKind, Issue, NotFound, RepoRef, repo_key
from bot.queue.jobs import Enqueuer

# How long the worker remembers that it handled a comment's commands (as long as a delivery's dedupe key).
COMMENT_DONE_TTL = 7 * 24 * 3600
# The last time a worker handled an event, per forge: the catch-up window when no reconcile ran yet.
LAST_EVENT_KEY = "steward:last-event"


# On GitHub the catch-up's `since` listings start on a six-hour grid rather than at the window itself: the
# window moves every run, and a listing asked for with another `since` is another URL, whose ETag no run has
# kept. On the grid the same URLs are asked for run after run, so an unchanged page costs a 304 (it does not
# count against the hourly quota: ``bot.forge.etag_store``); what is older than the window is dropped here,
# so the run sees exactly what the window holds. Gitea answers no conditional request: it gets the window.
LISTING_GRID_SECONDS = 6 * 3600


def listing_since(kind: ForgeKind, since: datetime) -> datetime:
    """Where the listings of a window starting at ``since`` start (see ``LISTING_GRID_SECONDS``)."""
    if kind != "github":
        return since
    stamp = int(since.timestamp())
    return datetime.fromtimestamp(stamp - stamp % LISTING_GRID_SECONDS, UTC)


def updated_since(updated_at: str, since: datetime) -> bool:
    """Whether an item updated at ``updated_at`` (the forge's ISO time) is inside a window starting at
    ``since`` (to the second, as the forges' `since` compares); an item without a readable time is kept."""
    try:
        when = datetime.fromisoformat(updated_at.replace("Z", "+00:00"))
    except ValueError:
        return True
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when >= since.replace(microsecond=0)


def edited_after_written(comment: Comment) -> bool:
    """Whether ``comment`` was changed after it was made (its times differ, or the forge gave none: what
    cannot be shown unedited counts as edited)."""
    if not comment.created_at or not comment.updated_at:
        return True
    made, changed = _when(comment.created_at), _when(comment.updated_at)
    if made is None or changed is None:
        return comment.created_at != comment.updated_at
    return changed > made


def _when(value: str) -> datetime | None:
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def comment_done_key(forge: str, repo: RepoRef, comment_id: int) -> str:
    """The mark of a comment whose commands ran, under the repository's id (``repo_key``): a catch-up
    after a rename finds the comments handled under the old name."""
    return f"steward:comment-done:{repo_key(forge, repo)}:{comment_id}"


def done_key_of(event: Event) -> str | None:
    """The mark of the comment whose commands this event runs (``issue_comment.created`` only)."""
    if event.name != "issue_comment" or event.action != "created" or event.comment is None:
        return None
    if event.repo is None:
        return None
    return comment_done_key(event.forge, event.repo, event.comment.id)


def has_commands(comment: Comment, *, known: Any, prefix: str, me: str) -> bool:
    if comment.author.casefold() == me.casefold() or not comment.issue_number:
        return False
    return bool(parse_commands(comment.body, known=known, prefix=prefix))


async def last_event(redis: Any, kind: ForgeKind) -> float | None:
    raw = await redis.get(f"{LAST_EVENT_KEY}:{kind}")
    return float(raw) if raw else None


async def catch_up_comments(
    runtime: Any,
    forge: Forge,
    kind: ForgeKind,
    repo: RepoRef,
    since: datetime,
    *,
    me: str,
    dry_run: bool,
    queued: list[str],
    say: Callable[[str], None],
) -> None:
    """Queue the jobs of the comments with commands written since ``since`` that no job handled yet."""
    listed = await forge.list_repo_comments(repo, listing_since(kind, since))
    comments = [c for c in listed if updated_since(c.updated_at, since)]
    known = runtime.registry.short_names()
    prefix = runtime.settings.command_prefix
    pending = [c for c in comments if has_commands(c, known=known, prefix=prefix, me=me)]
    if not pending:
        return
    keys = [comment_done_key(kind, repo, c.id) for c in pending]
    done = await cast(Awaitable[list[Any]], runtime.redis.mget(keys))
    # A comment whose job is parked in the dead-letter list waits for `steward dead retry` or `drop`: the
    # operator's call, not the catch-up's (it would park the same command a second time).
    parked = await runtime.dead.parked(keys)
    done = [d or p for d, p in zip(done, parked, strict=True)]
    issues: dict[int, Issue | None] = {}
    enqueuer = Enqueuer(runtime.redis, dedupe_ttl=runtime.settings.dedupe_ttl_seconds)
    for comment, handled in zip(pending, done, strict=True):
        if handled:
            continue
        number = comment.issue_number
        if number not in issues:
            try:
                issues[number] = await forge.get_issue(repo, number)
            except NotFound:
                issues[number] = None
        issue = issues[number]
        if issue is None:
            continue
        edited = edited_after_written(comment)
        if edited:
            what = (
                f"{kind}:{repo}#{number}: answer comment {comment.id} by {comment.author} "
                "(not run: edited after it was written)"
            )
        else:
            what = f"{kind}:{repo}#{number}: run the commands of comment {comment.id} by {comment.author}"
        if dry_run:
            say(f"would {what}")
            queued.append(what)
            continue
        event = Event(
            forge=kind,
            delivery_id=f"catch-up:{repo_key(kind, repo)}:{comment.id}",
            name="issue_comment",
            action="created",
            sender=comment.author,
            repo=repo,
            issue=IssueSnapshot.of(issue),
            comment=CommentSnapshot(comment.id, comment.body, comment.author),
            extra={CATCH_UP_EDITED: "1"} if edited else {},
        )
        result = await enqueuer.enqueue(event)
        if result.outcome == "enqueued":
            say(what)
            queued.append(what)
