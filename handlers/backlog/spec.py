"""Spec synthesis: from the issue and its ledger to a structured spec, and the record of its versions.

The spec's three authored fields:

* ``goal`` — one or two sentences: *what* (the first sentence of the latest WHAT answer, else of the
  issue's first WHAT evidence, else the title) then *why* (the first sentence of the issue's first WHY
  evidence, else of the answer to the original WHY question), the second left out when the first already
  says it. A follow-up WHY row never replaces the reason; its answer becomes a ``CONSTRAINT:`` when it
  states a limit.
* ``requirements`` — lines with a prefix, in this order: ``REQ:`` (WHAT evidence and answers),
  ``AC: WHEN … THE SYSTEM SHALL …`` (EARS lines keep their trigger and response; a Gherkin scenario
  becomes ``WHEN <when>, given <given>, THE SYSTEM SHALL <then>``; any other criterion becomes ``WHEN
  the change is delivered THE SYSTEM SHALL satisfy: <criterion>``), ``SCOPE(IN):`` and ``SCOPE(OUT):``
  (by the section or an ``In:``/``Out:``/``Fora:`` prefix, also both on one line: ``In: a. Out: b``),
  ``CONSTRAINT:``, ``EDGE:``, and
  ``SOURCE: <url>`` for each link that appears literally in the issue or its answers — never invented.
  Answers are split into lines (list markers removed); duplicates are dropped.
* ``qa`` — one ``{question, answer}`` per question asked or answered, ``answer: null`` when unanswered.

The bot adds ``version`` (+1 per saved spec), the stop verdict, the residual OPEN rows (the spec's
``## Open Questions``), the scored level and the blocked-by issues.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict

from handlers.backlog.gaps import BodyScan, Dimension, Evidence, clip_body, is_limit, scope_items
from handlers.backlog.ledger import GapLedger, GapRow
from handlers.backlog.text import fold, prose_lines, sentences, strip_item, urls

__all__ = ["QA", "OpenQuestion", "Spec", "SpecRecord", "synthesize", "to_ac"]

MAX_REQUIREMENTS: Final = 80
MAX_LINE: Final = 300
MAX_HISTORY: Final = 20
# DESIGN §3.11: the spec comment's data block is bounded in characters, whatever the issue holds: the
# requirements of one version, and the earlier versions kept (the oldest are folded into a count).
REQUIREMENTS_CHARS: Final = 10_000
HISTORY_CHARS: Final = 14_000

SpecStatus = Literal["draft", "approved", "discarded", "superseded"]


class QA(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    question: str
    answer: str | None = None


class OpenQuestion(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    dimension: str
    question: str


class Spec(BaseModel):
    model_config = ConfigDict(frozen=True)

    version: int
    goal: str
    requirements: tuple[str, ...] = ()
    qa: tuple[QA, ...] = ()
    open_questions: tuple[OpenQuestion, ...] = ()
    verdict: str = "STOP-CLEAN"
    level: str = "L2"
    level_reasons: tuple[str, ...] = ()
    blocked_by: tuple[int, ...] = ()
    origin: str = ""
    status: SpecStatus = "draft"
    approved_by: str | None = None
    level_decision: str | None = None
    # Seed 002's "patch only what changed" (issue 36 §7): the issue's title when this version was drafted, and
    # the title the interview gave it (a `Title:` line in an answer) when that differs — set at approval.
    title: str = ""
    new_title: str | None = None
    title_decision: str | None = None
    # Why this version left (shown in the history): edited, cancelled, superseded, redirected.
    note: str = ""

    @property
    def effective_title(self) -> str:
        return self.new_title or self.title

    def authored(self) -> dict[str, Any]:
        """The spec object: the three authored fields and the version the bot assigned."""
        return {
            "version": self.version,
            "goal": self.goal,
            "requirements": list(self.requirements),
            "qa": [{"question": q.question, "answer": q.answer} for q in self.qa],
        }


class SpecRecord(BaseModel):
    """The spec comment's data: the current spec (if any), the earlier versions, the last version used."""

    model_config = ConfigDict(frozen=True)

    current: Spec | None = None
    history: tuple[Spec, ...] = ()
    last_version: int = 0
    # Earlier versions no longer kept in ``history`` (it is bounded in characters).
    folded: int = 0

    def _retire(self, spec: Spec) -> tuple[tuple[Spec, ...], int]:
        history, folded = (*self.history, spec), self.folded
        while history and (
            len(history) > MAX_HISTORY or sum(len(old.model_dump_json()) for old in history) > HISTORY_CHARS
        ):
            history, folded = history[1:], folded + 1
        return history, folded

    def with_new(self, spec: Spec) -> SpecRecord:
        """Save ``spec`` as the current one; the one it replaces joins the history (superseded), noted as an
        edit (its own note, from ``/edit-spec``), a new version, and a redirect when the title changed."""
        history, folded = self.history, self.folded
        if self.current is not None:
            retired = self.current
            if retired.status == "draft":
                retired = retired.model_copy(update={"status": "superseded"})
            notes = [retired.note or f"replaced by v{spec.version}"]
            before, after = retired.effective_title, spec.effective_title
            if before and after and fold(before) != fold(after):
                notes.append(f"redirected: the title went from “{before}” to “{after}”")
            history, folded = self._retire(retired.model_copy(update={"note": "; ".join(notes)}))
        return SpecRecord(
            current=spec, history=history, last_version=max(self.last_version, spec.version), folded=folded
        )

    def discard(self, note: str = "") -> SpecRecord:
        if self.current is None or self.current.status != "draft":
            return self
        history, folded = self._retire(self.current.model_copy(update={"status": "discarded", "note": note}))
        return SpecRecord(current=None, history=history, last_version=self.last_version, folded=folded)


