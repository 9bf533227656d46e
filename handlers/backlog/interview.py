"""The interview's state and its transitions: start, record answers, ``/enough``, reopen.

Pure: state and inputs in, new state out. The state lives in the data block of the sticky interview
comment, so every transition starts from what the forge holds. Rounds are numbered across the whole
refinement (so ``raised-by-answer-R<n>`` names stay unique); the stop gate counts the rounds of the
current *cycle* (a cycle starts with the label or ``/refine``, and again with ``/edit-spec``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict

from handlers.backlog.gaps import Dimension, blocked_by_refs, clip_body, question_for, scan
from handlers.backlog.gate import GateResult, Verdict, verdict
from handlers.backlog.ledger import GapLedger, GapRow, raised_source
from handlers.backlog.probe import probe_answer
from handlers.backlog.selection import select_questions

__all__ = [
    "MAX_ANSWER_CHARS",
    "MAX_ROWS",
    "Answer",
    "DepRecord",
    "Interview",
    "ProbeRecord",
    "enough",
    "parse_answer",
    "record_answers",
    "reopen",
    "start",
    "wanted_blockers",
]

MAX_ROWS: Final = 30
MAX_ANSWER_CHARS: Final = 600
MAX_HANDLED: Final = 200

Status = Literal["interviewing", "stopped", "approved", "cancelled"]


class ProbeRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    round: int
    scanned: tuple[str, ...] = ()
    raised: tuple[str, ...] = ()
    reason: str = ""

    @property
    def result(self) -> Literal["new_gaps", "no_new_gaps"]:
        return "new_gaps" if self.raised else "no_new_gaps"


class DepRecord(BaseModel):
    """A blocker the refinement found: a ``Blocked by #N`` declared on the forge, only listed, or refused; or
    one the forge itself links as blocking the issue (``linked``: its "blocked by", named in no text)."""

    model_config = ConfigDict(frozen=True)

    number: int
    state: Literal["declared", "listed", "linked", "refused", "skipped"]
    note: str = ""
    # What the closed blocker delivered (seed 002's prior context): the merged pull request that names it, its
    # description's start and the files it changed; "" when it is open or nothing merged names it.
    prior: str = ""


class Interview(BaseModel):
    model_config = ConfigDict(frozen=True)

    status: Status = "interviewing"
    cycle: int = 1
    round: int = 1
    cycle_start: int = 1
    language: str = "en"
    ledger: GapLedger = GapLedger()
    asking: tuple[str, ...] = ()
    probes: tuple[ProbeRecord, ...] = ()
    found: tuple[str, ...] = ()
    gate: str | None = None
    gate_reason: str = ""
    applied: tuple[str, ...] = ()
    handled: tuple[str, ...] = ()
    deps: tuple[DepRecord, ...] = ()
    # (characters read, characters in all) when the last scan read the body in part (``gaps.MAX_BODY_CHARS``).
    cut: tuple[int, int] | None = None

    @property
    def last_probe(self) -> Literal["new_gaps", "no_new_gaps"]:
        return self.probes[-1].result if self.probes else "no_new_gaps"

    def with_handled(self, key: str) -> Interview:
        if key in self.handled:
            return self
        return self.model_copy(update={"handled": (*self.handled, key)[-MAX_HANDLED:]})


@dataclass(frozen=True)
class Answer:
    """One ``/answer`` to record: ``key`` makes a redelivered answer count once."""

    key: str
    row_id: str
    text: str
    actor: str


_ANSWER: Final = re.compile(r"\s*+#?(?P<id>[A-Za-z][A-Za-z0-9-]{0,39}?):?(?:\s++(?P<text>.*)|$)", re.DOTALL)


def parse_answer(text: str) -> tuple[str, str] | None:
    """``"g3 the text…"`` → ``("g3", "the text…")``; None when there is no row id or no text."""
    match = _ANSWER.fullmatch(text)
    if match is None or not (match.group("text") or "").strip():
        return None
    return match.group("id").lower(), (match.group("text") or "").strip()


def _ask(interview: Interview, limit: int, last_round: int | None) -> Interview:
    asking = select_questions(interview.ledger, last_round=last_round, limit=limit)
    ledger = interview.ledger
    for row in asking:
        if row.asked_in is None:
            ledger = ledger.replace(row.model_copy(update={"asked_in": interview.round}))
    return interview.model_copy(update={"ledger": ledger, "asking": tuple(r.id for r in asking)})


def _stop(interview: Interview, gate: GateResult) -> Interview:
    return interview.model_copy(
        update={"status": "stopped", "asking": (), "gate": gate.verdict.label, "gate_reason": gate.reason}
    )


def _rows_for_missing(ledger: GapLedger, missing: Sequence[Dimension], language: str) -> GapLedger:
    have = {r.dimension for r in ledger.rows}
    for dimension in missing:
        if dimension not in have and len(ledger.rows) < MAX_ROWS:
            row = GapRow(id=ledger.next_id(), dimension=dimension, question=question_for(dimension, language))
            ledger = ledger.add([row])
    return ledger


def start(title: str, body: str, *, cap: int, limit: int) -> tuple[Interview, GateResult | None]:
    """A new interview from the issue: one OPEN row per dimension without evidence. With nothing missing
    the gate stops at once (round 0, no new gaps), and the spec follows."""
    found = scan(title, body)
    ledger = _rows_for_missing(GapLedger(), found.missing, found.language)
    described = tuple(f"{d.value} ({'; '.join(found.rules(d))})" for d in found.present if found.rules(d))
    interview = Interview(language=found.language, ledger=ledger, found=described, cut=found.cut)
    if not ledger.open_rows:
        gate = verdict(ledger, round=0, last_probe="no_new_gaps", cap=cap)
        return _stop(interview, gate), gate
    gate = verdict(ledger, round=0, last_probe="no_new_gaps", cap=cap)
    interview = interview.model_copy(update={"gate": gate.verdict.label, "gate_reason": gate.reason})
    return _ask(interview, limit, None), None


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_ANSWER_CHARS else text[: MAX_ANSWER_CHARS - 1].rstrip() + "…"


def record_answers(
    interview: Interview,
    answers: Sequence[Answer],
    *,
    title: str,
    body: str,
    cap: int,
    limit: int,
) -> tuple[Interview, GateResult | None]:
    """Record the answers not recorded yet, probe-scan them, and ask the gate; (unchanged, None) when
    every answer was already recorded (a redelivery)."""
    fresh = [a for a in answers if a.key not in interview.applied and interview.ledger.row(a.row_id)]
    if not fresh or interview.status != "interviewing":
        return interview, None
    ledger = interview.ledger
    round_number = interview.round
    scanned: list[str] = []
    for answer in fresh:
        row = ledger.row(answer.row_id)
        assert row is not None
        ledger = ledger.replace(
            row.model_copy(
                update={
                    "status": "RESOLVED",
                    "answer": _clip(answer.text),
                    "answered_in": round_number,
                    "answered_by": answer.actor,
                    "asked_in": row.asked_in if row.asked_in is not None else round_number,
                }
            )
        )
        if row.id not in scanned:
            scanned.append(row.id)
    raised: list[str] = []
    notes: list[str] = []
    for row_id in scanned:
        row = ledger.row(row_id)
        assert row is not None and row.answer is not None
        context = "\n".join(
            [title, clip_body(body)[0], *(r.answer or "" for r in ledger.rows if r.id != row_id)]
        )
        for finding in probe_answer(row_id, row.answer, context, interview.language):
            if len(ledger.rows) >= MAX_ROWS:
                notes.append(f"{row_id}: {', '.join(finding.terms)} (not added: the ledger is full)")
                continue
            new = GapRow(
                id=ledger.next_id(),
                dimension=row.dimension,
                source=raised_source(round_number),
                question=finding.question,
            )
            ledger = ledger.add([new])
            raised.append(new.id)
            notes.append(f"{new.id} from {row_id}: {', '.join(f'“{t}”' for t in finding.terms)}")
    ids = ", ".join(scanned)
    if raised:
        reason = f"New gaps: {'; '.join(notes)}."
    elif notes:
        reason = f"No new gaps recorded: {'; '.join(notes)}."
    else:
        reason = f"No new gaps: the answers to {ids} use no vague term and reference nothing undefined."
    probe = ProbeRecord(round=round_number, scanned=tuple(scanned), raised=tuple(raised), reason=reason)
    interview = interview.model_copy(
        update={
            "ledger": ledger,
            "probes": (*interview.probes, probe),
            "applied": (*interview.applied, *(a.key for a in fresh))[-MAX_HANDLED:],
        }
    )
    gate = verdict(
        ledger,
        round=round_number - interview.cycle_start + 1,
        last_probe=probe.result,
        cap=cap,
    )
    if gate.verdict.stops:
        return _stop(interview, gate), gate
    interview = interview.model_copy(
        update={"round": round_number + 1, "gate": gate.verdict.label, "gate_reason": gate.reason}
    )
    return _ask(interview, limit, round_number), gate


def enough(interview: Interview, *, cap: int) -> tuple[Interview, GateResult]:
    """``/enough``: the gate says STOP-ENOUGH and the interview stops."""
    gate = verdict(
        interview.ledger,
        round=max(interview.round - interview.cycle_start, 0),
        last_probe=interview.last_probe,
        user_enough=True,
        cap=cap,
    )
    return _stop(interview, gate), gate


def reopen(interview: Interview, *, title: str, body: str, limit: int) -> Interview:
    """A new cycle (``/edit-spec``, or ``/refine`` on an approved or cancelled refinement): rows for
    dimensions the issue now lacks and the ledger has no row for, then the OPEN rows are asked again.
    The gate waits for an answer or ``/enough``: with nothing OPEN, answers amend resolved rows."""
    found = scan(title, body)
    ledger = _rows_for_missing(interview.ledger, found.missing, interview.language)
    next_round = interview.round + 1
    reopened = interview.model_copy(
        update={
            "status": "interviewing",
            "cycle": interview.cycle + 1,
            "round": next_round,
            "cycle_start": next_round,
            "ledger": ledger,
            "gate": None,
            "gate_reason": "",
            "cut": found.cut,
        }
    )
    return _ask(reopened, limit, None)


def wanted_blockers(body: str, interview: Interview) -> list[int]:
    """Issue numbers this issue should be blocked by: ``Blocked by #N`` in the body or in any answer."""
    found = blocked_by_refs(body)
    for row in interview.ledger.rows:
        for number in blocked_by_refs(row.answer or ""):
            if number not in found:
                found.append(number)
    return found


def gate_stops(gate: GateResult | None) -> bool:
    return gate is not None and gate.verdict is not Verdict.CONTINUE
