"""`/ratify <reason>` end to end, on both forges (issue 23 §2): a maintainer's ratification labels the
finding, keeps a signed record and the dashboard lists it with its reason; a writer is refused, a
ratification without a reason is refused; a ratification whose command comment was edited no longer
counts; a ratification record edited or deleted by hand is rebuilt from its `/ratify` comment (or, when that
was edited too, made void), with one note naming who changed it; a `ratified` label applied without
`/ratify` (before it existed) is listed as a legacy ratification and still counts."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bot.demo.threads import ThreadedWorker
from bot.records import sticky
from tests.e2e.conftest import Steward
from tests.e2e.stack import reconcile, wait_for
from tests.e2e.test_integrity_e2e import forge_data, public_key, rebuilt_notes, verify, writer

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


def record_of(steward: Steward, repo: str, number: int) -> dict[str, Any]:
    [record] = [c for c in steward.bot_comments(repo, number) if "steward:ratification:" in c["body"]]
    return record


def restart(steward: Steward) -> None:
    steward.workers.append(
        ThreadedWorker(steward.settings, handler_settings=steward.workers[0].handler_settings).start()
    )


def test_a_hand_edited_ratification_record_is_rebuilt_from_the_ratify_comment(
    steward: Steward, tmp_path: Path
) -> None:
    """Issue 23 §1: the record that does not verify is rebuilt from its source, the `/ratify` comment."""
    m = steward.maintainer
    repo, _, finding = milestone_with_finding(steward)
    writer(steward, repo)
    said = m.comment(repo, finding, "/ratify Accepted: the button moves in v2.")
    steward.settle()
    key_file = public_key(steward, tmp_path)
    target = f"{repo}#{finding}"
    assert verify(steward, target, key_file).returncode == 0
    # Steward is down while a writer edits the record: `steward verify` reports it from the forge alone.
    for each in steward.workers:
        each.stop()
    record = record_of(steward, repo, finding)
    steward.outsider.edit_comment(
        repo, record["id"], forge_data(record["body"], {"reason": "Accepted for ever."})
    )
    done = verify(steward, target, key_file)
    assert done.returncode == 1, done.stdout + done.stderr
    assert [r["outcome"] for r in json.loads(done.stdout)["records"]] == ["tampered"]
    restart(steward)
    steward.settle()
    [note] = rebuilt_notes(steward, repo, finding)
    assert f"Steward's record in {record['html_url']} was changed by @outsider; it was rebuilt" in note
    data = sticky.unverified_data(record_of(steward, repo, finding)["body"])
    assert (
        data["by"] == "maintainer" and data["comment"] == said and data["reason"].startswith("Accepted: the")
    )
    assert verify(steward, target, key_file).returncode == 0, "rewritten, signed"
    body = dashboard(steward, repo)["body"]
    listed = ratifications(body)
    assert f"#{finding} `ratified`: ratified by @maintainer" in listed and "the button moves in v2" in listed
    assert "Accepted for ever" not in body and "### Blockers" not in body
    reconcile(steward.settings, "--repo", f"{steward.forge}:{repo}")
    steward.settle()
    assert len(rebuilt_notes(steward, repo, finding)) == 1, "a second look writes no second note"


def test_a_deleted_ratification_record_is_rebuilt(steward: Steward, tmp_path: Path) -> None:
    m = steward.maintainer
    repo, _, finding = milestone_with_finding(steward)
    writer(steward, repo)
    said = m.comment(repo, finding, "/ratify Known friction, accepted for this release.")
    steward.settle()
    record = record_of(steward, repo, finding)
    steward.clear_requests()
    steward.outsider.call("DELETE", f"/repos/{repo}/issues/comments/{record['id']}")
    steward.settle()
    made = steward.bot_requests(repo)
    reads = [r for r in made if r["method"] == "GET" and r["path"].endswith(f"/issues/{finding}/comments")]
    asked = [r for r in made if r["path"].endswith("/collaborators/maintainer/permission")]
    assert len(reads) == 2, "the thread is read once by the deletion's job, once by the dashboard's refresh"
    assert len(asked) <= 3, "who may ratify: once to rebuild, then by the refresh (the gate, the record)"
    rebuilt = record_of(steward, repo, finding)
    assert rebuilt["id"] != record["id"]
    data = sticky.unverified_data(rebuilt["body"])
    assert data["by"] == "maintainer" and data["comment"] == said
    [note] = rebuilt_notes(steward, repo, finding)
    assert "was deleted by @outsider; it was rebuilt from [the `/steward ratify` comment]" in note
    assert verify(steward, f"{repo}#{finding}", public_key(steward, tmp_path)).returncode == 0
    body = dashboard(steward, repo)["body"]
    assert "Known friction, accepted for this release." in ratifications(body) and "### Blockers" not in body


def test_a_record_whose_ratify_comment_was_edited_too_is_not_rebuilt(
    steward: Steward, tmp_path: Path
) -> None:
    """The writer edits the `/ratify` comment, then the record to match: nothing holds to rebuild from, so
    the record is rewritten void (signed) and the label does not count."""
    m = steward.maintainer
    repo, _, finding = milestone_with_finding(steward)
    writer(steward, repo)
    said = m.comment(repo, finding, "/ratify Accepted: the button moves in v2.")
    steward.settle()
    # The forges keep `updated_at` to the second: an edit is visible as one from the next second on.
    [written] = [c["created_at"] for c in m.comments(repo, finding) if c["id"] == said]
    second = datetime.fromisoformat(written.replace("Z", "+00:00")).replace(microsecond=0)
    wait_for(lambda: datetime.now(UTC).replace(microsecond=0) > second, what="the next second")
    steward.outsider.edit_comment(repo, said, "/ratify Accepted because I say so.")
    steward.settle()
    [edited] = [c for c in m.comments(repo, finding) if c["id"] == said]
    assert edited["updated_at"] != edited["created_at"]
    record = record_of(steward, repo, finding)
    forged = forge_data(record["body"], {"reason": "Accepted because I say so."})
    steward.outsider.edit_comment(repo, record["id"], forged)
    steward.settle()
    [note] = rebuilt_notes(steward, repo, finding)
    assert "`ratified` does not count until someone who may ratify runs `/steward ratify <reason>`" in note
    assert "was changed by @outsider, and no `/steward ratify` comment here still holds" in note
    assert "could not be rebuilt" in note
    data = sticky.unverified_data(record_of(steward, repo, finding)["body"])
    assert data["void"] is True and data["by"] == "" and data["labels"] == ["ratified"]
    assert verify(steward, f"{repo}#{finding}", public_key(steward, tmp_path)).returncode == 0
    body = dashboard(steward, repo)["body"]
    assert f"#{finding} `ratified`: **does not count**" in ratifications(body)
    assert "Accepted because I say so" not in body and f"#{finding}" in blockers(body)


def test_a_record_deleted_while_no_delivery_said_so_is_rebuilt_at_the_next_refresh(steward: Steward) -> None:
    """The deletion's webhook never arrives (the hook was off): `steward reconcile` refreshes the dashboard,
    which finds the label without a record and the `/ratify` comment that holds, and rebuilds it."""
    m = steward.maintainer
    repo, _, finding = milestone_with_finding(steward)
    writer(steward, repo)
    m.comment(repo, finding, "/ratify Known friction, accepted for this release.")
    steward.settle()
    record = record_of(steward, repo, finding)
    hooks = [int(h["id"]) for h in m.call("GET", f"/repos/{repo}/hooks")]
    for hook in hooks:
        m.call("DELETE", f"/repos/{repo}/hooks/{hook}")
    steward.outsider.call("DELETE", f"/repos/{repo}/issues/comments/{record['id']}")
    m.add_hook(repo, f"{steward.receiver.url}{m.webhook_path}")
    done = reconcile(steward.settings, "--repo", f"{steward.forge}:{repo}")
    assert done.returncode == 0, done.stdout + done.stderr
    steward.settle()
    rebuilt = record_of(steward, repo, finding)
    assert sticky.unverified_data(rebuilt["body"])["reason"] == "Known friction, accepted for this release."
    [note] = rebuilt_notes(steward, repo, finding)
    assert "was deleted; it was rebuilt from [the `/steward ratify` comment]" in note
    body = dashboard(steward, repo)["body"]
    assert "Known friction, accepted for this release." in ratifications(body) and "### Blockers" not in body


def test_the_visible_text_of_a_ratification_record_is_covered_too(steward: Steward) -> None:
    """A reader sees who ratified and why in the record's text: editing only that text is tampering too."""
    m = steward.maintainer
    repo, _, finding = milestone_with_finding(steward)
    writer(steward, repo)
    m.comment(repo, finding, "/ratify Accepted: the button moves in v2.")
    steward.settle()
    record = record_of(steward, repo, finding)
    rows = record["body"].splitlines()
    edit = ("the button moves in v2", "for ever")
    shown = "\n".join(r if r.startswith("<!--") else r.replace(*edit) for r in rows)
    assert shown != record["body"] and sticky.unverified_data(shown) == sticky.unverified_data(record["body"])
    steward.outsider.edit_comment(repo, record["id"], shown)
    steward.settle()
    [note] = rebuilt_notes(steward, repo, finding)
    assert "was changed by @outsider; it was rebuilt" in note
    body = record_of(steward, repo, finding)["body"]
    assert "Accepted: the button moves in v2." in body and "Accepted: for ever" not in body
