"""What Steward must still know after losing Redis: when a worker last ran and when the last catch-up ended
(issue 40 item 1).

Redis holds the catch-up's window (``steward:reconcile:last``), the workers' heartbeat and the queue. A Redis
that comes back empty — flushed, replaced, restarted without persistence — took all of it: the catch-up had
no window and nothing to walk, and what was acknowledged or written meanwhile was never answered. So the
workers also keep a small JSON file (``STEWARD_STATE_FILE``, on a volume that outlives the pod): their
heartbeat (every ``BEAT_SECONDS``), the first one (``first_seen``), per forge the end of the last completed
catch-up's window, and when Steward started signing (``signing_since``: what makes an unsigned record legacy,
bot.records.signing ``signing_start``).

And Redis carries a mark of its own (``EPOCH_KEY``, set once, never expiring). A worker that starts, or sees
Redis come back, and finds no mark while the file says Steward ran before knows Redis came back empty: it
says so (one error line, ``steward_redis_emptied_total``), marks an outage from the last completed catch-up
(or, without one, the last heartbeat) so the catch-up's window reaches back that far, and queues the
catch-up. Without the mark and without a file it is a first start (or a deployment without a state file:
then the loss cannot be told from a first start, and docs/operations.md says to mount one).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from bot.queue.gauges import mark_outage
from bot.queue.jobs import queue_catch_up
from bot.telemetry import logs, metrics

log = logs.get("steward.outage")

EPOCH_KEY = "steward:epoch"
BEAT_SECONDS = 30.0


class StateFile:
    """The file, read and written whole (atomically: a temporary file renamed over it). ``path`` None: no
    file (every method is a no-op, ``read`` answers ``{}``)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._last_beat = 0.0

    def read(self) -> dict[str, Any]:
        if self.path is None:
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, Any]) -> None:
        if self.path is None:
            return
        tmp: str | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=self.path.name, suffix=".tmp", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh)
            os.replace(tmp, self.path)
        except OSError as exc:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    Path(tmp).unlink(missing_ok=True)
            log.warning("could not write the state file", path=str(self.path), error=str(exc))

    def beat(self, now: float | None = None, *, force: bool = False) -> None:
        """Note that a worker runs (at most every ``BEAT_SECONDS``)."""
        now = time.time() if now is None else now
        if self.path is None or (not force and now - self._last_beat < BEAT_SECONDS):
            return
        self._last_beat = now
        data = self.read()
        data["first_seen"] = _earliest(data, now)
        data["heartbeat"] = now
        self._write(data)

    def caught_up(self, kind: str, until: float) -> None:
        """Note the end of ``kind``'s last completed catch-up window (``steward:reconcile:last``)."""
        if self.path is None:
            return
        data = self.read()
        kept = data.get("catch_up")
        done: dict[str, Any] = dict(kept) if isinstance(kept, dict) else {}
        done[kind] = until
        data["catch_up"] = done
        data["first_seen"] = _earliest(data, time.time())
        data["heartbeat"] = max(float(data.get("heartbeat") or 0), time.time())
        self._write(data)

    def first_seen(self) -> float | None:
        """The earliest time the file knows a worker ran: its first heartbeat (in a file kept before that was
        noted, the earliest heartbeat or catch-up it holds). None: it knows none."""
        return _earliest(self.read())

    def signing_since(self) -> float | None:
        """When Steward started signing, as the file keeps it."""
        return _positive(self.read().get("signing_since"))

    def keep_signing_since(self, start: float) -> None:
        """Keep when Steward started signing: never moved later than the value the file holds."""
        if self.path is None or not start > 0:
            return
        data = self.read()
        kept = _positive(data.get("signing_since"))
        if kept is not None and kept <= start:
            return
        data["signing_since"] = start
        self._write(data)

    def since(self) -> float | None:
        """Since when events may have been missed: the oldest forge's last catch-up, else the heartbeat."""
        data = self.read()
        done = data.get("catch_up")
        ends = [float(v) for v in done.values()] if isinstance(done, dict) and done else []
        if ends:
            return min(ends)
        beat = data.get("heartbeat")
        return float(beat) if beat else None


def _positive(value: Any) -> float | None:
    try:
        found = float(value)
    except (TypeError, ValueError):
        return None
    return found if found > 0 and found != float("inf") else None


def _earliest(data: dict[str, Any], now: float | None = None) -> float | None:
    """The earliest run ``data`` knows (``first_seen``; in a file kept before that was noted, its heartbeat or
    a catch-up's end), or ``now`` when that is earlier or none is known."""
    first = _positive(data.get("first_seen"))
    if first is None:
        done = data.get("catch_up")
        ends = list(done.values()) if isinstance(done, dict) else []
        found = [x for v in (data.get("heartbeat"), *ends) if (x := _positive(v)) is not None]
        first = min(found) if found else None
    known = [x for x in (first, now) if x is not None]
    return min(known) if known else None


async def check_redis(redis: Any, state: StateFile, *, process: str, catch_up: bool) -> bool:
    """Whether Redis came back empty (see the module docstring); when it did, say so and queue the catch-up
    over the whole window. Only the process that sets the mark acts, so several workers alert once."""
    if await redis.exists(EPOCH_KEY):
        return False
    if not await redis.set(EPOCH_KEY, repr(time.time()), nx=True):
        return False
    since = state.since()
    if since is None:
        return False  # a first start (or no state file: nothing to tell a loss by)
    metrics.REDIS_EMPTIED.labels(process).inc()
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(since))
    log.error(
        "Redis came back empty: the queue, the dedupe keys and the catch-up's window were lost; catching up "
        f"on every installed repository since {when} (the last completed catch-up, from the state file)",
        state_file=str(state.path),
        since=when,
    )
    await mark_outage(redis, since)
    if catch_up:
        await queue_catch_up(redis, "redis-emptied")
    return True
