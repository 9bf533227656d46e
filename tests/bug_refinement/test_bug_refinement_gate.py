"""The gate other capabilities ask (`is_issue_refined`): only an approved bug passes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from bot.forge import Issue
from handlers.bug_refinement.effects import is_issue_refined, refine_issue
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


async def test_a_verdict_read_again_is_not_parsed_again_and_an_edited_one_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every event on a bug asks its recorded verdict: the comment's YAML is parsed once per text."""
    import yaml

    from handlers.bug_refinement import verdict

    parsed: list[str] = []
    real = yaml.safe_load

    def counting(text: str) -> object:
        parsed.append(text)
        return real(text)

    monkeypatch.setattr(verdict.yaml, "safe_load", counting)
    forge = FakeForge(
        Issue(6, "bug", (DATA / "bug-000101" / "bug.md").read_text(), "open", "alice", ("bug",))
    )
    ctx = event_context(forge)
    await refine_issue(ctx, forge.issue)
    parsed.clear()
    for _ in range(3):
        assert await is_issue_refined(ctx, 6) is True
    assert len(parsed) <= 1, "the same verdict comment, parsed at most once"
    index = next(i for i, c in enumerate(forge.comments) if "status: approved" in c.body)
    edited = forge.comments[index].body.replace("status: approved", "status: rejected")
    forge.comments[index] = replace(forge.comments[index], body=edited)
    assert await is_issue_refined(ctx, 6) is False, "an edited verdict is read again (and no longer trusted)"
