"""Which OPEN rows to ask this round.

The highest-value OPEN rows, at most ``limit`` (1–4): core dimensions (WHAT, SCOPE, ACCEPTANCE) first;
within those and within the rest, rows raised by the last round's answers before older ones; then by
dimension in :data:`ASK_ORDER`; then by row number. A RESOLVED row is never asked again.
"""

from __future__ import annotations

from typing import Final

from handlers.backlog.gaps import Dimension
from handlers.backlog.ledger import GapLedger, GapRow, raised_source

__all__ = ["ASK_ORDER", "select_questions"]

ASK_ORDER: Final = (
    Dimension.WHAT,
    Dimension.SCOPE,
    Dimension.ACCEPTANCE,
    Dimension.WHY,
    Dimension.DEPS,
    Dimension.CONSTRAINTS,
    Dimension.EDGE,
)


def _number(row: GapRow) -> int:
    digits = row.id[1:]
    return int(digits) if digits.isdigit() else 10**6


def select_questions(ledger: GapLedger, *, last_round: int | None, limit: int = 4) -> list[GapRow]:
    """The rows to ask, in the order to ask them (see the module docstring)."""
    limit = max(1, min(limit, 4))
    latest = raised_source(last_round) if last_round is not None else None

    def value(row: GapRow) -> tuple[int, int, int, int]:
        return (
            0 if row.is_core else 1,
            0 if latest is not None and row.source == latest else 1,
            ASK_ORDER.index(row.dimension),
            _number(row),
        )

    return sorted(ledger.open_rows, key=value)[:limit]
