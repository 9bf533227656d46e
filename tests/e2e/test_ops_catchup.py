"""Catch-up that converges and stays cheap (issue 26), end to end on both forges.

- A closed milestone inside its grace period no longer makes `steward reconcile` recurse: the gate check
  of that closure is queued for when the grace period ends, and the run costs a handful of reads.
- Redeliveries are paced on a budget of their own: a run that cannot redeliver everything says how many
  are left, does not fail, and the window moves only past what was redelivered, so the next run (not only
  `--since`) finds the rest. (GitHub: Gitea has no redelivery API; there the run only re-checks.)
- A milestone closed while Steward was down, before it had a dashboard, is checked like any other closure;
  `--dry-run` on it says what it would write and never fails on its own pretences (the dashboard it
  pretended to open).
"""

from __future__ import annotations

import re
import subprocess
import threading
import time
from typing import IO, Any

import pytest
import redis

from bot.demo.threads import ThreadedServer
from bot.forge.shapes import budget_key
from bot.queue.gauges import RECEIVER_HEARTBEAT_KEY
from bot.queue.jobs import QUEUE_NAME
from bot.receiver.app import create_app
from tests.e2e.conftest import Steward
from tests.e2e.stack import ROOT, reconcile, reconcile_command, wait_for
from tests.e2e.test_reconcile_e2e import REJECTED, _steward_down, _verdicts

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
    # A process of its own: a RecursionError would be in its log lines.
    run = reconcile(steward.settings, "--repo", f"{steward.forge}:{repo}", process=True)
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


