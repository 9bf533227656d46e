"""The review ledger of a bug: review rounds, dispositions of findings, disclosed gaps, and the budget they
spend. A pure state machine: the events (each one an accepted `/review`, `/disposition` or `/accept-gap`,
recorded in Steward's reply to that command) fold into a ``Ledger``; ``check_*`` say whether a new event is
allowed and, if not, why. The budgets belong to the bug and are fixed when `/bugfix` first ran.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast, get_args

from bot.records import neutralise
from handlers.bugfix.budgets import Budgets as Budgets
from handlers.bugfix.gate import Refusal, UsageError
from handlers.bugfix.scope import ScopeAcceptance

Severity = Literal["critical", "high", "medium", "low", "info"]
SEVERITIES: tuple[Severity, ...] = get_args(Severity)
Disposition = Literal["fix", "low", "out-of-scope", "unvalidated"]
DISPOSITIONS: tuple[Disposition, ...] = get_args(Disposition)
Verdict = Literal["clean", "inconclusive", "findings"]
VERDICTS: tuple[Verdict, ...] = get_args(Verdict)
RESIDUAL: frozenset[str] = frozenset({"low", "out-of-scope", "unvalidated"})
# How strict a disposition is: a finding's first disposition stands and may only move up this order.
STRICTNESS: dict[str, int] = {"out-of-scope": 0, "low": 1, "unvalidated": 2, "fix": 3}
MAX_FINDINGS = 50
_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,19}$")
_LOCATION = re.compile(r"^\S{1,300}:\d{1,7}(?:-\d{1,7})?$")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_TAG = re.compile(r"^(category|impact)=([A-Za-z0-9_.-]{1,40})\s+", re.IGNORECASE)


@dataclass(frozen=True)
class Finding:
    id: str
    severity: Severity
    location: str
    text: str
    # What kind of risk and what it would do, when the reviewer says (`category=security impact=data-loss`).
    category: str = ""
    impact: str = ""

    @property
    def kind(self) -> str:
        """The severity, with the category and impact when given: `high · security · data-loss`."""
        return " · ".join(x for x in (self.severity, self.category, self.impact) if x)

    def to_json(self) -> list[str]:
        short = [self.id, self.severity, self.location, self.text]
        return [*short, self.category, self.impact] if self.category or self.impact else short


@dataclass(frozen=True)
class Round:
    comment_id: int
    actor: str
    head: str
    verdict: Verdict
    findings: tuple[Finding, ...] = ()
    reason: str = ""
    # Why the round is void (its reviewer made or moved the branch: ``independence.void_rounds``); derived
    # on every read, never recorded. A void round settles nothing but still counts against the budget.
    void: str = ""


@dataclass(frozen=True)
class DispositionRecord:
    comment_id: int
    actor: str
    finding: str
    disposition: Disposition
    reason: str
    round: int  # 1-based number of the round whose finding it disposes


@dataclass(frozen=True)
class Gap:
    comment_id: int
    actor: str
    reason: str


@dataclass(frozen=True)
class RedProof:
    """`/red-proof ok`: a person with write access confirmed that CI's failure on the red commit ``sha`` is
    the regression test's (where CI did not name the failing test)."""

    comment_id: int
    actor: str
    sha: str


Event = Round | DispositionRecord | Gap | RedProof | ScopeAcceptance


@dataclass(frozen=True)
class Residual:
    round: int
    finding: Finding
    disposition: Disposition
    reason: str


