"""Backlog refinement on the forge: the ``refine`` label, ``/answer``, ``/enough``, ``/approve-spec``,
``/edit-spec``, ``/cancel-refine`` (and ``/refine`` through :mod:`handlers.refine_router`).

The rules are pure (``plan_*`` below and the modules they use); the effects are the few async functions
at the end. Everything the bot decides lives in two sticky comments — the interview (ledger, rounds,
probe-scans) and the spec (current version and history) — and in labels; the author's description is
never edited. Each save re-reads both comments right before writing: if another job changed them since
this one read them, the plan is computed once more from what is there now, and if they moved again the
conflict is reported instead of overwriting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import ValidationError

from bot import sticky
from bot.commands import parse_commands
from bot.context import CommandContext, CommandError, EventContext
from bot.forge import Comment, Issue, NotFound, PermissionDenied, ValidationFailed
from bot.permissions import check, who_may
from bot.registry import Registry
from bot.settings import BacklogSettings
from handlers.backlog import interview as iv
from handlers.backlog.deps import describe_cycle, find_cycle
from handlers.backlog.gaps import blocked_by_refs, scan
from handlers.backlog.hints import DEFAULT_PERMISSIONS, NEW_VERSION, Hints
from handlers.backlog.level import score
from handlers.backlog.render import render_interview, render_spec
from handlers.backlog.spec import SpecRecord, synthesize
from handlers.bug_kind import is_bug_report
from handlers.forks.api import unresolved_forks

# This module's commands and events; `handlers.build_registry()` includes them (importing registers nothing).
plugin = Registry()


def register(registry: Registry) -> None:
    registry.include(plugin)


__all__ = [
    "Plan",
    "Thread",
    "plan_answers",
    "plan_approve",
    "plan_cancel",
    "plan_edit",
    "plan_enough",
    "plan_start",
]

KIND_INTERVIEW: Final = "backlog-interview"
KIND_SPEC: Final = "backlog-spec"
KIND_NOTICE: Final = "backlog-notice"
KEY: Final = "issue"
LEVELS: Final = ("L1", "L2", "L3")
MAX_GRAPH: Final = 50
MAX_SKIPPED_SHOWN: Final = 5
DEFAULT_HINTS: Final = Hints()


# --- the pure part -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Thread:
    """What the forge holds for one issue: the issue and the two sticky comments (decoded)."""

    issue: Issue
    comments: list[Comment]
    interview: iv.Interview | None = None
    spec: SpecRecord = field(default_factory=SpecRecord)
    interview_body: str | None = None
    spec_body: str | None = None
    # Records whose data block did not verify (ignored above; reported once they are rewritten).
    broken: tuple[tuple[str, sticky.Record], ...] = ()

    @property
    def fingerprint(self) -> tuple[str | None, str | None]:
        return self.interview_body, self.spec_body


@dataclass(frozen=True)
class Plan:
    """The desired state: None leaves a comment as it is."""

    interview: iv.Interview | None = None
    spec: SpecRecord | None = None
    add_labels: tuple[str, ...] = ()
    remove_labels: tuple[str, ...] = ()
    reply: str | None = None


def level_label(labels: Sequence[str], prefix: str) -> tuple[str, str] | None:
    """The issue's ``level:*`` label and its level (``("level:L2", "L2")``), if it has one."""
    for label in labels:
        if label.casefold().startswith(prefix.casefold()):
            value = label[len(prefix) :].strip().upper()
            if value in LEVELS:
                return label, value
    return None


def _with_deps(interview: iv.Interview, deps: Sequence[iv.DepRecord]) -> iv.Interview:
    known = {d.number for d in interview.deps}
    new = tuple(d for d in deps if d.number not in known)
    return interview.model_copy(update={"deps": (*interview.deps, *new)}) if new else interview


def _draft(thread: Thread, interview: iv.Interview) -> SpecRecord:
    """The spec record with a draft for ``interview``'s stop; the same stop re-run gives the same draft."""
    origin = f"c{interview.cycle}r{interview.round}:{interview.gate}"
    record = thread.spec
    if record.current is not None and record.current.origin == origin:
        return record
    issue = thread.issue
    spec = synthesize(
        title=issue.title,
        body=issue.body,
        found=scan(issue.title, issue.body),
        ledger=interview.ledger,
        verdict=interview.gate or "STOP-CLEAN",
        version=record.last_version + 1,
        origin=origin,
    )
    level = score(issue.title, spec.goal, spec.requirements)
    spec = spec.model_copy(
        update={
            "level": level.level,
            "level_reasons": level.reasons,
            "blocked_by": tuple(d.number for d in interview.deps if d.state in ("declared", "listed")),
        }
    )
    return record.with_new(spec)


