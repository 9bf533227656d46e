"""What other capabilities decide for `/bugfix`, each read through ONE function here so the seams are plain:

- ``refinement_verdict``: the RA9 verdict Steward recorded on the bug (``handlers.bug_refinement``);
- ``unresolved_forks``: the bug's design forks still open (wired to ``handlers.forks`` when it lands);
- ``root_cause``: whether the root cause is evidenced, and which hypothesis the fix follows (wired to
  ``handlers.debug`` when it lands).

Until the forks and debug capabilities are merged, the last two answer "nothing open" and "evidenced, with the
hypothesis of section 6", so the gate and the status behave as before those capabilities existed.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.context import EventContext
from bot.forge import Comment, Issue, RepoRef
from bot.sticky import find
from handlers.bug_refinement.document import (
    BUG_SECTION_NAMES,
    find_sections,
    parse_document,
    strip_html_comments,
)
from handlers.bug_refinement.rules import RecordedVerdict, read_verdict_block
from handlers.bugfix.gate import RootCause

# The bug refinement's verdict comment (``handlers.bug_refinement.bot.VERDICT_KIND``).
VERDICT_KIND = "ra9-verdict"


def refinement_verdict(comments: Sequence[Comment], *, bot_login: str, number: int) -> RecordedVerdict | None:
    """The RA9 verdict Steward recorded in its verdict comment on bug ``number`` (None: none yet)."""
    comment = find(list(comments), bot_login=bot_login, kind=VERDICT_KIND, key=str(number))
    return read_verdict_block(comment.body) if comment is not None else None


async def unresolved_forks(ctx: EventContext, repo: RepoRef, number: int) -> tuple[str, ...]:
    """The names of the bug's unresolved design forks (e.g. ``("F1", "F3")``); () when none are open.

    Wired to handlers.forks when it lands:
    ``return await handlers.forks.api.unresolved_forks(ctx, repo, number)``.
    """
    return ()


def hypothesis_of(body: str) -> str:
    """Section 6 of the bug (the root-cause hypothesis) as written, without its HTML comments."""
    doc = parse_document(body or "")
    section = find_sections(doc, BUG_SECTION_NAMES).get(6)
    if section is None:
        return ""
    text = strip_html_comments(doc.section_text(section))
    lines = [line for line in text.splitlines() if line.strip() and line.strip() != "---"]
    return "\n".join(lines).strip()[:2000]


async def root_cause(ctx: EventContext, repo: RepoRef, bug: Issue, choice: str | None = None) -> RootCause:
    """Whether the bug's root cause is evidenced, and the hypothesis the fix follows (``choice``: the one
    `/bugfix H2` names). Until the hypotheses board exists every bug counts as evidenced, with section 6.

    Wired to handlers.debug when it lands (``handlers.debug.api``): a pending or refuted hypothesis gives
    ``RootCause(False, detail=…)``; the confirmed one (or ``choice``) gives its text.
    """
    return RootCause(True, hypothesis_of(bug.body))
