"""Ending a worker a test started, without cutting off work in flight.

arq's `Worker.close()` cancels every job task that has not ended, and then awaits them: a job whose function
has returned but which is still writing its finish (the result, the end of its in-progress mark) is
cancelled there, and `close()` raises that `CancelledError`. A test that waited only for the function to
run (`ran == [...]`) and then closed the worker therefore failed now and then on a loaded machine. Every test
that closes a worker itself goes through `close_when_idle`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any


async def close_when_idle(worker: Any, within: float = 30.0) -> None:
    """Wait (up to ``within`` seconds) until every job task the worker started has ended, then close it.
    A job still running after that (a test that failed before releasing it) is cancelled by the close, as
    arq does; its CancelledError is then the close's, not the test's failure."""
    deadline = time.monotonic() + within
    while (pending := [t for t in worker.tasks.values() if not t.done()]) and time.monotonic() < deadline:
        await asyncio.wait(pending, timeout=max(0.0, deadline - time.monotonic()))
    if any(not task.done() for task in worker.tasks.values()):
        with contextlib.suppress(asyncio.CancelledError):
            await worker.close()
        return
    await worker.close()