def _handled(thread: Thread, key: str | None) -> bool:
    return key is not None and thread.interview is not None and key in thread.interview.handled


def _mark(interview: iv.Interview, key: str | None) -> iv.Interview:
    return interview.with_handled(key) if key is not None else interview


def plan_start(
    thread: Thread,
    cfg: BacklogSettings,
    *,
    key: str | None = None,
    by_command: bool = False,
    deps: Sequence[iv.DepRecord] = (),
) -> Plan:
    """Start (label or ``/refine``), or restart a cancelled or — by ``/refine`` — an approved refinement."""
    if _handled(thread, key):
        return Plan()
    issue = thread.issue
    labels = () if issue.has_label(cfg.refine_label) or not by_command else (cfg.refine_label,)
    current = thread.interview
    if current is None:
        interview, gate = iv.start(issue.title, issue.body, cap=cfg.round_cap, limit=cfg.max_questions)
        interview = _mark(_with_deps(interview, deps), key)
        spec = _draft(thread, interview) if gate is not None else None
        return Plan(interview=interview, spec=spec, add_labels=labels)
    if current.status == "cancelled" or (current.status == "approved" and by_command):
        interview = iv.reopen(current, title=issue.title, body=issue.body, limit=cfg.max_questions)
        return Plan(interview=_mark(_with_deps(interview, deps), key), add_labels=labels)
    if not by_command:
        return Plan()
    what = "an interview is running" if current.status == "interviewing" else "a spec draft awaits approval"
    return Plan(
        interview=_mark(current, key),
        reply=f"Backlog refinement is already under way here ({what}); see the interview comment.",
    )


def _none_running(hints: Hints) -> CommandError:
    return CommandError(f"no backlog refinement is running on this issue; {hints.run('refine')} starts one.")


def plan_answers(
    thread: Thread,
    answers: Sequence[iv.Answer],
    cfg: BacklogSettings,
    *,
    deps: Sequence[iv.DepRecord] = (),
    hints: Hints = DEFAULT_HINTS,
) -> Plan:
    current = thread.interview
    if current is None:
        raise _none_running(hints)
    if all(a.key in current.applied for a in answers):
        return Plan()
    if current.status != "interviewing":
        raise CommandError(_not_interviewing(current, hints))
    issue = thread.issue
    interview, gate = iv.record_answers(
        current, answers, title=issue.title, body=issue.body, cap=cfg.round_cap, limit=cfg.max_questions
    )
    interview = _with_deps(interview, deps)
    spec = _draft(thread, interview) if iv.gate_stops(gate) else None
    return Plan(interview=interview, spec=spec)


def _not_interviewing(current: iv.Interview, hints: Hints = DEFAULT_HINTS) -> str:
    if current.status == "stopped":
        return (
            f"the interview has ended and a spec draft awaits approval; {hints.run('edit-spec')} reopens it."
        )
    if current.status == "approved":
        return f"this refinement is approved and locked; {hints.new_version()} starts a new version."
    return f"this refinement was cancelled; {hints.run('refine')} starts it again."


def plan_enough(thread: Thread, cfg: BacklogSettings, *, key: str, hints: Hints = DEFAULT_HINTS) -> Plan:
    current = thread.interview
    if _handled(thread, key):
        return Plan()
    if current is None:
        raise _none_running(hints)
    if current.status != "interviewing":
        raise CommandError(_not_interviewing(current, hints))
    interview, _ = iv.enough(current, cap=cfg.round_cap)
    interview = interview.with_handled(key)
    return Plan(interview=interview, spec=_draft(thread, interview))


def plan_edit(thread: Thread, cfg: BacklogSettings, *, key: str, hints: Hints = DEFAULT_HINTS) -> Plan:
    current = thread.interview
    if _handled(thread, key):
        return Plan()
    if current is None or thread.spec.current is None:
        raise CommandError(f"there is no spec draft to edit; {hints.run('refine')} starts a refinement.")
    if current.status == "interviewing":
        raise CommandError(
            "the interview is already open: answer the questions, or "
            f"{hints.cmd('enough')} to draft the spec."
        )
    if current.status != "stopped":
        raise CommandError(_not_interviewing(current, hints))
    issue = thread.issue
    interview = iv.reopen(current, title=issue.title, body=issue.body, limit=cfg.max_questions)
    return Plan(interview=interview.with_handled(key))


