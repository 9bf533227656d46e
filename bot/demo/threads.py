"""Running Steward's parts inside another program: a uvicorn server or an arq worker in a
background thread. Used by ``steward demo`` and by the end-to-end tests."""

from __future__ import annotations

import asyncio
import signal
import socket
import threading
import time
import uuid
from typing import Any

import redis
import uvicorn
from arq.constants import in_progress_key_prefix, result_key_prefix

from bot.config.settings import Settings
from bot.queue.jobs import QUEUE_NAME, make_redis
from bot.records.signing import Keyring, installed, restore
from bot.sandbox.serving import PromptServer


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def jobs_outstanding(client: redis.Redis) -> int:
    """Jobs queued (deferred ones included) or running. A periodic job that has run keeps its in-progress
    mark a minute (arq: so a late worker does not run its slot again) beside its result; it is not running."""
    running = 0
    for key in client.scan_iter(f"{in_progress_key_prefix}*", count=1000):
        job_id = (
            key[len(in_progress_key_prefix) :]
            if isinstance(key, str)
            else key.decode()[len(in_progress_key_prefix) :]
        )
        if not client.exists(result_key_prefix + job_id):
            running += 1
    return int(client.zcard(QUEUE_NAME)) + running  # type: ignore[arg-type]


def run_periodic_now(redis_url: str, name: str) -> None:
    """Queue the periodic job ``name`` (``registry.every(..., name=name)``) to run at once, the way arq queues
    it at its slot: the next worker to poll runs it (the demo and the tests do not wait for the clock)."""

    async def enqueue() -> None:
        client = make_redis(redis_url)
        try:
            await client.enqueue_job(f"periodic:{name}", _job_id=f"now:{name}:{uuid.uuid4().hex}")
        finally:
            await client.aclose()

    asyncio.run(enqueue())


class ThreadedServer:
    """A real uvicorn server on a free 127.0.0.1 port, in a thread."""

    def __init__(self, app: Any, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on", access_log=False
        )
        self.server = PromptServer(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self, timeout: float = 60.0) -> ThreadedServer:
        """Start serving and wait until the port answers (a long deadline: a loaded machine is slow, not
        broken); past it, the server is told to stop before it takes a request."""
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                self.server.exit_now()
                raise RuntimeError(f"the server on port {self.port} did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        self.server.exit_now()
        self.thread.join(timeout=10)


class ThreadedWorker:
    """A real arq worker with its own event loop, in a thread. Its periodic jobs run when queued
    (``run_periodic_now``), not at their clock slots unless ``clock``: a slot passing mid-test or mid-scene
    would add its requests and writes to whatever is being counted."""

    def __init__(
        self, settings: Settings, registry: Any = None, handler_settings: Any = None, *, clock: bool = False
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.registry = registry
        self.handler_settings = handler_settings
        self.loop = asyncio.new_event_loop()
        self.worker: Any = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.error: BaseException | None = None
        self._keyring_before: Keyring | None = None
        # Set when ``start`` gave up waiting: the thread must not go on to run a worker nobody stops, which
        # would take later tests' jobs from the shared Redis with this test's registry.
        self._abandoned = threading.Event()

    def _run(self) -> None:
        from bot.worker.jobs import create_worker

        asyncio.set_event_loop(self.loop)

        async def main() -> None:
            self.worker = create_worker(
                self.settings,
                handle_signals=False,
                registry=self.registry,
                handler_settings=self.handler_settings,
                clock=self.clock,
            )
            if self._abandoned.is_set():
                await self.worker.close()
                return
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

    def start(self, timeout: float = 60.0) -> ThreadedWorker:
        """Start the worker and wait until it exists. The first worker of a process imports every handler
        (seconds on a loaded machine), hence the long deadline; past it, the thread is told to stop before it
        runs a single job."""
        self._keyring_before = installed()
        self.thread.start()
        deadline = time.monotonic() + timeout
        while True:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                # Told before the worker is looked at: either the thread sees it once it has made the worker,
                # or the worker is there to be stopped here.
                self._abandoned.set()
                if self.worker is not None:
                    self.stop()
                raise RuntimeError(f"the worker did not start: {self.error!r}")
            if self.worker is not None:
                return self
            time.sleep(0.005)

    def stop(self) -> None:
        """Like SIGTERM: stop picking jobs, let running ones finish, re-queue what is cut off."""
        if self.worker is not None and self.thread.is_alive():
            self.loop.call_soon_threadsafe(self.worker.handle_sig_wait_for_completion, signal.SIGTERM)
        self.thread.join(timeout=30)
        # The keyring this worker installed reads its Redis, which may be gone after it (a test's own Redis):
        # the process's keyring goes back to the one found at the start.
        mine = getattr(self.worker, "ctx", None) or {}
        if isinstance(mine.get("keyring"), Keyring):
            restore(mine["keyring"], self._keyring_before)
