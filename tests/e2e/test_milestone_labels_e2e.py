"""Who may pass the milestone gate, end to end on both forges (issue 23): a passing label (`fieldtest:pass`
and the like) put on or taken off by someone without `milestones.label_permission` (the triager: triage on
GitHub, write on Gitea) is put back with a one-line reply and never counts; one a maintainer applies
counts and the dashboard says by whom; and the gate asks decision provenance whether an item's forks are
open, so taking `forks:open` off by hand does not let a milestone pass."""

from __future__ import annotations

import pytest

from bot.records.neutralise import JOINER
from tests.e2e.conftest import Steward
from tests.e2e.test_milestones_e2e import FAST, the_dashboard

pytestmark = pytest.mark.handler_settings(milestones=FAST)

FORKS = "What we store.\n\n## Open forks\n\n- [ ] F1: Postgres or SQLite?\n"


def shown(login: str) -> str:
    """A handle as the dashboard shows it: never a mention."""
    return f"@{JOINER}{login}"


def put_back_replies(steward: Steward, repo: str, number: int) -> list[str]:
    return [c["body"] for c in steward.bot_comments(repo, number) if "steward:label-put-back:" in c["body"]]


def needs(steward: Steward) -> str:
    return "admin" if steward.forge == "gitea" else "maintain"


def test_a_passing_label_from_a_triager_is_put_back_with_a_reply_and_a_maintainers_counts(
    steward: Steward,
) -> None:
    m, t = steward.maintainer, steward.triager
    repo = steward.new_repo()
    key = m.create_milestone(repo, "v1")
    scenario = m.open_issue(repo, "Scenario: export", labels=["fieldtest"], milestone=key)
    m.edit_issue(repo, scenario, state="closed")
    steward.settle()

    t.add_labels(repo, scenario, ["fieldtest:pass"])
    steward.settle()
    assert "fieldtest:pass" not in m.labels_of(repo, scenario), "Steward took it off"
    [reply] = put_back_replies(steward, repo, scenario)
    line = f"@triager: `fieldtest:pass` needs {needs(steward)} permission; Steward put it back."
    assert line in reply
    body = the_dashboard(steward, repo)["body"]
    assert f"#{scenario} Scenario: export — scenario closed without `fieldtest:pass`" in body
    assert "❌ **Not ready to close: 1 blocker.**" in body

    m.add_labels(repo, scenario, ["fieldtest:pass"])
    steward.settle()
    assert "fieldtest:pass" in m.labels_of(repo, scenario)
    body = the_dashboard(steward, repo)["body"]
    assert "✅ **Ready to close:**" in body
    assert f"scenario, `fieldtest:pass` by {shown('maintainer')} |" in body
    assert "(does not count)" not in body

    # Taking it off is put back just the same: the maintainer's label stands, and still counts.
    t.remove_label(repo, scenario, "fieldtest:pass")
    steward.settle()
    assert "fieldtest:pass" in m.labels_of(repo, scenario), "Steward put it back"
    assert len(put_back_replies(steward, repo, scenario)) == 1, "one reply per item and person (issue 35 §9)"
    body = the_dashboard(steward, repo)["body"]
    assert "✅ **Ready to close:**" in body and f"by {shown('maintainer')}" in body

    # Steward's own label writes answered nothing more (no loop), and a maintainer's change is never undone.
    m.remove_label(repo, scenario, "fieldtest:pass")
    steward.settle()
    assert "fieldtest:pass" not in m.labels_of(repo, scenario)
    assert len(put_back_replies(steward, repo, scenario)) == 1


