"""The gate other capabilities ask (`is_issue_refined`): only an approved bug passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.forge import Issue
from handlers.bug_refinement.bot import is_issue_refined, refine_issue
from tests.backlog.fakes import FakeForge, event_context

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(
    ("document", "refined"),
    [((DATA / "bug-000101" / "bug.md").read_text(), True), ((DATA / "bug-000103.md").read_text(), False)],
    ids=["approved", "rejected"],
)
async def test_only_an_approved_bug_is_refined(document: str, refined: bool) -> None:
    forge = FakeForge(Issue(5, "bug", document, "open", "alice", ("bug", "refine")))
    ctx = event_context(forge)
    assert await is_issue_refined(ctx, 5) is False, "nothing recorded yet"
    await refine_issue(ctx, forge.issue)
    assert await is_issue_refined(ctx, 5) is refined
