"""A worker started with a pinned key (`STEWARD_SIGNING_KEY`) keeps no key in Redis (docs/deploy.md),
against a real Redis: the copy a worker kept there before the key was pinned — under today's name or the one
an earlier version used, inside the receiver's `steward:*` — is deleted; another key is not Steward's to
destroy, so it is moved out of the receiver's reach and kept; a value that is no key is left alone (and never
read as a path)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bot.queue.jobs import make_redis
from bot.records.signing import LEGACY_REDIS_KEY, REDIS_KEY, key_id, keyring_from, private_pem


@pytest.fixture
async def store(redis_url: str) -> AsyncIterator[Any]:
    redis = make_redis(redis_url)
    await redis.delete(REDIS_KEY, LEGACY_REDIS_KEY)
    try:
        yield redis
    finally:
        await redis.delete(REDIS_KEY, LEGACY_REDIS_KEY)
        await redis.aclose()


async def _pinned_start(redis: Any, key: Ed25519PrivateKey) -> None:
    keyring = await keyring_from(private_pem(key), (), redis, warn=False)
    assert keyring.kid == key_id(key.public_key())


async def test_the_copy_of_the_pinned_key_is_deleted_under_either_name(store: Any) -> None:
    redis = store
    pinned = Ed25519PrivateKey.generate()
    await redis.set(REDIS_KEY, private_pem(pinned))
    await redis.set(LEGACY_REDIS_KEY, private_pem(pinned))
    await _pinned_start(redis, pinned)
    assert await redis.exists(REDIS_KEY, LEGACY_REDIS_KEY) == 0


async def test_another_key_is_kept_but_moved_out_of_the_receiver_s_reach(store: Any) -> None:
    redis = store
    other = private_pem(Ed25519PrivateKey.generate())
    await redis.set(LEGACY_REDIS_KEY, other)
    await _pinned_start(redis, Ed25519PrivateKey.generate())
    assert await redis.exists(LEGACY_REDIS_KEY) == 0
    assert (await redis.get(REDIS_KEY)).decode() == other
    # Started again: it stays where it is, and a value that is no key is left as it is.
    await redis.set(LEGACY_REDIS_KEY, "/etc/hostname")
    await _pinned_start(redis, Ed25519PrivateKey.generate())
    assert (await redis.get(REDIS_KEY)).decode() == other
    assert (await redis.get(LEGACY_REDIS_KEY)).decode() == "/etc/hostname"
