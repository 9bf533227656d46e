"""Shared fixtures: a real Redis database for tests, flushed before each test that uses it.

Several test runs may share one Redis (a developer's run beside CI's, say), so each run claims a
database of its own among 1–15 (``bot.demo.scratch_redis``), and gives it back at the end.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import redis
import structlog
from hypothesis import HealthCheck, settings

from bot.demo.scratch_redis import Claim, NoDatabase, claim

# Speed is measured by bench/, never asserted by a test: hypothesis's own 200 ms deadline per example is a
# timed test, and it failed property tests on a loaded two-core machine (a parser's second reading took
# 337 ms). The parsers' cost on adversarial input is bounded by bench/pathological.py and by the tests of
# their expressions' structure. HealthCheck.too_slow is the same kind of check (the first examples' data took
# longer than a number of seconds to draw): it is off for every test here, so no test repeats it (a test's
# own suppress_health_check replaces this list: one that needs another check off names too_slow again).
settings.register_profile("steward", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("steward")

BASE_URL = os.environ.get("STEWARD_TEST_REDIS_URL", "redis://127.0.0.1:6379")


@pytest.fixture(scope="session")
def redis_claim() -> Iterator[Claim]:
    try:
        found = claim(BASE_URL)
    except redis.ConnectionError:
        pytest.fail(f"Redis is not answering at {BASE_URL}: run `make redis` (or start redis-server)")
    except NoDatabase as exc:
        pytest.fail(str(exc))
    yield found
    found.release()


@pytest.fixture(scope="session")
def redis_db(redis_claim: Claim) -> int:
    return redis_claim.db


@pytest.fixture
def redis_url(redis_claim: Claim) -> str:
    redis_claim.reset()
    return redis_claim.url


@pytest.fixture(autouse=True)
def _logging_left_as_found() -> Iterator[None]:
    """Each test finds structlog as the one before found it: what a test configures (``logs.configure``, a
    `steward` command's log set-up run in this process) is undone after it, inside the same processor list.
    A logger cached on first use keeps the list it found: a test that gives structlog another list
    (``structlog.reset_defaults()``, ``structlog.configure(processors=[...])``) leaves the loggers cached
    meanwhile out of every later ``structlog.testing.capture_logs`` in this process — such a test errors
    (tests/e2e/test_locked_threads_e2e.py failed after tests/e2e/test_dead_letters.py)."""
    before = structlog.get_config()
    chain = list(before["processors"])
    yield
    after = structlog.get_config()
    kept = after["processors"] is before["processors"]
    before["processors"][:] = chain
    structlog.configure(**before)
    if not kept:
        pytest.fail("this test gave structlog another processor list; see tests/conftest.py")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """The order's seed, at the end where a failure is read (pytest-randomly shuffles the tests; its own
    header line is hidden by -q): rerun the same order with ``-p randomly --randomly-seed=N``."""
    if config.pluginmanager.hasplugin("randomly"):
        seed = config.getoption("randomly_seed")
        terminalreporter.write_line(f"tests ran in random order; the same order: --randomly-seed={seed}")


# The tests that take about 10 s or more each (measured with `--durations`, docs/performance.md "The test
# suite's time"), with their seconds on a quiet machine (those from the loaded machine's sample halved): run
# first, so that no worker starts one while the other has nothing left to do (a 60 s test drawn last by the
# random order kept one core idle for up to a minute).
SLOW_FIRST: dict[str, float] = {
    "tests/faults/test_forge_stalls.py::test_a_forge_that_rate_limits_every_write_for_30_seconds": 60,
    "tests/e2e/test_rename_e2e.py::test_steward_follows_a_renamed_and_transferred_repository": 24,
    "tests/e2e/test_demo.py::test_the_full_tour_shows_each_scene_outcome": 19,
    "tests/faults/test_forge_errors.py::test_forge_requests_failing_at_random": 17,
    "tests/e2e/test_ops_catchup.py::test_reconcile_is_incremental_between_full_passes": 14,
    "tests/e2e/test_ratify_e2e.py::test_a_hand_edited_ratification_record_is_rebuilt": 11,
    "tests/e2e/test_integrity_e2e.py::test_a_hand_edited_forks_record_is_reported": 10,
    "tests/e2e/test_ops_catchup.py::test_a_milestone_closed_during_downtime_before": 9,
    "tests/e2e/test_ops_catchup.py::test_redeliveries_wait_for_a_receiver": 9,
    "tests/e2e/test_ops_catchup.py::test_paced_redeliveries_never_stop_the_run": 8,
}


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Put the ``SLOW_FIRST`` tests at the head of each xdist worker's share, after pytest-randomly's shuffle
    (which runs first). `--dist worksteal` hands worker k the k-th contiguous slice of this order and lets an
    idle worker steal the *tail* of a busy one's slice, so a slow test at a slice's head starts at once and
    never ends the run alone. The order stays a function of the seed, the same on every worker."""

    def slow(item: pytest.Item) -> float:
        return next((s for prefix, s in SLOW_FIRST.items() if item.nodeid.startswith(prefix)), 0.0)

    heavy = sorted((item for item in items if slow(item)), key=lambda item: -slow(item))
    if not heavy:
        return
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    rest = [item for item in items if not slow(item)]
    # The slices worksteal cuts: worker k gets remaining // (workers - k) of what is left.
    sizes, left = [], len(items)
    for k in range(workers):
        sizes.append(left // (workers - k))
        left -= sizes[-1]
    # Deal the slow tests to the slice with the least slow time so far.
    shares: list[list[pytest.Item]] = [[] for _ in range(workers)]
    load = [0.0] * workers
    for item in heavy:
        k = min(range(workers), key=lambda w: (load[w], w))
        shares[k].append(item)
        load[k] += slow(item)
    ordered: list[pytest.Item] = []
    for k in range(workers):
        take = max(sizes[k] - len(shares[k]), 0)
        ordered += shares[k] + rest[:take]
        rest = rest[take:]
    items[:] = ordered + rest
