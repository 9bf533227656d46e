"""What Redis runs for a piece of Steward's code, read with MONITOR (a script's own commands included)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from redis.asyncio import Redis


async def commands_on(
    redis_url: str, marker: str, act: Callable[[], Awaitable[Any]], *, scripts: bool = True
) -> list[str]:
    """The commands Redis ran (MONITOR; with `scripts`, the commands scripts ran too) that name `marker`,
    while `act` runs; an ECHO of the marker ends the watch."""
    watcher = Redis.from_url(redis_url)
    seen: list[str] = []
    try:
        async with watcher.monitor() as monitor:
            await act()
            done = f"done-{marker}"
            await watcher.echo(done)  # on another connection than the monitor's: it is seen after act's
            while True:
                found = await monitor.next_command()
                command = str(found["command"])
                if done in command:
                    break
                if marker in command and (scripts or found.get("client_type") != "lua"):
                    seen.append(command)
    finally:
        await watcher.aclose()
    return seen


class RoundTrips:
    """Counts the round trips a client makes to Redis: each command sent alone, or each pipeline, is one
    write of packed commands to the socket. Install it on a fresh client, before it has connected."""

    def __init__(self, client: Redis) -> None:
        self.count = 0
        pool = client.connection_pool
        base: Any = pool.connection_class
        counter = self

        class Counting(base):  # type: ignore[misc, valid-type]
            async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
                counter.count += 1
                await super().send_packed_command(command, check_health)

        pool.connection_class = Counting
