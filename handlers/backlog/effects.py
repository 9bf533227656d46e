"""Backlog refinement's effects on the forge: read the two sticky comments of an issue (``load``), write a
plan (``save``: re-read right before the write; a state that moved is recomputed once, then reported as a
conflict), and declare the blockers an issue names (``sync_dependencies``). The rules are in
:mod:`handlers.backlog.plan`; the label handler and the commands in :mod:`handlers.backlog.bot`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Final

from pydantic import ValidationError

from bot.commands.context import CommandContext, CommandError, EventContext
from bot.config.settings import BacklogSettings
from bot.forge import Comment, Issue, NotFound, PermissionDenied, TooManyItems, ValidationFailed
from bot.records import sticky
from handlers.backlog import interview as iv
from handlers.backlog.command_hints import DEFAULT_PERMISSIONS, Hints
from handlers.backlog.deps import describe_cycle, find_cycle
from handlers.backlog.gaps import blocked_by_refs
from handlers.backlog.plan import Plan, Thread, level_label, plan_start
from handlers.backlog.render import render_interview, render_spec
from handlers.backlog.spec import SpecRecord

__all__ = [
    "KIND_INTERVIEW",
    "KIND_NOTICE",
    "KIND_SPEC",
    "Conflict",
    "hints_for",
    "load",
    "refusal_for",
    "save",
    "save_or_report",
    "start",
    "sync_dependencies",
]

KIND_INTERVIEW: Final = "backlog-interview"
KIND_SPEC: Final = "backlog-spec"
KIND_NOTICE: Final = "backlog-notice"
KEY: Final = "issue"
MAX_GRAPH: Final = 50
MAX_SKIPPED_SHOWN: Final = 5


class Conflict(Exception):
    """The interview or spec moved twice while a job was saving."""


async def _decode(
    ctx: EventContext, comments: list[Comment], kind: str
) -> tuple[Any, str | None, sticky.Record]:
    """The trusted data of Steward's ``kind`` comment: a block that does not verify counts as none, so the
    state is derived again from the issue and the people's commands."""
    comment = sticky.find(comments, bot_login=ctx.me.login, kind=kind, key=KEY)
    if comment is None:
        return None, None, sticky.MISSING
    record = await ctx.record(comment, kind, KEY)
    if record.broken:
        ctx.log.warning("a refinement record does not verify; ignoring it", kind=kind, outcome=record.outcome)
    return record.trusted, comment.body, record


async def load(ctx: EventContext, issue: Issue | None = None) -> Thread:
    issue = issue if issue is not None else await ctx.forge.get_issue(ctx.repo, ctx.number)
    comments = await ctx.forge.list_comments(ctx.repo, issue.number)
    raw_interview, interview_body, interview_record = await _decode(ctx, comments, KIND_INTERVIEW)
    raw_spec, spec_body, spec_record = await _decode(ctx, comments, KIND_SPEC)
    broken = tuple(
        (k, r) for k, r in ((KIND_INTERVIEW, interview_record), (KIND_SPEC, spec_record)) if r.broken
    )
    interview: iv.Interview | None = None
    spec = SpecRecord()
    try:
        if raw_interview is not None:
            interview = iv.Interview.model_validate(raw_interview)
    except ValidationError:
        ctx.log.warning("unreadable interview data; starting over", issue=issue.number)
    try:
        if raw_spec is not None:
            spec = SpecRecord.model_validate(raw_spec)
    except ValidationError:
        ctx.log.warning("unreadable spec data; keeping no history", issue=issue.number)
    return Thread(issue, comments, interview, spec, interview_body, spec_body, broken)


