"""RA9 refinement's effects on the forge: refine a bug (and the stories it lists) level-triggered, read a
verdict back only when its record verifies, mirror it in the labels, and tell the author when they must
act.

Level-triggered: every trigger re-reads the issue and its verdict comment, computes the verdict with
the same engine as ``steward refine``, and writes only what differs. The issue body is the author's
and is never edited; the verdict lives in one bot comment (with the exact ``## Refinement Verdict``
block) and in exactly one of the ``refinement:*`` labels.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from bot.commands.context import EventContext
from bot.config.settings import BugRefinementSettings
from bot.forge import Comment, Issue, NotFound
from bot.records import sticky
from bot.records.sticky import TEXT_KEY, find
from handlers.bug_refinement.document import parse_document
from handlers.bug_refinement.labels import ensure_described
from handlers.bug_refinement.merged import merged_document
from handlers.bug_refinement.plan import (
    body_digest,
    bug_id_of,
    in_repo,
    label_plan,
    select_stories,
    story_numbers,
)
from handlers.bug_refinement.render import (
    StoryNote,
    notice_text,
    ready_text,
    render_bug_comment,
    render_story_comment,
    resolved_text,
    template,
    verdict_notice_line,
)
from handlers.bug_refinement.replies import answers, reporter_of
from handlers.bug_refinement.report import report_of
from handlers.bug_refinement.rules import (
    BugVerdict,
    RecordedVerdict,
    StoryVerdict,
    blockers_for,
    format_refined_at,
    is_locked,
    is_refined,
    read_verdict_block,
    refine_bug,
    refine_story,
    same_outcome,
    story_language,
    story_verdict_hash,
    warning_for,
)
from handlers.bug_refinement.sections import Language
from handlers.bug_refinement.template_reads import repo_templates

VERDICT_KIND = "ra9-verdict"
STORY_KIND = "ra9-story"
NOTICE_KIND = "ra9-notice"


def refinement_settings(ctx: EventContext) -> BugRefinementSettings:
    return ctx.settings.bug_refinement


def visible_state(verdict: BugVerdict) -> str:
    """What the labels say of ``verdict`` (issue 34 §3): seed 000's `rejected` waits either for the reporter
    (`needs-info`: they have questions to answer) or for the maintainers (`needs-triage`)."""
    if verdict.verdict != "rejected":
        return verdict.verdict
    return "needs-info" if blockers_for(verdict, "reporter") else "needs-triage"


async def mirror_labels(ctx: EventContext, issue: Issue, verdict: str) -> None:
    """Exactly one of Steward's refinement labels on ``issue``, the one for ``verdict`` (a visible state:
    pending, needs-info, needs-triage or approved); any other, the old `rejected` included, is removed."""
    settings = refinement_settings(ctx)
    plan = label_plan(issue.labels, verdict, settings)
    for name in plan.add:
        await ensure_described(
            ctx,
            name,
            color=settings.color_for(verdict),
            description=settings.description_for(verdict, ctx.settings.language),
        )
    if plan.add:
        await ctx.forge.add_labels(ctx.repo, issue.number, list(plan.add))
    for name in plan.remove:
        await ctx.forge.remove_label(ctx.repo, issue.number, name)


# A verdict comment's record, by its text: the same comment is read at every event on its bug (the gate other
# capabilities ask, the refinement's own run), and its YAML is parsed by PyYAML's pure-Python loader. The
# record is immutable; a changed comment is a new text.
_verdict_of = lru_cache(maxsize=128)(read_verdict_block)


def _recorded(
    comments: list[Comment], *, bot_login: str, kind: str, key: int
) -> tuple[Comment | None, RecordedVerdict | None]:
    """Steward's verdict comment of ``kind`` among ``comments``, and the verdict it records."""
    comment = find(comments, bot_login=bot_login, kind=kind, key=str(key))
    return comment, _verdict_of(comment.body) if comment else None


async def trusted_verdict(ctx: EventContext, comments: list[Comment], number: int) -> RecordedVerdict | None:
    """The RA9 verdict Steward recorded on bug ``number``, only when its record verifies: the signed block
    pins the visible YAML (``sticky.covered``), so a hand-edited verdict, or one whose block was removed,
    counts as none. A verdict signed before the YAML was pinned is accepted as it is (until rewritten)."""
    comment, recorded = _recorded(comments, bot_login=ctx.me.login, kind=VERDICT_KIND, key=number)
    if comment is None:
        return None
    record = await ctx.record(comment, VERDICT_KIND, str(number), expect_data=True)
    return recorded if record.trusted is not None else None


