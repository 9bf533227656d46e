"""Backlog refinement on the forge: the ``refine`` label, ``/answer``, ``/enough``, ``/approve-spec``,
``/edit-spec``, ``/cancel-refine`` (and ``/refine`` through :mod:`handlers.core.refine`).

The rules are pure (``plan_*`` in :mod:`handlers.backlog.plan` and the modules they use); the effects are
in :mod:`handlers.backlog.effects`; this module holds the label handler and the commands. Everything the
bot decides lives in two sticky comments — the interview (ledger, rounds, probe-scans) and the spec
(current version and history) — and in labels; the author's description is never edited. Each save
re-reads both comments right before writing: if another job changed them since this one read them, the
plan is computed once more from what is there now, and if they moved again the conflict is reported
instead of overwriting.
"""

from __future__ import annotations

import re

from bot.commands.context import CommandContext, CommandError, EventContext
from bot.commands.grammar import parse_commands
from bot.commands.permissions import check, who_may
from bot.commands.registry import Registry
from bot.forge import Issue
from bot.records import neutralise
from handlers.backlog import interview as iv
from handlers.backlog.command_hints import DEFAULT_PERMISSIONS, NEW_VERSION
from handlers.backlog.effects import (
    KIND_NOTICE,
    Conflict,
    hints_for,
    load,
    refusal_for,
    save,
    save_or_report,
    start,
    sync_dependencies,
)
from handlers.backlog.gaps import blocked_by_refs
from handlers.backlog.plan import (
    Plan,
    Thread,
    none_running,
    not_interviewing,
    plan_answers,
    plan_approve,
    plan_cancel,
    plan_edit,
    plan_enough,
    plan_start,
)
from handlers.bug_refinement.api import is_bug_report
from handlers.debug import api as debug_api
from handlers.forks.api import decision_texts, unresolved_forks

# This module's commands and events; `handlers.build_registry()` includes them (importing registers nothing).
plugin = Registry()


def register(registry: Registry) -> None:
    registry.include(plugin)


# The rules and effects this module's commands use, as they were importable from here before the split.
__all__ = [
    "CommandError",
    "Conflict",
    "Plan",
    "Thread",
    "load",
    "plan_answers",
    "plan_approve",
    "plan_cancel",
    "plan_edit",
    "plan_enough",
    "plan_start",
    "save",
    "sync_dependencies",
]


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
    refusal = await refusal_for(ctx, issue)
    if refusal is not None:
        await ctx.upsert_sticky(KIND_NOTICE, "refusal", refusal)
        return
    await start(ctx, issue, key=None, by_command=False)


async def refine_command(ctx: CommandContext, issue: Issue) -> None:
    """``/refine`` on a backlog item (routed here by :mod:`handlers.core.refine`)."""
    refusal = await refusal_for(ctx, issue)
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
    plan = await start(ctx, issue, key=ctx.reply_key, by_command=True)
    if plan is not None and plan.reply:
        await ctx.reply(plan.reply)


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
        raise none_running(hints_for(ctx))
    if f"{ctx.comment.id}:{row_id}" in current.applied:
        return
    if current.status != "interviewing":
        raise CommandError(not_interviewing(current, hints_for(ctx)))
    if current.ledger.row(row_id) is None:
        ids = ", ".join(r.id for r in current.ledger.rows) or "none"
        raise CommandError(f"there is no ledger row {neutralise.code(row_id, 40)} (rows: {ids}).")
    answers = [a for a in _answers_in(ctx) if current.ledger.row(a.row_id) is not None]
    wanted = iv.wanted_blockers(issue.body, current)
    for answer in answers:
        wanted += [n for n in blocked_by_refs(answer.text) if n not in wanted]
    deps = await sync_dependencies(ctx, issue, wanted, current.deps)
    cfg = ctx.settings.backlog
    hints = hints_for(ctx)
    await save_or_report(ctx, lambda t: plan_answers(t, answers, cfg, deps=deps, hints=hints), thread)


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
    await save_or_report(
        ctx, lambda t: plan_enough(t, cfg, key=ctx.reply_key, hints=hints), await load(ctx, issue)
    )


