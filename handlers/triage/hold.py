"""`/hold [reason]` and `/unhold` on a pull request (issue 39; Prow's `do-not-merge/hold`): the hold label
(``triage.hold_label``) and a failing `steward/hold` status on the head, posted again on each new head while
the pull request is held. The status blocks merging only where branch protection requires it (`/steward
config` says whether it does).

Whether a pull request is held is the forge's fact — the label is on it (putting a label on needs triage
access on both forges). Who held it and why come from Steward's signed record on the pull request, written
when the command ran; a record that does not verify (edited, replayed) is never read: the forge's label
events then say who put the label on, without a reason. Nobody's editable text is trusted for either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from bot.commands.context import CommandContext, CommandError, EventContext
from bot.commands.registry import Registry
from bot.forge import Comment, PullRequest, StatusState, repo_key
from bot.forge.own_results import set_own_result
from bot.records import neutralise, sticky
from handlers.triage.api import HOLD_CONTEXT

plugin = Registry()


def register(registry: Registry) -> None:
    registry.include(plugin)


SECTION = "triage"
SHORT_SETTING = "triage.short_commands"
CONTEXT: Final = HOLD_CONTEXT
KIND: Final = "hold"
LABEL_COLOR: Final = "e11d21"
MAX_REASON: Final = 300
# How long whether a branch requires `steward/hold` is remembered.
REQUIRED_TTL: Final = 300
# Open pull requests looked at for the head a foreign `steward/hold` status names.
MAX_OPEN_PULLS: Final = 50


@dataclass(frozen=True)
class Hold:
    """A pull request's hold as Steward tells it: ``held`` (the label is on it), by whom and why."""

    held: bool
    by: str = ""
    reason: str = ""
    # Who released it, when it is not held and Steward's record says so.
    released_by: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"held": self.held, "by": self.by, "reason": self.reason, "released_by": self.released_by}

    @classmethod
    def from_json(cls, raw: object) -> Hold | None:
        if not isinstance(raw, dict) or not isinstance(raw.get("held"), bool):
            return None
        return cls(
            raw["held"],
            str(raw.get("by") or ""),
            str(raw.get("reason") or ""),
            str(raw.get("released_by") or ""),
        )


def describe(hold: Hold) -> tuple[StatusState, str]:
    """The `steward/hold` status of a head (its description at most 140 characters, people's text inert)."""
    if not hold.held:
        return "success", "Not held" + (f" (released by @{hold.released_by})" if hold.released_by else "")
    who = f"Held by @{hold.by}" if hold.by else "Held"  # Steward's own words; only the reason is someone's
    why = f": {neutralise.line(hold.reason, 138 - len(who))}" if hold.reason else " (no reason given)"
    return "failure", f"{who}{why}"[:140]


def record_text(hold: Hold, label: str, prefix: str) -> str:
    """The record comment: what to do next first."""
    if hold.held:
        who = f"@{hold.by}" if hold.by else "someone (the label was put on by hand)"
        why = f"\n\n{neutralise.quote(hold.reason)}" if hold.reason else ""
        return (
            f"**Held — do not merge.** {who} put this pull request on hold (`{label}`, and a failing "
            f"`{CONTEXT}` status on its head). `/{prefix} unhold` releases it.{why}"
        )
    released = f" by @{hold.released_by}" if hold.released_by else ""
    return f"Not held: released{released}. Nothing to do."


def _has(labels: tuple[str, ...], name: str) -> bool:
    return any(label.casefold() == name.casefold() for label in labels)


async def _record_comment(ctx: EventContext, number: int) -> tuple[Comment | None, list[Comment]]:
    comments = await ctx.forge.list_comments(ctx.repo, number)
    found = sticky.find(comments, bot_login=ctx.me.login, kind=KIND, key=str(number))
    return found, comments


