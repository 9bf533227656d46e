"""A Redis database of one's own for a throwaway run (the demo, the test suite).

Several runs may share one Redis — a developer's tests beside CI's, a demo beside both — so each claims a
database among 1–15 with a claim key, empties it when it is done and gives it back. Database 0, where a
real Steward keeps its queue by default, is never used.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import redis

CLAIM_KEY = "steward-test:claim"
CLAIM_SECONDS = 3 * 3600


class NoDatabase(Exception):
    """Every database 1–15 is claimed by another run."""


class ClaimLost(Exception):
    """The database is no longer this run's (its claim expired and another run took it)."""


# Empty the database and keep the claim, in one step: between a FLUSHDB and a new claim key another run
# could claim the database, and both would then use it.
_RESET = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('FLUSHDB')
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return 1
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('FLUSHDB')
return 1
"""


@dataclass(frozen=True)
class Claim:
    base_url: str
    db: int
    token: str

    @property
    def url(self) -> str:
        return f"{self.base_url.rstrip('/')}/{self.db}"

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url)

    def reset(self) -> None:
        """Empty the database but keep the claim; ``ClaimLost`` when it is not ours any more."""
        client = self.client()
        try:
            if not client.eval(_RESET, 1, CLAIM_KEY, self.token, str(CLAIM_SECONDS)):
                raise ClaimLost(f"Redis database {self.db} was claimed by another run")
        finally:
            client.close()

    def release(self) -> None:
        """Empty the database and give it back (only if the claim is still ours)."""
        client = self.client()
        try:
            client.eval(_RELEASE, 1, CLAIM_KEY, self.token)
        finally:
            client.close()


def base_of(url: str) -> str:
    """``redis://host:port/3`` → ``redis://host:port``."""
    scheme, sep, rest = url.partition("://")
    return f"{scheme}{sep}{rest.split('/', 1)[0]}" if sep else url


def claim(base_url: str) -> Claim:
    """Claim a free database among 15…1 of the Redis at ``base_url``; raises ``redis.ConnectionError``
    when nothing answers and ``NoDatabase`` when all are taken."""
    token = uuid.uuid4().hex
    for db in range(15, 0, -1):
        client = redis.Redis.from_url(f"{base_url.rstrip('/')}/{db}")
        try:
            if client.set(CLAIM_KEY, token, nx=True, ex=CLAIM_SECONDS):
                return Claim(base_url, db, token)
        finally:
            client.close()
    raise NoDatabase("every Redis database 1-15 is claimed by another run")