_EARS_EN: Final = re.compile(
    r"^(?:(?P<kw>when|while|if|where)\s++(?P<trigger>.*?[^,\s])[,\s]++)?the\s++[\w -]{1,40}?\s++shall\s++"
    r"(?P<resp>.+)$",
    re.IGNORECASE | re.DOTALL,
)
_EARS_PT: Final = re.compile(
    r"^(?:quando|enquanto|se|caso|onde)\s++(?P<trigger>.*?[^,\s])[,\s]++o\s++[\w -]{1,40}?\s++"
    r"deve(?:r[áa])?\s++"
    r"(?P<resp>.+)$",
    re.IGNORECASE | re.DOTALL,
)
_LEADING_KEYWORD: Final = re.compile(
    r"^(?:given|when|then|and|dad[oa]s?|quando|ent[aã]o|e)\s+", re.IGNORECASE
)


def _three(text: str, prefix: str, first: str, second: str) -> tuple[str, str, str] | None:
    """`text` as `<prefix>G<first>W<second>T` with G, W and T not empty, each of G and W as short as can be
    (the lazy `^prefix(.+?)first(.+?)second(.+)$`, found with two scans instead of backtracking)."""
    if not text.startswith(prefix):
        return None
    start = len(prefix)
    a = text.find(first, start + 1)
    if a < 0:
        return None
    b = text.find(second, a + len(first) + 1)
    while b >= 0 and b + len(second) >= len(text):
        b = text.find(second, b + 1)
    if b < 0:
        # No later G can help: its W would have to end at one of the same, fewer, places.
        return None
    return text[start:a], text[a + len(first) : b], text[b + len(second) :]


def _tidy(text: str) -> str:
    text = " ".join(text.split()).rstrip(" .;")
    return text if len(text) <= MAX_LINE else text[: MAX_LINE - 1].rstrip() + "…"