async def is_issue_refined(ctx: EventContext, number: int, story: int | None = None) -> bool:
    """The gate other capabilities ask: an approved bug (and an approved story, where one is named)."""
    bug = await trusted_verdict(ctx, await ctx.forge.list_comments(ctx.repo, number), number)
    if story is None:
        return is_refined(bug)
    comments = await ctx.forge.list_comments(ctx.repo, story)
    as_story = (await story_verdict(ctx, comments, number)).verdict
    return is_refined(bug, as_story)


STORY_NOT_REFINED = "STORY_NOT_REFINED"


@dataclass(frozen=True)
class StoryGate:
    """Issue 36 §4's story gate: an issue Steward recorded as a story of bug ``bug``, the state of its own
    verdict (``pending``, ``rejected``, ``approved``, or ``unverified`` when its record does not verify) and
    whether the bug's verdict is approved. Work on a story waits until both are."""

    bug: int
    state: str
    bug_approved: bool

    @property
    def refined(self) -> bool:
        return self.state == "approved" and self.bug_approved


async def story_gate(
    ctx: EventContext, number: int, comments: Sequence[Comment] | None = None
) -> StoryGate | None:
    """Whether issue ``number`` is a story (Steward's story record on it names its bug), and its gate; None
    for an issue that is not one, which other capabilities gate as a bug (``is_issue_refined``)."""
    if comments is None:
        comments = await ctx.forge.list_comments(ctx.repo, number)
    me = ctx.me.login.casefold()
    for comment in comments:
        head = sticky.marker_of(comment.body) if comment.author.casefold() == me else None
        if head is None or head[0] != STORY_KIND or not head[1].isdigit():
            continue
        bug = int(head[1])
        found = await story_verdict(ctx, list(comments), bug)
        state = found.verdict.status if found.verdict is not None else "unverified"
        approved = False
        if state == "approved":
            bug_comments = await ctx.forge.list_comments(ctx.repo, bug)
            approved = is_refined(await trusted_verdict(ctx, bug_comments, bug))
        return StoryGate(bug, state, approved)
    return None


def story_refusal(gate: StoryGate, prefix: str) -> str:
    """Why work on a story is refused (``STORY_NOT_REFINED``), and what to do: one text for every command."""
    if gate.state == "approved":
        why = f"its bug #{gate.bug} is not approved any more"
        step = f"Fix what #{gate.bug}'s verdict asks, then `/{prefix} refine` there."
    elif gate.state == "pending":
        why = f"it is checked once its bug #{gate.bug} is approved, and #{gate.bug} is not yet"
        step = f"Finish #{gate.bug}'s refinement first (its verdict comment says what is missing)."
    elif gate.state == "rejected":
        why = "its own refinement verdict is not approved"
        step = (
            f"Fix what the story's verdict comment lists, then `/{prefix} refine` on #{gate.bug} checks it "
            "again."
        )
    else:
        why = "its verdict comment does not verify (it was edited by hand)"
        step = f"`/{prefix} refine` on #{gate.bug} writes it again."
    return (
        f"this issue is a story of #{gate.bug}, and work on a story waits until its own verdict is approved "
        f"(`{STORY_NOT_REFINED}`): {why}. {step}"
    )


@dataclass(frozen=True)
class StoryRecord:
    """A story's verdict comment as read back: ``verdict`` is None when there is none or it is not trusted;
    ``unpinned``: written before its text was pinned (trusted once, rewritten pinned)."""

    comment: Comment | None
    verdict: RecordedVerdict | None
    record: sticky.Record
    unpinned: bool


async def story_verdict(ctx: EventContext, comments: list[Comment], bug: int) -> StoryRecord:
    """The verdict Steward recorded on a story of bug ``bug``. Its signed block pins the visible YAML; one
    written before story verdicts were signed has no block and is accepted once — unless Steward signed
    there before (its block was removed: tampering)."""
    comment, recorded = _recorded(comments, bot_login=ctx.me.login, kind=STORY_KIND, key=bug)
    record = await ctx.record(comment, STORY_KIND, str(bug), expect_data=False)
    removed = comment is not None and record.outcome == "missing" and record.place is not None
    if removed and record.place is not None and await ctx.keyring.memory.last(record.place) is not None:
        record = sticky.Record("tampered", record.place)
    if record.broken:
        return StoryRecord(comment, None, record, False)
    data = record.trusted if isinstance(record.trusted, dict) else {}
    return StoryRecord(comment, recorded, record, comment is not None and TEXT_KEY not in data)


MAX_STORY_NOTES = 20


