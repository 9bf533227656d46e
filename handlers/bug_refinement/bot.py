"""RA9 bug refinement in the forge: what starts it. A labelled bug issue gets a sticky verdict comment and a
label (the work is ``effects``).

Triggers: the ``refine`` label (added, or present when the body is edited while the verdict is not
approved), ``/refine`` (author or triage+, through ``handlers.core.refine``), and a newly opened bug,
which is stamped ``refinement:pending``.
"""

from __future__ import annotations

from dataclasses import replace

from bot.commands.context import CommandContext, EventContext
from bot.commands.periodic import PeriodicContext
from bot.commands.registry import Registry
from bot.config.label_texts import LABEL_DESCRIPTIONS
from bot.forge import Issue, NotFound
from bot.records import sticky
from handlers.bug_refinement.bug_kind import is_bug_report
from handlers.bug_refinement.effects import (
    STORY_KIND,
    VERDICT_KIND,
    mirror_labels,
    refine_issue,
    refinement_settings,
    stamp_stories,
    story_gate,
)
from handlers.bug_refinement.labels import describe_labels, ensure_described
from handlers.bug_refinement.nudges import nudge_all, reopen_for_answer
from handlers.bug_refinement.plan import in_repo, story_numbers
from handlers.bug_refinement.release import release_stories
from handlers.bug_refinement.replies import may_answer, note_foreign_edit
from handlers.bug_refinement.template_reads import forget_on_push

# This module's commands and events; `handlers.build_registry()` includes them (importing registers nothing).
plugin = Registry()


def register(registry: Registry) -> None:
    registry.include(plugin)


def _is_answer(body: str) -> bool:
    return not sticky.marker_of(body) and not body.lstrip().startswith("/")


def _is_bug(ctx: EventContext, issue: Issue) -> bool:
    return not issue.is_pull_request and is_bug_report(
        issue.labels, issue.body, bug_label=refinement_settings(ctx).bug_label
    )


@plugin.on(
    "issues",
    "opened",
    "labeled",
    "edited",
    "reopened",
    checks="the bug report's refinement verdict (RA9), when it is a bug report",
    section="bug_refinement",
)
async def on_issue(ctx: EventContext) -> None:
    """Refine labelled bugs; stamp a new bug ``refinement:pending``, and the stories a bug lists; check an
    edited story again."""
    issue = await ctx.forge.get_issue(ctx.repo, ctx.number)
    if issue.state != "open":
        return
    settings = refinement_settings(ctx)
    if (
        ctx.event.action == "edited"
        and not issue.has_label(settings.refine_label)
        and any(issue.has_label(n) for n in settings.verdict_labels())
        and await _recheck_story(ctx, issue)
    ):
        return  # a story (whose RA9 sections would make it look like a bug) is checked with its bug
    if not _is_bug(ctx, issue):
        return
    if ctx.event.action == "edited" and ctx.event.previous_body:
        # A story the edit took off the bug's `## Stories` list no longer waits with it (unless it is a
        # sub-issue): released before the bug is read with its stories.
        unlisted = set(story_numbers(ctx.event.previous_body)) - set(story_numbers(issue.body))
        if unlisted - {issue.number}:
            await release_stories(ctx, issue, sorted(unlisted - {issue.number}), why="unlisted")
    if issue.has_label(settings.refine_label):
        other_label = (ctx.event.label or "").casefold() != settings.refine_label.casefold()
        if ctx.event.action == "labeled" and not ctx.event.labels_are_full_set and other_label:
            # Another label changed: refining again would write nothing new anyway; skip the reads.
            return
        await refine_issue(ctx, issue)
        return
    if ctx.event.action == "opened" and not any(issue.has_label(name) for name in settings.verdict_labels()):
        await mirror_labels(ctx, issue, "pending")
    if ctx.event.action in ("opened", "edited"):
        await stamp_stories(ctx, issue)  # its stories wait with it (issue 36 §4)


@plugin.on(
    "sub_issues",
    "sub_issue_added",
    "sub_issue_removed",
    checks="a sub-issue attached to a bug: one of its stories, stamped `refinement:pending` with it; "
    "removed from it: released (GitHub)",
    section="bug_refinement",
)
async def on_sub_issue(ctx: EventContext) -> None:
    """Issue 36 §4: a sub-issue attached to a bug Steward has stamped or is refining is one of its stories
    from then on, as if the bug had listed it — stamped ``refinement:pending`` with its own story record
    while the bug is not approved, refined with it once it is (and the bug's verdict lists it). The bug is
    read again as an edit of it would be (``on_issue``): the same choice of stories, the same stamping; a
    replay finds the story's record there and writes nothing. A sub-issue removed from the bug is released
    (``release_stories``) unless the bug still lists it, and the bug's verdict no longer counts it. A
    sub-issue in another repository is not a story here."""
    if ctx.event.extra.get("sub_issue_repo", "").casefold() != ctx.repo.full_name.casefold():
        return
    bug = await ctx.forge.get_issue(ctx.repo, ctx.number)
    if ctx.event.action == "sub_issue_removed" and ctx.event.extra.get("sub_issue", "").isdigit():
        await release_stories(ctx, bug, [int(ctx.event.extra["sub_issue"])], why="sub-issue")
    await _with_its_stories(ctx, bug)


