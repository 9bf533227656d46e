"""Catch-up runs that overlap, stop on time, and cost little when nothing changed (issue 26), end to end on
both forges.

- An outage noticed while a run goes on (a receiver restarting after a gap) is not cleared by that run: the
  run may have listed the comments before the outage's events were written, so the next run must look again.
- A run with a tiny time budget stops, says so, and the next runs go on where it stopped until every
  repository was covered: none missed, none done twice.
- The reconcile's `since` listings are asked for with the ETags (and answered from the bodies) a previous
  `steward reconcile` process kept in Redis: on GitHub an unchanged listing costs a 304, which does not count
  against the hourly quota; a change is still seen.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import redis

from bot.catchup.comments import LISTING_GRID_SECONDS
from bot.catchup.reconcile import LAST_RUN_KEY, reconcile_all
from bot.commands.context import EventContext
from bot.commands.registry import Registry
from bot.forge import RepoRef
from bot.queue.gauges import mark_outage, outages
from bot.queue.jobs import make_redis
from bot.worker.jobs import build_runtime
from tests.e2e.conftest import Steward
from tests.e2e.stack import reconcile, wait_for
from tests.e2e.test_ops_catchup import _delivered, reconcile_with
from tests.e2e.test_ops_downtime import _pongs
from tests.e2e.test_reconcile_e2e import REJECTED, _steward_down, _verdicts


def test_a_run_never_clears_an_outage_noticed_while_it_ran(steward: Steward) -> None:
    """Marker A is set, a run starts, marker B is set while it runs (by a reconciler the run calls, so the
    order is certain), the run finishes: A is cleared, B stays for the next run, which clears it."""
    repo = RepoRef.parse(steward.new_repo())
    kind: Any = steward.forge

    async def run(meanwhile: bool) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
        client = make_redis(steward.redis_url)
        registry = Registry()
        noticed: dict[str, float] = {}

        @registry.reconcile("outage-meanwhile", checks="a receiver outage noticed while the run goes on")
        async def outage_meanwhile(ctx: EventContext) -> None:
            if meanwhile and not noticed:
                before = await outages(client)
                await mark_outage(client, time.time() - 30)  # B: began after the run's listings
                noticed.update({m: s for m, s in (await outages(client)).items() if m not in before})

        runtime = build_runtime(steward.settings, client, registry)
        try:
            first: dict[str, float] = {}
            if meanwhile:
                await mark_outage(client, time.time() - 600)  # A: before the run
                first = await outages(client)
            report = await reconcile_all(runtime, [(kind, repo)])
            assert not report.stopped and not report.errors, report
            return first, noticed, await outages(client)
        finally:
            await runtime.aclose()
            await client.aclose()

    redis.Redis.from_url(steward.redis_url).delete("steward:outage-since")
    marked_a, marked_b, left = asyncio.run(run(meanwhile=True))
    assert len(marked_a) == 1 and len(marked_b) == 1
    assert left == marked_b, "the outage noticed during the run stays; the one before it is cleared"
    *_, after = asyncio.run(run(meanwhile=False))
    assert after == {}, "the next run covers it and clears it"


def _listings(steward: Steward, repo: str) -> list[dict[str, Any]]:
    """The bot's `since` listings of ``repo``'s issues and comments in the sandbox's request log."""
    return [
        r
        for r in steward.bot_requests(repo)
        if r["method"] == "GET"
        and "since=" in r["query"]
        and r["path"].endswith((f"/repos/{repo}/issues", f"/repos/{repo}/issues/comments"))
    ]


def _done(out: str) -> str:
    [line] = [x for x in out.splitlines() if x.startswith("Done:")]
    return line


def _slot(when: float) -> int:
    return int(when) // LISTING_GRID_SECONDS