def to_ac(text: str, kind: str = "") -> str:
    """One acceptance criterion as an ``AC: WHEN … THE SYSTEM SHALL …`` line (see the module docstring)."""
    plain = strip_item(text)
    for pattern in (_EARS_EN, _EARS_PT):
        ears = pattern.match(plain)
        if ears is not None:
            trigger = ears.groupdict().get("trigger") or "the feature is used"
            return f"AC: WHEN {_tidy(trigger)} THE SYSTEM SHALL {_tidy(ears.group('resp'))}"
    gherkin = (_three(plain, "", " / ", " / ") if kind == "gherkin" else None) or _three(
        plain, "Given ", ", when ", ", then "
    )
    if gherkin is not None:
        given, when, then = (_LEADING_KEYWORD.sub("", part.strip()) for part in gherkin)
        return f"AC: WHEN {_tidy(when)}, given {_tidy(given)}, THE SYSTEM SHALL {_tidy(then)}"
    return f"AC: WHEN the change is delivered THE SYSTEM SHALL satisfy: {_tidy(plain)}"


def _answer_lines(answer: str) -> list[str]:
    lines = [strip_item(line) for line in answer.replace("\r\n", "\n").split("\n")]
    return [line for line in lines if line and not line.startswith(("```", "~~~"))]


def _requirements_of(
    dimension: Dimension, evidence: Iterable[Evidence], answers: Iterable[GapRow]
) -> list[str]:
    out: list[str] = []
    for item in evidence:
        out.extend(_requirement(dimension, item.text, item.kind))
    for row in answers:
        for line in _answer_lines(row.answer or ""):
            out.extend(_requirement(dimension, line, ""))
    return out


_NONE_ANSWERS: Final = frozenset({"none", "n a", "na", "nothing", "nenhum", "nenhuma", "nada", "no", "nao"})


def _requirement(dimension: Dimension, text: str, kind: str) -> list[str]:
    if " ".join(re.findall(r"\w+", fold(text))) in _NONE_ANSWERS:
        return []
    if dimension == Dimension.WHAT:
        return [f"REQ: {_tidy(text)}"]
    if dimension == Dimension.ACCEPTANCE:
        return [to_ac(text, kind)]
    if dimension == Dimension.SCOPE:
        return [f"SCOPE({side.upper()}): {_tidy(rest)}" for side, rest in scope_items(text, kind) if rest]
    if dimension == Dimension.CONSTRAINTS:
        return [f"CONSTRAINT: {_tidy(text)}"]
    if dimension == Dimension.EDGE:
        return [f"EDGE: {_tidy(text)}"]
    return []


def _first_sentence(text: str) -> str:
    found = sentences(text)
    return _tidy(found[0]) if found else ""


def _latest_answer(ledger: GapLedger, dimension: Dimension) -> str:
    answered = [r for r in ledger.rows if r.dimension == dimension and r.answer and r.status == "RESOLVED"]
    answered.sort(key=lambda r: (r.answered_in or 0, r.id))
    return answered[-1].answer or "" if answered else ""


def _reason(found: BodyScan, ledger: GapLedger) -> str:
    """The motivation: what the description says, else the answer to the original WHY question. A
    follow-up row under WHY refines the reason (often with a limit); it never replaces it."""
    evidence = found.of(Dimension.WHY)
    if evidence:
        return _first_sentence(evidence[0].text)
    original = [
        r
        for r in ledger.rows
        if r.dimension == Dimension.WHY and r.source == "original" and r.answer and r.status == "RESOLVED"
    ]
    if original:
        return _first_sentence(original[0].answer or "")
    return _first_sentence(_latest_answer(ledger, Dimension.WHY))


def _why_limits(ledger: GapLedger) -> list[str]:
    """Follow-up WHY answers that state a limit: they become constraints of the spec."""
    return [
        f"CONSTRAINT: {_tidy(line)}"
        for r in ledger.rows
        if r.dimension == Dimension.WHY and r.source != "original" and r.answer and r.status == "RESOLVED"
        for line in _answer_lines(r.answer)
        if is_limit(line)
    ]


def _goal(title: str, found: BodyScan, ledger: GapLedger) -> str:
    what = _first_sentence(_latest_answer(ledger, Dimension.WHAT))
    if not what:
        evidence = found.of(Dimension.WHAT)
        what = _first_sentence(evidence[0].text) if evidence else _tidy(title)
    why = _reason(found, ledger)
    goal = what.rstrip(".") + "."
    if why and fold(why.rstrip(".")) not in fold(what):
        goal += " " + why.rstrip(".") + "."
    return goal