@dataclass(frozen=True)
class Ledger:
    budgets: Budgets = field(default_factory=Budgets)
    rounds: tuple[Round, ...] = ()
    dispositions: tuple[DispositionRecord, ...] = ()
    gaps: tuple[Gap, ...] = ()
    red_proofs: tuple[RedProof, ...] = ()
    scopes: tuple[ScopeAcceptance, ...] = ()

    # --- folding -------------------------------------------------------------------------------------------

    def apply(self, event: Event) -> Ledger:
        if isinstance(event, Round):
            return replace(self, rounds=(*self.rounds, event))
        if isinstance(event, DispositionRecord):
            return replace(self, dispositions=(*self.dispositions, event))
        if isinstance(event, RedProof):
            return replace(self, red_proofs=(*self.red_proofs, event))
        if isinstance(event, ScopeAcceptance):
            return replace(self, scopes=(*self.scopes, event))
        return replace(self, gaps=(*self.gaps, event))

    @property
    def scope_accepted(self) -> frozenset[str]:
        """Every item a `/scope` acceptance covered."""
        return frozenset(f for s in self.scopes for f in s.files)

    def red_confirmed_by(self, sha: str) -> str:
        """Who confirmed the red proof of commit ``sha`` with `/red-proof ok` ("" when nobody)."""
        return next((p.actor for p in self.red_proofs if p.sha == sha), "")

    # --- derived counters ----------------------------------------------------------------------------------

    def number_of(self, position: int) -> int:
        """The number of the round at ``position`` (1-based): a no-verdict retry — a round on the same head
        right after an inconclusive one — reuses its round's number."""
        n = 0
        for i, rnd in enumerate(self.rounds[:position]):
            previous = self.rounds[i - 1] if i else None
            if previous is None or previous.head != rnd.head or previous.verdict != "inconclusive":
                n += 1
        return n

    @property
    def rounds_used(self) -> int:
        """Review rounds spent (retries reuse their round's number and do not spend one)."""
        return self.number_of(len(self.rounds))

    def disposition_of(self, round_number: int, finding: str) -> DispositionRecord | None:
        """The finding's disposition: append-only — the first one stands, a later one counts only when it
        is stricter (``STRICTNESS``)."""
        found: DispositionRecord | None = None
        for record in self.dispositions:
            if record.round != round_number or record.finding.casefold() != finding.casefold():
                continue
            if found is None or STRICTNESS[record.disposition] > STRICTNESS[found.disposition]:
                found = record
        return found

    def actionable(self, position: int) -> tuple[Finding, ...]:
        """Findings of the round at ``position`` still to be fixed: without a disposition, or disposed
        ``fix``."""
        rnd = self.rounds[position - 1]
        out = []
        for finding in rnd.findings:
            record = self.disposition_of(self.number_of(position), finding.id)
            if record is None or record.disposition == "fix":
                out.append(finding)
        return tuple(out)

    def undisposed(self) -> tuple[Finding, ...]:
        """Findings of the latest round without a disposition (the next round waits for them)."""
        if not self.rounds:
            return ()
        n = self.rounds_used
        return tuple(f for f in self.rounds[-1].findings if self.disposition_of(n, f.id) is None)

    @property
    def fix_cycles_used(self) -> int:
        return sum(
            1
            for i in range(1, len(self.rounds))
            if self.rounds[i].head != self.rounds[i - 1].head and self.actionable(i)
        )

    @property
    def retries_used(self) -> int:
        return sum(
            1
            for i in range(1, len(self.rounds))
            if self.rounds[i].head == self.rounds[i - 1].head and self.rounds[i - 1].verdict == "inconclusive"
        )

    def _last_open(self) -> bool:
        """Whether the latest round leaves work: actionable findings, or no verdict."""
        if not self.rounds:
            return False
        last = self.rounds[-1]
        return last.verdict == "inconclusive" or bool(self.actionable(len(self.rounds)))

    @property
    def exhausted(self) -> bool:
        if not self._last_open():
            return False
        last = self.rounds[-1]
        retry_left = last.verdict == "inconclusive" and self.retries_used < self.budgets.no_verdict_retries
        if self.rounds_used >= self.budgets.review_rounds and not retry_left:
            return True
        if last.verdict == "findings" and self.fix_cycles_used >= self.budgets.fix_cycles:
            return True
        return (
            last.verdict == "inconclusive"
            and self.retries_used >= self.budgets.no_verdict_retries
            and len(self.rounds) >= 2
            and self.rounds[-2].head == last.head
        )

    @property
    def exhaustion_reason(self) -> str:
        if not self.exhausted:
            return ""
        n = self.rounds_used
        if n >= self.budgets.review_rounds and self.rounds[-1].verdict != "inconclusive":
            return (
                f"All {self.budgets.review_rounds} review rounds are spent and the last one still has "
                "work left."
            )
        if self.rounds[-1].verdict == "findings":
            return (
                f"All {self.budgets.fix_cycles} fix cycles are spent and round {n} still has findings to fix."
            )
        return "The no-verdict retry is spent and the review on this head is still inconclusive."

    @property
    def stop_reason(self) -> str:
        """Why the review stops early (the seed: a repeated finding): a finding id, or a `path:line`, that
        a round reports again after an earlier round reported it ("" when none)."""
        seen_ids: dict[str, int] = {}
        seen_places: dict[str, int] = {}
        for i, rnd in enumerate(self.rounds, start=1):
            n = self.number_of(i)
            for finding in rnd.findings:
                key, place = finding.id.casefold(), finding.location
                earlier = seen_ids.get(key) or seen_places.get(place)
                if earlier is not None and earlier != n:
                    return (
                        f"finding `{finding.id}` at `{finding.location}` was reported again in round {n} "
                        f"(first in round {earlier})"
                    )
                seen_ids.setdefault(key, n)
                seen_places.setdefault(place, n)
        return ""

    def residuals(self) -> tuple[Residual, ...]:
        out = []
        for i, rnd in enumerate(self.rounds, start=1):
            n = self.number_of(i)
            for finding in rnd.findings:
                record = self.disposition_of(n, finding.id)
                if record is not None and record.disposition in RESIDUAL:
                    out.append(Residual(n, finding, record.disposition, record.reason))
        return tuple(out)

    def completion(self) -> str:
        return "CLEAN_WITH_RESIDUALS" if self.residuals() else "CLEAN"

    def review_state(self, head: str) -> str:
        """``complete`` when a round on ``head`` settled the review; else what is missing (one line)."""
        if not self.rounds or self.rounds[-1].head != head:
            return "awaiting a review round on the head: a reviewer writes /review clean or /review findings"
        n = len(self.rounds)
        last = self.rounds[-1]
        if last.void:
            return f"awaiting a review round on the head: round {self.number_of(n)} is void ({last.void})"
        if last.verdict == "clean":
            return "complete"
        if last.verdict == "inconclusive":
            return "the review of the head was inconclusive: review it again (one retry)"
        waiting = self.undisposed()
        if waiting:
            return "awaiting dispositions of " + ", ".join(f.id for f in waiting)
        to_fix = self.actionable(n)
        if to_fix:
            return "awaiting the fix of " + ", ".join(f.id for f in to_fix) + ": push a new head"
        return "complete"

    # --- checks --------------------------------------------------------------------------------------------

    def check_review(
        self, *, head: str, actor: str, committers: Iterable[str], findings: Sequence[Finding] = ()
    ) -> Refusal | None:
        if actor.casefold() in {c.casefold() for c in committers}:
            return Refusal(
                "REVIEWER_COMMITTED",
                "you ran `/bugfix` or authored a commit of this branch: whoever writes the fix does not "
                "judge it. Ask another person with write access to review.",
            )
        if self.exhausted:
            return Refusal("BUDGET_EXHAUSTED", f"the review budget is exhausted. {self.exhaustion_reason}")
        waiting = self.undisposed()
        if waiting:
            ids = ", ".join(f"`{f.id}`" for f in waiting)
            return Refusal(
                "DISPOSITIONS_MISSING",
                f"every finding needs a disposition before the next round; still open: {ids}. Write "
                "`/disposition <id> fix|low|out-of-scope|unvalidated <reason>` for each.",
            )
        on_head = [r for r in self.rounds if r.head == head and not r.void]
        retry = False
        if on_head:
            last = self.rounds[-1]
            retry = last.head == head and last.verdict == "inconclusive" and not last.void
            if not retry:
                return Refusal(
                    "SAME_HEAD_REVIEWED",
                    f"the head `{head[:10]}` was reviewed already "
                    f"(round {self.number_of(self.rounds.index(on_head[-1]) + 1)}). "
                    "Push a new head to review it again.",
                )
            if self.retries_used >= self.budgets.no_verdict_retries:
                return Refusal(
                    "RETRY_SPENT",
                    "this head was reviewed inconclusively and its no-verdict retry is spent: push a new "
                    "head.",
                )
        if not retry and self.rounds_used >= self.budgets.review_rounds:
            return Refusal(
                "BUDGET_EXHAUSTED", f"all {self.budgets.review_rounds} review rounds of this bug are spent."
            )
        if (
            self.rounds
            and self.rounds[-1].head != head
            and self.actionable(len(self.rounds))
            and self.fix_cycles_used >= self.budgets.fix_cycles
        ):
            return Refusal(
                "BUDGET_EXHAUSTED", f"all {self.budgets.fix_cycles} fix cycles of this bug are spent."
            )
        for finding in findings:
            earlier = self.highest_severity(finding.id)
            if earlier is not None and SEVERITIES.index(finding.severity) > SEVERITIES.index(earlier):
                return Refusal(
                    "SEVERITY_LOWERED",
                    f"finding `{finding.id}` was `{earlier}` in an earlier round; a severity is never "
                    "lowered. "
                    f"Report it as `{earlier}` (or higher), or give the new finding another id.",
                )
        return None

    def highest_severity(self, finding_id: str) -> Severity | None:
        found = [
            f.severity for r in self.rounds for f in r.findings if f.id.casefold() == finding_id.casefold()
        ]
        return min(found, key=SEVERITIES.index) if found else None

    def check_disposition(
        self,
        finding_id: str,
        disposition: Disposition,
        *,
        actor: str = "",
        committers: Iterable[str] = (),
    ) -> tuple[int, Refusal | None]:
        """The round the disposition is for, or why it is refused. ``committers``: everyone who committed
        to the branch (they may not put a critical finding out of scope)."""
        if not self.rounds or self.rounds[-1].verdict != "findings":
            return 0, Refusal("NO_FINDINGS", "the latest review round has no findings to dispose of.")
        n = self.rounds_used
        finding = next(
            (f for f in self.rounds[-1].findings if f.id.casefold() == finding_id.casefold()), None
        )
        if finding is None:
            known = ", ".join(f"`{f.id}`" for f in self.rounds[-1].findings)
            return n, Refusal("UNKNOWN_FINDING", f"round {n} has no finding `{finding_id}` (it has {known}).")
        if disposition == "low" and finding.severity not in ("low", "info"):
            return n, Refusal(
                "SEVERITY_LOWERED",
                f"`{finding.id}` is `{finding.severity}`: `low` is only for `low` and `info` findings "
                "(a severity "
                "is never lowered). Use `fix`, `out-of-scope` or `unvalidated`.",
            )
        earlier = self.disposition_of(n, finding.id)
        if earlier is not None and STRICTNESS[disposition] <= STRICTNESS[earlier.disposition]:
            stricter = [d for d in DISPOSITIONS if STRICTNESS[d] > STRICTNESS[earlier.disposition]]
            allowed = " or ".join(f"`{d}`" for d in stricter) or "nothing (it is the strictest)"
            return n, Refusal(
                "DISPOSITION_STANDS",
                f"`{finding.id}` was disposed `{earlier.disposition}` by @{earlier.actor}; a disposition "
                f"stands and may only move to a stricter one: {allowed}.",
            )
        if (
            finding.severity == "critical"
            and disposition == "out-of-scope"
            and actor.casefold() in {c.casefold() for c in committers}
        ):
            return n, Refusal(
                "CRITICAL_OUT_OF_SCOPE_BY_COMMITTER",
                f"`{finding.id}` is critical and you committed to this branch: whoever wrote the fix does "
                "not rule its critical findings out of scope. Ask someone who did not commit to the branch.",
            )
        return n, None


