"""When Steward started signing survives a Redis flush (issue 35 item 1), end to end on both forges.

Steward signed a milestone's dashboard; Redis came back empty (no `STEWARD_SIGNING_SINCE` pinned); while the
workers were down, a write collaborator closed the milestone with open work and replaced the dashboard's
signed block with an unsigned one. Before: the restarted workers took *now* as the signing start, so the
dashboard — created long before now — read as a legacy record, and its re-derivation took the closure as
history from before signing: the milestone stayed closed. Now the signing start comes back from the workers'
state file (`STEWARD_STATE_FILE`): the unsigned block in a place created after it was tampered with (a note
says so), the closure is gated again and the milestone reopened, and the forged data is never signed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import redis

from bot.demo.threads import ThreadedWorker
from bot.records import sticky
from bot.records.signing import parse_time
from tests.e2e.conftest import Steward
from tests.e2e.stack import wait_for
from tests.e2e.test_integrity_e2e import dashboard, public_key, rebuilt_notes, verify, writer
from tests.e2e.test_record_trust_e2e import _forged, _wait_reopened

FAST = {"grace_period_seconds": 1, "refresh_debounce_seconds": 0.3, "notify": ["maintainer"]}
pytestmark = pytest.mark.handler_settings(milestones=FAST)


def _workers(steward: Steward) -> None:
    """The workers start over (as after a Redis loss: new pods), with the same settings."""
    handler_settings = steward.workers[0].handler_settings
    for each in steward.workers:
        each.stop()
    steward.workers = [ThreadedWorker(steward.settings, handler_settings=handler_settings).start()]


def test_an_unsigned_block_in_a_dashboard_signed_before_a_redis_flush_is_not_legacy(
    steward: Steward, tmp_path: Path
) -> None:
    m = steward.maintainer
    steward.settle()  # the catch-up a worker runs at its start is not cut off by the restart below
    state = tmp_path / "steward-state.json"
    steward.settings = steward.settings.model_copy(update={"state_file": state})
    store = redis.Redis.from_url(steward.redis_url)
    # When this deployment started signing: a minute ago (what Redis holds when the workers start).
    store.set("steward:signing:since", repr(time.time() - 60))
    _workers(steward)
    wait_for(lambda: state.exists() or None, what="the workers' state file")
    repo = steward.new_repo()
    writer(steward, repo)
    key = m.create_milestone(repo, "v1")
    m.open_issue(repo, "Still open", milestone=key)
    steward.settle()
    board = dashboard(steward, repo)
    assert "<!-- steward:sig v1 " in board["body"], "Steward signed the dashboard"

    for each in steward.workers:
        each.stop()
    # Redis comes back with nothing of Steward's: the signing start and the signatures it remembered are gone
    # (the key survives, as a pinned one does).
    store.delete(*[k for k in store.scan_iter("steward:*")])
    # Meanwhile the writer closes the milestone with open work and puts an unsigned block in the dashboard.
    override = {"by": "maintainer", "at": "2026-01-01T00:00:00Z", "reason": "ship it", "overrode": []}
    steward.outsider.set_milestone_state(repo, key, "closed")
    steward.outsider.edit_issue(repo, board["number"], body=_forged(key, override))
    closed = parse_time(m.milestone(repo, key)["closed_at"])
    assert closed is not None
    # The workers come back a while later (the forges' times are whole seconds).
    wait_for(lambda: time.time() > closed + 2 or None, what="two seconds after the closure")
    _workers(steward)
    _wait_reopened(steward, repo, key)

    body = dashboard(steward, repo)["body"]
    data = sticky.unverified_data(body)
    assert "<!-- steward:sig v1 " in body and data["override"] is None and data["state"] == "open"
    # Said in the thread, once (whichever job read the block first: the gate cannot name who changed it; the
    # catch-up's listed copy of the dashboard is read again under the lock, not reported a second time).
    notes = rebuilt_notes(steward, repo, board["number"])
    assert len(notes) == 1 and "it was rebuilt" in notes[0], notes
    # What verifies now is the dashboard Steward re-derived, not the writer's block.
    done = verify(steward, f"{repo}#{board['number']}", public_key(steward, tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["all_verified"] is True