def plan_cancel(thread: Thread, cfg: BacklogSettings, *, key: str, hints: Hints = DEFAULT_HINTS) -> Plan:
    current = thread.interview
    if _handled(thread, key):
        return Plan()
    if current is None or current.status == "cancelled":
        raise CommandError("there is no refinement to cancel here.")
    if current.status == "approved":
        raise CommandError("this refinement is approved and locked; there is no draft to discard.")
    interview = current.model_copy(update={"status": "cancelled", "asking": ()}).with_handled(key)
    return Plan(
        interview=interview,
        spec=thread.spec.discard(),
        remove_labels=(cfg.refine_label,) if thread.issue.has_label(cfg.refine_label) else (),
    )


def plan_approve(
    thread: Thread,
    cfg: BacklogSettings,
    *,
    key: str,
    actor: str,
    choice: str | None,
    hints: Hints = DEFAULT_HINTS,
) -> Plan:
    prefix = hints.prefix
    current = thread.interview
    if _handled(thread, key):
        return Plan()
    spec = thread.spec.current
    if current is None or spec is None:
        raise CommandError(f"there is no spec to approve yet; {hints.run('refine')} starts a refinement.")
    if current.status == "interviewing":
        raise CommandError(
            f"the interview is still open: {hints.run('enough')} ends it and drafts the spec to approve."
        )
    if current.status != "stopped" or spec.status != "draft":
        raise CommandError(_not_interviewing(current, hints))
    issue = thread.issue
    have = level_label(issue.labels, cfg.level_label_prefix)
    wanted = (choice or "").strip()
    if wanted and wanted.lower() not in ("apply", "keep") and wanted.upper() not in LEVELS:
        raise CommandError(
            f"`{wanted}` is not a level choice: use `/{prefix} approve-spec`, "
            f"`/{prefix} approve-spec apply`, `/{prefix} approve-spec keep` or "
            f"`/{prefix} approve-spec L1|L2|L3`."
        )
    if not wanted and have is not None and have[1] != spec.level:
        raise CommandError(
            f"the spec scores **{spec.level}** but the issue is labelled `{have[0]}`. Choose: "
            f"`/{prefix} approve-spec apply` (set `{cfg.level_label_prefix}{spec.level}`), "
            f"`/{prefix} approve-spec keep` (keep `{have[0]}`) or `/{prefix} approve-spec L1|L2|L3`. "
            "The level never changes without that answer."
        )
    target: str | None = None
    if wanted.lower() == "apply":
        target = spec.level
    elif wanted.upper() in LEVELS:
        target = wanted.upper()
    add = [cfg.approved_label]
    remove = [cfg.refine_label] if issue.has_label(cfg.refine_label) else []
    if target is not None and (have is None or have[1] != target):
        add.append(f"{cfg.level_label_prefix}{target}")
        if have is not None:
            remove.append(have[0])
        decision = f"set to `{cfg.level_label_prefix}{target}`"
    elif have is not None:
        decision = f"kept `{have[0]}`"
    else:
        decision = "no level label set"
    approved = spec.model_copy(
        update={"status": "approved", "approved_by": actor, "level_decision": decision}
    )
    record = thread.spec.model_copy(update={"current": approved})
    interview = current.model_copy(update={"status": "approved"}).with_handled(key)
    return Plan(interview=interview, spec=record, add_labels=tuple(add), remove_labels=tuple(remove))


