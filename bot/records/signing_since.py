"""When Steward started signing (``Keyring.since``), what makes an unsigned block ``legacy`` (issue 35 item
1). It is decided from what nobody can edit, never from the absence of memory: ``STEWARD_SIGNING_SINCE``, what
Redis remembers and what the workers' state file keeps (it outlives Redis), the earliest of them.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Protocol

from bot.telemetry import logs

log = logs.get("steward.signing")

REDIS_SINCE = "steward:signing:since"

# ``Keyring.since`` when nothing remembers when Steward started signing although it signed before: no place is
# before it, so no unsigned block is legacy and no closure is history (0.0 is a verifier that does not know).
NO_LEGACY = float("-inf")


class StartMemory(Protocol):
    """What outlives Redis and remembers when Steward started signing: the workers' state file
    (``bot.worker.state_file.StateFile``, ``STEWARD_STATE_FILE``)."""

    path: Path | None

    def signing_since(self) -> float | None: ...

    def first_seen(self) -> float | None: ...

    def keep_signing_since(self, start: float) -> None: ...


async def signing_start(
    redis: Any,
    since: float | None,
    state: StartMemory | None,
    *,
    signed_before: bool = False,
    warn: bool = True,
) -> float:
    """When Steward started signing (what makes an unsigned block ``legacy``): the earliest of ``since``
    (``STEWARD_SIGNING_SINCE``), what Redis remembers (``steward:signing:since``), what the state file keeps,
    and the first run the state file knows (Steward signed from its first start on). Kept in Redis and in the
    file, never moved later.

    Decided from what nobody can edit, never from the absence of memory: when none of them knows it, a first
    start takes now — but when Steward evidently signed before (``signed_before``: Redis remembers sequence
    numbers), no place counts as before signing (``NO_LEGACY``) until the operator sets
    ``STEWARD_SIGNING_SINCE``."""
    remembered = await remembered_start(redis)
    kept = state.signing_since() if state is not None else None
    ran = state.first_seen() if state is not None else None
    recorded = [x for x in (since, remembered, kept) if x is not None and x > 0]
    if not recorded and ran is None and signed_before:
        log.error(
            "when Steward started signing is lost (Redis forgot it, and neither STEWARD_SIGNING_SINCE nor a "
            "state file keeps it): no unsigned record counts as legacy. Set STEWARD_SIGNING_SINCE to when "
            "Steward first signed (docs/integrity.md)"
        )
        return NO_LEGACY
    known = [*recorded, ran] if ran is not None else recorded
    start = min(known) if known else time.time()  # a first start
    if ran is not None and (not recorded or ran < min(recorded)):
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ran))
        log.error(
            "when Steward started signing is not remembered (not in Redis, the state file or "
            f"STEWARD_SIGNING_SINCE): taking the first run the state file knows, {when}; an unsigned record "
            "in a place created after it is not legacy. Set STEWARD_SIGNING_SINCE to when Steward first "
            "signed if that was earlier (docs/integrity.md)",
            since=ran,
        )
    if remembered is None or start < remembered:
        await redis.set(REDIS_SINCE, repr(start))
    if state is not None:
        state.keep_signing_since(start)
    if since is None and warn and (state is None or state.path is None):
        log.warning(
            "no STEWARD_SIGNING_SINCE and no STEWARD_STATE_FILE: when Steward started signing is kept only "
            f"in Redis. Pin it: set STEWARD_SIGNING_SINCE={start!r} (docs/integrity.md)"
        )
    return start


async def remembered_start(redis: Any) -> float | None:
    """When Steward started signing, as Redis remembers it (``steward:signing:since``)."""
    raw = await redis.get(REDIS_SINCE)
    if raw is None:
        return None
    try:
        return float(raw.decode() if isinstance(raw, bytes) else raw)
    except ValueError:
        return None