# --- the commands' text -----------------------------------------------------------------------------------


def parse_findings(lines: Iterable[str]) -> tuple[Finding, ...]:
    """Lines ``<id> <severity> <path:line> <text>`` (a list bullet in front is fine; blank lines skipped)."""
    out: list[Finding] = []
    seen: set[str] = set()
    for raw in lines:
        line = _BULLET.sub("", raw).strip().strip("`")
        if not line:
            continue
        parts = line.split(None, 2)
        tagged: dict[str, str] = {}
        while len(parts) == 3 and (tag := _TAG.match(parts[2])):
            tagged[tag.group(1).lower()] = tag.group(2).lower()[:40]
            parts = [parts[0], parts[1], parts[2][tag.end() :]]
        parts = [*parts[:2], *parts[2].split(None, 1)] if len(parts) == 3 else parts
        if len(parts) < 4:
            raise UsageError(
                "a finding is `<id> <severity> [category=<c>] [impact=<i>] <path:line> <text>`; this line "
                f"is not: `{line[:80]}`"
            )
        ident, severity, location, text = parts
        if not _ID.match(ident):
            raise UsageError(
                f"`{ident[:30]}` is not a finding id (a letter, then letters, digits, `-`, `_`, `.`)"
            )
        if severity.lower() not in SEVERITIES:
            raise UsageError(
                f"{neutralise.code(severity, 20)} is not a severity: use {', '.join(SEVERITIES)}"
            )
        if not _LOCATION.match(location):
            raise UsageError(f"{neutralise.code(location, 60)} is not a location `path:line`")
        if ident.casefold() in seen:
            raise UsageError(f"finding {neutralise.code(ident, 40)} is listed twice")
        seen.add(ident.casefold())
        out.append(
            Finding(
                ident,
                cast(Severity, severity.lower()),
                location,
                text.strip()[:500],
                tagged.get("category", ""),
                tagged.get("impact", ""),
            )
        )
        if len(out) > MAX_FINDINGS:
            raise UsageError(f"at most {MAX_FINDINGS} findings per round")
    return tuple(out)