# The refined bugs whose sub-issues one catch-up looks at, per repository (one listing each; the rest wait for
# the next run, or for the daily full pass that re-derives every bug with its stories).
MAX_BUGS_SWEPT = 100


@plugin.reconcile(
    "stories",
    checks="the sub-issues attached to a refined bug while Steward was not listening (GitHub), and the "
    "stories that left their bug meanwhile",
    section="bug_refinement",
)
async def reconcile_sub_issues(ctx: EventContext) -> None:
    """The catch-up's part of ``on_sub_issue`` (attached): attaching a sub-issue leaves its parent's
    `updated_at` as it was (neomjs/neo#7947), so a catch-up that re-derives only the issues updated since its
    window would not find the bug. Each open bug Steward refines or has stamped has its sub-issues listed (one
    request; none on Gitea, which has no sub-issues); one with a sub-issue that carries none of the refinement
    labels — a story not stamped yet — is read again as its webhook would have it. And a story still stamped
    pending whose bug no longer has it (removed from its sub-issues, taken off its list: the edit's
    webhook, which says what the list was, is gone) is released (``_release_if_removed``)."""
    settings = refinement_settings(ctx)
    found: dict[int, Issue] = {}
    for label in (settings.refine_label, settings.pending_label):
        for issue in await ctx.forge.list_issues(ctx.repo, labels=[label]):
            found.setdefault(issue.number, issue)
    sub_issues: dict[int, set[int]] = {}
    for bug in sorted(found.values(), key=lambda i: i.number, reverse=True)[:MAX_BUGS_SWEPT]:
        if bug.state != "open":
            continue
        if not _is_bug(ctx, bug):
            if bug.has_label(settings.pending_label):
                await _release_if_removed(ctx, bug, sub_issues)
            continue
        stories = await ctx.forge.list_sub_issues(ctx.repo, bug.number)
        if not any(_unstamped(ctx, story) for story in stories):
            continue
        async with ctx.holding_unless_busy(bug.number) as held:
            if held:
                await _with_its_stories(ctx, await ctx.forge.get_issue(ctx.repo, bug.number))


async def _release_if_removed(ctx: EventContext, story: Issue, sub_issues: dict[int, set[int]]) -> None:
    """The catch-up's part of a story's release: an issue stamped `refinement:pending` as a story of a bug
    that no longer has it as a sub-issue, nor lists it, left it while Steward was not listening; it is
    released as the webhook would have it. ``sub_issues``: each bug's sub-issues, read once a run."""
    gate = await story_gate(ctx, story.number)
    if gate is None:
        return
    try:
        if gate.bug not in sub_issues:
            listed = await ctx.forge.list_sub_issues(ctx.repo, gate.bug)
            sub_issues[gate.bug] = {s.number for s in listed if in_repo(s, ctx.repo)}
        if story.number in sub_issues[gate.bug]:
            return
        bug = await ctx.forge.get_issue(ctx.repo, gate.bug)
    except NotFound:
        return
    if story.number in story_numbers(bug.body):
        return  # listed: still its story (``release_stories`` would keep it too, at more reads)
    async with ctx.holding_unless_busy(bug.number) as held:
        if held and await release_stories(ctx, bug, [story.number], why="gone"):
            await _with_its_stories(ctx, bug)


def _unstamped(ctx: EventContext, story: Issue) -> bool:
    """A sub-issue that would be one of its bug's stories and carries no refinement label yet."""
    labels = refinement_settings(ctx).verdict_labels()
    return (
        story.state == "open"
        and not story.is_pull_request
        and in_repo(story, ctx.repo)
        and not any(story.has_label(name) for name in labels)
    )


async def _with_its_stories(ctx: EventContext, bug: Issue) -> None:
    """Read ``bug`` again with its stories, as an edit of it would: refined when it is labelled for it,
    else its stories stamped when Steward has stamped it (``on_issue``)."""
    if bug.state != "open" or not _is_bug(ctx, bug):
        return
    settings = refinement_settings(ctx)
    if bug.has_label(settings.refine_label):
        await refine_issue(ctx, bug)
    elif any(bug.has_label(name) for name in settings.verdict_labels()):
        await stamp_stories(ctx, bug)


async def _recheck_story(ctx: EventContext, story: Issue) -> bool:
    """Whether ``story`` is a story Steward recorded; one whose verdict is not approved was edited, so it is
    checked again with its bug, once the bug is approved (before, it waits with its pending stamp)."""
    gate = await story_gate(ctx, story.number)
    if gate is None:
        return False
    if gate.state not in ("rejected", "unverified"):
        return True
    try:
        bug = await ctx.forge.get_issue(ctx.repo, gate.bug)
    except NotFound:
        return True
    if bug.state == "open" and _is_bug(ctx, bug):
        async with ctx.holding(bug.number):
            await refine_issue(ctx, bug)
    return True


