"""Root-cause discipline in the forge: the board's commands, and the events that re-derive it.

- `/hypothesis`, `/evidence`, `/confirm`, `/refute`, `/inconclusive`, `/resume-debug` on a refined bug
  (refused with `BUG_NOT_REFINED` otherwise) or an approved story of one (`STORY_NOT_REFINED` otherwise)
  record an entry and re-render the board.
- An edited or deleted comment re-derives the board (its evidence is withdrawn); so does `/refresh`
  (through ``issues.edited``) and a bugfix pull request's events (the FIX row).
"""

from __future__ import annotations

from typing import Literal

from bot.commands.context import CommandContext, CommandError, EventContext
from bot.commands.registry import Registry
from handlers.bug_refinement.api import is_issue_refined, story_gate, story_refusal
from handlers.debug.board import (
    BUG_NOT_REFINED,
    Refused,
    Source,
    add_evidence,
    add_hypothesis,
    add_rank,
    add_resume,
    add_verdict,
    recorded,
)
from handlers.debug.effects import (
    GROUNDED_COMMANDS,
    INVESTIGATING,
    LABELS,
    ROOT_CAUSE,
    grounder,
    load,
    now_utc,
    refresh,
    save,
    stamp,
)

# This module's commands and events; `handlers.build_registry()` includes them (importing registers nothing).
plugin = Registry()


def register(registry: Registry) -> None:
    registry.include(plugin)


SECTION = "debug"


def _investigated(labels: tuple[str, ...]) -> bool:
    """Whether a bug carries a board's label (so events on other issues cost no reads)."""
    return any(label.casefold() in LABELS for label in labels)


async def _run(ctx: CommandContext, name: str) -> None:
    number = ctx.number
    story = await story_gate(ctx, number)
    if story is not None:
        if not story.refined:  # a story's own verdict gates work on it (issue 36 §4)
            raise CommandError(story_refusal(story, ctx.prefix))
    elif not await is_issue_refined(ctx, number):
        raise CommandError(
            f"this bug is not refined yet (`{BUG_NOT_REFINED}`): an investigation starts on a bug report "
            "whose "
            f"refinement verdict is approved. Fix what the verdict comment asks, then `/{ctx.prefix} refine`."
        )
    loaded = await load(ctx, number)
    text = ctx.command.text
    found = next((c for c in loaded.comments if c.id == ctx.comment.id), None)
    source = Source(
        author=ctx.actor,
        at=(found.created_at if found and found.created_at else stamp(now_utc())),
        comment=ctx.comment.id,
        occurrence=ctx.occurrence,
        url=(
            found.html_url
            if found and found.html_url
            else f"{loaded.issue.html_url}#issuecomment-{ctx.comment.id}"
        ),
    )
    if recorded(loaded.board, name, text, source) is not None:
        await save(ctx, loaded)  # a replay: the entry is there; only re-derive
        return
    board, args, p = loaded.board, ctx.command.args, ctx.prefix
    try:
        if name == "hypothesis":
            entry = add_hypothesis(board, text, source, p)
        elif name == "evidence":
            entry = add_evidence(board, args, text, source, p)
        elif name == "resume-debug":
            entry = add_resume(board, text, source, p)
        elif name == "rank":
            entry = add_rank(board, args, text, source, p)
        else:
            kind: Literal["confirm", "refute", "inconclusive"] = (
                "confirm" if name == "confirm" else "refute" if name == "refute" else "inconclusive"
            )
            entry = add_verdict(board, kind, args, text, source, p)
        # Evidence points at code that exists: every place it names is checked against the repository.
        checked = name in GROUNDED_COMMANDS and entry.refs
        grounded = await grounder(ctx).ground(text, entry.refs, p) if checked else []
    except Refused as exc:
        raise CommandError(str(exc)) from None
    await save(ctx, loaded, entry, grounded)


@plugin.command(
    "hypothesis",
    usage="hypothesis <title>: <statement naming path:line>",
    help="On a refined bug: add a hypothesis H<n> to the root-cause board (aim for 3–5, most likely first).",
    permission="write",
    on_pulls=False,
    section=SECTION,
)
async def hypothesis_command(ctx: CommandContext) -> None:
    await _run(ctx, "hypothesis")