def _notes_for_comment(notes: Sequence[StoryNote]) -> list[StoryNote]:
    """At most ``MAX_STORY_NOTES`` lines of stories in the verdict comment (DESIGN §3.11)."""
    if len(notes) <= MAX_STORY_NOTES:
        return list(notes)
    rest = len(notes) - MAX_STORY_NOTES + 1
    return [*notes[: MAX_STORY_NOTES - 1], StoryNote(0, skipped=f"… and {rest} more")]


async def refine_issue(ctx: EventContext, issue: Issue) -> str:
    """Refine one bug issue; returns what happened (for logs and replies)."""
    comments = await ctx.forge.list_comments(ctx.repo, issue.number)
    existing, recorded = _recorded(comments, bot_login=ctx.me.login, kind=VERDICT_KIND, key=issue.number)
    # Its data block counts only when it verifies; otherwise the verdict is derived from the body again.
    # Steward always writes a block here, and it pins the visible YAML: a verdict edited by hand (or stripped
    # of its block) is not trusted, and is derived from the report again and rewritten.
    checked = await ctx.record(existing, VERDICT_KIND, str(issue.number), expect_data=existing is not None)
    data: dict[str, Any] = checked.trusted if isinstance(checked.trusted, dict) else {}
    if checked.broken:
        recorded = None
    # A verdict signed before the YAML was pinned (or a legacy one): trusted once, rewritten pinned now.
    unpinned = existing is not None and not checked.broken and TEXT_KEY not in data
    digest = body_digest(issue.body)
    bug_id = bug_id_of(ctx.repo, issue.number)
    if existing is not None and recorded is not None and is_locked(recorded):
        notes = await _refine_stories(ctx, issue)
        changed = bool(data.get("changedAfterApproval")) or data.get("body", digest) != digest
        locked = BugVerdict(
            str(data.get("bugId", bug_id)),
            "approved",
            recorded.verdict_hash,
            recorded.refined_at,
            (),
            tuple(warning_for(str(code)) for code in data.get("warnings", ())),
        )
        text = render_bug_comment(
            locked,
            language=_language(data),
            changed_after_approval=changed,
            stories=_notes_for_comment(notes),
        )
        await ctx.upsert_sticky(
            VERDICT_KIND,
            str(issue.number),
            text,
            data={**data, "changedAfterApproval": changed} if changed else data,
            number=issue.number,
            comments=comments,
            pin_text=True,
        )
        await mirror_labels(ctx, issue, "approved")
        await _settle_notices(
            ctx, issue, None, comments, asked_in_verdict=bool(data.get(ASKED)), language=_language(data)
        )
        return "locked"
    now = datetime.now(UTC)
    report = report_of(issue.body, await repo_templates(ctx))  # read once for the job
    replies, reading = await answers(ctx, issue, comments, report)
    verdict = refine_bug(report, bug_id=bug_id, refined_at=now, replies=replies)
    language: Language = "pt" if verdict.language == "pt" else "en"  # the report's, by its words
    if not same_outcome(recorded, verdict) or unpinned:
        notes = await _refine_stories(ctx, issue) if verdict.verdict == "approved" else []
        text = render_bug_comment(
            verdict,
            language=language,
            template_text=(
                template(merged_document(report, reading), issue.title)
                if verdict.verdict == "rejected"
                else None
            ),
            stories=_notes_for_comment(notes),
            reporter=reporter_of(ctx, issue),
        )
        author = reporter_of(ctx, issue)
        ask = _ask_digest(verdict) if author is not None else None
        # The reporter's ask rides in the verdict when the verdict is created now, or when this verdict
        # already made this very ask; otherwise a separate notice asks (``_notify_author``). A mention in a
        # new comment notifies, one added by an edit does not. Gitea: services/issue/comments.go
        # `CreateIssueComment` collects the mentions (`FindAndUpdateIssueMentions`) for the notifiers,
        # `UpdateComment` passes none (services/mailer/notify.go mails mentions only on creation). GitHub: a
        # notification's reason `mention` is being @mentioned in new content; an edit sends none
        # (github.com/isaacs/github#310). The created comment holds this line before its record is signed in
        # (bot/records/sticky.py `upsert`), so the mention is there at creation.
        # A verdict re-derived quietly (legacy, or signed by a key lost with Redis) asked already when the
        # verdict as shown still opens with this very ask: its reporter was notified when it was created, and
        # is not again (the worst a hand-written line can do is spare them one notification).
        asked_before = (
            existing is not None
            and author is not None
            and checked.quiet
            and verdict_notice_line(author, verdict) in sticky.visible_text(existing.body)
        )
        in_verdict = ask is not None and (existing is None or data.get(ASKED) == ask or asked_before)
        if in_verdict and author is not None:
            text = f"{verdict_notice_line(author, verdict)}\n\n{text}"
        record: dict[str, Any] = {
            "bugId": verdict.bug_id,
            "body": digest,
            # The replies whose answers were read into the verdict, each by its id and the digest of its text.
            "answers": {
                str(r.id): body_digest(r.body) for r in replies if any(s[2] == r.url for s in verdict.sources)
            },
            "warnings": list(verdict.warning_codes),
            "language": language,
        }
        asked = ask if in_verdict else data.get(ASKED)  # kept: an ask made here is settled later
        if asked:
            record[ASKED] = asked
        written = await ctx.upsert_sticky(
            VERDICT_KIND,
            str(issue.number),
            text,
            data=record,
            number=issue.number,
            comments=comments,
            pin_text=True,
        )
        if checked.broken:
            await ctx.report_rebuilt(checked, written.comment.html_url or "the verdict", number=issue.number)
        if ask is not None and not in_verdict:
            await _notify_author(ctx, issue, verdict, written.comment, comments)
    await _settle_notices(
        ctx, issue, verdict, comments, asked_in_verdict=bool(data.get(ASKED)), language=language
    )
    await mirror_labels(ctx, issue, visible_state(verdict))
    if verdict.verdict != "approved":
        await stamp_stories(ctx, issue)
    ctx.log.info("bug refined", verdict=verdict.verdict, blockers=list(verdict.blocker_codes))
    return verdict.verdict


