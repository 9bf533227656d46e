"""The stop gate: may the interview stop, and how?

A pure function of the ledger, the round just completed, the last probe-scan's result, whether the user
said ``/enough``, and the round cap. The rules, first match wins:

1. ``--user-enough`` → **3 STOP-ENOUGH**.
2. round ≥ cap and a core row (WHAT, SCOPE, ACCEPTANCE) is OPEN → **2 STOP-DEGRADED**.
3. round ≥ cap and every core row is RESOLVED → **0 STOP-CLEAN**; the OPEN rows left are residual.
4. no OPEN row and the last probe found no new gaps → **0 STOP-CLEAN**.
5. otherwise → **1 CONTINUE** (OPEN rows to ask, or new gaps the ledger must record first).

``residual_open`` lists the OPEN rows a stop leaves for the spec's Open Questions (none on CONTINUE,
since they are still to be asked).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Literal

from handlers.backlog.ledger import GapLedger

__all__ = ["DEFAULT_CAP", "GateResult", "LastProbe", "Verdict", "plain", "verdict"]

DEFAULT_CAP = 5
LastProbe = Literal["new_gaps", "no_new_gaps"]


class Verdict(IntEnum):
    STOP_CLEAN = 0
    CONTINUE = 1
    STOP_DEGRADED = 2
    STOP_ENOUGH = 3

    @property
    def label(self) -> str:
        return self.name.replace("_", "-")

    @property
    def stops(self) -> bool:
        return self is not Verdict.CONTINUE


@dataclass(frozen=True)
class GateResult:
    verdict: Verdict
    open: int
    core_unresolved: tuple[str, ...]
    residual_open: tuple[str, ...]
    reason: str

    @property
    def exit_code(self) -> int:
        return int(self.verdict)

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict.label,
            "exit_code": self.exit_code,
            "open": self.open,
            "core_unresolved": list(self.core_unresolved),
            "residual_open": list(self.residual_open),
            "reason": self.reason,
        }


def verdict(
    ledger: GapLedger,
    *,
    round: int,
    last_probe: LastProbe,
    user_enough: bool = False,
    cap: int = DEFAULT_CAP,
) -> GateResult:
    """The gate's decision (see the module docstring)."""
    if cap < 1:
        raise ValueError("the round cap must be at least 1")
    if round < 0:
        raise ValueError("the round must not be negative")
    open_rows = ledger.open_rows
    core = tuple(d.value for d in ledger.core_unresolved)
    residual = tuple(r.id for r in open_rows)

    def result(v: Verdict, reason: str) -> GateResult:
        return GateResult(v, len(open_rows), core, () if v is Verdict.CONTINUE else residual, reason)

    if user_enough:
        return result(Verdict.STOP_ENOUGH, "the user ended the interview")
    done = f"{round} round{'s' if round != 1 else ''} of answers"
    if round >= cap and core:
        return result(
            Verdict.STOP_DEGRADED, f"{done} reached the cap of {cap} with {', '.join(core)} unresolved"
        )
    if round >= cap:
        return result(
            Verdict.STOP_CLEAN,
            f"{done} reached the cap of {cap} with the core resolved"
            + (f"; {len(open_rows)} row(s) left as residual" if open_rows else ""),
        )
    if not open_rows and last_probe == "no_new_gaps":
        return result(Verdict.STOP_CLEAN, "no OPEN row and the last probe found no new gaps")
    upcoming = f"round {round + 1} of at most {cap} comes next"
    if not open_rows:
        return result(
            Verdict.CONTINUE, f"the last probe found new gaps the ledger does not hold yet; {upcoming}"
        )
    return result(Verdict.CONTINUE, f"{len(open_rows)} OPEN row(s); {upcoming}")


PLAIN: dict[Verdict, str] = {
    Verdict.STOP_CLEAN: "the questions are answered",
    Verdict.CONTINUE: "questions are still open",
    Verdict.STOP_DEGRADED: (
        "the round cap was reached while a core question (what, scope or acceptance) was still open"
    ),
    Verdict.STOP_ENOUGH: "someone said `/enough`",
}


def plain(label: str | None) -> str:
    """What a stop-gate verdict means, in a reader's words (``STOP-CLEAN`` → "the questions are answered")."""
    for v, words in PLAIN.items():
        if v.label == label:
            return words
    return "the interview stopped"
