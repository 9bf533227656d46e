"""What other capabilities ask of the root-cause board: may a fix start, and for which hypothesis.

``/bugfix`` (and the `steward/regression-first` status of a bugfix pull request) calls ``root_cause``:

    answer = await root_cause(ctx, repo, number, chosen)     # chosen: "H2" from `/bugfix H2`, or None
    if not answer.allowed:
        refuse(answer.code, answer.message)                  # ROOT_CAUSE_NOT_EVIDENCED
    else:
        fix_for(answer.hypothesis, answer.locations)         # None, () when the board is switched off

The decision is ``decide`` (pure); ``root_cause`` reads the board and, when an escalation fell due while
nobody wrote (a hypothesis timed out), records it first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bot.commands.context import EventContext
from bot.forge import RepoRef
from handlers.debug.board import ROOT_CAUSE_NOT_EVIDENCED, Board, Refused, escalation_due, parse_id
from handlers.debug.effects import LABELS, NEEDS_HUMAN, grounder, load, read_board, save
from handlers.debug.grounding import find_paths
from handlers.debug.locations import find_locations

Outcome = Literal["evidenced", "off", "not_evidenced", "escalated", "ambiguous", "not_confirmed"]


@dataclass(frozen=True)
class RootCauseAnswer:
    """Whether a fix may start. ``evidenced``: ``hypothesis`` ("H2") is confirmed with ``locations``
    (`path:line`). ``off``: the repository switched the board off (`debug.enabled: false`), nothing is
    required. Every other outcome is a refusal with ``code`` ROOT_CAUSE_NOT_EVIDENCED and a ``message`` for
    the person who asked: ``not_evidenced`` (no hypothesis confirmed), ``escalated`` (every hypothesis
    failed; `needs-human`, blocked until `/resume-debug`), ``ambiguous`` (several confirmed, none chosen),
    ``not_confirmed`` (the chosen one is not confirmed)."""

    outcome: Outcome
    message: str
    hypothesis: str | None = None
    title: str = ""
    statement: str = ""
    locations: tuple[str, ...] = ()
    code: str | None = None
    # The files the confirmed hypothesis's evidence names (its confirmation and the evidence for it; each
    # place checked to exist when it was cited): what a fix may touch (``bugfix``'s scope check).
    evidence_files: tuple[str, ...] = ()
    # Hypotheses still pending on the board ("H2"): seed 004's wave order — `/bugfix` waits until each is
    # confirmed, refuted or inconclusive (one pending past `debug.pending_timeout_hours` counts as
    # inconclusive). The regression-first status of a fix already started does not wait for them.
    pending: tuple[str, ...] = ()
    # The refuted hypotheses, each as "H2 Title — its strongest evidence" (for the closing summary).
    refuted: tuple[str, ...] = ()

    @property
    def allowed(self) -> bool:
        return self.outcome in ("evidenced", "off")


def _refuse(outcome: Outcome, message: str) -> RootCauseAnswer:
    return RootCauseAnswer(outcome, message, code=ROOT_CAUSE_NOT_EVIDENCED)


def decide(board: Board, chosen: str | None, *, prefix: str = "steward") -> RootCauseAnswer:
    """The answer for ``board`` as it stands (an escalation that is due counts as made)."""
    if board.escalated is not None or escalation_due(board):
        return _refuse(
            "escalated",
            "every hypothesis on this bug failed and the investigation was handed to a human "
            "(`needs-human`). "
            f"No fix starts until someone writes `/{prefix} resume-debug <guidance>` and a hypothesis is "
            "confirmed.",
        )
    confirmed = board.confirmed
    if not confirmed:
        where = (
            f"{len(board.hypotheses)} hypothes{'is' if len(board.hypotheses) == 1 else 'es'} on the board, "
            "none confirmed"
            if board.hypotheses
            else "no hypothesis on the board yet"
        )
        return _refuse(
            "not_evidenced",
            f"the root cause has no evidence yet ({where}). Section 6 of the bug is a hypothesis, not "
            "evidence: "
            f"add hypotheses (`/{prefix} hypothesis <title>: <statement>`) and confirm one with evidence "
            "that "
            f"points at code (`/{prefix} confirm H1 src/auth/login.py:42 …`).",
        )
    if chosen is not None and chosen.strip():
        number = parse_id(chosen)
        target = board.get(number) if number is not None else None
        if target is None or target.status != "confirmed":
            labels = ", ".join(h.label for h in confirmed)
            what = (
                f"{chosen.strip()} is not a hypothesis on this bug"
                if target is None
                else f"{target.label} is {target.status}"
            )
            return _refuse(
                "not_confirmed",
                f"{what}; a fix must be for a confirmed hypothesis ({labels}), e.g. "
                f"`/{prefix} bugfix {confirmed[0].label}`.",
            )
    elif len(confirmed) > 1:
        labels = ", ".join(h.label for h in confirmed)
        return _refuse(
            "ambiguous",
            f"several hypotheses are confirmed ({labels}): name the one this fix is for, e.g. "
            f"`/{prefix} bugfix {confirmed[0].label}`.",
        )
    else:
        target = confirmed[0]
    where = ", ".join(f"`{loc}`" for loc in target.locations[:4])
    files = [ref.rsplit(":", 1)[0] for entry in target.evidence_for for ref in entry.refs]
    return RootCauseAnswer(
        "evidenced",
        f"root cause evidenced by {target.label}" + (f" ({where})" if where else "") + ".",
        hypothesis=target.label,
        title=target.title,
        statement=target.statement,
        locations=target.locations,
        evidence_files=tuple(dict.fromkeys(files)),
        pending=tuple(h.label for h in board.hypotheses if h.status == "pending"),
        refuted=tuple(
            f"{h.label} {h.title} — {strongest.text if (strongest := h.strongest()) else 'refuted'}"
            for h in board.hypotheses
            if h.status == "refuted"
        ),
    )


async def root_cause(ctx: EventContext, repo: RepoRef, number: int, chosen: str | None) -> RootCauseAnswer:
    """Whether a fix of bug ``number`` may start (see ``RootCauseAnswer``). Reads the bug's thread; writes
    only an escalation that fell due (and the board it changes), once."""
    if not ctx.settings.debug.enabled:
        return RootCauseAnswer("off", "the root-cause board is switched off on this repository.")
    loaded = await read_board(
        ctx.forge,
        repo,
        number,
        bot_login=ctx.me.login,
        settings=ctx.settings,
        registry=ctx.registry,
        prefix=ctx.prefix,
        verifier=await ctx.verifier(repo),
        grounder=grounder(ctx, repo),
    )
    board = loaded.board
    if loaded.board_comment is not None and (escalation_due(board) or loaded.changed) and repo == ctx.repo:
        async with ctx.holding(number):
            board = await save(ctx, await load(ctx, number))
    return decide(board, chosen, prefix=ctx.prefix)


async def missing_places(ctx: EventContext, texts: Sequence[str]) -> tuple[str, ...]:
    """The places ``texts`` cite as facts about the code — `path:line` and bare repository paths — that the
    repository does not have at the default branch's head, each as a sentence with the reason (and the
    nearest line for a line past the end). For a spec's grounding check before approval (seed 003)."""
    text = "\n".join(texts)
    check = grounder(ctx)
    problems: list[str] = []
    places = [loc for loc in find_locations(text) if not loc.url]
    if places:
        try:
            await check.ground(text, [str(loc) for loc in places], ctx.prefix)
        except Refused as exc:
            problems += [p.sentence() for p in exc.problems] or [str(exc)]
    branch, head = await check.head()
    for path in find_paths(text):
        if await check.file(path, head) is None:
            moved = await check.moved(path, head)
            near = f" — was it moved? the nearest is `{moved[0]}`" if moved else ""
            problems.append(f"`{path}`: there is no file `{path}` at `{branch}`{near}")
    return tuple(problems)


# The labels the root-cause board sets and removes itself (`debug:*`, `needs-human`).
MANAGED_LABELS: tuple[str, ...] = tuple(LABELS)
# The label of a bug whose investigation was handed to a person (the overview lists them).
ESCALATED_LABEL: str = NEEDS_HUMAN