def reconcile_with(steward: Steward, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`steward reconcile` as an operator runs it, with settings of its own (``env``)."""
    return reconcile(steward.settings, *args, env=env)


def _redelivered(out: str) -> int:
    found = re.search(r"(\d+) delivery\(ies\) redelivered", out)
    return int(found.group(1)) if found else 0


def test_paced_redeliveries_never_stop_the_run_and_the_window_keeps_what_was_left(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    number = m.open_issue(repo, "a thread")
    steward.settle()
    with _steward_down(steward):
        for n in range(20):  # pushes: only a redelivery brings them back
            m.put_file(repo, f"notes/{n}.txt", f"note {n}\n")
        for n in range(3):  # comments: the comment catch-up covers them, they are not redelivered
            m.comment(repo, number, f"note {n}")
        _delivered(steward)
    m.add_collaborator(repo, "steward-bot", "admin")  # hooks need admin on GitHub
    target = f"{steward.forge}:{repo}"
    tight = {"STEWARD_WRITE_BUDGET_PER_MINUTE": "12"}  # redeliveries: 3 a minute

    first = reconcile_with(steward, tight, "--repo", target, "--since", "1h")
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    if steward.forge == "gitea":
        assert "redeliver" not in first.stdout, "Gitea cannot redeliver: not offered"
        return
    assert _redelivered(first.stdout) == 3 and "(17 left for the next run)" in first.stdout, first.stdout
    second = reconcile_with(steward, tight, "--repo", target)
    assert second.returncode == 0, second.stdout[-2000:]
    assert _redelivered(second.stdout) == 0 and "(17 left for the next run)" in second.stdout
    third = reconcile_with(steward, {}, "--repo", target)  # a plain run, the budget roomy again
    assert third.returncode == 0, third.stdout[-2000:]
    assert _redelivered(third.stdout) == 17 and "left for the next run" not in third.stdout
    steward.settle()
    fourth = reconcile_with(steward, {}, "--repo", target)
    assert _redelivered(fourth.stdout) == 0, "what arrived is not asked for again"


def _bot_reads(steward: Steward, repo: str) -> int:
    return len([r for r in steward.bot_requests(repo) if r["method"] == "GET"])


def test_reconcile_is_incremental_between_full_passes_and_its_cost_stays_flat(steward: Steward) -> None:
    """Issue 26 item 4: every hourly run re-read every tracked issue. Now a run re-derives only the issues
    updated since the last (the forges' `since`), with a full pass a day or on `--full`."""
    m = steward.maintainer
    repo = steward.new_repo()
    numbers = [m.open_issue(repo, f"bug {n}", REJECTED, labels=["bug", "refine"]) for n in range(12)]
    steward.settle(60, then_next_second=True)
    target = f"{steward.forge}:{repo}"

    steward.clear_requests()
    first = reconcile(steward.settings, "--repo", target)
    assert first.returncode == 0 and "12 issue(s) re-checked" in first.stdout, first.stdout
    full_reads = _bot_reads(steward, repo)

    steward.clear_requests()
    second = reconcile(steward.settings, "--repo", target)
    assert (
        second.returncode == 0 and "0 issue(s) re-checked (1 repositor(ies) incrementally)" in second.stdout
    )
    quiet_reads = _bot_reads(steward, repo)
    paths = sorted({r["path"].split("?")[0] for r in steward.bot_requests(repo) if r["method"] == "GET"})
    print(f"\n{steward.forge}: a full run read {full_reads} times, an incremental one {quiet_reads}: {paths}")
    assert quiet_reads * 2 < full_reads

    with _steward_down(steward):
        m.remove_label(repo, numbers[3], "refine")
        m.add_labels(repo, numbers[3], ["refine"])
        _delivered(steward)
    third = reconcile(steward.settings, "--repo", target)
    assert third.returncode == 0 and "1 issue(s) re-checked" in third.stdout, third.stdout
    forced = reconcile(steward.settings, "--repo", target, "--full")
    assert "12 issue(s) re-checked" in forced.stdout
    steward.settle()
    assert all(len(_verdicts(steward, repo, n)) == 1 for n in numbers), "nothing written twice"


def test_a_run_that_reaches_its_quota_floor_stops_and_the_next_goes_on_from_there(steward: Steward) -> None:
    import asyncio

    from bot.catchup.reconcile import CURSOR_KEY, reconcile_all
    from bot.forge import RepoRef
    from bot.queue.jobs import make_redis
    from bot.telemetry import metrics
    from bot.worker.jobs import build_runtime

    repos = [steward.new_repo() for _ in range(2)]
    kind: Any = steward.forge

    async def run(low: bool) -> Any:
        redis = make_redis(steward.redis_url)
        floor = 0.5 if low else 0.0  # the sandbox's hourly quota is the whole session's: only ours counts
        runtime = build_runtime(steward.settings.model_copy(update={"reconcile_quota_floor": floor}), redis)
        try:
            metrics.HEADROOM.clear()  # what the session's other tests left: only this test's figure counts
            if low:
                metrics.HEADROOM[(kind, "test")] = (100, 5000)
            return await reconcile_all(runtime, [(kind, RepoRef.parse(r)) for r in repos])
        finally:
            metrics.HEADROOM.pop((kind, "test"), None)
            await runtime.aclose()
            await redis.aclose()

    stopped = asyncio.run(run(low=True))
    assert stopped.repos == 0 and "rate limit is left" in stopped.stopped and repos[0] in stopped.stopped
    cursor = redis.Redis.from_url(steward.redis_url).get(f"{CURSOR_KEY}:{kind}")
    ident = steward.maintainer.call("GET", f"/repos/{repos[0]}")["id"]
    assert cursor == f"{kind}:#{ident}".encode(), "kept by the repository's id (bot.forge.repo_key)"
    done = asyncio.run(run(low=False))
    assert done.repos == 2 and not done.stopped and not done.errors
    assert redis.Redis.from_url(steward.redis_url).get(f"{CURSOR_KEY}:{kind}") is None


def test_redeliveries_wait_for_a_receiver_and_an_unreadable_hook_is_noted_once_a_day(
    steward: Steward,
) -> None:
    """Issue 40 item 3: a periodic run during a receiver outage asked GitHub for redeliveries that all
    failed; and "the failed deliveries of R were not checked" was printed every hour for every push-only
    repository. Now nothing is redelivered while no receiver reports in (the next run asks again), and the
    note comes once a day per repository (and in /metrics)."""
    if steward.forge == "gitea":
        return  # Gitea has no redelivery API: neither applies
    m = steward.maintainer
    repo = steward.new_repo()  # the bot may push, not administer: it cannot read the hooks
    target = f"{steward.forge}:{repo}"
    first = reconcile_with(steward, {}, "--repo", target, "--since", "1h")
    assert "were not checked" in first.stdout, first.stdout
    second = reconcile_with(steward, {}, "--repo", target, "--since", "1h")
    assert second.returncode == 0 and "were not checked" not in second.stdout, "once a day"

    m.add_collaborator(repo, "steward-bot", "admin")
    port = steward.receiver.port
    steward.receiver.stop()
    try:
        for n in range(2):
            m.put_file(repo, f"notes/{n}.txt", f"note {n}\n")
        _delivered(steward)
        redis.Redis.from_url(steward.redis_url).set(RECEIVER_HEARTBEAT_KEY, repr(time.time() - 600))
        down = reconcile_with(steward, {}, "--repo", target, "--since", "1h")
        assert down.returncode == 0, down.stdout[-2000:]
        assert _redelivered(down.stdout) == 0 and "no receiver is listening" in down.stdout, down.stdout
    finally:
        steward.receiver = ThreadedServer(create_app(steward.settings), port=port).start()
    wait_for(
        lambda: (
            float(redis.Redis.from_url(steward.redis_url).get(RECEIVER_HEARTBEAT_KEY) or 0) > time.time() - 30
        ),
        what="the receiver's heartbeat",
    )
    up = reconcile_with(steward, {}, "--repo", target)
    assert _redelivered(up.stdout) == 2, up.stdout


def _reconcile_against_a_spent_budget(
    steward: Steward, env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    """`steward reconcile` (as ``reconcile_with``) while the minute's write budget stays spent — its
    ``STEWARD_WRITE_BUDGET_PER_MINUTE`` writes made 50 s ago — until the run says it waits for the budget (or
    ends). Spent once, before the run, those writes would leave the minute 10 s later: a run that took longer
    than that to reach its first write (a process starting and reading the forge on a loaded machine) found
    the budget free, and never had to wait."""
    argv, base = reconcile_command(steward.settings, *args, env=env)
    writes = int(base["STEWARD_WRITE_BUDGET_PER_MINUTE"])
    log = f"steward:budget:{budget_key(steward.forge, 'tok-bot')}:60000"
    r = redis.Redis.from_url(steward.redis_url)
    proc = subprocess.Popen(
        argv, env=base, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    out: list[str] = []
    err: list[str] = []

    def read(stream: IO[str] | None, into: list[str]) -> None:
        for line in stream or ():
            into.append(line)

    readers = [
        threading.Thread(target=read, args=pair, daemon=True)
        for pair in ((proc.stdout, out), (proc.stderr, err))
    ]
    for reader in readers:
        reader.start()

    def spent_until_it_waits() -> bool:
        if any("for the write budget" in line for line in list(err)) or proc.poll() is not None:
            return True
        ago = int((time.time() - 50) * 1000)
        r.zadd(log, {f"w{n}": ago for n in range(writes)})
        return False

    try:
        wait_for(spent_until_it_waits, timeout=180, what="steward reconcile to need a write")
        proc.wait(timeout=180)
    finally:
        proc.kill()
        r.close()
    for reader in readers:
        reader.join(timeout=10)
    return subprocess.CompletedProcess(argv, proc.returncode, "".join(out), "".join(err))


def test_reconcile_waits_for_a_spent_write_budget_instead_of_failing(steward: Steward) -> None:
    """Issue 40 item 1: `steward reconcile` exited 1 when people's commands had spent the write budget. Now
    it waits for the budget (saying how long on standard error) and writes what it must."""
    m = steward.maintainer
    repo = steward.new_repo()
    with _steward_down(steward):
        number = m.open_issue(repo, "Login button does nothing", REJECTED, labels=["bug", "refine"])
        _delivered(steward)
    # People's commands spent the minute's budget (10 writes here) 50 s before the catch-up's first write:
    # that write waits ~10 s, past the 5 s a job would wait before it is deferred, and then the whole budget
    # is free for what the catch-up writes (with a budget smaller than that, the run waits a second minute).
    run = _reconcile_against_a_spent_budget(
        steward,
        {"STEWARD_WRITE_BUDGET_PER_MINUTE": "10"},
        "--repo",
        f"{steward.forge}:{repo}",
        "--since",
        "1h",
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "waiting" in run.stderr and "for the write budget" in run.stderr, run.stderr[-1000:]
    steward.settle()
    assert _verdicts(steward, repo, number), "the verdict was written once the budget had room"