@plugin.on(
    "push",
    checks="a push to the default branch that changes the issue templates (they are read again) or the "
    "configuration (the labels' descriptions follow its language)",
    section="bug_refinement",
)
async def on_push(ctx: EventContext) -> None:
    await forget_on_push(ctx)
    await describe_labels(ctx)


@plugin.on(
    "issue_comment",
    "edited",
    "deleted",
    checks="the RA9 verdict comment, when someone edited or deleted it",
    section="bug_refinement",
)
async def on_verdict_touched(ctx: EventContext) -> None:
    """Someone edited or deleted Steward's verdict comment (a bug's, or a story's): the verdict is checked
    again at once — a record that no longer verifies is derived from the report again, rewritten and noted.
    A story's verdict is refined with its bug (its key names the bug)."""
    comment = ctx.event.comment
    if comment is None or ctx.event.issue is None or ctx.event.issue.is_pull_request:
        return
    head = sticky.marker_of(comment.body)
    if comment.author.casefold() != ctx.me.login.casefold() or head is None:
        return
    kind, key = head
    if kind not in (VERDICT_KIND, STORY_KIND) or not key.isdigit():
        return
    number = ctx.number if kind == VERDICT_KIND else int(key)
    try:
        issue = await ctx.forge.get_issue(ctx.repo, number)
    except NotFound:
        return
    if (
        issue.state == "open"
        and _is_bug(ctx, issue)
        and issue.has_label(refinement_settings(ctx).refine_label)
    ):
        async with ctx.holding(issue.number):
            await refine_issue(ctx, issue)


@plugin.on(
    "issue_comment",
    "created",
    "edited",
    checks="the reporter's answers to the RA9 verdict, given in a comment",
    section="bug_refinement",
)
async def on_reporter_comment(ctx: EventContext) -> None:
    """The reporter's comment on their bug under refinement (or the comment of someone with triage access) is
    read for the verdict's answers (issue 34 §1): the bug is refined again. A comment that someone other than
    its author edits no longer counts."""
    comment, snapshot = ctx.event.comment, ctx.event.issue
    if comment is None or snapshot is None or snapshot.is_pull_request:
        return
    writer = comment.author.casefold()
    if writer == ctx.me.login.casefold() or snapshot.author.casefold() == ctx.me.login.casefold():
        return
    settings = refinement_settings(ctx)
    if not any(label.casefold() == settings.refine_label.casefold() for label in snapshot.labels):
        return
    if snapshot.state != "open":
        # The reporter's answer on a bug Steward closed for want of one reopens it (``nudges``).
        if (
            ctx.event.action != "created"
            or writer != snapshot.author.casefold()
            or not _is_answer(comment.body)
        ):
            return
        closed = await ctx.forge.get_issue(ctx.repo, ctx.number)
        if closed.state != "closed" or not await reopen_for_answer(ctx, closed):
            return
    if ctx.event.action == "edited" and ctx.event.sender.casefold() != writer:
        await note_foreign_edit(ctx, comment.id)
    elif not _is_answer(comment.body):
        return  # a command is the dispatcher's, not an answer
    elif writer != snapshot.author.casefold() and not await may_answer(ctx, comment.author):
        return  # only the reporter, or someone with triage access, answers for the report
    issue = await ctx.forge.get_issue(ctx.repo, ctx.number)
    if issue.state == "open" and _is_bug(ctx, issue) and issue.has_label(settings.refine_label):
        await refine_issue(ctx, issue)


@plugin.every(hours=1, name="bug-nudges")
async def nudge_reporters(pctx: PeriodicContext) -> None:
    """Opt-in reminders and closes of bugs waiting for their reporter (``bug_refinement.remind_after_days``,
    ``close_after_days``): see ``handlers.bug_refinement.nudges``."""
    await nudge_all(pctx)


async def refine_command(ctx: CommandContext) -> None:
    """``/refine`` on a bug report (routed here by ``handlers.core.refine``). It also adds the trigger
    label, so later edits of the description are checked again, as the verdict comment promises."""
    issue = await ctx.forge.get_issue(ctx.repo, ctx.number)
    settings = refinement_settings(ctx)
    if not issue.has_label(settings.refine_label):
        await ensure_described(
            ctx,
            settings.refine_label,
            color="c5def5",
            description=LABEL_DESCRIPTIONS[ctx.settings.language]["refine"],
        )
        labels = await ctx.forge.add_labels(ctx.repo, issue.number, [settings.refine_label])
        issue = replace(issue, labels=labels)
    outcome = await refine_issue(ctx, issue)
    if outcome == "locked":
        await ctx.reply("This bug's refinement is approved and locked; the verdict comment above stands.")
