"""A forge that stops accepting Steward's credentials (401: a revoked or expired token, a rotated App key) is
an outage, not a reason to park work (issue 40 item 5).

Before, each job met the 401 as a permanent refusal and was parked in the dead-letter list on its first run:
one revoked token parked every job of the installation. Now the first 401 pauses the forge for everyone —
a key in Redis (``PAUSE_KEY``) living for the pause — and every job of that forge waits out the pause without
calling it (deferred in the queue, no try counted); the pause doubles while the 401s go on (5 s up to 5
minutes), so the forge is asked about once per pause. While it lasts, ``steward_forge_auth_failing{forge}``
is 1, ``steward_forge_auth_failures_total`` counts the 401s, and each process logs one error line a minute
that says what to fix. The first job that gets through ends the pause. Nothing is parked.
"""

from __future__ import annotations

import time
from typing import Any

from bot.telemetry import logs, metrics

log = logs.get("steward.worker")

PAUSE_KEY = "steward:forge-auth-down"
LAST_PAUSE_KEY = "steward:forge-auth-pause"
MIN_PAUSE = 5.0
MAX_PAUSE = 300.0
LOG_EVERY = 60.0
_logged: dict[str, float] = {}
_failing: set[str] = set()


# When this process last asked Redis whether a forge is paused, and what it learnt: a job costs no round
# trip for it (Redis is asked at most every ``CHECK_EVERY`` seconds per forge; a job that meets a 401 itself
# pauses the forge at once).
CHECK_EVERY = 5.0
_checked: dict[str, tuple[float, float]] = {}


async def paused(redis: Any, forge: str) -> float:
    """Seconds left in ``forge``'s pause (0: none)."""
    now = time.monotonic()
    asked = _checked.get(forge)
    if asked is not None and now - asked[0] < CHECK_EVERY and forge not in _failing:
        return max(0.0, asked[1] - now)
    left = await redis.pttl(f"{PAUSE_KEY}:{forge}")
    seconds = left / 1000.0 if isinstance(left, int) and left > 0 else 0.0
    _checked[forge] = (now, now + seconds)
    return seconds


async def unauthorized(redis: Any, forge: str, error: str) -> float:
    """Note a 401 from ``forge``: pause it (longer each time) and say so; the pause in seconds."""
    previous = await redis.get(f"{LAST_PAUSE_KEY}:{forge}")
    try:
        pause = min(MAX_PAUSE, max(MIN_PAUSE, float(previous) * 2)) if previous else MIN_PAUSE
    except ValueError:
        pause = MIN_PAUSE
    await redis.set(f"{PAUSE_KEY}:{forge}", "1", px=int(pause * 1000))
    await redis.set(f"{LAST_PAUSE_KEY}:{forge}", repr(pause), ex=3600)
    metrics.FORGE_AUTH_FAILING.labels(forge).set(1)
    metrics.FORGE_AUTH_FAILURES.labels(forge).inc()
    _failing.add(forge)
    _checked[forge] = (time.monotonic(), time.monotonic() + pause)
    now = time.monotonic()
    if now - _logged.get(forge, float("-inf")) >= LOG_EVERY:
        _logged[forge] = now
        log.error(
            f"{forge} does not accept Steward's credentials (401): every {forge} job waits, none is parked; "
            "renew the token (STEWARD_GITHUB_TOKEN / STEWARD_GITEA_TOKEN) or the App's private key, then "
            "the work resumes by itself",
            forge=forge,
            pause_seconds=round(pause, 1),
            error=error[:200],
        )
    return pause


async def accepted(redis: Any, forge: str) -> None:
    """A job of ``forge`` got through: the outage (if this process saw one) is over."""
    if forge not in _failing:
        return
    _failing.discard(forge)
    _checked.pop(forge, None)
    await redis.delete(f"{PAUSE_KEY}:{forge}", f"{LAST_PAUSE_KEY}:{forge}")
    metrics.FORGE_AUTH_FAILING.labels(forge).set(0)
    _logged.pop(forge, None)
    log.info(f"{forge} accepts Steward's credentials again; the waiting jobs run", forge=forge)