async def _write(ctx: EventContext, thread: Thread, plan: Plan) -> None:
    cfg = ctx.settings.backlog
    hints = hints_for(ctx)
    issue = thread.issue
    labels = [label for label in issue.labels if label not in plan.remove_labels] + list(plan.add_labels)
    have = level_label(labels, cfg.level_label_prefix)
    interview = plan.interview or thread.interview
    spec_record = plan.spec or thread.spec
    spec_version = spec_record.current.version if spec_record.current else spec_record.last_version
    notices: list[tuple[str, str]] = []
    if plan.spec is not None:
        text = render_spec(
            plan.spec,
            title=plan.title or issue.title,
            hints=hints,
            current_level=have[1] if have else None,
            level_prefix=cfg.level_label_prefix,
            approved_label=cfg.approved_label,
            deps=interview.deps if interview else (),
        )
        written = await _upsert(ctx, thread, KIND_SPEC, text, plan.spec.model_dump(mode="json"))
        current = plan.spec.current
        if current is not None and current.status == "draft":
            notices.append(
                (
                    f"spec-v{current.version}",
                    f"@{issue.author}: **Spec v{current.version}** is ready — [read it]("
                    f"{written.comment.html_url}). {hints.run('approve-spec')} approves it; "
                    f"{hints.run('edit-spec')} asks for another round.",
                )
            )
    if plan.interview is not None:
        text = render_interview(
            plan.interview, author=issue.author, cap=cfg.round_cap, hints=hints, spec_version=spec_version
        )
        written = await _upsert(ctx, thread, KIND_INTERVIEW, text, plan.interview.model_dump(mode="json"))
        asked = plan.interview.asking
        if plan.interview.status == "interviewing" and asked:
            cycle_round = plan.interview.round - plan.interview.cycle_start + 1
            notices.append(
                (
                    f"round-c{plan.interview.cycle}r{plan.interview.round}",
                    f"@{issue.author}: round {cycle_round} of the refinement — {len(asked)} "
                    f"question{'s' if len(asked) != 1 else ''} for you in [the interview]("
                    f"{written.comment.html_url}). Answer with {hints.cmd('answer <id> <text>')}.",
                )
            )
    for key, text in notices:
        await _notify(ctx, thread, key, text)
    rewritten = {KIND_SPEC: plan.spec is not None, KIND_INTERVIEW: plan.interview is not None}
    for kind, record in thread.broken:
        if rewritten[kind]:
            found = sticky.find(thread.comments, bot_login=ctx.me.login, kind=kind, key=KEY)
            await ctx.report_rebuilt(record, found.html_url if found else "this issue", number=issue.number)
    if plan.title is not None and plan.title != issue.title:
        await ctx.forge.edit_issue(ctx.repo, issue.number, title=plan.title)
    for name in plan.add_labels:
        if not issue.has_label(name):
            await ctx.forge.ensure_label(
                ctx.repo,
                name,
                color=cfg.label_colors.get(name, "c5def5"),
                description=_describe(name, cfg),
            )
    missing = [name for name in plan.add_labels if not issue.has_label(name)]
    if missing:
        await ctx.forge.add_labels(ctx.repo, issue.number, missing)
    for name in plan.remove_labels:
        if issue.has_label(name):
            await ctx.forge.remove_label(ctx.repo, issue.number, name)


async def _notify(ctx: EventContext, thread: Thread, key: str, text: str) -> None:
    """One short new comment that mentions the author when they must act (an edit notifies nobody); its
    key (round, spec version) makes a replay write nothing."""
    author = thread.issue.author
    if not author or author.casefold() == ctx.me.login.casefold():
        return
    await ctx.upsert_sticky(KIND_NOTICE, key, text, number=thread.issue.number, comments=thread.comments)


def _describe(name: str, cfg: BacklogSettings) -> str:
    if name == cfg.approved_label:
        return "Steward: the refined spec was approved"
    if name == cfg.refine_label:
        return "Steward: refine this issue"
    return "Steward: level of the refined scope"


async def _upsert(ctx: EventContext, thread: Thread, kind: str, text: str, data: Any) -> sticky.UpsertResult:
    return await ctx.upsert_sticky(
        kind, KEY, text, data=data, number=thread.issue.number, comments=thread.comments
    )


async def save(ctx: EventContext, compute: Callable[[Thread], Plan], thread: Thread | None = None) -> Plan:
    """Compute the plan from the forge's state and write it, re-reading right before the write: a state
    that moved is recomputed once; if it moved again, :class:`Conflict` (nothing is overwritten)."""
    seen = thread if thread is not None else await load(ctx)
    plan = compute(seen)
    for attempt in range(2):
        fresh = await load(ctx, seen.issue)
        if fresh.fingerprint == seen.fingerprint:
            await _write(ctx, fresh, plan)
            return plan
        if attempt == 0:
            ctx.log.info("refinement state moved while saving; recomputing once", issue=seen.issue.number)
            seen = fresh
            plan = compute(seen)
    raise Conflict


