"""Shared fixtures: a real Redis database for tests, flushed before each test that uses it."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import redis

TEST_REDIS_URL = os.environ.get("STEWARD_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


@pytest.fixture
def redis_url() -> Iterator[str]:
    client = redis.Redis.from_url(TEST_REDIS_URL)
    try:
        client.ping()
    except redis.ConnectionError:
        pytest.fail(f"Redis is not answering at {TEST_REDIS_URL}: run `make redis` (or start redis-server)")
    client.flushdb()
    yield TEST_REDIS_URL
    client.flushdb()
    client.close()
