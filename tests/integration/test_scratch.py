"""Scratch Redis databases (``bot.demo.scratch_redis``): concurrent runs on one Redis never share a database,
even while one of them empties its own between tests."""

from __future__ import annotations

import threading

import pytest

from bot.demo.scratch_redis import CLAIM_KEY, ClaimLost, claim
from tests.conftest import BASE_URL


def test_resets_and_claims_at_once_never_share_a_database() -> None:
    mine = claim(BASE_URL)
    taken: list[int] = []
    stop = threading.Event()

    def keep_resetting() -> None:
        while not stop.is_set():
            mine.reset()

    resetter = threading.Thread(target=keep_resetting)
    resetter.start()
    try:
        for _ in range(200):
            other = claim(BASE_URL)
            taken.append(other.db)
            other.release()
    finally:
        stop.set()
        resetter.join()
        mine.release()
    assert mine.db not in taken, "another run was given a database that was still claimed"


def test_a_lost_claim_is_said_not_silently_shared() -> None:
    mine = claim(BASE_URL)
    client = mine.client()
    try:
        client.set(CLAIM_KEY, "someone-else")
        with pytest.raises(ClaimLost, match=f"database {mine.db}"):
            mine.reset()
        mine.release()
        assert client.get(CLAIM_KEY) == b"someone-else", "a release never empties another run's database"
    finally:
        client.delete(CLAIM_KEY)
        client.close()
