"""The RA9 verdict's visible YAML is signed (issue 23), on both forges: the verdict comment's signed
block pins the text a reader (and `/bugfix`) trusts, so a writer who edits the YAML by hand —
`status: rejected` made `approved` — is reported by `steward verify` with only the public key, and
Steward derives the verdict from the report again, rewrites it signed and notes once who changed it. An
untouched verdict verifies."""

from __future__ import annotations

import json
import time
from pathlib import Path

import redis

from bot.demo.threads import ThreadedWorker
from bot.records import sticky
from tests.e2e.conftest import Steward
from tests.e2e.test_integrity_e2e import public_key, rebuilt_notes, verify, writer

DATA = Path(__file__).resolve().parent / "data"
REJECTED = (DATA / "bug-rejected.md").read_text()
APPROVED = (DATA / "bug-approved.md").read_text()
STORY = (DATA / "story-approved.md").read_text()


def verdict_comment(steward: Steward, repo: str, number: int) -> dict[str, object]:
    [found] = [c for c in steward.bot_comments(repo, number) if "steward:ra9-verdict:" in c["body"]]
    return found


def test_a_hand_edited_verdict_yaml_is_reported_by_verify_and_rebuilt(
    steward: Steward, tmp_path: Path
) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    writer(steward, repo)
    number = m.open_issue(repo, "Login fails", REJECTED, labels=["bug", "refine"])
    steward.settle()
    key_file = public_key(steward, tmp_path)
    target = f"{repo}#{number}"
    done = verify(steward, target, key_file)
    assert done.returncode == 0, done.stdout + done.stderr
    verdict = verdict_comment(steward, repo, number)
    body = str(verdict["body"])
    assert "status: rejected" in body
    # Steward is down while a writer edits the verdict's YAML: the signed block is left as it was.
    for each in steward.workers:
        each.stop()
    steward.outsider.edit_comment(
        repo, int(str(verdict["id"])), body.replace("status: rejected", "status: approved")
    )
    done = verify(steward, target, key_file)
    assert done.returncode == 1, done.stdout + done.stderr
    rows = json.loads(done.stdout)["records"]
    assert [r["outcome"] for r in rows if str(r["record"]).startswith("ra9-verdict:")] == ["tampered"]
    steward.workers.append(
        ThreadedWorker(steward.settings, handler_settings=steward.workers[0].handler_settings).start()
    )
    steward.settle()
    [note] = rebuilt_notes(steward, repo, number)
    assert "was changed by @outsider; it was rebuilt" in note
    assert "status: rejected" in str(verdict_comment(steward, repo, number)["body"]), (
        "derived from the report"
    )
    assert "refinement:needs-info" in m.labels_of(repo, number)
    done = verify(steward, target, key_file)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_hand_edited_story_verdict_is_reported_by_verify_and_rebuilt(
    steward: Steward, tmp_path: Path
) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    writer(steward, repo)
    story = m.open_issue(repo, "Story: vague", "## 1. Vision\n\nMake it work.\n")
    body = APPROVED + f"\n\n## Stories\n\n- [ ] #{story}\n"
    bug = m.open_issue(repo, "Cart total ignores discount", body, labels=["bug", "refine"])
    steward.settle()
    key_file = public_key(steward, tmp_path)
    target = f"{repo}#{story}"
    assert "refinement:approved" in m.labels_of(repo, bug)
    assert verify(steward, target, key_file).returncode == 0, "an untouched story verdict verifies"
    [verdict] = [c for c in steward.bot_comments(repo, story) if "steward:ra9-story:" in c["body"]]
    assert "status: rejected" in verdict["body"] and "steward:sig v1" in verdict["body"]
    for each in steward.workers:
        each.stop()
    steward.outsider.edit_comment(
        repo, verdict["id"], verdict["body"].replace("status: rejected", "status: approved")
    )
    done = verify(steward, target, key_file)
    assert done.returncode == 1, done.stdout + done.stderr
    steward.workers.append(
        ThreadedWorker(steward.settings, handler_settings=steward.workers[0].handler_settings).start()
    )
    steward.settle()
    [verdict] = [c for c in steward.bot_comments(repo, story) if "steward:ra9-story:" in c["body"]]
    assert "status: rejected" in verdict["body"], "a forged approval never locks the story"
    assert "refinement:needs-triage" in m.labels_of(repo, story)
    [note] = rebuilt_notes(steward, repo, story)
    assert "was changed by @outsider; it was rebuilt" in note
    assert verify(steward, target, key_file).returncode == 0


def test_upgrading_keeps_verdicts_written_before_the_yaml_was_pinned(steward: Steward) -> None:
    """A bug verdict signed without the pin and a story verdict written without any block (the previous
    versions) stay approved: accepted once, then rewritten signed and pinned, with no note."""
    m = steward.maintainer
    repo = steward.new_repo()
    story = m.open_issue(repo, "Story: keep promotions", STORY)
    body = APPROVED + f"\n\n## Stories\n\n- [ ] #{story}\n"
    bug = m.open_issue(repo, "Cart total ignores discount", body, labels=["bug", "refine"])
    steward.settle()
    for each in steward.workers:
        each.stop()
    [verdict] = [c for c in steward.bot_comments(repo, bug) if "steward:ra9-verdict:" in c["body"]]
    old = sticky.unverified_data(verdict["body"])
    del old[sticky.TEXT_KEY]
    text = sticky.visible_text(verdict["body"])
    steward.bot.edit_comment(repo, verdict["id"], sticky.fit("ra9-verdict", str(bug), text, old))
    [told] = [c for c in steward.bot_comments(repo, story) if "steward:ra9-story:" in c["body"]]
    steward.bot.edit_comment(
        repo, told["id"], sticky.fit("ra9-story", str(bug), sticky.visible_text(told["body"]))
    )
    store = redis.Redis.from_url(steward.redis_url)
    store.delete("steward:signing:seq")
    store.set("steward:signing:since", str(time.time()))
    steward.workers.append(
        ThreadedWorker(steward.settings, handler_settings=steward.workers[0].handler_settings).start()
    )
    m.edit_issue(repo, bug, body=body + "\n")
    steward.settle()
    [verdict] = [c for c in steward.bot_comments(repo, bug) if "steward:ra9-verdict:" in c["body"]]
    [told] = [c for c in steward.bot_comments(repo, story) if "steward:ra9-story:" in c["body"]]
    for found in (verdict, told):
        assert "status: approved" in found["body"] and "steward:sig v1" in found["body"]
        assert sticky.TEXT_KEY in sticky.unverified_data(found["body"]), "rewritten pinned"
    assert "refinement:approved" in m.labels_of(repo, bug) and "refinement:approved" in m.labels_of(
        repo, story
    )
    assert rebuilt_notes(steward, repo, bug) == [] and rebuilt_notes(steward, repo, story) == []
