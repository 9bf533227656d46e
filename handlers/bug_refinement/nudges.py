"""Nudges, as a stale bot does them (issue 34 §3), opt-in per repository: a bug waiting for its reporter's
answers (`refinement:needs-info`) gets one reminder after `bug_refinement.remind_after_days`, and — with
`close_after_days` — is closed with a kind note that many days after the reminder. The reporter's answer on a
bug Steward closed this way reopens it (``reopen_for_answer``).

The clock is the latest of Steward's ask (its verdict or notice comment, as last written) and the reporter's
last comment or comment edit, as the forge's comment times say — not the issue's ``updated_at``, which
Steward's own edits and labels move. The periodic job reads one repository-wide comment listing per
repository per run (``Forge.list_repo_comments``, as the catch-up does) and reads a bug's own thread only
when the listing says something is due, just before writing. What was done is the signed record of
Steward's nudge comment, one per wait (numbered): the latest belongs to the current wait when Steward wrote
it after the wait began (the forge's times), and its signed stage says whether it reminded or closed. A
re-run, or a second worker, finds it and sends nothing twice; a record that does not verify counts as none
(a new reminder). The close falls due `close_after_days` after the reminder was written.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from bot.commands.context import EventContext
from bot.commands.periodic import PeriodicContext
from bot.config.settings import BugRefinementSettings
from bot.forge import Comment, ForgeError, ForgeKind, Issue, RepoRef
from bot.records import sticky
from bot.records.signing import parse_time
from handlers.bug_refinement.effects import NOTICE_KIND, VERDICT_KIND

NUDGE_KIND = "ra9-nudge"
DAY = 86_400.0
_ASKS = (VERDICT_KIND, NOTICE_KIND)


def _is_answer(comment: Comment) -> bool:
    return not sticky.marker_of(comment.body) and not comment.body.lstrip().startswith("/")


def wait_clock(issue: Issue, comments: Sequence[Comment], me: str) -> float | None:
    """When the bug's current wait began: the latest of Steward's ask (verdict or notice, as last written)
    and the reporter's last comment or edit; None when ``comments`` show neither."""
    times: list[float] = []
    for c in comments:
        author = c.author.casefold()
        head = sticky.marker_of(c.body)
        if author == me.casefold() and head is not None and head[0] in _ASKS:
            times.append(parse_time(c.updated_at or c.created_at) or 0.0)
        elif author == issue.author.casefold() and _is_answer(c):
            times.append(max(parse_time(c.created_at) or 0.0, parse_time(c.updated_at) or 0.0))
    return max(times) if times else None


def _nudges(number: int, comments: Sequence[Comment], me: str) -> list[tuple[int, Comment]]:
    """Steward's nudge comments on bug ``number``, by their sequence number (one per wait), oldest first."""
    found: list[tuple[int, Comment]] = []
    for c in comments:
        head = sticky.marker_of(c.body)
        if c.author.casefold() != me.casefold() or head is None or head[0] != NUDGE_KIND:
            continue
        bug, _, seq = head[1].partition("-")
        if bug == str(number) and seq.isdigit():
            found.append((int(seq), c))
    return sorted(found, key=lambda pair: pair[0])


def _written_at(comment: Comment) -> float:
    return parse_time(comment.updated_at or comment.created_at) or 0.0


def waiting(issue: Issue, settings: BugRefinementSettings, me: str) -> bool:
    """A bug that waits for its reporter and may be nudged (open, under refinement, not exempt, reported by
    someone other than Steward)."""
    return (
        issue.state == "open"
        and not issue.is_pull_request
        and issue.has_label(settings.needs_info_label)
        and issue.has_label(settings.refine_label)
        and not any(issue.has_label(label) for label in settings.nudge_exempt_labels)
        and bool(issue.author)
        and issue.author.casefold() != me.casefold()
    )


