"""Catch-up that converges and stays cheap (issue 26), end to end on both forges.

- A closed milestone inside its grace period no longer makes `steward reconcile` recurse: the gate check
  of that closure is queued for when the grace period ends, and the run costs a handful of reads.
- A milestone closed while Steward was down, before it had a dashboard, is checked like any other closure;
  `--dry-run` on it says what it would write and never fails on its own pretences (the dashboard it
  pretended to open).
"""

from __future__ import annotations

from typing import Any

import pytest
import redis

from bot.queue import QUEUE_NAME
from tests.e2e.conftest import Steward
from tests.e2e.stack import reconcile, wait_for
from tests.e2e.test_reconcile_e2e import _steward_down

# The worker refreshes dashboards quickly; the grace period is the default minute, so the reconcile below
# runs inside it.
pytestmark = pytest.mark.handler_settings(milestones={"refresh_debounce_seconds": 0.2})


def _delivered(steward: Steward) -> None:
    wait_for(
        lambda: steward.maintainer.call("GET", f"{steward.sandbox.url}/_sandbox/deliveries/idle").get("idle"),
        what="the sandbox's deliveries",
    )


def _milestone_reads(requests: list[dict[str, Any]], repo: str) -> list[dict[str, Any]]:
    return [r for r in requests if r["method"] == "GET" and f"/repos/{repo}/milestones/" in r["path"]]


def test_reconcile_with_a_milestone_closed_inside_its_grace_period_ends_and_queues_its_gate(
    steward: Steward,
) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    key = m.create_milestone(repo, "v1.0")
    m.open_issue(repo, "Export orders as CSV", milestone=key)
    steward.settle()
    assert m.issues(repo, "milestone-dashboard"), "the milestone has its dashboard"
    m.set_milestone_state(repo, key, "closed")
    _delivered(steward)  # not settled: on GitHub the closure's gate job waits out the grace period

    steward.clear_requests()
    run = reconcile(steward.settings, "--repo", f"{steward.forge}:{repo}")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "RecursionError" not in run.stdout + run.stderr
    reads = _milestone_reads(steward.bot_requests(repo), repo)
    assert len(reads) <= 3, f"{len(reads)} reads of one milestone"
    assert m.milestone(repo, key)["state"] == "closed", "inside the grace period nothing is reopened"
    queued = redis.Redis.from_url(steward.redis_url).zrange(QUEUE_NAME, 0, -1)
    assert any(b"milestones:gate:" in job and b":%d:" % key in job for job in queued), queued


def _notices(steward: Steward, repo: str, number: int) -> list[str]:
    return [c["body"] for c in steward.bot_comments(repo, number) if "milestone-notice" in c["body"]]


def _config_path(steward: Steward) -> str:
    return ".gitea/steward.yml" if steward.forge == "gitea" else ".github/steward.yml"


def test_a_milestone_closed_during_downtime_before_its_dashboard_is_gated_and_dry_run_says_so(
    steward: Steward,
) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    m.put_file(repo, _config_path(steward), "milestones:\n  grace_period_seconds: 0\n")
    steward.settle()
    with _steward_down(steward):
        key = m.create_milestone(repo, "v2.0")
        m.open_issue(repo, "Import orders from CSV", milestone=key)
        m.set_milestone_state(repo, key, "closed")
        _delivered(steward)
    assert not m.issues(repo, "milestone-dashboard")
    target = f"{steward.forge}:{repo}"

    steward.clear_requests()
    dry = reconcile(steward.settings, "--repo", target, "--since", "1h", "--dry-run")
    assert dry.returncode == 0, dry.stdout[-2000:] + dry.stderr[-2000:]
    assert "would open an issue" in dry.stdout and "Milestone v2.0" in dry.stdout
    assert f"would set milestone 'v2.0' of {repo} to open" in dry.stdout
    assert not [r for r in steward.bot_requests(repo) if r["method"] not in ("GET", "HEAD")]

    done = reconcile(steward.settings, "--repo", target, "--since", "1h")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    steward.settle()
    assert m.milestone(repo, key)["state"] == "open", "the blocked gate reopened it"
    [board] = m.issues(repo, "milestone-dashboard")
    assert len(_notices(steward, repo, board["number"])) == 1

    again = reconcile(steward.settings, "--repo", target, "--since", "1h")
    assert again.returncode == 0
    steward.settle()
    assert m.milestone(repo, key)["state"] == "open"
    assert len(_notices(steward, repo, board["number"])) == 1, "a second run writes nothing new"
