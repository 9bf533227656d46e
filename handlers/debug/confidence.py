"""Seed 004's confidence per hypothesis, from what the board can count. Pure, no I/O.

    confidence = 0.30 · depth + 0.25 · strength + 0.20 · coverage + 0.15 · reproduction + 0.10 · consistency

each input between 0 and 1:

- **depth**: the pieces of evidence for it (a confirmation counts as one), three or more count fully;
- **strength**: the evidence for it against all its evidence (for ÷ (for + against); none at all: 0);
- **coverage**: its places (`path:line`) that were checked to exist in the repository, against all its
  places (none: 0);
- **reproduction**: half for an approved recipe (the board exists only on a refined bug, so always), half
  when a fix for it is verified (its regression test was red before the fix and the status is green);
- **consistency**: its verdict agrees with its evidence — 1 with no evidence against it, ½ when it is
  confirmed despite some, 0 when it is refuted.

Below 40 % is low, 40–70 % medium, above 70 % high.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Final, Literal

from handlers.debug.board import Hypothesis

WEIGHTS: Final = {
    "depth": 0.30,
    "strength": 0.25,
    "coverage": 0.20,
    "reproduction": 0.15,
    "consistency": 0.10,
}
DEPTH_FULL: Final = 3
Level = Literal["low", "medium", "high"]


@dataclass(frozen=True)
class Confidence:
    depth: float
    strength: float
    coverage: float
    reproduction: float
    consistency: float

    @property
    def score(self) -> float:
        parts = {
            "depth": self.depth,
            "strength": self.strength,
            "coverage": self.coverage,
            "reproduction": self.reproduction,
            "consistency": self.consistency,
        }
        return sum(WEIGHTS[name] * value for name, value in parts.items())

    @property
    def percent(self) -> int:
        return int(self.score * 100 + 0.5 + 1e-9)  # half up: 92.5 % shows as 93 %

    @property
    def level(self) -> Level:
        return "low" if self.percent < 40 else "high" if self.percent > 70 else "medium"

    def __str__(self) -> str:
        return f"{self.percent} % {self.level}"


def confidence(h: Hypothesis, grounded: Collection[str], *, verified: bool) -> Confidence:
    """``h``'s confidence; ``grounded``: the places checked to exist; ``verified``: a fix for it is
    verified."""
    pro, con = len(h.evidence_for), len(h.evidence_against)
    places = h.locations
    consistency = 1.0 if not con else 0.5 if h.status == "confirmed" else 0.0
    if h.status == "refuted":
        consistency = 0.0
    return Confidence(
        depth=min(pro, DEPTH_FULL) / DEPTH_FULL,
        strength=pro / (pro + con) if pro + con else 0.0,
        coverage=sum(1 for p in places if p in grounded) / len(places) if places else 0.0,
        reproduction=0.5 + (0.5 if verified else 0.0),
        consistency=consistency,
    )


def counts(hypotheses: Collection[Hypothesis], fixed: Mapping[int, bool]) -> str:
    """The board's counts line: hypotheses, confirmed, fixed (a fix pull request names it), verified.
    ``fixed``: hypothesis id → whether its fix is verified."""
    confirmed = sum(1 for h in hypotheses if h.status == "confirmed")
    n = len(hypotheses)
    return (
        f"{n} hypothes{'is' if n == 1 else 'es'} · {confirmed} confirmed · {len(fixed)} fixed · "
        f"{sum(1 for v in fixed.values() if v)} verified"
    )
