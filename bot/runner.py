"""Running Steward's parts inside another program: a uvicorn server or an arq worker in a
background thread. Used by ``steward demo`` and by the end-to-end tests."""

from __future__ import annotations

import asyncio
import signal
import socket
import threading
import time
from typing import Any

import uvicorn

from bot.settings import Settings


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ThreadedServer:
    """A real uvicorn server on a free 127.0.0.1 port, in a thread."""

    def __init__(self, app: Any, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on", access_log=False
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self, timeout: float = 10.0) -> ThreadedServer:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the server on port {self.port} did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


class ThreadedWorker:
    """A real arq worker with its own event loop, in a thread."""

    def __init__(self, settings: Settings, registry: Any = None, handler_settings: Any = None) -> None:
        self.settings = settings
        self.registry = registry
        self.handler_settings = handler_settings
        self.loop = asyncio.new_event_loop()
        self.worker: Any = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.error: BaseException | None = None

    def _run(self) -> None:
        from bot.worker import create_worker

        asyncio.set_event_loop(self.loop)

        async def main() -> None:
            self.worker = create_worker(
                self.settings,
                handle_signals=False,
                registry=self.registry,
                handler_settings=self.handler_settings,
            )
            try:
                await self.worker.async_run()
            except asyncio.CancelledError:
                pass
            finally:
                await self.worker.close()

        try:
            self.loop.run_until_complete(main())
        except BaseException as exc:  # kept for the caller to inspect
            self.error = exc

    def start(self, timeout: float = 10.0) -> ThreadedWorker:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while self.worker is None:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the worker did not start: {self.error!r}")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        """Like SIGTERM: stop picking jobs, let running ones finish, re-queue what is cut off."""
        if self.worker is not None and self.thread.is_alive():
            self.loop.call_soon_threadsafe(self.worker.handle_sig_wait_for_completion, signal.SIGTERM)
        self.thread.join(timeout=30)