def _language(data: Mapping[str, Any]) -> Language:
    return "pt" if data.get("language") == "pt" else "en"


# The verdict's signed data records the reporter's ask it carried itself (its digest), so that once their part
# is done they are still told so once (``_settle_notices``), as after a separate notice.
ASKED = "asked"


def _ask_digest(verdict: BugVerdict) -> str | None:
    """What the verdict asks of the reporter, as a short digest of its codes (None: nothing)."""
    codes = [b.code for b in blockers_for(verdict, "reporter")]
    return hashlib.sha256("\n".join(codes).encode()).hexdigest()[:12] if codes else None


async def _notify_author(
    ctx: EventContext, issue: Issue, verdict: BugVerdict, sticky: Comment, comments: list[Comment]
) -> None:
    """One short new comment that mentions the reporter (editing the verdict notifies nobody), once per set
    of what is asked of them: a replayed or repeated refinement with the same outcome writes nothing. Only
    for a verdict that is edited: a verdict created in this event carries the ask itself."""
    author = reporter_of(ctx, issue)
    digest = _ask_digest(verdict)
    if author is None or digest is None:
        return
    await ctx.upsert_sticky(
        NOTICE_KIND,
        f"{issue.number}-rejected-{digest}",
        notice_text(author, verdict, sticky.html_url),
        number=issue.number,
        comments=comments,
    )


_NOTICE_MARKER = re.compile(rf"^<!-- steward:{NOTICE_KIND}:(\S+) -->")


async def _settle_notices(
    ctx: EventContext,
    issue: Issue,
    verdict: BugVerdict | None,
    comments: list[Comment],
    *,
    asked_in_verdict: bool = False,
    language: Language = "en",
) -> None:
    """Once nothing more is asked of the reporter (``verdict`` None: approved and locked), each earlier
    notice that asked them for changes says it is resolved, and the reporter is told once, in one new
    comment, that their part is done. Only after an ask — a notice, or the verdict's own first line
    (``asked_in_verdict``: its signed data says so; the verdict, re-rendered, no longer carries the ask): a
    report complete from the start needs none. Level-triggered: a replay finds the texts already there and
    writes nothing."""
    author = reporter_of(ctx, issue)
    if author is None or (verdict is not None and blockers_for(verdict, "reporter")):
        return
    asked = [
        m.group(1)
        for c in comments
        if c.author.casefold() == ctx.me.login.casefold()
        and (m := _NOTICE_MARKER.match(c.body.lstrip())) is not None
        and m.group(1).startswith(f"{issue.number}-rejected-")
    ]
    if not asked and not asked_in_verdict:
        return
    for key in asked:
        await ctx.upsert_sticky(
            NOTICE_KIND, key, resolved_text(language), number=issue.number, comments=comments
        )
    await ctx.upsert_sticky(
        NOTICE_KIND,
        f"{issue.number}-ready",
        ready_text(author, verdict, language),
        number=issue.number,
        comments=comments,
    )


