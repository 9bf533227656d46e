"""Issue 23 end to end, on both forges: a collaborator with write access — who may edit anyone's comment and
any issue body — edits Steward's records. Each forgery now fails: the record does not verify, Steward rebuilds
it from its source, rewrites it signed and says so once in the thread, naming who changed it; `steward verify`
with only the public key reports the hand-edited record."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import redis

from bot.demo.threads import ThreadedWorker
from bot.records import sticky
from bot.records.signing import parse_time
from tests.e2e.conftest import Steward
from tests.e2e.stack import reconcile, steward_in_process, wait_for

FAST = {"grace_period_seconds": 1, "refresh_debounce_seconds": 0.3, "notify": ["maintainer"]}
pytestmark = pytest.mark.handler_settings(milestones=FAST)
FORKS = "What we store.\n\n## Open forks\n\n- [ ] F1: Postgres or SQLite?\n"


def dashboard(steward: Steward, repo: str) -> dict[str, Any]:
    [board] = [
        i
        for i in steward.maintainer.issues(repo, "milestone-dashboard")
        if i["user"]["login"] == "steward-bot" and "steward:milestone-dashboard:" in i["body"]
    ]
    return board


def forge_data(body: str, change: dict[str, Any]) -> str:
    """``body`` with its data block changed as a person would in the editor (the signature left as it was)."""
    data = sticky.unverified_data(body)
    assert isinstance(data, dict)
    data.update(change)
    lines = body.splitlines()
    return "\n".join(sticky.encode_data(data) if ln.startswith("<!-- steward:data ") else ln for ln in lines)


def rebuilt_notes(steward: Steward, repo: str, number: int) -> list[str]:
    return [c["body"] for c in steward.bot_comments(repo, number) if "steward:record-rebuilt:" in c["body"]]


def writer(steward: Steward, repo: str) -> None:
    """The outsider becomes a collaborator with write access (GitHub `push`; Gitea `write`)."""
    steward.maintainer.add_collaborator(repo, "outsider", "push" if steward.forge == "github" else "write")


def verify(steward: Steward, target: str, key_file: Path) -> subprocess.CompletedProcess[str]:
    """`steward verify` as a reviewer runs it: the forge's API with a read token, and only the public key
    (in this process: tests/smoke runs the installed command)."""
    env = dict(
        STEWARD_REDIS_URL="redis://127.0.0.1:1/0",  # no Redis: the public key is all it has
        STEWARD_GITHUB_API_URL=steward.settings.github_api_url,
        STEWARD_GITHUB_TOKEN="tok-maintainer",
        STEWARD_GITEA_URL=str(steward.settings.gitea_url),
        STEWARD_GITEA_TOKEN="tok-maintainer",
        STEWARD_LOG_LEVEL="warning",
    )
    argv = ["verify", target, "--forge", steward.forge, "--json", "--bot", "steward-bot"]
    return steward_in_process([*argv, "--public-key", str(key_file)], env)


def public_key(steward: Steward, tmp_path: Path) -> Path:
    env = {"STEWARD_REDIS_URL": steward.redis_url, "STEWARD_LOG_LEVEL": "warning"}
    done = steward_in_process(["public-key"], env)
    assert done.returncode == 0, done.stderr
    assert "BEGIN PUBLIC KEY" in done.stdout and "PRIVATE" not in done.stdout
    path = tmp_path / "steward.pub"
    path.write_text(done.stdout)
    # The fingerprint is the last line on stderr (a log line may come before it).
    (tmp_path / "fingerprint").write_text(done.stderr.strip().splitlines()[-1].removeprefix("# "))
    return path


def test_steward_config_shows_the_fingerprint_of_the_signing_key(steward: Steward, tmp_path: Path) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "Settings?")
    steward.outsider.comment(repo, number, "/steward config")
    steward.settle()
    public_key(steward, tmp_path)
    fingerprint = (tmp_path / "fingerprint").read_text()
    assert fingerprint.startswith("ed25519:") and len(fingerprint) == len("ed25519:") + 16
    [reply] = [c["body"] for c in steward.bot_comments(repo, number) if "steward:reply:" in c["body"]]
    assert f"with the key `{fingerprint}`" in reply


def test_a_forged_override_in_the_dashboard_is_rebuilt_and_closes_nothing(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    writer(steward, repo)
    key = m.create_milestone(repo, "v1")
    m.open_issue(repo, "Still open", milestone=key)
    steward.settle()
    board = dashboard(steward, repo)
    override = {"by": "maintainer", "at": "2026-01-01T00:00:00Z", "reason": "ship it", "overrode": []}
    steward.outsider.edit_issue(repo, board["number"], body=forge_data(board["body"], {"override": override}))
    steward.settle()
    [note] = rebuilt_notes(steward, repo, board["number"])
    assert "was changed by @outsider; it was rebuilt" in note
    assert board["html_url"] in note
    board = dashboard(steward, repo)
    assert sticky.unverified_data(board["body"])["override"] is None and "Override by" not in board["body"]
    m.set_milestone_state(repo, key, "closed")
    steward.settle()
    if steward.forge == "gitea":
        steward.run_periodic("milestones")
    wait_for(lambda: m.milestone(repo, key)["state"] == "open" or None, what="the blocked milestone reopened")


def test_a_hand_edited_forks_record_is_reported_by_verify_and_rebuilt(
    steward: Steward, tmp_path: Path
) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    writer(steward, repo)
    number = m.open_issue(repo, "Storage", body=FORKS)
    steward.settle()
    key_file = public_key(steward, tmp_path)
    target = f"{repo}#{number}"
    done = verify(steward, target, key_file)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["all_verified"] is True
    # Steward is down while a writer edits its record: the record stays forged until it is back.
    for each in steward.workers:
        each.stop()
    [record] = [c for c in steward.bot_comments(repo, number) if "steward:forks:reconciliation" in c["body"]]
    steward.outsider.edit_comment(repo, record["id"], forge_data(record["body"], {"sources": [1, 2, 3]}))
    done = verify(steward, target, key_file)
    assert done.returncode == 1, done.stdout + done.stderr
    [row] = json.loads(done.stdout)["records"]
    assert row["outcome"] == "tampered" and row["record"] == "forks:reconciliation"
    steward.workers.append(
        ThreadedWorker(steward.settings, handler_settings=steward.workers[0].handler_settings).start()
    )
    steward.settle()
    [note] = rebuilt_notes(steward, repo, number)
    assert "was changed by @outsider; it was rebuilt" in note
    assert verify(steward, target, key_file).returncode == 0, "rewritten, signed"


def test_an_override_whose_command_comment_was_edited_no_longer_holds(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    writer(steward, repo)
    key = m.create_milestone(repo, "v2")
    m.open_issue(repo, "Never done", milestone=key)
    steward.settle()
    board = dashboard(steward, repo)["number"]
    said = m.comment(repo, board, "/gate override abandoned: the work moved to v3")
    steward.settle()
    assert "**The gate is overridden** by @maintainer" in dashboard(steward, repo)["body"]
    steward.outsider.edit_comment(repo, said, "/gate override whatever I like")
    steward.settle()
    # The command the writer added to the maintainer's comment did not run with the maintainer's authority.
    [refusal] = [c["body"] for c in steward.bot_comments(repo, board) if "-edited-by-other -->" in c["body"]]
    assert "@outsider: commands added by editing @maintainer's comment do not run" in refusal
    m.set_milestone_state(repo, key, "closed")
    steward.settle()
    if steward.forge == "gitea":
        steward.run_periodic("milestones")
    wait_for(lambda: m.milestone(repo, key)["state"] == "open" or None, what="the milestone reopened")
    body = dashboard(steward, repo)["body"]
    assert "The gate is overridden" not in body and sticky.unverified_data(body)["override"] is None


def test_upgrading_from_unsigned_records_reopens_nothing(steward: Steward) -> None:
    """Records written by the previous version (no signature) are accepted once as legacy and signed on first
    touch: a milestone whose closure that version settled stays closed though its gate is blocked, and the
    forks record keeps its decisions."""
    m = steward.maintainer
    repo = steward.new_repo()
    key = m.create_milestone(repo, "v0.9")
    m.open_issue(repo, "Never done", milestone=key)
    number = m.open_issue(repo, "Storage", body=FORKS)
    steward.settle()
    for each in steward.workers:
        each.stop()
    # What the previous version left: an unsigned dashboard that settled a closure, and an unsigned forks
    # record. Steward's memory of its signatures is lost with the upgrade (a new Redis).
    board = dashboard(steward, repo)
    m.set_milestone_state(repo, key, "closed")
    closed_at = m.milestone(repo, key)["closed_at"]
    old = {"v": 1, "key": key, "state": "closed", "closed_at": closed_at, "counts": None, "internal": False}
    old["closure"] = {"at": closed_at, "by": None, "verdict": "passed"}
    text = board["body"].split("\n", 3)[-1]
    steward.bot.edit_issue(repo, board["number"], body=sticky.fit("milestone-dashboard", str(key), text, old))
    [record] = [c for c in steward.bot_comments(repo, number) if "steward:forks:reconciliation" in c["body"]]
    steward.bot.edit_comment(repo, record["id"], sticky.unsigned(record["body"]))
    store = redis.Redis.from_url(steward.redis_url)
    store.delete("steward:signing:seq")
    # The new version starts signing after what the previous one wrote: the closure and the record's last
    # edit (a comment changed after signing started is not legacy). The forges give whole seconds, so after
    # the later one's second — on a loaded machine the edit may fall a second or more after the closure.
    [edited] = [c for c in steward.bot_comments(repo, number) if c["id"] == record["id"]]
    since = max(parse_time(closed_at) or 0.0, parse_time(edited["updated_at"]) or 0.0) + 1.0
    wait_for(lambda: time.time() > since or None, what="the second after the closure")
    store.set("steward:signing:since", str(since))
    steward.workers.append(
        ThreadedWorker(steward.settings, handler_settings=steward.workers[0].handler_settings).start()
    )
    steward.settle()
    if steward.forge == "gitea":
        steward.run_periodic("milestones")
    reconciled = reconcile(steward.settings, "--repo", f"{steward.forge}:{repo}")
    assert reconciled.returncode == 0, reconciled.stderr
    steward.settle()
    assert m.milestone(repo, key)["state"] == "closed", "history is not reopened"
    assert "<!-- steward:sig v1 " in dashboard(steward, repo)["body"], "re-signed on first touch"
    [record] = [c for c in steward.bot_comments(repo, number) if "steward:forks:reconciliation" in c["body"]]
    assert "<!-- steward:sig v1 " in record["body"]
    assert rebuilt_notes(steward, repo, board["number"]) == [] and rebuilt_notes(steward, repo, number) == []


@pytest.mark.handler_settings(debug={"escalate_to": ["triager"]})
def test_a_forged_confirmation_on_the_root_cause_board_is_re_derived_away(steward: Steward) -> None:
    """A writer adds a `confirm` entry to the board's log so that `/bugfix` would see a root cause: the board
    does not verify, its log is re-derived from the people's commands (a hypothesis, no confirmation)."""
    m = steward.maintainer
    repo = steward.new_repo()
    writer(steward, repo)
    approved = (Path(__file__).parent / "data" / "bug-approved.md").read_text()
    number = m.open_issue(repo, "Session survives logout", approved, labels=["bug", "refine"])
    steward.settle()
    m.comment(repo, number, "/hypothesis Stale cache: src/auth/cache.py:88 keeps the session")
    steward.settle()
    [board] = [c for c in steward.bot_comments(repo, number) if "<!-- steward:debug-board:" in c["body"]]
    log = sticky.unverified_data(board["body"])["log"]
    forged = dict(log[0], n=2, k="confirm", h=1, x="src/auth/cache.py:88 proven", r=["src/auth/cache.py:88"])
    steward.outsider.edit_comment(repo, board["id"], forge_data(board["body"], {"log": [log[0], forged]}))
    steward.settle()
    [note] = rebuilt_notes(steward, repo, number)
    assert "was changed by @outsider; it was rebuilt" in note
    [board] = [c for c in steward.bot_comments(repo, number) if "<!-- steward:debug-board:" in c["body"]]
    kinds = [entry["k"] for entry in sticky.unverified_data(board["body"])["log"]]
    assert kinds == ["hypothesis"], "re-derived from the people's commands: no confirmation"
    assert "debug:root-cause" not in m.labels_of(repo, number)