@dataclass(frozen=True)
class ReviewRequest:
    verdict: Verdict
    findings: tuple[Finding, ...] = ()
    reason: str = ""
    # The head the reviewer names (`/review <sha> clean`): the round is refused unless it is the head.
    sha: str = ""


_SHA = re.compile(r"^[0-9a-f]{7,40}$")


def parse_review(text: str) -> ReviewRequest:
    """`/review [<sha>] clean`, `/review [<sha>] inconclusive <why>`, `/review [<sha>] findings` + finding
    lines."""
    first, _, rest = text.strip().partition("\n")
    word, _, tail = first.strip().partition(" ")
    if _SHA.match(word.lower()):
        request = parse_review(tail + ("\n" + rest if rest else ""))
        return replace(request, sha=word.lower())
    verdict = word.lower()
    if verdict not in VERDICTS:
        raise UsageError(
            "write `/review clean`, `/review inconclusive <why>` or `/review findings` followed by "
            "lines "
                         "`<id> <severity> <path:line> <text>`")  # fmt: skip
    if verdict == "clean":
        return ReviewRequest("clean", reason=tail.strip()[:500])
    if verdict == "inconclusive":
        why = (tail + "\n" + rest).strip()
        if not why:
            raise UsageError("say why the review is inconclusive: `/review inconclusive <why>`")
        return ReviewRequest("inconclusive", reason=why[:500])
    findings = parse_findings([tail, *rest.splitlines()])
    if not findings:
        raise UsageError(
            "`/review findings` needs at least one line `<id> <severity> <path:line> <text>` under it"
        )
    return ReviewRequest("findings", findings)


