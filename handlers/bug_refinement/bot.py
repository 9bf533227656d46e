"""RA9 bug refinement in the forge: a labelled bug issue gets a sticky verdict comment and a label.

Level-triggered: every trigger re-reads the issue and its verdict comment, computes the verdict with
the same engine as ``steward refine``, and writes only what differs. The issue body is the author's
and is never edited; the verdict lives in one bot comment (with the exact ``## Refinement Verdict``
block) and in exactly one of the ``refinement:*`` labels.

Triggers: the ``refine`` label (added, or present when the body is edited while the verdict is not
approved), ``/refine`` (author or triage+, through ``handlers.refine_router``), and a newly opened bug,
which is stamped ``refinement:pending``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from bot.context import CommandContext, EventContext
from bot.forge import Comment, Forge, Issue, RepoRef
from bot.settings import BugRefinementSettings
from bot.sticky import decode_data, find
from handlers import registry
from handlers.bug_refinement.rules import (
    BugVerdict,
    RecordedVerdict,
    StoryVerdict,
    Verdict,
    is_locked,
    is_refined,
    read_verdict_block,
    refine_bug,
    refine_story,
    render_verdict_block,
    same_outcome,
)
from handlers.refine_router import is_bug_report

VERDICT_KIND = "ra9-verdict"
STORY_KIND = "ra9-story"
_STORY_REF = re.compile(r"^[ \t]*[-*+][ \t]+\[[ xX]\][ \t]+#(\d+)\b", re.MULTILINE)
_STORIES_HEADING = re.compile(r"^ {0,3}##[ \t]+(?:stories|histórias|historias)[ \t]*#*[ \t]*$", re.I | re.M)
_NEXT_HEADING = re.compile(r"^ {0,3}#{1,2}[ \t]+\S", re.M)
_ICON = {"approved": "✅", "rejected": "❌", "pending": "⏳"}


# --- pure rules ---------------------------------------------------------------------------------------------


def bug_id_of(repo: RepoRef, number: int) -> str:
    return f"{repo.full_name}#{number}"


def body_digest(body: str) -> str:
    return hashlib.sha256(body.replace("\r\n", "\n").strip().encode()).hexdigest()[:16]


def story_numbers(body: str) -> list[int]:
    """Issues linked from a ``## Stories`` task list (``- [ ] #124``), in order, without repeats."""
    heading = _STORIES_HEADING.search(body or "")
    if heading is None:
        return []
    rest = body[heading.end() :]
    following = _NEXT_HEADING.search(rest)
    section = rest[: following.start()] if following else rest
    seen: list[int] = []
    for match in _STORY_REF.finditer(section):
        number = int(match.group(1))
        if number not in seen:
            seen.append(number)
    return seen


def render_bug_comment(verdict: BugVerdict, *, changed_after_approval: bool = False) -> str:
    lines = [f"### {_ICON[verdict.verdict]} Refinement verdict: **{verdict.verdict}**", ""]
    lines.append(f"Bug `{verdict.bug_id}` was refined against the RA9 format at `{verdict.refined_at}`.")
    if verdict.verdict == "approved":
        lines.append("Every section checks out; the verdict is locked — later edits do not change it.")
    else:
        lines.append(
            "Fix what is listed below in the issue description; Steward refines it again when you save."
        )
    if verdict.blockers:
        lines += ["", f"**Blockers ({len(verdict.blockers)})**", ""]
        lines += [f"- `{b.code}` — {b.message}" for b in verdict.blockers]
    if verdict.warnings:
        lines += ["", "**Warnings** (not blocking)", ""]
        lines += [f"- `{w.code}` — {w.message}" for w in verdict.warnings]
    if changed_after_approval:
        lines += [
            "",
            "> [!NOTE]",
            "> The description changed after approval. The approved verdict stands; "
            "a new bug report is the way to change an approved one.",
        ]
    lines += [
        "",
        render_verdict_block(verdict.verdict, verdict.verdict_hash, verdict.refined_at, verdict.blockers),
    ]
    return "\n".join(lines)


