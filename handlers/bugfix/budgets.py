"""A bug's review budgets, fixed when `/bugfix` first ran (``bugfix.budgets``): review rounds, fix cycles and
no-verdict retries. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Budgets:
    review_rounds: int = 5
    fix_cycles: int = 4
    no_verdict_retries: int = 1

    def to_json(self) -> dict[str, int]:
        return {
            "review_rounds": self.review_rounds,
            "fix_cycles": self.fix_cycles,
            "no_verdict_retries": self.no_verdict_retries,
        }

    @classmethod
    def from_json(cls, raw: Any, default: Budgets) -> Budgets:
        if not isinstance(raw, Mapping):
            return default

        def num(key: str, fallback: int) -> int:
            value = raw.get(key)
            return value if isinstance(value, int) and 0 <= value <= 50 else fallback

        return cls(
            num("review_rounds", default.review_rounds),
            num("fix_cycles", default.fix_cycles),
            num("no_verdict_retries", default.no_verdict_retries),
        )
