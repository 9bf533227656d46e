"""Shared fixtures: a real Redis database for tests, flushed before each test that uses it.

Several test runs may share one Redis (a developer's run beside CI's, say), so each run claims
a database of its own among 1–15 with a claim key, and gives it back at the end.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
import redis

BASE_URL = os.environ.get("STEWARD_TEST_REDIS_URL", "redis://127.0.0.1:6379")
CLAIM_KEY = "steward-test:claim"


def _client(db: int) -> redis.Redis:
    return redis.Redis.from_url(f"{BASE_URL.rstrip('/')}/{db}")


@pytest.fixture(scope="session")
def redis_db() -> Iterator[int]:
    token = uuid.uuid4().hex
    for db in range(15, 0, -1):
        client = _client(db)
        try:
            if client.set(CLAIM_KEY, token, nx=True, ex=3 * 3600):
                break
        except redis.ConnectionError:
            pytest.fail(f"Redis is not answering at {BASE_URL}: run `make redis` (or start redis-server)")
        finally:
            client.close()
    else:
        pytest.fail("every Redis database 1-15 is claimed by another test run")
    yield db
    client = _client(db)
    if client.get(CLAIM_KEY) == token.encode():
        client.flushdb()
    client.close()


@pytest.fixture
def redis_url(redis_db: int) -> Iterator[str]:
    client = _client(redis_db)
    claim = client.get(CLAIM_KEY)
    client.flushdb()
    if claim is not None:
        client.set(CLAIM_KEY, claim, ex=3 * 3600)
    yield f"{BASE_URL.rstrip('/')}/{redis_db}"
    client.close()