def _bounded(requirements: list[str]) -> list[str]:
    """At most ``MAX_REQUIREMENTS`` lines and ``REQUIREMENTS_CHARS`` characters; a last line counts
    the rest."""
    kept: list[str] = []
    size = 0
    for line in requirements:
        if len(kept) >= MAX_REQUIREMENTS - 1 or size + len(line) > REQUIREMENTS_CHARS:
            rest = len(requirements) - len(kept)
            return [
                *kept,
                f"REQ: … {rest} more line{'s' if rest != 1 else ''} in the issue, too many to list",
            ]
        kept.append(line)
        size += len(line)
    return kept


# A line of an answer that renames the item: `Title: …` / `Título: …` (seed 002: the interview may change the
# title; the approval applies it).
_TITLE_LINE: Final = re.compile(
    r"^[ \t]*+(?:[-*+][ \t]++)?[*_]{0,2}(?:title|t[ií]tulo)[*_]{0,2}[ \t]*+:[*_]{0,2}[ \t]*+(\S[^\n]*+)$",
    re.I | re.M,
)
MAX_TITLE: Final = 200


def new_title(title: str, ledger: GapLedger) -> str | None:
    """The title the interview gave the item: the last `Title:` line of the answers, when it differs from the
    issue's ``title`` (None otherwise)."""
    found: str | None = None
    for row in ledger.rows:
        for m in _TITLE_LINE.finditer(row.answer or ""):
            found = m.group(1).strip().strip('*_`"“”').strip()[:MAX_TITLE] or found
    if found is None or fold(found) == fold(title):
        return None
    return found


def synthesize(
    *,
    title: str,
    body: str,
    found: BodyScan,
    ledger: GapLedger,
    verdict: str,
    version: int,
    origin: str,
) -> Spec:
    """A new spec (draft) from the issue, its scan and its ledger; level and blockers come later."""
    renamed = new_title(title, ledger)
    for row in ledger.rows:  # a `Title:` line renames the item; it is not a requirement or the goal
        if row.answer and _TITLE_LINE.search(row.answer):
            rest = _TITLE_LINE.sub("", row.answer).strip()
            ledger = ledger.replace(row.model_copy(update={"answer": rest or row.answer}))
    requirements: list[str] = []
    for dimension in (
        Dimension.WHAT,
        Dimension.ACCEPTANCE,
        Dimension.SCOPE,
        Dimension.CONSTRAINTS,
        Dimension.EDGE,
    ):
        answered = [
            r for r in ledger.rows if r.dimension == dimension and r.status == "RESOLVED" and r.answer
        ]
        requirements.extend(_requirements_of(dimension, found.of(dimension), answered))
    requirements.extend(_why_limits(ledger))
    order = ("REQ:", "AC:", "SCOPE(IN):", "SCOPE(OUT):", "CONSTRAINT:", "EDGE:")
    requirements.sort(key=lambda line: next(i for i, p in enumerate(order) if line.startswith(p)))
    visible_body = "\n".join(line.text for line in prose_lines(clip_body(body)[0]))
    texts = [title, visible_body, *(r.answer or "" for r in ledger.rows)]
    for url in urls("\n".join(texts)):
        requirements.append(f"SOURCE: {url}")
    requirements = _bounded(list(dict.fromkeys(requirements)))
    qa = tuple(
        QA(id=r.id, question=r.question, answer=r.answer if r.status == "RESOLVED" else None)
        for r in ledger.rows
        if r.asked_in is not None or r.answer is not None
    )
    open_questions = tuple(
        OpenQuestion(id=r.id, dimension=r.dimension.value, question=r.question) for r in ledger.open_rows
    )
    return Spec(
        version=version,
        goal=_goal(title, found, ledger),
        requirements=tuple(requirements),
        qa=qa,
        open_questions=open_questions,
        verdict=verdict,
        origin=origin,
        title=title[:MAX_TITLE],
        new_title=renamed,
    )
