"""What other capabilities decide for `/bugfix`, each read through ONE function here so the seams are plain:

- ``refinement_verdict``: the RA9 verdict Steward recorded on the bug (``handlers.bug_refinement``);
- ``story``: whether the issue is a story of a bug, and its own verdict's gate (``handlers.bug_refinement``);
- ``unresolved_forks``: the bug's design forks that are not resolved (``handlers.forks``' juror);
- ``bug_read``: the bug as its RA9 verdict reads it, the reporter's answers in comments in
  (``handlers.bug_refinement``);
- ``root_cause``: whether the root cause is evidenced on the hypotheses board, and which hypothesis the fix
  follows (``handlers.debug``). With the board switched off (``debug.enabled: false``) every bug counts as
  evidenced and the fix quotes section 6 of the bug, as before the board existed.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.commands.context import EventContext
from bot.forge import Comment, Issue, RepoRef
from handlers.bug_refinement.api import (
    BUG_SECTION_NAMES,
    Document,
    RecordedVerdict,
    bug_as_read,
    find_sections,
    story_gate,
    story_refusal,
    strip_html_comments,
    trusted_verdict,
)
from handlers.bugfix.gate import RootCause
from handlers.bugfix.regression_slot import bug_document
from handlers.debug import api as debug_api
from handlers.forks import api as forks_api


async def refinement_verdict(
    ctx: EventContext, comments: Sequence[Comment], *, number: int
) -> RecordedVerdict | None:
    """The RA9 verdict Steward recorded in its verdict comment on bug ``number`` (None: none yet, or one whose
    record does not verify: its signed block pins the visible YAML, so a verdict edited by hand counts as
    none — ``handlers.bug_refinement.api.trusted_verdict``)."""
    return await trusted_verdict(ctx, list(comments), number)


async def story(
    ctx: EventContext, comments: Sequence[Comment], *, number: int, prefix: str
) -> tuple[bool, str | None]:
    """Whether issue ``number`` is a story Steward recorded, and why work on it is refused (None: it may go
    on): work on a story waits until its own verdict is approved (``handlers.bug_refinement.api``)."""
    gate = await story_gate(ctx, number, comments)
    if gate is None:
        return False, None
    return True, None if gate.refined else story_refusal(gate, prefix)


async def unresolved_forks(ctx: EventContext, repo: RepoRef, number: int) -> tuple[str, ...]:
    """The names of the bug's unresolved design forks (e.g. ``("F1", "F3")``); () when none are open or the
    repository switched decision provenance off."""
    if not ctx.settings.forks.enabled:
        return ()
    return await forks_api.unresolved_forks(ctx, repo, number)


async def bug_read(ctx: EventContext, bug: Issue, comments: Sequence[Comment] | None = None) -> Document:
    """The bug as its RA9 verdict reads it: the description read with the repository's issue templates, and
    the answers its reporter gave in comments (``handlers.bug_refinement.api.bug_as_read``). What the pull
    request and the fix's summary quote of the bug is read from this, so an answer given only in a comment
    (what happened, say) reaches them."""
    return await bug_as_read(ctx, bug, comments)


def hypothesis_of(body: str | Document) -> str:
    """Section 6 of the bug (the root-cause hypothesis) as written, without its HTML comments; from the bug as
    its verdict reads it (``bug_read``) where the caller has it, else from the description."""
    doc = bug_document(body)
    section = find_sections(doc, BUG_SECTION_NAMES).get(6)
    if section is None:
        return ""
    text = strip_html_comments(doc.section_text(section))
    lines = [line for line in text.splitlines() if line.strip() and line.strip() != "---"]
    return "\n".join(lines).strip()[:2000]


async def root_cause(
    ctx: EventContext,
    repo: RepoRef,
    bug: Issue,
    choice: str | None = None,
    document: Document | None = None,
) -> RootCause:
    """Whether the bug's root cause is evidenced, and the hypothesis the fix follows (``choice``: the one
    `/bugfix H2` names): no confirmed hypothesis, an escalation, several confirmed and none chosen, or a
    chosen one that is not confirmed give ``RootCause(False, detail=…)``; the confirmed one gives its id,
    title, statement and `path:line` references. With the board off, the hypothesis is section 6 of
    ``document`` (the bug as its verdict reads it, ``bug_read``) when given, else of the description."""
    answer = await debug_api.root_cause(ctx, repo, bug.number, choice)
    if answer.outcome == "off":
        return RootCause(True, hypothesis_of(document if document is not None else bug.body))
    if not answer.allowed:
        return RootCause(False, detail=answer.message)
    where = ", ".join(f"`{loc}`" for loc in answer.locations)
    text = f"{answer.hypothesis}: {answer.title} — {answer.statement}".strip()
    return RootCause(
        True,
        text + (f" (evidence at {where})" if where else ""),
        files=answer.evidence_files,
        pending=answer.pending,
        refuted=answer.refuted,
    )
