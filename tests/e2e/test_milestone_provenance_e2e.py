"""Where and under which name a passing label was put on, end to end on both forges (issue 35 items 6 and 8).

- A scenario's `fieldtest:pass` counts only when it was put on while the scenario was in the milestone being
  gated: a writer moving a scenario that passed in another milestone into this one passes nothing (GitHub's
  `milestoned`/`demilestoned` issue events by title, Gitea's timeline entries of type "milestone" by id).
- Gitea's timeline shows a label as it is now: renaming a label a maintainer once put on (`looks-good`) to
  the passing name does not make it a pass (GitHub's events keep the name the label had, so there it never
  was one)."""

from __future__ import annotations

import re
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


def rename_label(steward: Steward, repo: str, name: str, new: str) -> None:
    """Rename a repository label, as anyone with write access may (GitHub by name, Gitea by id)."""
    who = steward.triager if steward.forge == "gitea" else steward.maintainer
    if steward.forge == "gitea":
        [ident] = who._label_ids(repo, [name])
        who.call("PATCH", f"/repos/{repo}/labels/{ident}", {"name": new})
    else:
        who.call("PATCH", f"/repos/{repo}/labels/{name}", {"new_name": new})


def test_renaming_a_label_a_maintainer_put_on_to_the_passing_name_passes_nothing(steward: Steward) -> None:
    """Reproduces item 8 on Gitea: the maintainer once put `looks-good` on a scenario of the milestone; a
    writer renames the real `fieldtest:pass` away and `looks-good` to `fieldtest:pass`. Gitea's timeline then
    reads "maintainer added fieldtest:pass" (it shows a label as it is now), and on main the milestone was
    ready to close. GitHub's events keep the name the label had (`looks-good`), so there no event ever said
    anyone applied `fieldtest:pass`: the same steps pass nothing on main too, and the test pins that."""
    m = steward.maintainer
    repo = steward.new_repo()
    key = m.create_milestone(repo, "v1.0")
    other = m.open_issue(repo, "Scenario: import", labels=["fieldtest"], milestone=key)
    m.edit_issue(repo, other, state="closed")
    steward.settle()
    m.add_labels(repo, other, ["fieldtest:pass"])
    scenario = m.open_issue(repo, "Scenario: export", labels=["fieldtest"], milestone=key)
    m.edit_issue(repo, scenario, state="closed")
    steward.settle()
    m.add_labels(repo, scenario, ["looks-good"])
    steward.settle()
    assert "❌ **Not ready to close: 1 blocker.**" in board_of(steward, repo, key)["body"]

    # The swap: the real label renamed away (the other scenario's pass goes with it), the innocent one in.
    m.remove_label(repo, other, "fieldtest:pass")
    m.edit_issue(repo, other, milestone=None if steward.forge == "github" else 0)
    steward.settle()
    rename_label(steward, repo, "fieldtest:pass", "fieldtest:pass-old")
    rename_label(steward, repo, "looks-good", "fieldtest:pass")
    m.edit_issue(repo, scenario, title="Scenario: export (renamed labels)")  # any event: Steward looks again
    steward.settle()
    assert "fieldtest:pass" in m.labels_of(repo, scenario)
    body = board_of(steward, repo, key)["body"]
    assert "❌ **Not ready to close: 1 blocker.**" in body, body
    if steward.forge == "gitea":
        assert "this one took that name after it was put on" in body
    else:
        assert "no label event says who applied it" in body
    close_milestone(steward, repo, key)
    assert milestone_state(steward, repo, key) == "open", "closing it early is undone"

    # Put on again by the maintainer, under the name it has now: it counts.
    m.remove_label(repo, scenario, "fieldtest:pass")
    steward.settle()
    m.add_labels(repo, scenario, ["fieldtest:pass"])
    steward.settle()
    assert "✅ **Ready to close:**" in board_of(steward, repo, key)["body"]


def test_a_writer_editing_the_dashboard_does_not_void_the_passes(steward: Steward) -> None:
    """A dashboard whose record does not verify is re-derived, and Gitea keeps no history of label names: the
    names Steward itself last saw in the repository (kept in Redis) stand in, so editing the dashboard does
    not make every pass count for nothing."""
    m = steward.maintainer  # anyone with write may edit the body
    repo = steward.new_repo()
    key = m.create_milestone(repo, "v1.0")
    scenario = m.open_issue(repo, "Scenario: export", labels=["fieldtest"], milestone=key)
    m.edit_issue(repo, scenario, state="closed")
    steward.settle()
    m.add_labels(repo, scenario, ["fieldtest:pass"])
    steward.settle()
    board = board_of(steward, repo, key)
    assert "✅ **Ready to close:**" in board["body"]
    tampered = re.sub(r'"counts":\[\d+,\d+\]', '"counts":[9,9]', board["body"], count=1)
    assert tampered != board["body"]
    m.edit_issue(repo, board["number"], body=tampered)  # the signed data changed: re-derived
    steward.settle()
    assert "✅ **Ready to close:**" in board_of(steward, repo, key)["body"]


def test_renaming_milestones_does_not_carry_a_pass_into_another(steward: Steward) -> None:
    """GitHub's `milestoned` events name a milestone by the title it had. A writer renames v0.9 (where the
    scenario passed) away and v1.0 to `v0.9`, then moves the scenario in: the old events read "milestoned
    v0.9", and after the first half of item 6 that was enough for v1.0. Steward now keeps each milestone's
    titles with when it saw them (the dashboard's signed record), and an event counts under a title only
    for the time the milestone had it. Gitea names milestones by id: the rename never mattered there."""
    m, t = steward.maintainer, steward.triager
    renamer = t if steward.forge == "gitea" else m  # anyone with write: GitHub's triage may not edit them
    repo = steward.new_repo()
    old = m.create_milestone(repo, "v0.9")
    new = m.create_milestone(repo, "v1.0")
    scenario = m.open_issue(repo, "Scenario: export", labels=["fieldtest"], milestone=old)
    m.edit_issue(repo, scenario, state="closed")
    work = m.open_issue(repo, "Work", milestone=new)
    m.edit_issue(repo, work, state="closed")
    steward.settle()
    m.add_labels(repo, scenario, ["fieldtest:pass"])
    steward.settle()
    renamer.call("PATCH", f"/repos/{repo}/milestones/{old}", {"title": "v0.9-old"})
    steward.settle()
    renamer.call("PATCH", f"/repos/{repo}/milestones/{new}", {"title": "v0.9"})
    steward.settle()
    t.set_milestone(repo, scenario, new)
    steward.settle()
    body = board_of(steward, repo, new)["body"]
    assert "❌ **Not ready to close: 1 blocker.**" in body, body
    assert "it was put on while the scenario was not in this milestone" in body