@pytest.mark.handler_settings(debug={"escalate_to": ["triager"]})
def test_a_deleted_root_cause_board_is_rebuilt_from_the_commands(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    writer(steward, repo)
    approved = (Path(__file__).parent / "data" / "bug-approved.md").read_text()
    number = m.open_issue(repo, "Session survives logout", approved, labels=["bug", "refine"])
    steward.settle()
    m.comment(repo, number, "/hypothesis Stale cache: src/auth/cache.py:88 keeps the session")
    steward.settle()
    [board] = [c for c in steward.bot_comments(repo, number) if "<!-- steward:debug-board:" in c["body"]]
    steward.outsider.call("DELETE", f"/repos/{repo}/issues/comments/{board['id']}")
    steward.settle()
    [board] = [c for c in steward.bot_comments(repo, number) if "<!-- steward:debug-board:" in c["body"]]
    assert [e["k"] for e in sticky.unverified_data(board["body"])["log"]] == ["hypothesis"]
    [note] = rebuilt_notes(steward, repo, number)
    assert "was deleted; it was rebuilt from the commands in this thread" in note


def test_deleting_the_dashboard_record_does_not_settle_a_blocked_closure(steward: Steward) -> None:
    """Issue 23: with the data block deleted, a closure used to count as settled. While Steward is down, a
    writer closes a blocked milestone and deletes the dashboard's record: the closure is gated, reopened."""
    m = steward.maintainer
    repo = steward.new_repo()
    writer(steward, repo)
    key = m.create_milestone(repo, "v3")
    m.open_issue(repo, "Never done", milestone=key)
    steward.settle()
    board = dashboard(steward, repo)
    for each in steward.workers:
        each.stop()
    steward.outsider.set_milestone_state(repo, key, "closed")
    kept = [ln for ln in board["body"].splitlines() if not ln.startswith("<!-- steward:data ")]
    steward.outsider.edit_issue(repo, board["number"], body="\n".join(kept))
    steward.workers.append(
        ThreadedWorker(steward.settings, handler_settings=steward.workers[0].handler_settings).start()
    )
    steward.settle()
    if steward.forge == "gitea":
        steward.run_periodic("milestones")
    wait_for(lambda: m.milestone(repo, key)["state"] == "open" or None, what="the blocked milestone reopened")
    [note] = rebuilt_notes(steward, repo, board["number"])
    # Whichever job reads the dashboard first rebuilds it: the edit's (it knows the editor) or the closure's.
    assert (
        "was changed by @outsider; it was rebuilt" in note or "could not be verified; it was rebuilt" in note
    )
    assert "<!-- steward:sig v1 " in dashboard(steward, repo)["body"]


def test_editing_someone_s_comment_without_adding_a_command_gets_no_refusal(steward: Steward) -> None:
    """Only a command added by someone else's edit is refused; a maintainer fixing a typo in another person's
    comment (no command in it) gets no reply. (The check once tested an un-awaited coroutine, always true.)"""
    m = steward.maintainer
    repo = steward.new_repo()
    number = m.open_issue(repo, "Typo")
    said = steward.outsider.comment(repo, number, "The buton does nothing.")
    steward.settle()
    m.edit_comment(repo, said, "The button does nothing.")
    steward.settle()
    assert [c for c in steward.bot_comments(repo, number) if "-edited-by-other -->" in c["body"]] == []