def test_a_passing_label_a_triager_put_on_before_the_item_joined_the_milestone_does_not_count(
    steward: Steward,
) -> None:
    m, t = steward.maintainer, steward.triager
    repo = steward.new_repo()
    key = m.create_milestone(repo, "v2")
    m.open_issue(repo, "Work", milestone=key)
    scenario = m.open_issue(repo, "Scenario: import", labels=["fieldtest"])
    m.edit_issue(repo, scenario, state="closed")
    t.add_labels(repo, scenario, ["fieldtest:pass"])  # in no milestone yet: nothing to put back
    steward.settle()
    m.set_milestone(repo, scenario, key)
    m.edit_issue(repo, scenario - 1, state="closed")
    steward.settle()
    assert "fieldtest:pass" in m.labels_of(repo, scenario)
    body = the_dashboard(steward, repo)["body"]
    who = "repository admins" if steward.forge == "gitea" else "people with maintain access or more"
    assert "❌ **Not ready to close: 1 blocker.**" in body
    assert f"`fieldtest:pass` is there but does not count: only {who} may set it" in body
    assert f"scenario, `fieldtest:pass` by {shown('triager')} (does not count) |" in body
    assert "### Labels that do not count" in body
    assert put_back_replies(steward, repo, scenario) == []

    # Closing the milestone does not pass the gate on the triager's word: it is reopened.
    m.set_milestone_state(repo, key, "closed")
    steward.settle()
    if steward.forge == "gitea":
        steward.run_periodic("milestones")
    steward.settle()
    assert m.milestone(repo, key)["state"] == "open"


def test_a_fork_still_open_blocks_the_gate_when_forks_open_was_taken_off_by_hand(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    key = m.create_milestone(repo, "v3")
    scenario = m.open_issue(repo, "Scenario", labels=["fieldtest", "fieldtest:pass"], milestone=key)
    m.edit_issue(repo, scenario, state="closed")
    design = m.open_issue(repo, "Storage", FORKS, milestone=key)
    steward.settle()
    assert "forks:open" in m.labels_of(repo, design)
    # Steward could not put the label back (its label writes on the item are refused): the label is gone.
    labels_path = rf"/repos/{repo}/issues/{design}/labels"
    steward.faults(
        {"method": "WRITE", "path": labels_path, "status": 403, "times": 50, "login": "steward-bot"}
    )
    m.remove_label(repo, design, "forks:open")
    m.edit_issue(repo, design, state="closed")
    steward.settle()
    steward.maintainer.client.delete(f"{steward.sandbox.url}/_sandbox/faults").raise_for_status()
    assert "forks:open" not in m.labels_of(repo, design)
    body = the_dashboard(steward, repo)["body"]
    assert "❌ **Not ready to close: 1 blocker.**" in body
    assert f"- #{design} Storage — has an unresolved design fork (F1): resolve it" in body
    assert f"| #{design} | Storage | issue, ✔ closed | — | — | — | **open** (F1) |" in body


def test_one_person_s_label_burst_gets_one_reply_and_a_bounded_number_of_put_backs(steward: Steward) -> None:
    """Issue 35 item 9: the guard answered every delivery with a new comment (67 comments in 75 s from one
    person) and put every toggle back. Now one reply per item and person, edited, and at most
    PUT_BACKS_PER_MINUTE put-backs of one person a minute; the label they applied never counts."""
    from handlers.milestones.guard import PUT_BACKS_PER_MINUTE

    m, t = steward.maintainer, steward.triager
    repo = steward.new_repo()
    key = m.create_milestone(repo, "v1")
    scenario = m.open_issue(repo, "Scenario: export", labels=["fieldtest"], milestone=key)
    m.edit_issue(repo, scenario, state="closed")
    steward.settle()
    for _ in range(8):
        t.add_labels(repo, scenario, ["fieldtest:pass"])
        steward.settle()
    assert len(put_back_replies(steward, repo, scenario)) == 1
    where = "timeline" if steward.forge == "gitea" else "events"
    events = m.call("GET", f"/repos/{repo}/issues/{scenario}/{where}")
    by_bot = [
        e
        for e in events
        if (e.get("actor") or e.get("user") or {}).get("login") == "steward-bot"
        and (e.get("type") == "label" or e.get("event") in ("labeled", "unlabeled"))
    ]
    assert 1 <= len(by_bot) <= PUT_BACKS_PER_MINUTE
    body = the_dashboard(steward, repo)["body"]
    assert "❌ **Not ready to close: 1 blocker.**" in body, "the triager's label never counts"
