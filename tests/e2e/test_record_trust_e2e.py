"""Re-derive, never trust (issue 35 item 1, issue 40 item 2), on both forges.

- A write collaborator re-keys an older Steward issue (an older dashboard, the configuration error issue) to
  another milestone, with an unsigned data block holding an override "by" a maintainer, and closes that
  milestone with open work. Before: the re-keyed issue was taken as the milestone's dashboard (the oldest
  match), its block as a "legacy" record (nothing remembered about that place), the override held (the named
  maintainer has the permission): the milestone stayed closed, and Steward signed the forged data, so
  `steward verify` reported it verified. Now the dashboard is the issue whose signed record names the
  milestone, the milestone is reopened, and the forged block is never signed.
- A dashboard written before Steward signed (legacy: the issue was created before the signing start) holding
  an override without a command comment. Before: trusted once, the override held. Now: re-derived from its
  sources; an override without a command comment counts for nothing, and the milestone is reopened.
- The signing key is lost with Redis. Before: every refined bug got "could not be verified; it was rebuilt"
  and a new @-mention of its reporter, and a milestone closed with `/gate override` was reopened. Now the
  records signed by the unknown key are re-derived from their sources and re-signed quietly: no note, no new
  mention, the override (its comment still holds) keeps the milestone closed.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import redis

from bot.demo.threads import ThreadedWorker
from bot.records import sticky
from bot.records.signing import parse_time
from tests.e2e.conftest import Steward
from tests.e2e.stack import reconcile, wait_for
from tests.e2e.test_integrity_e2e import dashboard, public_key, rebuilt_notes, verify, writer

FAST = {"grace_period_seconds": 1, "refresh_debounce_seconds": 0.3, "notify": ["maintainer"]}
pytestmark = pytest.mark.handler_settings(milestones=FAST)
DATA = Path(__file__).resolve().parent / "data"
REJECTED = (DATA / "bug-rejected.md").read_text()
KIND = "milestone-dashboard"


def _restart(steward: Steward) -> None:
    steward.workers.append(
        ThreadedWorker(steward.settings, handler_settings=steward.workers[0].handler_settings).start()
    )


def _stop(steward: Steward) -> None:
    for each in steward.workers:
        each.stop()


def _forged(key: int, override: dict[str, Any], text: str = "Dashboard") -> str:
    data = {"v": 1, "key": key, "state": "open", "closed_at": None, "counts": None, "internal": False}
    data["override"] = override
    return sticky.fit(KIND, str(key), text, data)


def _boards(steward: Steward, repo: str) -> list[dict[str, Any]]:
    return [
        i
        for i in steward.maintainer.issues(repo, "milestone-dashboard")
        if i["user"]["login"] == "steward-bot" and "steward:milestone-dashboard:" in i["body"]
    ]


def _wait_reopened(steward: Steward, repo: str, key: int) -> None:
    steward.settle()
    if steward.forge == "gitea":  # Gitea sends no milestone webhooks: the periodic job notices the closure
        steward.run_periodic("milestones")
    wait_for(
        lambda: steward.maintainer.milestone(repo, key)["state"] == "open" or None,
        what="the blocked milestone reopened",
    )


def _config_error_issue(steward: Steward, repo: str) -> int:
    """Steward's configuration error issue: a push of an invalid configuration file opens it."""
    path = ".gitea/steward.yml" if steward.forge == "gitea" else ".github/steward.yml"
    steward.maintainer.put_file(repo, path, "backlog:\n  roundcap: 3\n")
    steward.settle()
    [found] = [
        i
        for i in steward.maintainer.issues(repo, "steward:config-error")
        if i["user"]["login"] == "steward-bot"
    ]
    # Fixed again, so the rest of the test runs with the repository's settings (the issue stays, closed).
    steward.maintainer.put_file(repo, path, "# Steward is switched on here, with its defaults.\n")
    steward.settle()
    return int(found["number"])