def test_unchanged_listings_cost_a_304_across_reconcile_processes_and_a_change_is_seen(
    steward: Steward,
) -> None:
    """Three `steward reconcile` processes against a repository nothing changes in: the third asks for the
    same `since` listings as the second, with the ETags the second kept in Redis, and GitHub answers 304
    (Gitea answers no conditional request: 200, as before). Then a label and a command posted while Steward
    was down are still found by the next run."""
    m = steward.maintainer
    repo = steward.new_repo()
    numbers = [m.open_issue(repo, f"bug {n}", REJECTED, labels=["bug", "refine"]) for n in range(3)]
    steward.settle(60, then_next_second=True)
    target = f"{steward.forge}:{repo}"
    # Processes of their own: what one run kept for the next is in Redis, not in a process's memory. A full
    # pass first: the incremental ones come after.
    first = reconcile(steward.settings, "--repo", target, process=True)
    assert first.returncode == 0 and "3 issue(s) re-checked" in first.stdout, first.stdout + first.stderr

    # The listings start on a six-hour grid; should a boundary fall between two runs, the next pair compares.
    for _ in range(2):
        began = time.time()
        steward.clear_requests()
        second = reconcile(steward.settings, "--repo", target, process=True)
        seconds = [r["status"] for r in _listings(steward, repo)]
        steward.clear_requests()
        third = reconcile(steward.settings, "--repo", target, process=True)
        thirds = [r["status"] for r in _listings(steward, repo)]
        every = steward.bot_requests(repo)
        if _slot(began) == _slot(time.time()):
            break
    assert second.returncode == 0 and third.returncode == 0, third.stdout + third.stderr
    assert "0 issue(s) re-checked (1 repositor(ies) incrementally)" in _done(third.stdout)
    assert _done(second.stdout) == _done(third.stdout), "the same result"
    counted = [r for r in every if r["status"] != 304]
    kept = redis.Redis.from_url(steward.redis_url)
    stored = [kept.strlen(k) for k in kept.scan_iter("steward:etag:*")]
    paths = sorted(f"{r['path']}?{r['query']}" for r in counted)
    print(
        f"\n{steward.forge}: listings of the second run {seconds}, of the third {thirds}; the third run made "
        f"{len(every)} requests, {len(every) - len(counted)} of them 304, the rest {paths}; "
        f"{len(stored)} pages kept in Redis, {sum(stored)} bytes"
    )
    assert len(thirds) == len(seconds) >= 2, "the issues and the comments listed since the window"
    if steward.forge == "github":
        assert set(thirds) == {304}, "an unchanged listing costs a 304"
        # Every other listing the capabilities read is kept too; only the hooks (403: no admin) are asked.
        assert [r["path"] for r in counted] == [f"/repos/{repo}/hooks"], paths
    else:
        assert set(thirds) == {200}, "Gitea answers no conditional request"

    with _steward_down(steward):
        m.remove_label(repo, numbers[1], "refine")
        m.add_labels(repo, numbers[1], ["refine"])
        m.comment(repo, numbers[2], "/steward ping")
        _delivered(steward)
    steward.clear_requests()
    fourth = reconcile(steward.settings, "--repo", target, process=True)
    assert fourth.returncode == 0, fourth.stdout + fourth.stderr
    done = _done(fourth.stdout)
    # The relabelled bug, and the issue commented on (a comment updates its issue too).
    assert "2 issue(s) re-checked" in done and "1 comment(s) with commands queued" in done, done
    assert 200 in {r["status"] for r in _listings(steward, repo)}, "the changed listing is read again"
    wait_for(lambda: _pongs(steward, repo, numbers[2]), timeout=60, what="the answer to the ping")
    steward.settle(60)
    assert len(_pongs(steward, repo, numbers[2])) == 1
    assert all(len(_verdicts(steward, repo, n)) == 1 for n in numbers), "nothing written twice"


def test_a_run_out_of_time_stops_and_the_next_runs_go_on_until_every_repository_is_covered(
    steward: Steward,
) -> None:
    """Item 4's time budget: with a budget of a millisecond every run covers one repository (a run always gets
    one further) and stops, saying so and where the next goes on; the third run finishes. Every bug
    labelled while Steward was down gets its verdict, once; the window moves only after the last run, and
    back to when the first began, so nothing that changed meanwhile is skipped."""
    m = steward.maintainer
    repos = [steward.new_repo() for _ in range(3)]
    with _steward_down(steward):
        bugs = [
            m.open_issue(repo, "Login button does nothing", REJECTED, labels=["bug", "refine"])
            for repo in repos
        ]
        _delivered(steward)
    targets = [arg for repo in repos for arg in ("--repo", f"{steward.forge}:{repo}")]
    tiny = {"STEWARD_RECONCILE_BUDGET_SECONDS": "0.001"}
    last = redis.Redis.from_url(steward.redis_url)
    before = last.get(f"{LAST_RUN_KEY}:{steward.forge}")
    began = time.time()

    outs = []
    for n in range(3):
        out = reconcile_with(steward, tiny, *targets)
        outs.append(out)
        assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
        assert "Done: 1 repository, 1 issue(s) re-checked" in _done(out.stdout), out.stdout
        if n < 2:
            goes_on = targets[2 * n + 3]
            assert (
                f"note: stopped: the run's time budget (0.001 s) is used; the next run goes on from {goes_on}"
                in (out.stdout)
            ), out.stdout
            window = last.get(f"{LAST_RUN_KEY}:{steward.forge}")
            assert window == before, "the window stays while the pass is open"
    assert "stopped" not in outs[2].stdout
    recorded = float(last.get(f"{LAST_RUN_KEY}:{steward.forge}") or 0)
    assert began - 1 <= recorded <= began + 30, "the window moves to when the pass began, not its last run"
    steward.settle(60)
    for repo, bug in zip(repos, bugs, strict=True):
        assert len(_verdicts(steward, repo, bug)) == 1, f"{repo}#{bug}: one verdict"


def test_a_pass_over_several_runs_clears_only_the_outages_noticed_before_it_began(steward: Steward) -> None:
    """A pass that takes two runs (a budget of a millisecond: one repository each): an outage noticed
    between its runs is not cleared when the pass ends — the repository its first run covered never looked
    at it — and the next pass clears it."""
    repos = [RepoRef.parse(steward.new_repo()) for _ in range(2)]
    kind: Any = steward.forge
    settings = steward.settings.model_copy(update={"reconcile_budget_seconds": 0.001})

    async def run(mark: bool) -> tuple[str, dict[str, float]]:
        client = make_redis(steward.redis_url)
        runtime = build_runtime(settings, client)
        try:
            if mark:
                await mark_outage(client, time.time() - 60)
            report = await reconcile_all(runtime, [(kind, r) for r in repos])
            assert report.repos == 1 and not report.errors, report
            return report.stopped, await outages(client)
        finally:
            await runtime.aclose()
            await client.aclose()

    redis.Redis.from_url(steward.redis_url).delete("steward:outage-since")
    stopped, [a] = asyncio.run(run(mark=True))  # A, then the pass's first run
    assert "time budget" in stopped, stopped
    stopped, left = asyncio.run(run(mark=True))  # B, then the pass's last run
    assert not stopped and a not in left and len(left) == 1, "A is cleared, B stays"
    stopped, after = asyncio.run(run(mark=False))
    assert "time budget" in stopped and after == left, "a new pass: not done yet"
    stopped, after = asyncio.run(run(mark=False))
    assert not stopped and after == {}, "the pass that began after B clears it"