def render_story_comment(verdict: StoryVerdict, bug_ref: str) -> str:
    lines = [
        f"### {_ICON[verdict.verdict]} Story verdict: **{verdict.verdict}**",
        "",
        f"Story `{verdict.story}` of the approved bug {bug_ref}, refined at `{verdict.refined_at}`.",
    ]
    if verdict.blockers:
        lines += ["", f"**Blockers ({len(verdict.blockers)})**", ""]
        lines += [f"- `{b.code}` — {b.message}" for b in verdict.blockers]
    lines += [
        "",
        render_verdict_block(verdict.verdict, verdict.verdict_hash, verdict.refined_at, verdict.blockers),
    ]
    return "\n".join(lines)


@dataclass(frozen=True)
class LabelPlan:
    add: tuple[str, ...]
    remove: tuple[str, ...]


def label_plan(current: tuple[str, ...], verdict: Verdict, settings: BugRefinementSettings) -> LabelPlan:
    """Exactly one ``refinement:*`` label, the verdict's."""
    wanted = settings.label_for(verdict)
    folded = {label.casefold() for label in current}
    others = [
        label
        for label in current
        if label.casefold() in {name.casefold() for name in settings.verdict_labels()}
        and label.casefold() != wanted.casefold()
    ]
    return LabelPlan(add=() if wanted.casefold() in folded else (wanted,), remove=tuple(others))


# --- forge effects ------------------------------------------------------------------------------------------


def _settings(ctx: EventContext) -> BugRefinementSettings:
    return ctx.settings.bug_refinement


async def _mirror_labels(ctx: EventContext, issue: Issue, verdict: Verdict) -> None:
    settings = _settings(ctx)
    plan = label_plan(issue.labels, verdict, settings)
    for name in plan.add:
        await ctx.forge.ensure_label(
            ctx.repo, name, color=settings.color_for(verdict), description=settings.description_for(verdict)
        )
    if plan.add:
        await ctx.forge.add_labels(ctx.repo, issue.number, list(plan.add))
    for name in plan.remove:
        await ctx.forge.remove_label(ctx.repo, issue.number, name)


def _recorded(
    comments: list[Comment], *, bot_login: str, kind: str, key: int
) -> tuple[Comment | None, RecordedVerdict | None]:
    """Steward's verdict comment of ``kind`` among ``comments``, and the verdict it records."""
    comment = find(comments, bot_login=bot_login, kind=kind, key=str(key))
    return comment, read_verdict_block(comment.body) if comment else None


async def recorded_verdict(
    forge: Forge,
    repo: RepoRef,
    number: int,
    *,
    bot_login: str,
    kind: str = VERDICT_KIND,
    key: int | None = None,
) -> RecordedVerdict | None:
    """The verdict Steward recorded on an issue: its own (``VERDICT_KIND``), or as a story of bug ``key``."""
    comments = await forge.list_comments(repo, number)
    return _recorded(comments, bot_login=bot_login, kind=kind, key=number if key is None else key)[1]


async def is_issue_refined(ctx: EventContext, number: int, story: int | None = None) -> bool:
    """The gate other capabilities ask: an approved bug (and an approved story, where one is named)."""
    bug = await recorded_verdict(ctx.forge, ctx.repo, number, bot_login=ctx.me.login)
    if story is None:
        return is_refined(bug)
    as_story = await recorded_verdict(
        ctx.forge, ctx.repo, story, bot_login=ctx.me.login, kind=STORY_KIND, key=number
    )
    return is_refined(bug, as_story)


