"""The pure rules of the RA9 bot: story links, label mirroring, the verdict comment."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.config.settings import BugRefinementSettings
from handlers.bug_refinement.plan import label_plan, story_numbers
from handlers.bug_refinement.render import render_bug_comment
from handlers.bug_refinement.rules import read_verdict_block, refine_bug

SETTINGS = BugRefinementSettings()


def test_stories_are_the_task_list_under_the_stories_heading() -> None:
    body = (
        "Intro #1\n\n## Stories\n\n- [ ] #12\n- [x] #7 done\n* [ ] #12 again\n- #9 not a task\n\n"
        "## Notes\n- [ ] #99\n"
    )
    assert story_numbers(body) == [12, 7]
    assert story_numbers("## Histórias\n- [ ] #3\n") == [3]
    assert story_numbers("no stories here - [ ] #4") == []


@given(st.text())
def test_story_links_never_crash(body: str) -> None:
    assert all(n >= 0 for n in story_numbers(body))


def test_labels_mirror_exactly_one_state() -> None:
    plan = label_plan(("bug", "refinement:pending", "refine"), "needs-info", SETTINGS)
    assert plan.add == ("refinement:needs-info",) and plan.remove == ("refinement:pending",)
    same = label_plan(("Refinement:Approved",), "approved", SETTINGS)
    assert same.add == () and same.remove == ()
    # Only a verdict label the issue carries is taken off: one opened already labelled `refine` was never
    # stamped pending, so a new verdict on it is one label write, not two.
    fresh = label_plan(("bug", "refine"), "needs-triage", SETTINGS)
    assert fresh.add == ("refinement:needs-triage",) and fresh.remove == ()
    # Issue 34 §3: the old red `rejected` label is taken off when the issue is refined again.
    upgrade = label_plan(("bug", "refinement:rejected"), "needs-info", SETTINGS)
    assert upgrade.add == ("refinement:needs-info",) and upgrade.remove == ("refinement:rejected",)
    for state in ("pending", "needs-info", "needs-triage", "approved"):
        assert SETTINGS.color_for(state) != "d73a4a" and "reject" not in SETTINGS.description_for(state)


def test_the_comment_carries_the_exact_verdict_block() -> None:
    verdict = refine_bug("# Nothing\n", bug_id="o/r#1", refined_at="2026-01-02T03:04:05Z")
    text = render_bug_comment(verdict)
    recorded = read_verdict_block(text)
    assert recorded is not None and recorded.status == "rejected"
    assert recorded.verdict_hash == verdict.verdict_hash and recorded.blockers == verdict.blocker_codes
    assert all(f"`{code}`" in text for code in verdict.blocker_codes)
