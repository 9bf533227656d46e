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
from hypothesis import settings

from bot.demo.scratch_redis import Claim, NoDatabase, claim

# Speed is measured by bench/, never asserted by a test: hypothesis's own 200 ms deadline per example is a
# timed test, and it failed property tests on a loaded two-core machine (a parser's second reading took
# 337 ms). The parsers' cost on adversarial input is bounded by bench/pathological.py and by the tests of
# their expressions' structure.
settings.register_profile("steward", deadline=None)
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
