"""The sandbox's hourly quota (5000 requests a login, GitHub's `X-RateLimit-*` headers) starts afresh on
`new_rate_windows()`: the e2e session shares one sandbox across hundreds of tests and gives each test an hour
of its own (tests/e2e/conftest.py), so a 403 late in a long run is not read as a spent primary limit."""

from __future__ import annotations

import httpx2

from bot.sandbox.server import SandboxServer
from bot.sandbox.shared.runtime import RATE_LIMIT


def test_new_rate_windows_gives_every_login_a_fresh_hour(
    sandbox: SandboxServer, alice: httpx2.Client
) -> None:
    for _ in range(RATE_LIMIT):
        sandbox.sandbox.rate_headers("alice", count=True)
    spent = alice.get("/user")
    assert spent.headers["X-RateLimit-Remaining"] == "0"
    sandbox.sandbox.new_rate_windows()
    fresh = alice.get("/user")
    assert int(fresh.headers["X-RateLimit-Remaining"]) == RATE_LIMIT - 1
    assert fresh.headers["X-RateLimit-Used"] == "1"
