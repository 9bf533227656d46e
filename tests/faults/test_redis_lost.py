"""Redis flushed (or restarted without persistence) while jobs were queued: what the receiver acknowledged
is gone from the queue, and `steward reconcile` makes it good from the forge (the forge is the database,
DESIGN §3.1). A second run writes nothing.

What reconcile re-derives is state (verdicts and their labels, dashboards, configuration errors); a command
(`/steward ping`) queued at the moment of the flush is not replayed — its comment can be edited or the
delivery redelivered from the forge (docs/reliability.md says so)."""

from __future__ import annotations

import httpx2

from bot.demo.scratch_redis import Claim
from bot.demo.texts import APPROVED_BUG
from bot.demo.threads import ThreadedWorker
from tests.e2e.conftest import Steward
from tests.e2e.stack import reconcile, wait_for
from tests.faults.scenario import Expected, bot_requests, check_forge_state, deliveries_to

BUGS = 5


def test_what_a_lost_queue_held_is_recovered_by_steward_reconcile(
    steward: Steward, redis_claim: Claim
) -> None:
    repo = steward.new_repo()
    steward.workers[0].stop()  # the jobs stay queued
    expected = Expected()
    for i in range(BUGS):
        number = steward.maintainer.open_issue(repo, f"Lost {i}", APPROVED_BUG, labels=["bug", "refine"])
        expected.verdict_label[number] = "refinement:approved"
    idle = f"{steward.sandbox.url}/_sandbox/deliveries/idle"
    wait_for(
        lambda: httpx2.get(idle, params={"timeout": 5}, timeout=10).json().get("idle"), what="the deliveries"
    )
    acknowledged = [d for d in deliveries_to(steward.sandbox.url, repo) if d["status_code"] == 202]
    assert len(acknowledged) >= BUGS, "the receiver acknowledged every event"

    # A flush and a restart without persistence leave the same thing: an empty Redis (the claim on the
    # scratch database is kept, so no other test run takes it meanwhile).
    redis_claim.reset()
    steward.workers[0] = ThreadedWorker(steward.settings).start()
    steward.settle()
    assert all(steward.bot_comments(repo, n) == [] for n in expected.verdict_label), "the queue was lost"

    done = reconcile(steward.settings, "--repo", f"{steward.forge}:{repo}")
    assert done.returncode == 0, done.stdout + done.stderr
    steward.settle()
    problems = check_forge_state(steward, repo, expected)
    assert not problems, "\n".join(problems)

    steward.clear_requests()
    again = reconcile(steward.settings, "--repo", f"{steward.forge}:{repo}")
    assert again.returncode == 0, again.stdout + again.stderr
    steward.settle()
    writes = [r for r in bot_requests(steward.sandbox.url) if r["method"] not in ("GET", "HEAD")]
    assert [w for w in writes if "/hooks/" not in w["path"]] == [], "a second run changes nothing"
    assert not check_forge_state(steward, repo, expected)