@pytest.mark.parametrize("carrier", ["older-dashboard", "config-error-issue"])
def test_a_re_keyed_steward_issue_neither_becomes_the_dashboard_nor_gets_its_forgery_signed(
    steward: Steward, tmp_path: Path, carrier: str
) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    writer(steward, repo)
    if carrier == "older-dashboard":
        first = m.create_milestone(repo, "v1")
        m.open_issue(repo, "Done long ago", milestone=first)
        steward.settle()
        [old] = _boards(steward, repo)
        number = int(old["number"])
    else:
        number = _config_error_issue(steward, repo)
    key = m.create_milestone(repo, "v2")
    m.open_issue(repo, "Still open", milestone=key)
    steward.settle()
    real = [b for b in _boards(steward, repo) if f"steward:milestone-dashboard:{key} " in b["body"]]
    assert len(real) == 1 and int(real[0]["number"]) > number, "the carrier is the older issue"
    # The writer gives the older Steward issue milestone v2's marker and an override "by" the maintainer.
    override = {"by": "maintainer", "at": "2026-01-01T00:00:00Z", "reason": "ship it", "overrode": []}
    steward.outsider.edit_issue(repo, number, body=_forged(key, override), state="open")
    if carrier == "config-error-issue":
        steward.outsider.add_labels(repo, number, ["milestone-dashboard"])
    steward.settle()
    steward.outsider.set_milestone_state(repo, key, "closed")
    _wait_reopened(steward, repo, key)
    board = m.issue(repo, int(real[0]["number"]))
    assert "overridden by" not in board["body"].lower() and "Override by" not in board["body"]
    carried = m.issue(repo, number)["body"]
    assert "<!-- steward:sig " not in carried, "the forged block was not signed"
    done = verify(steward, f"{repo}#{number}", public_key(steward, tmp_path))
    assert done.returncode == 1, done.stdout + done.stderr


