"""A uvicorn server that stops as soon as it is told to: the sandbox forge's, and the receivers the demo and
the tests run in threads (``bot.demo.threads``)."""

from __future__ import annotations

import asyncio
import contextlib
import socket

import uvicorn


class PromptServer(uvicorn.Server):
    """uvicorn's server, stopping as soon as it is told to. uvicorn looks at ``should_exit`` on a 0.1 s tick,
    then sleeps a fixed 0.1 s after asking open connections to close and polls them every 0.1 s: about
    0.2 s per stop, paid by every end-to-end test (a receiver each), every sandbox test (a sandbox each) and
    the demo. Here ``exit_now()`` wakes the loop at once and the shutdown polls every 5 ms; what it waits for
    is uvicorn's own (connections closed, then tasks done, within ``timeout_graceful_shutdown`` if set; then
    the lifespan's shutdown)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None

    def exit_now(self) -> None:
        self.should_exit = True
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already closed
                loop.call_soon_threadsafe(wake.set)

    async def main_loop(self) -> None:
        self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), 0.1)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        try:
            async with asyncio.timeout(self.config.timeout_graceful_shutdown):
                # uvicorn's connection and task sets signal nothing when they empty: polled, as uvicorn does
                while (self.server_state.connections or self.server_state.tasks) and not self.force_exit:  # noqa: ASYNC110
                    await asyncio.sleep(0.005)
                for server in self.servers:
                    await server.wait_closed()
        except TimeoutError:
            for task in self.server_state.tasks:
                task.cancel(msg="Task cancelled, timeout graceful shutdown exceeded")
        if not self.force_exit:
            await self.lifespan.shutdown()