def parse_disposition(args: Sequence[str], text: str) -> tuple[str, Disposition, str]:
    words = text.strip().split(None, 2)
    if len(words) < 3:
        raise UsageError("write `/disposition <id> fix|low|out-of-scope|unvalidated <reason>`")
    ident, disposition, reason = words
    if disposition.lower() not in DISPOSITIONS:
        raise UsageError(
            f"{neutralise.code(disposition, 20)} is not a disposition: use {', '.join(DISPOSITIONS)}"
        )
    return ident, cast(Disposition, disposition.lower()), reason.strip()[:500]


# --- events as recorded in Steward's replies --------------------------------------------------------------


def event_to_json(event: Event) -> dict[str, Any]:
    if isinstance(event, Round):
        return {
            "type": "review",
            "comment": event.comment_id,
            "actor": event.actor,
            "head": event.head,
            "verdict": event.verdict,
            "reason": event.reason,
            "findings": [f.to_json() for f in event.findings],
        }
    if isinstance(event, DispositionRecord):
        return {
            "type": "disposition",
            "comment": event.comment_id,
            "actor": event.actor,
            "finding": event.finding,
            "disposition": event.disposition,
            "reason": event.reason,
            "round": event.round,
        }
    if isinstance(event, RedProof):
        return {"type": "red-proof", "comment": event.comment_id, "actor": event.actor, "sha": event.sha}
    if isinstance(event, ScopeAcceptance):
        return {
            "type": "scope",
            "comment": event.comment_id,
            "actor": event.actor,
            "reason": event.reason,
            "files": list(event.files),
        }
    return {"type": "gap", "comment": event.comment_id, "actor": event.actor, "reason": event.reason}


