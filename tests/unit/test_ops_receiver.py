"""The receiver reads at most STEWARD_MAX_LARGE_BODIES bodies over 1 MiB at once (issue 26, item 11): a
delivery costs several times its size while it is read and parsed, so the memory limit the chart derives
(base + that × body limit × 5) holds only if the receiver keeps to it. Small bodies never wait."""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request

from bot.config.settings import Settings
from bot.queue.jobs import make_redis
from bot.receiver.app import LARGE_BODY_BYTES, Receiver

SIZE = 2 * LARGE_BODY_BYTES


def _request(size: int, gate: asyncio.Event, started: list[str], name: str) -> Request:
    headers = [
        (b"x-github-event", b"issues"),
        (b"x-github-delivery", name.encode()),
        (b"x-hub-signature-256", b"sha256=00"),
        (b"content-length", str(size).encode()),
    ]
    scope: dict[str, Any] = {
        "type": "http",
        "method": "POST",
        "path": "/webhooks/github",
        "headers": headers,
        "client": ("10.0.0.1", 1234),
    }
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            started.append(name)
            await gate.wait()
            sent = True
            return {"type": "http.request", "body": b"x" * size, "more_body": False}
        return {"type": "http.disconnect"}

    return Request(scope, receive)


def test_large_bodies_are_read_one_at_a_time_and_small_ones_never_wait() -> None:
    async def run() -> list[str]:
        settings = Settings(github_webhook_secrets="s", max_large_bodies=1)
        # The client connects only when used, and a 401 never uses it.
        receiver = Receiver(settings, make_redis("redis://127.0.0.1:1/0"))
        started: list[str] = []
        first_gate, second_gate, small_gate = asyncio.Event(), asyncio.Event(), asyncio.Event()
        first = asyncio.create_task(receiver.github(_request(SIZE, first_gate, started, "big-1")))
        second = asyncio.create_task(receiver.github(_request(SIZE, second_gate, started, "big-2")))
        small_gate.set()
        small = asyncio.create_task(receiver.github(_request(1000, small_gate, started, "small")))
        await asyncio.wait_for(small, 5)
        for _ in range(50):  # let every task run as far as it can (no clock involved)
            await asyncio.sleep(0)
        seen = list(started)
        first_gate.set()
        second_gate.set()
        answers = await asyncio.wait_for(asyncio.gather(first, second), 5)
        assert [a.status_code for a in answers] == [401, 401]
        return seen

    seen = asyncio.run(run())
    assert "small" in seen, "a small delivery does not wait behind large ones"
    assert [n for n in seen if n.startswith("big")] == ["big-1"], "the second large body waits its turn"
