"""Serving the sandbox: `run` for the CLI, `SandboxServer` for tests (uvicorn in a background thread)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Self

import uvicorn
from starlette.applications import Starlette

from bot.sandbox.serving import PromptServer
from bot.sandbox.shared.runtime import Sandbox
from bot.sandbox.shared.state import SandboxState

from .app import create_app


def run(
    host: str,
    port: int,
    users: dict[str, str],
    state_file: Path | None,
    *,
    auto_ci: bool = False,
    ci_delay: float = 1.0,
) -> None:
    """Serve a sandbox forge until interrupted (blocking); `auto_ci`: `steward sandbox --ci`."""
    app = create_app(users, state_file, auto_ci=auto_ci, ci_delay=ci_delay)
    uvicorn.run(app, host=host, port=port, log_level="info", timeout_graceful_shutdown=2)


class SandboxServer:
    """A sandbox on a free 127.0.0.1 port, served from a background thread.

    Use as `with SandboxServer({"alice": "t"}) as s:` or `async with ...`; `s.url` is the base URL and
    `s.app` the Starlette app (`s.forge` its state, `s.sandbox` its runtime)."""

    def __init__(
        self,
        users: dict[str, str] | None = None,
        state_file: Path | None = None,
        app: Starlette | None = None,
        start_timeout: float = 10.0,
    ) -> None:
        self.app = app if app is not None else create_app(users or {}, state_file)
        self.start_timeout = start_timeout
        self.url = ""
        self.port = 0
        self._server: PromptServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def forge(self) -> SandboxState:
        forge: SandboxState = self.app.state.forge
        return forge

    @property
    def sandbox(self) -> Sandbox:
        sandbox: Sandbox = self.app.state.sandbox
        return sandbox

    def start(self) -> Self:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            self.app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=1
        )
        server = self._server = PromptServer(config)
        self._thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + self.start_timeout
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("sandbox server did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.exit_now()
        if self._thread is not None:
            self._thread.join(timeout=15)
        self._server = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.stop)