# --- the effects ---------------------------------------------------------------------------------------


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
            title=issue.title,
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
    without issue dependencies, the blockers are only listed in the spec."""
    recorded = {d.number for d in known}
    todo = [n for n in dict.fromkeys(wanted) if n not in recorded]
    if not todo:
        return []
    # DESIGN §3.9: what a body names is bounded. Each reference may cost a walk of the dependency graph and
    # a write; past the limit the rest are listed as skipped (a few by number, the others counted).
    limit = ctx.settings.limits.references_per_issue
    room = max(0, limit - sum(1 for d in known if d.state != "skipped"))
    todo, over = todo[:room], todo[room:]
    skipped = [
        iv.DepRecord(number=n, state="skipped", note=f"more than {limit} references in one issue")
        for n in over[:MAX_SKIPPED_SHOWN]
    ]
    if len(over) > MAX_SKIPPED_SHOWN:
        more = len(over) - MAX_SKIPPED_SHOWN
        skipped.append(iv.DepRecord(number=0, state="skipped", note=f"{more} more references were skipped"))
    if not todo:
        return skipped
    try:
        existing = set(await ctx.forge.list_blocked_by(ctx.repo, issue.number))
    except (NotFound, PermissionDenied, ValidationFailed):
        return [
            iv.DepRecord(number=n, state="listed", note="no issue dependencies here") for n in todo
        ] + skipped
    out: list[iv.DepRecord] = list(skipped)
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
    return out


async def _refusal(ctx: EventContext, issue: Issue) -> str | None:
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


async def _save_or_report(
    ctx: EventContext, compute: Callable[[Thread], Plan], thread: Thread
) -> Plan | None:
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


async def _start(ctx: EventContext, issue: Issue, *, key: str | None, by_command: bool) -> Plan | None:
    thread = await load(ctx, issue)
    known = thread.interview.deps if thread.interview else ()
    wanted = blocked_by_refs(issue.body)
    if thread.interview is not None:
        wanted = iv.wanted_blockers(issue.body, thread.interview)
    deps = await sync_dependencies(ctx, issue, wanted, known)
    cfg = ctx.settings.backlog
    return await _save_or_report(
        ctx, lambda t: plan_start(t, cfg, key=key, by_command=by_command, deps=deps), thread
    )


@plugin.on("issues", "labeled", "opened", "reopened", section="backlog")
async def on_refine_label(ctx: EventContext) -> None:
    """The ``refine`` label on a backlog item starts its refinement (bugs are the RA9 engine's)."""
    cfg = ctx.settings.backlog
    snapshot = ctx.event.issue
    if snapshot is None or snapshot.is_pull_request:
        return
    if ctx.event.label is not None and ctx.event.label.casefold() != cfg.refine_label.casefold():
        return
    if not any(label.casefold() == cfg.refine_label.casefold() for label in snapshot.labels):
        return
    issue = await ctx.forge.get_issue(ctx.repo, snapshot.number)
    if not issue.has_label(cfg.refine_label) or is_bug_report(
        issue.labels, issue.body, bug_label=cfg.bug_label
    ):
        return
    refusal = await _refusal(ctx, issue)
    if refusal is not None:
        await ctx.upsert_sticky(KIND_NOTICE, "refusal", refusal)
        return
    await _start(ctx, issue, key=None, by_command=False)


async def refine_command(ctx: CommandContext, issue: Issue) -> None:
    """``/refine`` on a backlog item (routed here by :mod:`handlers.refine_router`)."""
    refusal = await _refusal(ctx, issue)
    if refusal is not None:
        await ctx.reply(refusal)
        return
    thread = await load(ctx, issue)
    if thread.interview is not None and thread.interview.status == "approved":
        # An approved refinement is locked: only triage+ may start a new spec version.
        decision = await check(ctx.forge, ctx.repo, NEW_VERSION, actor=ctx.actor, author="")
        if not decision.allowed:
            raise CommandError(
                f"the refinement of #{issue.number} is approved and locked; only "
                f"{who_may(NEW_VERSION, forge=ctx.event.forge)} may start a new spec version with "
                f"{hints_for(ctx).cmd('refine')}."
            )
    plan = await _start(ctx, issue, key=ctx.reply_key, by_command=True)
    if plan is not None and plan.reply:
        await ctx.reply(plan.reply)


def hints_for(ctx: EventContext) -> Hints:
    """Command hints that match each command's permission here (default or overridden)."""
    permissions = {
        name: ctx.settings.permission(name, default) for name, default in DEFAULT_PERMISSIONS.items()
    }
    return Hints(prefix=ctx.prefix, forge=ctx.event.forge, permissions=permissions)


async def _backlog_issue(ctx: CommandContext) -> Issue:
    issue = await ctx.forge.get_issue(ctx.repo, ctx.number)
    if is_bug_report(issue.labels, issue.body, bug_label=ctx.settings.backlog.bug_label):
        raise CommandError(
            "this is a bug report: the bug-refinement engine (RA9) handles it, not the backlog interview."
        )
    return issue


def _answers_in(ctx: CommandContext) -> list[iv.Answer]:
    """Every ``/answer`` in the command's comment: one comment with several answers is one round."""
    out: list[iv.Answer] = []
    for command in parse_commands(ctx.comment.body, known=ctx.registry.short_names(), prefix=ctx.prefix):
        if command.name != "answer":
            continue
        parsed = iv.parse_answer(command.text)
        if parsed is not None:
            out.append(iv.Answer(f"{ctx.comment.id}:{parsed[0]}", parsed[0], parsed[1], ctx.actor))
    return out


@plugin.command(
    "answer",
    usage="answer <id> <text>",
    help="Answer a refinement question (the text may continue on the next lines).",
    permission=DEFAULT_PERMISSIONS["answer"],
    on_pulls=False,
    section="backlog",
)
async def answer_command(ctx: CommandContext) -> None:
    parsed = iv.parse_answer(ctx.command.text)
    if parsed is None:
        raise CommandError(
            f"usage: `/{ctx.prefix} answer <id> <text>`, e.g. `/{ctx.prefix} answer g2 Only admins`."
        )
    row_id, _ = parsed
    issue = await _backlog_issue(ctx)
    thread = await load(ctx, issue)
    current = thread.interview
    if current is None:
        raise _none_running(hints_for(ctx))
    if f"{ctx.comment.id}:{row_id}" in current.applied:
        return
    if current.status != "interviewing":
        raise CommandError(_not_interviewing(current, hints_for(ctx)))
    if current.ledger.row(row_id) is None:
        ids = ", ".join(r.id for r in current.ledger.rows) or "none"
        raise CommandError(f"there is no ledger row `{row_id}` (rows: {ids}).")
    answers = [a for a in _answers_in(ctx) if current.ledger.row(a.row_id) is not None]
    wanted = iv.wanted_blockers(issue.body, current)
    for answer in answers:
        wanted += [n for n in blocked_by_refs(answer.text) if n not in wanted]
    deps = await sync_dependencies(ctx, issue, wanted, current.deps)
    cfg = ctx.settings.backlog
    hints = hints_for(ctx)
    await _save_or_report(ctx, lambda t: plan_answers(t, answers, cfg, deps=deps, hints=hints), thread)


@plugin.command(
    "enough",
    usage="enough",
    help="End the refinement interview now; the spec is drafted with the open rows as Open Questions.",
    permission=DEFAULT_PERMISSIONS["enough"],
    on_pulls=False,
    section="backlog",
)
async def enough_command(ctx: CommandContext) -> None:
    issue = await _backlog_issue(ctx)
    cfg = ctx.settings.backlog
    hints = hints_for(ctx)
    await _save_or_report(
        ctx, lambda t: plan_enough(t, cfg, key=ctx.reply_key, hints=hints), await load(ctx, issue)
    )


@plugin.command(
    "approve-spec",
    usage="approve-spec [apply|keep|L1|L2|L3]",
    help="Approve the spec draft: locks it and sets the approved label; the argument answers the level "
    "question.",
    permission=DEFAULT_PERMISSIONS["approve-spec"],
    on_pulls=False,
    section="backlog",
)
async def approve_spec_command(ctx: CommandContext) -> None:
    if len(ctx.command.args) > 1:
        raise CommandError(f"usage: `/{ctx.prefix} approve-spec [apply|keep|L1|L2|L3]`.")
    choice = ctx.command.args[0] if ctx.command.args else None
    issue = await _backlog_issue(ctx)
    unresolved = await unresolved_forks(ctx, ctx.repo, ctx.number)
    if unresolved:
        first = unresolved[0]
        raise CommandError(
            f"the spec cannot be approved while design forks are not resolved: {', '.join(unresolved)}. "
            f"Record each decision with `/{ctx.prefix} decide {first} <resolution>` (or `--source <comment "
            "link>` for one made elsewhere) — the forks comment on this issue shows each one's state — then "
            f"approve again."
        )
    cfg = ctx.settings.backlog
    await _save_or_report(
        ctx,
        lambda t: plan_approve(
            t, cfg, key=ctx.reply_key, actor=ctx.actor, choice=choice, hints=hints_for(ctx)
        ),
        await load(ctx, issue),
    )


@plugin.command(
    "edit-spec",
    usage="edit-spec",
    help="Reopen the refinement interview for another round before approving.",
    permission=DEFAULT_PERMISSIONS["edit-spec"],
    on_pulls=False,
    section="backlog",
)
async def edit_spec_command(ctx: CommandContext) -> None:
    issue = await _backlog_issue(ctx)
    cfg = ctx.settings.backlog
    hints = hints_for(ctx)
    await _save_or_report(
        ctx, lambda t: plan_edit(t, cfg, key=ctx.reply_key, hints=hints), await load(ctx, issue)
    )


@plugin.command(
    "cancel-refine",
    usage="cancel-refine",
    help="Stop the refinement and discard the spec draft.",
    permission=DEFAULT_PERMISSIONS["cancel-refine"],
    on_pulls=False,
    section="backlog",
)
async def cancel_refine_command(ctx: CommandContext) -> None:
    issue = await _backlog_issue(ctx)
    cfg = ctx.settings.backlog
    hints = hints_for(ctx)
    await _save_or_report(
        ctx, lambda t: plan_cancel(t, cfg, key=ctx.reply_key, hints=hints), await load(ctx, issue)
    )