async def current_hold(ctx: EventContext, pull: PullRequest) -> tuple[Hold, Comment | None, list[Comment]]:
    """The pull request's hold now: held when the label is on it; who and why from Steward's record when it
    verifies and agrees with the label, else from the forge's label events (who put the label on)."""
    label = ctx.settings.triage.hold_label
    found, comments = await _record_comment(ctx, pull.number)
    record = await ctx.record(found, KIND, str(pull.number)) if found is not None else None
    if record is not None and record.broken and found is not None:
        await ctx.report_rebuilt(record, found.html_url, number=pull.number)
    data = record.trusted if record is not None else None
    kept = (
        Hold.from_json(data.get("hold"))
        if isinstance(data, dict) and data.get("pull") == pull.number
        else None
    )
    held = _has(pull.labels, label)
    if kept is not None and kept.held == held:
        return kept, found, comments
    if not held:
        # The label was taken off by hand (or the record is gone): the forge says who.
        events = await ctx.forge.label_events(ctx.repo, pull.number) if kept is not None else []
        removed = [e for e in events if not e.added and e.label.casefold() == label.casefold()]
        return Hold(False, released_by=removed[-1].actor if removed else ""), found, comments
    events = await ctx.forge.label_events(ctx.repo, pull.number)
    added = [
        e
        for e in events
        if e.added
        and e.label.casefold() == label.casefold()
        and e.actor.casefold() != ctx.me.login.casefold()
    ]
    return Hold(True, by=added[-1].actor if added else ""), found, comments


async def apply(ctx: EventContext, pull: PullRequest, hold: Hold, comments: list[Comment] | None) -> None:
    """Write the record and the head's status for ``hold`` (only what differs)."""
    label = ctx.settings.triage.hold_label
    written = await ctx.upsert_sticky(
        KIND,
        str(pull.number),
        record_text(hold, label, ctx.prefix),
        data={"pull": pull.number, "hold": hold.to_json()},
        number=pull.number,
        comments=comments,
    )
    state, description = describe(hold)
    await set_own_result(
        ctx.forge, ctx.repo, pull.head_sha, CONTEXT, state, description, written.comment.html_url
    )


@plugin.command(
    "hold",
    usage="hold [reason]",
    help="Put this pull request on hold: the hold label and a failing `steward/hold` status on its head "
    "(a required check blocks merging) until `unhold`.",
    permission="triage",
    on_issues=False,
    section=SECTION,
    short_setting=SHORT_SETTING,
)
async def hold_command(ctx: CommandContext) -> None:
    pull = await ctx.forge.get_pull_request(ctx.repo, ctx.number)
    if pull.state != "open":
        raise CommandError("this pull request is closed: there is nothing to hold.")
    label = ctx.settings.triage.hold_label
    reason = " ".join(ctx.command.text.split())[:MAX_REASON]
    now, _, comments = await current_hold(ctx, pull)
    if now.held and now.by.casefold() == ctx.actor.casefold() and now.reason == reason:
        await apply(ctx, pull, now, comments)  # a replay: the same hold, nothing new
        return
    if not _has(pull.labels, label):
        await ctx.forge.ensure_label(
            ctx.repo, label, color=LABEL_COLOR, description="Do not merge: held with /steward hold"
        )
        await ctx.forge.add_labels(ctx.repo, pull.number, [label])
    await apply(ctx, pull, Hold(True, by=ctx.actor, reason=reason), comments)


@plugin.command(
    "unhold",
    usage="unhold",
    help="Release a pull request's hold: the hold label comes off and `steward/hold` passes.",
    permission="triage",
    on_issues=False,
    section=SECTION,
    short_setting=SHORT_SETTING,
)
async def unhold_command(ctx: CommandContext) -> None:
    pull = await ctx.forge.get_pull_request(ctx.repo, ctx.number)
    label = ctx.settings.triage.hold_label
    now, _, comments = await current_hold(ctx, pull)
    if not now.held:
        if now.released_by.casefold() == ctx.actor.casefold():
            await apply(ctx, pull, now, comments)  # a replay: released by this person already
            return
        raise CommandError(f"this pull request is not on hold (`/{ctx.prefix} hold [reason]` holds it).")
    if _has(pull.labels, label):
        await ctx.forge.remove_label(ctx.repo, pull.number, label)
    await apply(ctx, pull, Hold(False, released_by=ctx.actor), comments)


