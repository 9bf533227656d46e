"""The gap ledger: one row per missing dimension or raised gap, and its JSON form.

A row reads ``{"id":"g1","dimension":"SCOPE","status":"OPEN","source":"original","question":…,
"answer":null}``; the bot also keeps when a row was asked and answered, and by whom. ``source`` is
``original`` (found missing in the issue) or ``raised-by-answer-R<n>`` (opened by the probe-scan of
round ``n``'s answers). Parsing accepts a bare list of rows or an object holding it under ``ledger``,
``rows`` or ``gaps`` (the squad-refine ``refine_ledger.py`` shapes), with dimension and status in any
case; anything else is a :class:`LedgerError` with a message a person can act on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from handlers.backlog.gaps import CORE, DIMENSIONS, Dimension

__all__ = ["GapLedger", "GapRow", "LedgerError", "Status", "parse_ledger", "raised_source"]

Status = Literal["OPEN", "RESOLVED"]
_ROW_ID: Final = re.compile(r"^g[1-9][0-9]{0,3}$")
MAX_ROWS: Final = 40


class LedgerError(ValueError):
    """The ledger JSON is not a ledger; the message says what is wrong."""


def raised_source(round_number: int) -> str:
    return f"raised-by-answer-R{round_number}"


class GapRow(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    dimension: Dimension
    status: Status = "OPEN"
    source: str = "original"
    question: str = ""
    answer: str | None = None
    asked_in: int | None = None
    answered_in: int | None = None
    answered_by: str | None = None

    @field_validator("dimension", "status", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not value.strip() or len(value) > 40:
            raise ValueError("a row id is a short non-empty string such as g1")
        return value.strip()

    @property
    def is_open(self) -> bool:
        return self.status == "OPEN"

    @property
    def is_core(self) -> bool:
        return self.dimension in CORE

    def public(self) -> dict[str, Any]:
        """The row in the issue's documented shape (what the visible JSON block shows)."""
        return {
            "id": self.id,
            "dimension": self.dimension.value,
            "status": self.status,
            "source": self.source,
            "question": self.question,
            "answer": self.answer,
        }


class GapLedger(BaseModel):
    model_config = ConfigDict(frozen=True)

    rows: tuple[GapRow, ...] = ()

    @field_validator("rows")
    @classmethod
    def _unique(cls, rows: tuple[GapRow, ...]) -> tuple[GapRow, ...]:
        ids = [row.id for row in rows]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"row ids must be unique; repeated: {', '.join(duplicates)}")
        return rows

    def row(self, row_id: str) -> GapRow | None:
        wanted = row_id.strip().casefold()
        return next((r for r in self.rows if r.id.casefold() == wanted), None)

    @property
    def open_rows(self) -> list[GapRow]:
        return [r for r in self.rows if r.is_open]

    @property
    def core_unresolved(self) -> list[Dimension]:
        """Core dimensions with at least one OPEN row, in ledger dimension order."""
        found = {r.dimension for r in self.rows if r.is_open and r.is_core}
        return [d for d in DIMENSIONS if d in found]

    def next_id(self) -> str:
        numbers = [int(r.id[1:]) for r in self.rows if _ROW_ID.match(r.id)]
        return f"g{max(numbers, default=0) + 1}"

    def replace(self, row: GapRow) -> GapLedger:
        return GapLedger(rows=tuple(row if r.id == row.id else r for r in self.rows))

    def add(self, rows: Iterable[GapRow]) -> GapLedger:
        return GapLedger(rows=(*self.rows, *rows))

    def public(self) -> list[dict[str, Any]]:
        return [r.public() for r in self.rows]


def _rows_of(data: Any) -> Any:
    if isinstance(data, dict):
        for key in ("ledger", "rows", "gaps"):
            if key in data:
                inner = data[key]
                return _rows_of(inner) if isinstance(inner, dict) else inner
        raise LedgerError("expected a list of rows, or an object with a 'ledger', 'rows' or 'gaps' list")
    return data


def parse_ledger(data: Any) -> GapLedger:
    """A ledger from decoded JSON (see the module docstring); raises :class:`LedgerError`."""
    rows = _rows_of(data)
    if not isinstance(rows, list):
        raise LedgerError("expected a list of rows")
    try:
        return GapLedger.model_validate({"rows": rows})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "rows")
        raise LedgerError(
            f"invalid ledger row {where or ''}: {first.get('msg', 'invalid')}".strip()
        ) from None


def parse_ledger_text(text: str) -> GapLedger:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise LedgerError(f"not JSON: {exc}") from None
    return parse_ledger(data)