def test_a_legacy_dashboard_s_override_without_a_command_comment_counts_for_nothing(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    writer(steward, repo)
    key = m.create_milestone(repo, "v3")
    m.open_issue(repo, "Never done", milestone=key)
    steward.settle()
    board = dashboard(steward, repo)
    _stop(steward)
    # What a version without signatures left — or a writer put in its place: an unsigned block with an
    # override, in a dashboard created before Steward started signing (the signing start is set after it).
    override = {"by": "maintainer", "at": "2026-01-01T00:00:00Z", "reason": "ship it", "overrode": []}
    steward.outsider.edit_issue(repo, board["number"], body=_forged(key, override))
    # The signing start: the second after the dashboard's creation (the forges' times are whole seconds), so
    # the dashboard predates it and the closure below does not.
    since = parse_time(board["created_at"])
    assert since is not None
    since += 1.0
    wait_for(lambda: time.time() > since + 0.05 or None, what="the next second")
    store = redis.Redis.from_url(steward.redis_url)
    store.delete("steward:signing:seq")
    store.set("steward:signing:since", repr(since))
    _restart(steward)
    steward.settle()
    steward.outsider.set_milestone_state(repo, key, "closed")
    _wait_reopened(steward, repo, key)
    body = dashboard(steward, repo)["body"]
    assert "<!-- steward:sig v1 " in body and sticky.unverified_data(body)["override"] is None
    # Legacy by the forge's times, but this very edit's sender changed it: the note names them.
    [note] = rebuilt_notes(steward, repo, board["number"])
    assert "was changed by @outsider; it was rebuilt" in note


def test_records_signed_by_a_key_lost_with_redis_are_re_derived_quietly(
    steward: Steward, tmp_path: Path
) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    bug = steward.outsider.open_issue(repo, "Login fails", REJECTED)
    m.add_labels(repo, bug, ["bug", "refine"])
    key = m.create_milestone(repo, "v4")
    m.open_issue(repo, "Abandoned", milestone=key)
    steward.settle()
    mentions = [c["id"] for c in m.comments(repo, bug) if "@outsider" in c["body"]]
    assert mentions, "the verdict asked the reporter"
    number = dashboard(steward, repo)["number"]
    m.comment(repo, number, "/gate override abandoned: the work moved to v5")
    steward.settle()
    m.set_milestone_state(repo, key, "closed")
    steward.settle()
    if steward.forge == "gitea":
        steward.run_periodic("milestones")
        steward.settle()
    assert m.milestone(repo, key)["state"] == "closed"
    # Redis is lost, and the key Steward kept there with it: the new worker makes a new key. The signing start
    # survives, pinned as docs/integrity.md asks (STEWARD_SIGNING_SINCE).
    _stop(steward)
    store = redis.Redis.from_url(steward.redis_url)
    since = store.get("steward:signing:since")
    assert since is not None
    store.delete("steward-secret:signing-key", "steward:signing:seq", "steward:signing:since")
    steward.settings = steward.settings.model_copy(update={"signing_since": since.decode()})
    _restart(steward)
    steward.settle()
    m.comment(repo, bug, "/steward refresh")
    steward.settle()
    steward.run_periodic("milestones")
    steward.settle()
    done = reconcile(steward.settings, "--repo", f"{steward.forge}:{repo}")
    assert done.returncode == 0, done.stderr
    steward.settle()
    assert m.milestone(repo, key)["state"] == "closed", "the override's comment still holds"
    assert rebuilt_notes(steward, repo, bug) == [] and rebuilt_notes(steward, repo, number) == []
    assert [c["id"] for c in m.comments(repo, bug) if "@outsider" in c["body"]] == mentions, "no new mention"
    key_file = public_key(steward, tmp_path)  # the new key
    for target in (bug, number):
        done = verify(steward, f"{repo}#{target}", key_file)
        assert done.returncode == 0, done.stdout + done.stderr


def test_a_worker_whose_clock_is_behind_writes_no_record_that_reads_as_a_replay(steward: Steward) -> None:
    """Issue 35, "Also": sequence numbers came from each worker's clock. A worker 60 s ahead signed the
    dashboard; the next write, by a worker on time, carried a smaller number, and the record then read as an
    older version pasted back ("was replaced by an older version", rebuilt). Now a new number is always above
    the last one Redis remembers at that place."""
    from bot.records import signing

    m = steward.maintainer
    repo = steward.new_repo()
    key = m.create_milestone(repo, "v6")
    m.open_issue(repo, "First", milestone=key)
    steward.settle()
    board = dashboard(steward, repo)
    repo_id = int(m.call("GET", f"/repos/{repo}")["id"])
    place = signing.Place(steward.forge, repo_id, "issue", int(board["id"]), KIND, str(key))
    # What a worker whose clock is 60 s ahead writes there: the same record, signed with its number.
    ahead = int(time.time() * 1_000_000) + 60_000_000
    text, data = sticky.visible_text(board["body"]), sticky.unverified_data(board["body"])
    clock_ahead = signing.Keyring(signing.current().private)  # the same key, another worker's clock
    clock_ahead._last_seq = ahead
    body, seq = sticky.signed(clock_ahead, place, text, data)
    steward.bot.edit_issue(repo, board["number"], body=body)
    redis.Redis.from_url(steward.redis_url).hset("steward:signing:seq", place.ident, str(seq))
    # A worker on time rewrites the dashboard for a new item; the next item's refresh reads it.
    m.open_issue(repo, "Second", milestone=key)
    steward.settle()
    assert "Second" in dashboard(steward, repo)["body"]
    m.open_issue(repo, "Third", milestone=key)
    steward.settle()
    assert "Third" in dashboard(steward, repo)["body"]
    assert rebuilt_notes(steward, repo, board["number"]) == [], "a fresh write is not a replay"