def looks_due(
    issue: Issue, listed: Sequence[Comment], me: str, settings: BugRefinementSettings, now: float
) -> bool:
    """What the repository-wide listing (``listed``: this bug's comments updated within the window) says:
    whether a reminder or a close may be due — then the bug's own thread is read to be sure."""
    remind = settings.remind_after_days
    if remind is None:
        return False
    clock = wait_clock(issue, listed, me)
    if clock is not None and now - clock < remind * DAY:
        return False  # an answer or an ask within the last N days
    nudges = _nudges(issue.number, listed, me)
    if not nudges or _written_at(nudges[-1][1]) < (clock or 0.0):
        return True  # not reminded during this wait (or the reminder is older than the window: read to see)
    close = settings.close_after_days
    latest = sticky.unverified_data(nudges[-1][1].body)  # only to skip a read; what is written is verified
    stage = latest.get("stage") if isinstance(latest, dict) else None
    return close is not None and stage != "closed" and now - _written_at(nudges[-1][1]) >= close * DAY


def reminder_text(author: str, verdict_url: str, close_days: int | None, language: str) -> str:
    if language == "pt":
        text = (
            f"@{author}, este relatório de bug ainda espera as suas respostas às perguntas do "
            f"[veredito do Steward]({verdict_url}). Pode responder aqui — um comentário basta — ou editar o "
            "relatório."
        )
        if close_days is not None:
            text += f" Sem resposta em {close_days} dias, o Steward fecha-o por agora; responder reabre-o."
        return text
    text = (
        f"@{author}, this bug report is still waiting for your answers to the questions in "
        f"[Steward's verdict]({verdict_url}). Could you answer them here — a comment is enough — or edit the "
        "report?"
    )
    if close_days is not None:
        text += f" If no answer comes in {close_days} days, Steward closes it for now; answering reopens it."
    return text


def closing_text(author: str, verdict_url: str, days: int, language: str) -> str:
    if language == "pt":
        return (
            f"Fechado por agora: as perguntas do [veredito do Steward]({verdict_url}) esperam "
            f"resposta há {days} dias. @{author}, nada se perde — responda aqui quando puder "
            "e o Steward reabre o relatório."
        )
    return (
        f"Closed for now: the questions in [Steward's verdict]({verdict_url}) have waited {days} days for "
        f"an answer. @{author}, nothing is lost — answer them here whenever you can "
        "and Steward reopens the report."
    )


async def _verdict_facts(ctx: EventContext, issue: Issue, comments: Sequence[Comment]) -> tuple[str, str]:
    """The verdict comment's link and the verdict's language (from its signed record; English otherwise)."""
    key = str(issue.number)
    for c in comments:
        if c.author.casefold() == ctx.me.login.casefold() and sticky.marker_of(c.body) == (VERDICT_KIND, key):
            data = (await ctx.record(c, VERDICT_KIND, key)).trusted
            language = data.get("language") if isinstance(data, dict) else None
            return c.html_url or issue.html_url, language if language == "pt" else "en"
    return issue.html_url, "en"