@plugin.on("pull_request", "opened", "reopened", "synchronize", "labeled", "unlabeled", section=SECTION)
async def on_pull(ctx: EventContext) -> None:
    """A new head, or the labels changed (by hand too): the head's `steward/hold` follows the hold. A pull
    request never held gets no status, unless branch protection requires `steward/hold` on its base (then
    it must pass for the pull request to be mergeable at all)."""
    issue, label = ctx.event.issue, ctx.settings.triage.hold_label
    if issue is None or ctx.event.pull is None:
        return
    if ctx.event.action in ("labeled", "unlabeled"):
        if (ctx.event.sender or "").casefold() == ctx.me.login.casefold():
            return  # Steward's own `/hold` or `/unhold`: that job writes the record and the status
        if not ctx.event.labels_are_full_set and (ctx.event.label or "").casefold() != label.casefold():
            return  # GitHub names the label that changed: another one says nothing of the hold
    pull = await ctx.forge.get_pull_request(ctx.repo, issue.number)
    if pull.state != "open":
        return
    await sync(ctx, pull, new_head=ctx.event.action != "labeled" and ctx.event.action != "unlabeled")


async def sync(ctx: EventContext, pull: PullRequest, *, new_head: bool) -> None:
    """The hold's record and status, when the pull request is held or was; else, on a new head, a passing
    status where the base branch requires `steward/hold`."""
    if not _has(pull.labels, ctx.settings.triage.hold_label):
        found, comments = await _record_comment(ctx, pull.number)
        if found is None:
            if new_head and await _required(ctx, pull):
                state, description = describe(Hold(False))
                await set_own_result(ctx.forge, ctx.repo, pull.head_sha, CONTEXT, state, description)
            return
    hold, _, comments = await current_hold(ctx, pull)
    await apply(ctx, pull, hold, comments)


async def _required(ctx: EventContext, pull: PullRequest) -> bool:
    """Whether the base branch requires `steward/hold`: read from the forge, remembered five minutes per
    branch (every new head of every pull request asks)."""
    redis = ctx.memo.redis if ctx.memo is not None else None
    key = f"steward:hold-required:{repo_key(ctx.event.forge, ctx.repo)}:{pull.base_ref}"
    if redis is not None and (known := await redis.get(key)) is not None:
        return bool(known == b"1")
    branch = await ctx.forge.read_branch(ctx.repo, pull.base_ref)
    required = branch is not None and CONTEXT in (branch.required_contexts or ())
    if redis is not None:
        await redis.set(key, "1" if required else "0", ex=REQUIRED_TTL)
    return required


@plugin.on("status", section=SECTION)
async def on_foreign_status(ctx: EventContext) -> None:
    """Someone other than Steward set `steward/hold` (every `steward/*` context is Steward's: a required
    check must not pass on a writer's word): the open pull requests whose head it is get Steward's own state
    again at once — failing while held, passing otherwise."""
    report, sender = ctx.event.report, ctx.event.sender
    if report is None or report.context.casefold() != CONTEXT or not sender:
        return
    if sender.casefold() == ctx.me.login.casefold():
        return
    ctx.log.warning("a steward/hold status set by someone else; Steward's own posted again", by=sender)
    restored = False
    for issue in (await ctx.forge.list_issues(ctx.repo, state="open", kind="pulls"))[:MAX_OPEN_PULLS]:
        pull = await ctx.forge.get_pull_request(ctx.repo, issue.number)
        if pull.head_sha != report.sha:
            continue
        async with ctx.holding(pull.number):
            hold, found, comments = await current_hold(ctx, pull)
            if found is None and not hold.held:
                state, description = describe(hold)
                await set_own_result(ctx.forge, ctx.repo, pull.head_sha, CONTEXT, state, description)
            else:
                await apply(ctx, pull, hold, comments)
        restored = True
    if not restored:
        # On no open pull request's head: Steward never holds such a commit.
        state, description = describe(Hold(False))
        await set_own_result(ctx.forge, ctx.repo, report.sha, CONTEXT, state, description)
