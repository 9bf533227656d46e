"""When Steward started signing survives losing Redis (issue 35 item 1), against a real Redis and a real state
file: it is what makes an unsigned record legacy, so it is decided from what nobody can edit, never from the
absence of memory. Before, with no `STEWARD_SIGNING_SINCE`, a Redis that came back empty made the signing
start *now*: every place created before then — dashboards and verdicts Steward had signed for months — took
an unsigned block as legacy."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from structlog.testing import capture_logs

from bot.demo.scratch_redis import Claim
from bot.queue.jobs import make_redis
from bot.records import sticky
from bot.records.signing import REDIS_SEQ, Keyring, Place, RedisMemory, keyring_from, private_pem
from bot.records.signing_since import NO_LEGACY, REDIS_SINCE
from bot.worker.state_file import StateFile

KEY = private_pem(Ed25519PrivateKey.generate())  # pinned: only the signing start is at stake here
DAY = 86_400.0


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Any]:
    client = make_redis(redis_url)
    try:
        yield client
    finally:
        await client.aclose()


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def _outcome(keyring: Keyring, created: float) -> str:
    """What an unsigned dashboard block reads as in an issue the forge says was created at ``created``."""
    body = sticky.fit("milestone-dashboard", "3", "Dashboard", {"v": 1, "key": 3, "state": "closed"})
    record = await sticky.verify(
        keyring,
        body,
        forge="github",
        repo_id=7,
        container="issue",
        id=11,
        kind="milestone-dashboard",
        key="3",
        created_at=_iso(created),
        expect_data=True,
    )
    return record.outcome


async def _start(redis: Any, state: StateFile | None, since: float | None = None) -> Keyring:
    return await keyring_from(KEY, (), redis, since=since, state=state, warn=False)


async def test_the_signing_start_is_unchanged_by_a_redis_flush(
    redis: Any, redis_claim: Claim, tmp_path: Path
) -> None:
    state = StateFile(tmp_path / "steward-state.json")
    first = await _start(redis, state)
    assert json.loads(state.path.read_text())["signing_since"] == first.since  # type: ignore[union-attr]
    state.beat(force=True)
    redis_claim.reset()  # Redis comes back empty
    again = await _start(redis, state)
    assert again.since == first.since
    assert float(await redis.get(REDIS_SINCE)) == first.since, "Redis holds it again"
    # An earlier start (the operator's) moves it earlier, in both; a later one never moves it later.
    earlier = await _start(redis, state, since=first.since - DAY)
    assert earlier.since == first.since - DAY == state.signing_since()
    later = await _start(redis, state, since=first.since + DAY)
    assert later.since == first.since - DAY == float(await redis.get(REDIS_SINCE))


async def test_a_place_older_than_the_flush_never_becomes_legacy(
    redis: Any, redis_claim: Claim, tmp_path: Path
) -> None:
    """The attack: Steward signed a dashboard, Redis was flushed, a writer puts an unsigned block there."""
    state = StateFile(tmp_path / "steward-state.json")
    first = await _start(redis, state)
    made = first.since + 1.0  # Steward signs a dashboard it creates (the forges' times are whole seconds)
    await first.memory.note(Place("github", 7, "issue", 11, "milestone-dashboard", "3"), first.next_seq())
    redis_claim.reset()
    after = await _start(redis, state)
    assert await _outcome(after, made) == "tampered"
    # What a version that did not sign left, in a place from before signing started, stays legacy.
    assert await _outcome(after, first.since - DAY) == "legacy"


async def test_a_file_kept_before_the_start_was_noted_falls_back_to_its_first_run(
    redis: Any, redis_claim: Claim, tmp_path: Path
) -> None:
    """A state file with only a heartbeat and a catch-up (kept by the version before this one), and Redis
    flushed: the start is the earliest run the file knows, said in one error line — not now."""
    path = tmp_path / "steward-state.json"
    ran = time.time() - 2 * DAY
    path.write_text(json.dumps({"heartbeat": ran + DAY, "catch_up": {"github": ran}}))
    state = StateFile(path)
    redis_claim.reset()
    with capture_logs() as seen:
        keyring = await _start(redis, state)
    assert keyring.since == ran
    [error] = [e for e in seen if e["log_level"] == "error"]
    assert "STEWARD_SIGNING_SINCE" in error["event"] and "first run the state file knows" in error["event"]
    assert state.signing_since() == ran == float(await redis.get(REDIS_SINCE))
    assert await _outcome(keyring, ran + 60) == "tampered"
    # The heartbeat notes the first run it knows, and keeps it.
    state.beat(force=True)
    assert json.loads(path.read_text())["first_seen"] == ran


async def test_signatures_remembered_without_a_start_make_nothing_legacy(redis: Any) -> None:
    """Redis remembers records Steward signed but not when it started signing (that key deleted), and neither
    the operator nor a state file says: no unsigned record counts as legacy, however old its place."""
    await redis.hset(REDIS_SEQ, Place("github", 7, "issue", 11, "milestone-dashboard", "3").ident, "1")
    with capture_logs() as seen:
        keyring = await _start(redis, StateFile(None))
    assert keyring.since == NO_LEGACY
    assert await redis.get(REDIS_SINCE) is None, "nothing made up is kept"
    assert await _outcome(keyring, 1_000_000_000.0) == "tampered"  # 2001
    [error] = [e for e in seen if e["log_level"] == "error"]
    assert "no unsigned record counts as legacy" in error["event"]
    assert "STEWARD_SIGNING_SINCE" in error["event"]


async def test_the_verifier_reads_the_start_redis_remembers_and_writes_nothing(redis: Any) -> None:
    """`steward verify`, `steward forks` and the debug report read when signing started from Redis (beside
    `STEWARD_SIGNING_SINCE`), as the workers do, and never keep one of their own."""
    from types import SimpleNamespace

    from bot.records.signing import verifying_keyring

    settings = SimpleNamespace(verify_keys=[], signing_key=None, signing_since=None)
    assert (await verifying_keyring(settings, redis=redis)).since == 0.0
    assert await redis.get(REDIS_SINCE) is None, "nothing written"
    start = (await _start(redis, None)).since
    verifier = await verifying_keyring(settings, redis=redis)
    assert verifier.since == start
    assert await _outcome(verifier, start + 60) == "tampered"


async def test_a_first_start_takes_now(redis: Any, tmp_path: Path) -> None:
    state = StateFile(tmp_path / "steward-state.json")
    before = time.time()
    keyring = await _start(redis, state)
    assert before <= keyring.since <= time.time()
    assert state.signing_since() == keyring.since
    memory = RedisMemory(redis)
    assert await memory.last(Place("github", 7, "issue", 11, "milestone-dashboard", "3")) is None
    assert await _outcome(keyring, before - DAY) == "legacy"