def event_from_json(raw: Any) -> Event | None:
    """The event a reply records, or None for anything malformed (never raises)."""
    if not isinstance(raw, Mapping):
        return None
    try:
        kind = raw.get("type")
        comment, actor = int(raw["comment"]), str(raw["actor"])
        if kind == "review" and raw.get("verdict") in VERDICTS:
            findings = tuple(
                Finding(str(f[0]), cast(Severity, f[1]), str(f[2]), str(f[3]), *(str(x)[:40] for x in f[4:6]))
                for f in raw.get("findings") or ()
                if isinstance(f, list) and len(f) in (4, 6) and f[1] in SEVERITIES
            )
            return Round(
                comment, actor, str(raw["head"]), raw["verdict"], findings, str(raw.get("reason") or "")
            )
        if kind == "disposition" and raw.get("disposition") in DISPOSITIONS:
            return DispositionRecord(
                comment,
                actor,
                str(raw["finding"]),
                raw["disposition"],
                str(raw.get("reason") or ""),
                int(raw["round"]),
            )
        if kind == "gap":
            return Gap(comment, actor, str(raw.get("reason") or ""))
        if kind == "red-proof":
            return RedProof(comment, actor, str(raw["sha"]))
        if kind == "scope":
            files = raw.get("files")
            kept = tuple(str(f)[:300] for f in files[:50]) if isinstance(files, list) else ()
            return ScopeAcceptance(comment, actor, str(raw.get("reason") or ""), kept)
    except (KeyError, TypeError, ValueError):
        return None
    return None


def fold(budgets: Budgets, events: Iterable[Event]) -> Ledger:
    """The ledger from its events, in the order their commands were written (comment ids grow)."""
    ledger = Ledger(budgets)
    seen: set[tuple[str, int]] = set()
    for event in sorted(events, key=lambda e: e.comment_id):
        key = (type(event).__name__, event.comment_id)
        if key in seen:
            continue
        seen.add(key)
        ledger = ledger.apply(event)
    return ledger