async def stories_of(ctx: EventContext, bug: Issue) -> tuple[list[Issue], list[StoryNote]]:
    """The stories of ``bug`` Steward may refine (its sub-issues, and the issues its ``## Stories`` list names
    that its author opened), and those it skips with why (``plan.select_stories``)."""
    limit = ctx.settings.limits.stories_per_bug
    sub_issues = [s for s in await ctx.forge.list_sub_issues(ctx.repo, bug.number) if in_repo(s, ctx.repo)]
    listed = [n for n in story_numbers(bug.body) if n != bug.number]
    found: dict[int, Issue | None] = {}
    subs = {s.number for s in sub_issues}
    room = max(0, limit - len(sub_issues))
    for number in [n for n in listed if n not in subs][:room]:
        try:
            found[number] = await ctx.forge.get_issue(ctx.repo, number)
        except NotFound:
            found[number] = None
    return select_stories(bug, sub_issues, listed, found, limit=limit)


async def stamp_stories(ctx: EventContext, bug: Issue) -> None:
    """Issue 36 §4: the stories of a bug not yet approved are stamped ``refinement:pending``, as the bug is,
    with a signed story record that names the bug (what ``story_gate`` reads). A story that has a record for
    this bug already is left as it is; an approved bug's stories are refined instead (``_refine_stories``)."""
    chosen, _ = await stories_of(ctx, bug)
    for story in chosen:
        async with ctx.holding(story.number):
            comments = await ctx.forge.list_comments(ctx.repo, story.number)
            found = await story_verdict(ctx, comments, bug.number)
            if found.comment is not None:
                continue
            at = format_refined_at(datetime.now(UTC))
            bug_id = bug_id_of(ctx.repo, bug.number)
            name = f"#{story.number}"
            pending = StoryVerdict(
                bug_id,
                name,
                "pending",
                story_verdict_hash(bug_id, name, "pending", at),
                at,
                (),
                language=story_language(parse_document(story.body)),
            )
            await ctx.upsert_sticky(
                STORY_KIND,
                str(bug.number),
                render_story_comment(pending, f"#{bug.number}"),
                data={"bugId": bug_id, "story": story.number},
                number=story.number,
                comments=comments,
                pin_text=True,
            )
            await mirror_labels(ctx, story, "pending")


async def _refine_stories(ctx: EventContext, bug: Issue) -> list[StoryNote]:
    """Refine the stories of an approved bug; returns a note per story (refined or skipped, and why)."""
    chosen, skipped = await stories_of(ctx, bug)
    notes: list[StoryNote] = []
    for story in chosen:
        async with ctx.holding(story.number):
            notes.append(await _refine_story(ctx, bug, story))
    if skipped:
        ctx.log.info("stories skipped", skipped=[n.number for n in skipped][:MAX_STORY_NOTES])
    return [*notes, *skipped]


async def _refine_story(ctx: EventContext, bug: Issue, story: Issue) -> StoryNote:
    """Refine one story, holding its lock: its own events (opened → pending) never interleave with this."""
    story = await ctx.forge.get_issue(ctx.repo, story.number)
    comments = await ctx.forge.list_comments(ctx.repo, story.number)
    found = await story_verdict(ctx, comments, bug.number)
    story_recorded = found.verdict
    if is_locked(story_recorded) and not found.unpinned:
        await mirror_labels(ctx, story, "approved")
        return StoryNote(story.number, verdict="approved")
    doc = parse_document(story.body)  # once for the job
    verdict = refine_story(
        doc,
        bug_id=bug_id_of(ctx.repo, bug.number),
        story=f"#{story.number}",
        refined_at=datetime.now(UTC),
    )
    if is_locked(story_recorded) and story_recorded is not None:
        # A locked story written before its text was pinned: the same approved verdict, rewritten pinned.
        verdict = replace(
            verdict,
            verdict="approved",
            verdict_hash=story_recorded.verdict_hash,
            refined_at=story_recorded.refined_at,
            blockers=(),
        )
    if not same_outcome(story_recorded, verdict) or found.unpinned:
        written = await ctx.upsert_sticky(
            STORY_KIND,
            str(bug.number),
            render_story_comment(verdict, f"#{bug.number}"),
            data={"bugId": bug_id_of(ctx.repo, bug.number), "story": story.number},
            number=story.number,
            comments=comments,
            pin_text=True,
        )
        if found.record.broken:
            await ctx.report_rebuilt(
                found.record, written.comment.html_url or "the verdict", number=story.number
            )
    await mirror_labels(ctx, story, verdict.verdict)
    return StoryNote(story.number, verdict=verdict.verdict)