async def nudge_issue(ctx: EventContext, issue: Issue, settings: BugRefinementSettings, now: float) -> str:
    """Remind, close, or leave one waiting bug, from its own thread; returns what was done."""
    remind = settings.remind_after_days
    if remind is None:
        return "off"
    me = ctx.me.login
    comments = await ctx.forge.list_comments(ctx.repo, issue.number)
    clock = wait_clock(issue, comments, me) or parse_time(issue.created_at) or now
    nudges = _nudges(issue.number, comments, me)
    stage: Any = None
    if nudges and _written_at(nudges[-1][1]) >= clock:
        seq, latest = nudges[-1]
        data = (await ctx.record(latest, NUDGE_KIND, f"{issue.number}-{seq}")).trusted
        stage = data.get("stage") if isinstance(data, dict) else None
    url, language = await _verdict_facts(ctx, issue, comments)
    close = settings.close_after_days
    if stage is None:
        if now - clock < remind * DAY:
            return "waiting"
        # A new wait (or a reminder whose record does not verify): a new comment, so the mention notifies.
        key = f"{issue.number}-{nudges[-1][0] + 1 if nudges else 1}"
        text = reminder_text(issue.author, url, close, language)
        await ctx.upsert_sticky(
            NUDGE_KIND, key, text, data={"stage": "reminded"}, number=issue.number, comments=comments
        )
        return "reminded"
    seq, latest = nudges[-1]
    if stage != "reminded" or close is None or now - _written_at(latest) < close * DAY:
        return "waiting"  # reminded, not yet due; or closed before and reopened by a person: left alone
    await ctx.forge.edit_issue(ctx.repo, issue.number, state="closed")
    text = closing_text(issue.author, url, remind + close, language)
    await ctx.upsert_sticky(
        NUDGE_KIND,
        f"{issue.number}-{seq}",
        text,
        data={"stage": "closed"},
        number=issue.number,
        comments=comments,
    )
    return "closed"


async def nudge_repository(pctx: PeriodicContext, kind: ForgeKind, repo: RepoRef) -> dict[str, int]:
    """One run on one repository: one issue listing and one comment listing, then a thread read and a write
    only for the bugs that are due."""
    forge = await pctx.forge(kind, repo)
    config = await pctx.settings_for(forge, repo)
    settings = config.settings.bug_refinement
    if not settings.enabled or settings.remind_after_days is None:
        return {}
    me = await forge.whoami()
    bugs = [
        issue
        for issue in await forge.list_issues(repo, labels=[settings.needs_info_label])
        if waiting(issue, settings, me.login)
    ]
    if not bugs:
        return {}
    now = time.time()
    window = (settings.remind_after_days + (settings.close_after_days or 0) + 1) * DAY
    listed: dict[int, list[Comment]] = {}
    for comment in await forge.list_repo_comments(repo, datetime.fromtimestamp(now - window, UTC)):
        listed.setdefault(comment.issue_number, []).append(comment)
    ctx = pctx.repo_context(kind, repo, forge, me, config)
    done: dict[str, int] = {}
    for issue in bugs:
        if not looks_due(issue, listed.get(issue.number, []), me.login, settings, now):
            continue
        async with ctx.holding_unless_busy(issue.number) as held:
            if held:
                outcome = await nudge_issue(ctx, issue, settings, now)
                done[outcome] = done.get(outcome, 0) + 1
    return done


async def nudge_all(pctx: PeriodicContext) -> None:
    for kind in pctx.forges:
        for repo in await pctx.repositories(kind):
            try:
                done = await nudge_repository(pctx, kind, repo)
            except ForgeError as exc:
                pctx.log.warning(
                    "bug nudges: could not look at a repository", repo=repo.full_name, error=str(exc)
                )
                continue
            if done:
                pctx.log.info("bug nudges", repo=repo.full_name, **done)


async def reopen_for_answer(ctx: EventContext, issue: Issue) -> bool:
    """The reporter answered on a bug Steward closed for want of an answer: reopen it (on GitHub a reporter
    cannot reopen an issue someone else closed). Only when Steward's signed nudge record on the thread says
    Steward closed it."""
    me = ctx.me.login.casefold()
    comments = await ctx.forge.list_comments(ctx.repo, issue.number)
    closed = False
    for c in comments:
        head = sticky.marker_of(c.body)
        if c.author.casefold() != me or head is None or head[0] != NUDGE_KIND:
            continue
        data = (await ctx.record(c, NUDGE_KIND, head[1])).trusted
        if isinstance(data, dict) and data.get("stage") == "closed":
            closed = True
    if not closed:
        return False
    await ctx.forge.edit_issue(ctx.repo, issue.number, state="open")
    ctx.log.info("bug reopened for the reporter's answer", issue=issue.number)
    return True
