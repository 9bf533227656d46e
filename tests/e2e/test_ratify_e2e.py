"""`/ratify <reason>` end to end, on both forges (issue 23 §2): a maintainer's ratification labels the
finding, keeps a signed record and the dashboard lists it with its reason; a writer is refused, a
ratification without a reason is refused; a ratification whose command comment was edited no longer
counts; a `ratified` label applied without `/ratify` (before it existed) is listed as a legacy
ratification and still counts."""

from __future__ import annotations

from typing import Any

import pytest

from bot import sticky
from tests.e2e.conftest import Steward

FAST = {"grace_period_seconds": 1, "refresh_debounce_seconds": 0.3, "notify": ["maintainer"]}
pytestmark = pytest.mark.handler_settings(milestones=FAST)


def dashboard(steward: Steward, repo: str) -> dict[str, Any]:
    [board] = [
        i
        for i in steward.maintainer.issues(repo, "milestone-dashboard")
        if i["user"]["login"] == "steward-bot" and "steward:milestone-dashboard:" in i["body"]
    ]
    return board


def ratifications(body: str) -> str:
    """The dashboard's "Ratifications" section ("" when it has none)."""
    if "### Ratifications" not in body:
        return ""
    return body.split("### Ratifications", 1)[1].split("###", 1)[0]


def blockers(body: str) -> str:
    return body.split("### Blockers", 1)[1].split("<details>", 1)[0] if "### Blockers" in body else ""


def replies(steward: Steward, repo: str, number: int) -> list[str]:
    return [c["body"] for c in steward.bot_comments(repo, number) if "steward:reply:" in c["body"]]


def milestone_with_finding(steward: Steward, *, cycle: bool = False) -> tuple[str, int, int]:
    """A repository with a milestone whose only open item is a friction finding (the scenario passed)."""
    m = steward.maintainer
    repo = steward.new_repo()
    key = m.create_milestone(repo, "v1")
    scenario = m.open_issue(repo, "Scenario", labels=["fieldtest", "fieldtest:pass"], milestone=key)
    m.edit_issue(repo, scenario, state="closed")
    labels = ["finding:friction", *(["cycle", "audit:clean"] if cycle else [])]
    finding = m.open_issue(repo, "The export button is hard to find", labels=labels, milestone=key)
    steward.settle()
    assert f"#{finding}" in blockers(dashboard(steward, repo)["body"])
    return repo, key, finding


def test_a_maintainer_ratifies_with_a_reason_and_the_dashboard_lists_it(steward: Steward) -> None:
    m = steward.maintainer
    repo, _, finding = milestone_with_finding(steward)
    said = m.comment(repo, finding, "/ratify The extra click is the price of the @someone confirmation step.")
    steward.settle()
    assert "ratified" in m.labels_of(repo, finding)
    [record] = [c for c in steward.bot_comments(repo, finding) if "steward:ratification:" in c["body"]]
    data = sticky.unverified_data(record["body"])
    assert data["by"] == "maintainer" and data["comment"] == said and data["labels"] == ["ratified"]
    assert "steward:sig v1" in record["body"], "the record is signed"
    body = dashboard(steward, repo)["body"]
    listed = ratifications(body)
    assert f"#{finding} `ratified`: ratified by @maintainer" in listed
    assert "The extra click is the price of the" in listed
    assert "@someone" not in listed, "the reason is neutralised: no live mention"
    assert "### Blockers" not in body, "a ratified finding is settled for both legs"


def test_on_a_cycle_item_ratify_applies_audit_ratified(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    key = m.create_milestone(repo, "v1")
    item = m.open_issue(repo, "Cycle 3", labels=["cycle"], milestone=key)
    steward.settle()
    assert "audit:clean" in blockers(dashboard(steward, repo)["body"])
    m.comment(repo, item, "/ratify The audit found only cosmetic issues, accepted for v1.")
    steward.settle()
    assert "audit:ratified" in m.labels_of(repo, item)
    listed = ratifications(dashboard(steward, repo)["body"])
    assert f"#{item} `audit:ratified`: ratified by @maintainer" in listed


def test_a_writer_and_a_missing_reason_are_refused(steward: Steward) -> None:
    m = steward.maintainer
    repo, _, finding = milestone_with_finding(steward)
    m.add_collaborator(repo, "outsider", "push" if steward.forge == "github" else "write")
    steward.outsider.comment(repo, finding, "/ratify I say it is fine.")
    m.comment(repo, finding, "/ratify")
    steward.settle()
    said = replies(steward, repo, finding)
    assert any("@outsider: `/steward ratify` can only be run by" in r for r in said), said
    assert any("@maintainer: a ratification needs a reason" in r for r in said), said
    assert "ratified" not in m.labels_of(repo, finding)
    assert not [c for c in steward.bot_comments(repo, finding) if "steward:ratification:" in c["body"]]
    assert f"#{finding}" in blockers(dashboard(steward, repo)["body"])


def test_a_ratification_whose_command_comment_was_edited_no_longer_counts(steward: Steward) -> None:
    m = steward.maintainer
    repo, _, finding = milestone_with_finding(steward)
    m.add_collaborator(repo, "outsider", "push" if steward.forge == "github" else "write")
    said = m.comment(repo, finding, "/ratify Accepted: the button moves in v2.")
    steward.settle()
    assert "### Blockers" not in dashboard(steward, repo)["body"]
    steward.outsider.edit_comment(repo, said, "/ratify Accepted because I say so.")
    steward.settle()
    body = dashboard(steward, repo)["body"]
    assert f"#{finding} `ratified`: **does not count**" in ratifications(body)
    assert f"#{finding}" in blockers(body), "the label alone no longer settles the finding"
    assert "Accepted because I say so" not in body


def test_a_label_applied_before_ratify_is_a_legacy_ratification_until_removed(steward: Steward) -> None:
    m = steward.maintainer
    repo, _, finding = milestone_with_finding(steward)
    m.add_labels(repo, finding, ["ratified"])
    steward.settle()
    body = dashboard(steward, repo)["body"]
    assert f"#{finding} `ratified`: legacy ratification (no reason recorded)" in ratifications(body)
    assert "### Blockers" not in body, "upgrading reopens nothing: the legacy label still counts"
    m.comment(repo, finding, "/ratify Known friction, accepted for this release.")
    steward.settle()
    listed = ratifications(dashboard(steward, repo)["body"])
    assert "legacy" not in listed and "Known friction, accepted for this release." in listed
    m.remove_label(repo, finding, "ratified")
    steward.settle()
    body = dashboard(steward, repo)["body"]
    assert ratifications(body) == "" and f"#{finding}" in blockers(body), "removing the label drops it"


def test_a_hand_edited_ratification_record_does_not_count(steward: Steward) -> None:
    m = steward.maintainer
    repo, _, finding = milestone_with_finding(steward)
    m.add_collaborator(repo, "outsider", "push" if steward.forge == "github" else "write")
    m.comment(repo, finding, "/ratify Accepted: the button moves in v2.")
    steward.settle()
    [record] = [c for c in steward.bot_comments(repo, finding) if "steward:ratification:" in c["body"]]
    data = sticky.unverified_data(record["body"])
    data["reason"] = "Accepted for ever."
    forged = "\n".join(
        sticky.encode_data(data) if row.startswith("<!-- steward:data ") else row
        for row in record["body"].splitlines()
    )
    steward.outsider.edit_comment(repo, record["id"], forged)
    steward.settle()
    body = dashboard(steward, repo)["body"]
    assert f"#{finding} `ratified`: **does not count**" in ratifications(body)
    assert "Accepted for ever" not in body and f"#{finding}" in blockers(body)