async def _blocked_by_graph(ctx: EventContext, start: int) -> dict[int, list[int]]:
    graph: dict[int, list[int]] = {}
    queue = [start]
    while queue and len(graph) < MAX_GRAPH:
        node = queue.pop(0)
        if node in graph:
            continue
        try:
            graph[node] = await ctx.forge.list_blocked_by(ctx.repo, node)
        except NotFound:
            graph[node] = []
        queue.extend(n for n in graph[node] if n not in graph)
    return graph


async def sync_dependencies(
    ctx: EventContext, issue: Issue, wanted: Sequence[int], known: Sequence[iv.DepRecord]
) -> list[iv.DepRecord]:
    """Declare each wanted blocker on the forge (adding only what is missing), refusing cycles; on a forge
    without issue dependencies, the blockers are only listed in the spec. The blockers linked on the forge
    itself (its "blocked by", which no text names) are recorded too, as ``linked`` — all of them read for
    what they delivered (:func:`with_prior_work`). One list of the issue's blockers a job."""
    recorded = {d.number for d in known}
    todo = [n for n in dict.fromkeys(wanted) if n not in recorded]
    # DESIGN §3.9: what a body names is bounded. Each reference may cost a walk of the dependency graph and
    # a write; past the limit the rest are listed as skipped (a few by number, the others counted). The
    # forge's own links share the bound: each may cost the reads of what it delivered.
    limit = ctx.settings.limits.references_per_issue
    room = max(0, limit - sum(1 for d in known if d.state != "skipped"))
    try:
        existing = await ctx.forge.list_blocked_by(ctx.repo, issue.number)
    except (NotFound, PermissionDenied, ValidationFailed):
        # No issue dependencies here (Gitea answers 404 when a repository turned them off): none linked.
        todo, over = todo[:room], todo[room:]
        listed = [iv.DepRecord(number=n, state="listed", note="no issue dependencies here") for n in todo]
        return await with_prior_work(ctx, listed + _skipped(over, limit))
    linked = [n for n in dict.fromkeys(existing) if n not in recorded and n not in todo and n != issue.number]
    todo, over = todo[:room], todo[room:]
    room -= len(todo)
    linked, over = linked[: max(0, room)], over + linked[max(0, room) :]
    out: list[iv.DepRecord] = _skipped(over, limit)
    out += [iv.DepRecord(number=n, state="linked", note="linked on the forge") for n in linked]
    for number in todo:
        if number in existing:
            out.append(iv.DepRecord(number=number, state="declared"))
            continue
        cycle = find_cycle(await _blocked_by_graph(ctx, number), issue.number, number)
        if cycle is not None:
            out.append(
                iv.DepRecord(
                    number=number, state="refused", note=f"it would close a cycle: {describe_cycle(cycle)}"
                )
            )
            continue
        try:
            await ctx.forge.add_blocked_by(ctx.repo, issue.number, number)
        except NotFound:
            out.append(iv.DepRecord(number=number, state="refused", note=f"#{number} does not exist"))
        except ValidationFailed as exc:
            out.append(iv.DepRecord(number=number, state="refused", note=f"the forge refused it ({exc})"))
        else:
            out.append(iv.DepRecord(number=number, state="declared"))
    return await with_prior_work(ctx, out)


def _skipped(over: Sequence[int], limit: int) -> list[iv.DepRecord]:
    skipped = [
        iv.DepRecord(number=n, state="skipped", note=f"more than {limit} references in one issue")
        for n in over[:MAX_SKIPPED_SHOWN]
    ]
    if len(over) > MAX_SKIPPED_SHOWN:
        more = len(over) - MAX_SKIPPED_SHOWN
        skipped.append(iv.DepRecord(number=0, state="skipped", note=f"{more} more references were skipped"))
    return skipped


MAX_PRIOR_PULLS = 10