@plugin.command(
    "evidence",
    usage="evidence H1 for|against <what you found>",
    help="Append evidence for or against a hypothesis to the root-cause board.",
    permission="write",
    on_pulls=False,
    section=SECTION,
)
async def evidence_command(ctx: CommandContext) -> None:
    await _run(ctx, "evidence")


@plugin.command(
    "confirm",
    usage="confirm H1 <evidence with path:line>",
    help="Confirm a hypothesis as the root cause; the evidence must point at code (`path:line` or a "
    "line link).",
    permission="write",
    on_pulls=False,
    section=SECTION,
)
async def confirm_command(ctx: CommandContext) -> None:
    await _run(ctx, "confirm")


@plugin.command(
    "refute",
    usage="refute H1 <evidence>",
    help="Refute a hypothesis, with the evidence against it.",
    permission="write",
    on_pulls=False,
    section=SECTION,
)
async def refute_command(ctx: CommandContext) -> None:
    await _run(ctx, "refute")


@plugin.command(
    "inconclusive",
    usage="inconclusive H1 <why>",
    help="Mark a hypothesis inconclusive, saying why.",
    permission="write",
    on_pulls=False,
    section=SECTION,
)
async def inconclusive_command(ctx: CommandContext) -> None:
    await _run(ctx, "inconclusive")


@plugin.command(
    "rank",
    usage="rank H2 1",
    help="Move a hypothesis to a place in the board's order (1: most likely); the others shift.",
    permission="write",
    on_pulls=False,
    section=SECTION,
)
async def rank_command(ctx: CommandContext) -> None:
    await _run(ctx, "rank")


@plugin.command(
    "resume-debug",
    usage="resume-debug <guidance>",
    help="After an escalation: record your guidance and reopen the investigation (the fix is blocked "
    "until then).",
    permission="write",
    on_pulls=False,
    section=SECTION,
)
async def resume_command(ctx: CommandContext) -> None:
    await _run(ctx, "resume-debug")


@plugin.on("issue_comment", "edited", "deleted", section=SECTION)
async def on_comment_changed(ctx: EventContext) -> None:
    """A comment edited or deleted: the evidence it held is withdrawn (the log keeps it)."""
    issue = ctx.event.issue
    if issue is None or issue.is_pull_request or not _investigated(issue.labels):
        return
    await refresh(ctx, issue.number)


@plugin.on("issues", "edited", checks="the root-cause board, when the bug has one", section=SECTION)
async def on_issue_edited(ctx: EventContext) -> None:
    """`/refresh` and `steward reconcile` re-derive the board this way (time-outs, escalation, fix rows)."""
    issue = ctx.event.issue
    if issue is None or issue.is_pull_request or not _investigated(issue.labels):
        return
    await refresh(ctx, ctx.number)


@plugin.on("pull_request", "opened", "reopened", "synchronize", "closed", "edited", section=SECTION)
async def on_bugfix_pull(ctx: EventContext) -> None:
    """A bugfix pull request (`<bugfix.branch_prefix><n>-…`) changed: the bug's FIX row follows."""
    pull = ctx.event.pull
    prefix = ctx.settings.bugfix.branch_prefix
    if pull is None or not pull.head_ref.startswith(prefix):
        return
    digits = pull.head_ref[len(prefix) :].split("-", 1)[0]
    if not digits.isdigit() or len(digits) > 9:
        return
    await refresh(ctx, int(digits))


@plugin.reconcile(
    "debug",
    checks="the root-cause board of every bug under investigation (hypotheses pending too long escalate)",
    section=SECTION,
)
async def reconcile_boards(ctx: EventContext) -> None:
    """`steward reconcile` and its periodic job: time passes without events, so a hypothesis pending past
    `debug.pending_timeout_hours` is counted here, and an escalation that fell due is made."""
    numbers: set[int] = set()
    for label in (INVESTIGATING, ROOT_CAUSE):
        numbers |= {issue.number for issue in await ctx.forge.list_issues(ctx.repo, labels=[label])}
    for number in sorted(numbers):
        async with ctx.holding_unless_busy(number) as held:
            if held:
                await refresh(ctx, number)
