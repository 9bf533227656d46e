"""Where and under which name a passing label was put on, end to end on both forges (issue 35 items 6 and 8).

- A scenario's `fieldtest:pass` counts only when it was put on while the scenario was in the milestone being
  gated: a writer moving a scenario that passed in another milestone into this one passes nothing (GitHub's
  `milestoned`/`demilestoned` issue events by title, Gitea's timeline entries of type "milestone" by id).
- Gitea's timeline shows a label as it is now: renaming a label a maintainer once put on (`looks-good`) to
  the passing name does not make it a pass (GitHub's events keep the name the label had, so there it never
  was one)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import Steward
from tests.e2e.test_milestones_e2e import FAST, close_milestone, dashboards, data_of, milestone_state

pytestmark = pytest.mark.handler_settings(milestones=FAST)


def board_of(steward: Steward, repo: str, key: int) -> dict[str, Any]:
    [board] = [b for b in dashboards(steward, repo) if data_of(b).get("key") == key]
    return board


def test_a_scenario_passed_in_another_milestone_does_not_pass_this_one(steward: Steward) -> None:
    """Reproduces item 6's second half: on main the scenario's pass from v0.9 let v1.0 close (the gate read
    only who applied the label, not where the issue was then)."""
    m, t = steward.maintainer, steward.triager
    repo = steward.new_repo()
    old = m.create_milestone(repo, "v0.9")
    new = m.create_milestone(repo, "v1.0")
    scenario = m.open_issue(repo, "Scenario: export", labels=["fieldtest"], milestone=old)
    m.edit_issue(repo, scenario, state="closed")
    steward.settle()
    m.add_labels(repo, scenario, ["fieldtest:pass"])
    work = m.open_issue(repo, "Work", milestone=new)
    m.edit_issue(repo, work, state="closed")
    steward.settle()
    assert "✅ **Ready to close:**" in board_of(steward, repo, old)["body"], "it passed where it was run"

    t.set_milestone(repo, scenario, new)  # a writer moves the passed scenario in
    steward.settle()
    body = board_of(steward, repo, new)["body"]
    assert "❌ **Not ready to close: 1 blocker.**" in body, body
    assert "it was put on while the scenario was not in this milestone" in body
    close_milestone(steward, repo, new)
    assert milestone_state(steward, repo, new) == "open", "closing it early is undone"

    # Run again here: the maintainer puts the label on again while it is in v1.0, and it counts.
    m.remove_label(repo, scenario, "fieldtest:pass")
    steward.settle()
    m.add_labels(repo, scenario, ["fieldtest:pass"])
    steward.settle()
    body = board_of(steward, repo, new)["body"]
    assert "✅ **Ready to close:**" in body
    close_milestone(steward, repo, new)
    assert milestone_state(steward, repo, new) == "closed"