async def with_prior_work(ctx: EventContext, deps: list[iv.DepRecord]) -> list[iv.DepRecord]:
    """Each declared or listed blocker that is closed, with what it delivered (seed 002): the newest merged
    pull request whose title or body names it, the start of its description and the files it changed."""
    pulls: list[Issue] | None = None
    out: list[iv.DepRecord] = []
    for dep in deps:
        if dep.state not in ("declared", "listed", "linked") or not dep.number:
            out.append(dep)
            continue
        try:
            blocker = await ctx.forge.get_issue(ctx.repo, dep.number)
        except NotFound:
            out.append(dep)
            continue
        if blocker.state != "closed":
            out.append(dep)
            continue
        if pulls is None:
            try:
                pulls = await ctx.forge.list_issues(ctx.repo, state="closed", kind="pulls")
            except TooManyItems:
                pulls = []
        names = re.compile(rf"#{dep.number}\b")
        prior = "closed; no merged pull request names it"
        for item in sorted(pulls, key=lambda p: -p.number)[:200]:
            if not names.search(f"{item.title}\n{item.body}"):
                continue
            pull = await ctx.forge.get_pull_request(ctx.repo, item.number)
            if not pull.merged:
                continue
            files = [f.path for f in await ctx.forge.list_pr_files(ctx.repo, pull.number)]
            shown = ", ".join(f"`{f}`" for f in files[:6]) + (f" +{len(files) - 6}" if len(files) > 6 else "")
            said = " ".join(pull.body.split())[:160]
            prior = (
                f"closed; delivered by #{pull.number} “{pull.title[:80]}”"
                + (f": {said}" if said else "")
                + (f" — files: {shown}" if shown else "")
            )
            break
        out.append(dep.model_copy(update={"prior": prior}))
        if len([d for d in out if d.prior]) >= MAX_PRIOR_PULLS:
            out += deps[len(out) :]
            break
    return out


async def refusal_for(ctx: EventContext, issue: Issue) -> str | None:
    """Why this issue is not refined (closed, or an epic), or None."""
    cfg = ctx.settings.backlog
    if issue.state == "closed":
        return f"#{issue.number} is closed — reopen it before refining."
    children = await ctx.forge.list_sub_issues(ctx.repo, issue.number)
    if issue.has_label(cfg.epic_label) or children:
        why = f"labelled `{cfg.epic_label}`" if issue.has_label(cfg.epic_label) else "it has sub-issues"
        listing = "\n".join(
            f"- #{c.number} {c.title}" + (f" ({c.html_url})" if c.html_url else "") for c in children
        )
        return (
            f"#{issue.number} is an epic ({why}): a container, not a backlog item, so I don't refine it. "
            + ("Refine its children instead:\n\n" + listing if children else "It has no sub-issues yet.")
        )
    return None


async def save_or_report(ctx: EventContext, compute: Callable[[Thread], Plan], thread: Thread) -> Plan | None:
    try:
        return await save(ctx, compute, thread)
    except Conflict:
        text = (
            "The refinement changed twice while I was saving, so I saved nothing rather than overwrite it. "
            "Repeat the last command if it still applies."
        )
        if isinstance(ctx, CommandContext):
            raise CommandError(text) from None
        await ctx.upsert_sticky(KIND_NOTICE, "conflict", text)
        return None


async def start(ctx: EventContext, issue: Issue, *, key: str | None, by_command: bool) -> Plan | None:
    thread = await load(ctx, issue)
    known = thread.interview.deps if thread.interview else ()
    wanted = blocked_by_refs(issue.body)
    if thread.interview is not None:
        wanted = iv.wanted_blockers(issue.body, thread.interview)
    deps = await sync_dependencies(ctx, issue, wanted, known)
    cfg = ctx.settings.backlog
    return await save_or_report(
        ctx, lambda t: plan_start(t, cfg, key=key, by_command=by_command, deps=deps), thread
    )


def hints_for(ctx: EventContext) -> Hints:
    """Command hints that match each command's permission here (default or overridden)."""
    permissions = {
        name: ctx.settings.permission(name, default) for name, default in DEFAULT_PERMISSIONS.items()
    }
    return Hints(prefix=ctx.prefix, forge=ctx.event.forge, permissions=permissions)