@plugin.command(
    "approve-spec",
    usage="approve-spec [apply|keep|L1|L2|L3] [--ungrounded <reason>] [--accept-degraded <reason>]",
    help="Approve the spec draft: locks it and sets the approved label; the argument answers the level "
    "question. Paths the spec cites must exist (unless `--ungrounded <reason>`), and a spec that stopped "
    "degraded needs `--accept-degraded <reason>`.",
    permission=DEFAULT_PERMISSIONS["approve-spec"],
    on_pulls=False,
    section="backlog",
)
async def approve_spec_command(ctx: CommandContext) -> None:
    parts = _FLAGS.split(ctx.command.text)
    args = parts[0].split()
    reasons = {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    if len(args) > 1 or any(not reason for reason in reasons.values()):
        raise CommandError(
            f"usage: `/{ctx.prefix} approve-spec [apply|keep|L1|L2|L3] [--ungrounded <reason>] "
            "[--accept-degraded <reason>]`."
        )
    choice = args[0] if args else None
    issue = await _backlog_issue(ctx)
    if "accept-degraded" not in reasons:
        await _check_not_degraded(ctx, issue)
    if "ungrounded" not in reasons:
        await _check_grounding(ctx, issue)
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
    await save_or_report(
        ctx,
        lambda t: plan_approve(
            t, cfg, key=ctx.reply_key, actor=ctx.actor, choice=choice, hints=hints_for(ctx)
        ),
        await load(ctx, issue),
    )


_FLAGS = re.compile(r"(?:^|\s)--(ungrounded|accept-degraded)\b")


async def _check_not_degraded(ctx: CommandContext, issue: Issue) -> None:
    """A spec whose interview stopped degraded (the round cap reached with a core dimension open) is not
    approved as it is: it recommends splitting the card or exploring first; the approver does that, or says
    why it is good enough (`--accept-degraded <reason>`, which stays in their comment)."""
    spec = (await load(ctx, issue)).spec.current
    if spec is None or spec.verdict != "STOP-DEGRADED" or spec.status != "draft":
        return
    raise CommandError(
        "this spec stopped degraded — the interview reached its round cap with a core question (what, scope "
        "or acceptance) still open — so it is not approved as it is. Its recommendation: split the card into "
        "smaller items, or run an exploration spike first, then refine again "
        f"(`/{ctx.prefix} edit-spec` reopens the interview). To approve it anyway, say why: "
        f"`/{ctx.prefix} approve-spec --accept-degraded <reason>`."
    )


async def _check_grounding(ctx: CommandContext, issue: Issue) -> None:
    """Seed 003's grounding check before sign-off: the paths and `path:line` places the spec draft and the
    decisions of the issue's design forks cite as facts about the code must exist at the default branch's
    head; the approver fixes the spec or says why
    not (`--ungrounded <reason>`, which stays in their comment)."""
    if not ctx.settings.debug.enabled:
        return
    spec = (await load(ctx, issue)).spec.current
    if spec is None:
        return
    decided = await decision_texts(ctx, ctx.repo, issue.number)
    texts = [spec.goal, *spec.requirements, *(q.answer or "" for q in spec.qa), *decided]
    missing = await debug_api.missing_places(ctx, texts)
    if missing:
        listed = "; ".join(missing[:8]) + (f" (and {len(missing) - 8} more)" if len(missing) > 8 else "")
        raise CommandError(
            f"the spec cites code that does not exist — {listed}. Fix the spec "
            f"(`/{ctx.prefix} edit-spec` reopens it) or, if it names code still to be written, approve with "
            f"the reason: `/{ctx.prefix} approve-spec --ungrounded <reason>`."
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
    await save_or_report(
        ctx,
        lambda t: plan_edit(t, cfg, key=ctx.reply_key, actor=ctx.actor, hints=hints),
        await load(ctx, issue),
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
    await save_or_report(
        ctx,
        lambda t: plan_cancel(t, cfg, key=ctx.reply_key, actor=ctx.actor, hints=hints),
        await load(ctx, issue),
    )