async def refine_issue(ctx: EventContext, issue: Issue) -> str:
    """Refine one bug issue; returns what happened (for logs and replies)."""
    comments = await ctx.forge.list_comments(ctx.repo, issue.number)
    existing, recorded = _recorded(comments, bot_login=ctx.me.login, kind=VERDICT_KIND, key=issue.number)
    data: dict[str, Any] = (decode_data(existing.body) or {}) if existing else {}
    digest = body_digest(issue.body)
    if existing is not None and recorded is not None and is_locked(recorded):
        if data.get("body") != digest and not data.get("changedAfterApproval"):
            locked = BugVerdict(
                data.get("bugId", bug_id_of(ctx.repo, issue.number)),
                "approved",
                recorded.verdict_hash,
                recorded.refined_at,
                (),
                (),
            )
            await ctx.upsert_sticky(
                VERDICT_KIND,
                str(issue.number),
                render_bug_comment(locked, changed_after_approval=True),
                data={**data, "changedAfterApproval": True},
                number=issue.number,
                comments=comments,
            )
        await _mirror_labels(ctx, issue, "approved")
        await _refine_stories(ctx, issue, recorded)
        return "locked"
    verdict = refine_bug(issue.body, bug_id=bug_id_of(ctx.repo, issue.number), refined_at=datetime.now(UTC))
    if not same_outcome(recorded, verdict):
        await ctx.upsert_sticky(
            VERDICT_KIND,
            str(issue.number),
            render_bug_comment(verdict),
            data={"bugId": verdict.bug_id, "body": digest},
            number=issue.number,
            comments=comments,
        )
        recorded = RecordedVerdict(
            verdict.verdict, verdict.verdict_hash, verdict.refined_at, verdict.blocker_codes
        )
    await _mirror_labels(ctx, issue, verdict.verdict)
    if verdict.verdict == "approved":
        await _refine_stories(ctx, issue, recorded)
    ctx.log.info("bug refined", verdict=verdict.verdict, blockers=list(verdict.blocker_codes))
    return verdict.verdict


async def _refine_stories(ctx: EventContext, bug: Issue, recorded: RecordedVerdict | None) -> None:
    if recorded is None or recorded.status != "approved":
        return
    numbers = [sub.number for sub in await ctx.forge.list_sub_issues(ctx.repo, bug.number)]
    numbers += [n for n in story_numbers(bug.body) if n not in numbers and n != bug.number]
    bug_id = bug_id_of(ctx.repo, bug.number)
    for number in numbers:
        story = await ctx.forge.get_issue(ctx.repo, number)
        comments = await ctx.forge.list_comments(ctx.repo, number)
        _, story_recorded = _recorded(comments, bot_login=ctx.me.login, kind=STORY_KIND, key=bug.number)
        if is_locked(story_recorded):
            await _mirror_labels(ctx, story, "approved")
            continue
        verdict = refine_story(story.body, bug_id=bug_id, story=f"#{number}", refined_at=datetime.now(UTC))
        if not same_outcome(story_recorded, verdict):
            await ctx.upsert_sticky(
                STORY_KIND,
                str(bug.number),
                render_story_comment(verdict, f"#{bug.number}"),
                number=number,
                comments=comments,
            )
        await _mirror_labels(ctx, story, verdict.verdict)


def _is_bug(ctx: EventContext, issue: Issue) -> bool:
    return not issue.is_pull_request and is_bug_report(
        issue.labels, issue.body, bug_label=_settings(ctx).bug_label
    )


@registry.on(
    "issues",
    "opened",
    "labeled",
    "edited",
    "reopened",
    checks="the bug report's refinement verdict (RA9), when it is a bug report",
)
async def on_issue(ctx: EventContext) -> None:
    """Refine labelled bugs; stamp a new bug ``refinement:pending``."""
    issue = await ctx.forge.get_issue(ctx.repo, ctx.number)
    if issue.state != "open" or not _is_bug(ctx, issue):
        return
    settings = _settings(ctx)
    if issue.has_label(settings.refine_label):
        other_label = (ctx.event.label or "").casefold() != settings.refine_label.casefold()
        if ctx.event.action == "labeled" and not ctx.event.labels_are_full_set and other_label:
            # Another label changed: refining again would write nothing new anyway; skip the reads.
            return
        await refine_issue(ctx, issue)
        return
    if ctx.event.action == "opened" and not any(issue.has_label(name) for name in settings.verdict_labels()):
        await _mirror_labels(ctx, issue, "pending")


async def refine_command(ctx: CommandContext) -> None:
    """``/refine`` on a bug report (routed here by ``handlers.refine_router``)."""
    issue = await ctx.forge.get_issue(ctx.repo, ctx.number)
    outcome = await refine_issue(ctx, issue)
    if outcome == "locked":
        await ctx.reply("This bug's refinement is approved and locked; the verdict comment above stands.")
