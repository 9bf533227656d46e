"""What a catch-up run did (``bot.catchup.reconcile``), shared with its redeliveries
(``bot.catchup.redeliver``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass
class Report:
    repos: int = 0
    issues: int = 0
    skipped_busy: list[str] = field(default_factory=list)
    redelivered: list[str] = field(default_factory=list)
    # Comments with commands written while nobody listened, queued to run (``bot.catchup.comments``).
    commands: list[str] = field(default_factory=list)
    # Repositories re-derived incrementally (only issues updated since the window began).
    incremental: int = 0
    # Why the run stopped before the end (time or quota), if it did: the next run goes on from there.
    stopped: str = ""
    # Failed deliveries not redelivered this run (the redelivery budget ran out, the forge said wait):
    # the next run starts its window at the oldest of them (``hold``), so none is forgotten.
    left: int = 0
    hold: dict[str, datetime] = field(default_factory=dict)
    writes: list[str] = field(default_factory=list)
    # What could not be looked at for a reason the operator can act on (no access to the hooks, say).
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
