"""The hypotheses board's state machine. Pure, no I/O.

The board's data block keeps an append-only log of what the commands recorded (``Entry``); the state
(``Board``) is a fold of that log at a moment in time. A piece of evidence whose comment was edited or
deleted stays in the log, marked ``withdrawn``, and no longer counts. Escalations are entries too, so the
block they set holds until ``/resume-debug`` however the evidence moves afterwards.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal

from handlers.debug.grounding import Ground, Problem, grounds_from_json, grounds_to_json
from handlers.debug.locations import Location, find_locations

EntryKind = Literal[
    "hypothesis", "evidence", "confirm", "refute", "inconclusive", "resume", "escalation", "rank"
]
Status = Literal["pending", "confirmed", "refuted", "inconclusive"]
KINDS: Final[tuple[EntryKind, ...]] = (
    "rank",
    "hypothesis",
    "evidence",
    "confirm",
    "refute",
    "inconclusive",
    "resume",
    "escalation",
)
# Entries that carry evidence: editing or deleting their comment withdraws them.
EVIDENCE_KINDS: Final = frozenset({"evidence", "confirm", "refute", "inconclusive"})
VERDICTS: Final[Mapping[str, Status]] = {
    "confirm": "confirmed",
    "refute": "refuted",
    "inconclusive": "inconclusive",
}

MAX_ENTRIES: Final = 100
MAX_HYPOTHESES: Final = 30
TITLE_CHARS: Final = 100
TEXT_CHARS: Final = 240
ESCALATE_AFTER: Final = 3
ID_RE: Final = re.compile(r"^[Hh]?([1-9][0-9]{0,3})$")

BUG_NOT_REFINED: Final = "BUG_NOT_REFINED"
ROOT_CAUSE_NOT_EVIDENCED: Final = "ROOT_CAUSE_NOT_EVIDENCED"


class Refused(Exception):
    """A command the board cannot take; the message says why and what to write instead (``problems``: the
    places that do not exist, when that is why)."""

    def __init__(self, message: str, problems: tuple[Problem, ...] = ()) -> None:
        super().__init__(message)
        self.problems = problems


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def digest(name: str, text: str) -> str:
    """What identifies a command's content: an edit that changes it withdraws the entry."""
    return hashlib.sha256(f"{name}\0{' '.join(text.split())}".encode()).hexdigest()[:12]


def parse_id(text: str) -> int | None:
    match = ID_RE.match(text.strip())
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class Entry:
    """One thing recorded on the board. ``comment``/``occurrence``/``digest`` name the command it came from
    (0 for escalations, which Steward records itself)."""

    seq: int
    kind: EntryKind
    author: str
    at: str
    comment: int = 0
    occurrence: int = 0
    digest: str = ""
    url: str = ""
    hypothesis: int = 0
    stance: Literal["for", "against", ""] = ""
    title: str = ""
    text: str = ""
    refs: tuple[str, ...] = ()
    withdrawn: bool = False
    # A rank entry's place for its hypothesis (1: first).
    position: int = 0

    @property
    def key(self) -> tuple[int, int, str]:
        return (self.comment, self.occurrence, self.digest)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"n": self.seq, "k": self.kind, "a": self.author, "t": self.at}
        for name, value in (
            ("c", self.comment),
            ("o", self.occurrence),
            ("d", self.digest),
            ("u", self.url),
            ("h", self.hypothesis),
            ("s", self.stance),
            ("ti", self.title),
            ("x", self.text),
            ("r", list(self.refs)),
            ("w", self.withdrawn),
            ("p", self.position),
        ):
            if value:
                out[name] = value
        return out

    @classmethod
    def from_json(cls, raw: Any) -> Entry | None:
        if not isinstance(raw, dict) or raw.get("k") not in KINDS:
            return None
        try:
            stance = str(raw.get("s", ""))
            return cls(
                seq=int(raw.get("n", 0)),
                kind=raw["k"],
                author=str(raw.get("a", "")),
                at=str(raw.get("t", "")),
                comment=int(raw.get("c", 0)),
                occurrence=int(raw.get("o", 0)),
                digest=str(raw.get("d", "")),
                url=str(raw.get("u", "")),
                hypothesis=int(raw.get("h", 0)),
                stance="for" if stance == "for" else "against" if stance == "against" else "",
                title=str(raw.get("ti", "")),
                text=str(raw.get("x", "")),
                refs=tuple(str(r) for r in raw.get("r", ()) if isinstance(r, str))[:20],
                withdrawn=bool(raw.get("w", False)),
                position=int(raw.get("p", 0)),
            )
        except (TypeError, ValueError):
            return None


def log_from_json(data: Any) -> tuple[Entry, ...]:
    raw = data.get("log") if isinstance(data, dict) else None
    if not isinstance(raw, list):
        return ()
    entries = [e for e in (Entry.from_json(item) for item in raw[: MAX_ENTRIES + 10]) if e is not None]
    return tuple(sorted(entries, key=lambda e: e.seq))


def log_to_json(log: Sequence[Entry], grounds: Mapping[str, Ground] | None = None) -> dict[str, Any]:
    """The board's data block: the log, and what each grounded location pointed at (``grounding``)."""
    out: dict[str, Any] = {"v": 1, "log": [e.to_json() for e in log]}
    if grounds:
        out["grounds"] = grounds_to_json(grounds)
    return out


def grounds_of(data: Any) -> dict[str, Ground]:
    """What the grounded locations of a board's data block pointed at."""
    return grounds_from_json(data.get("grounds")) if isinstance(data, dict) else {}


@dataclass(frozen=True)
class Hypothesis:
    id: int
    title: str
    statement: str
    refs: tuple[str, ...]
    author: str
    at: str
    url: str
    epoch: int
    status: Status = "pending"
    timed_out: bool = False
    decided_by: str = ""
    decided_at: str = ""
    decided_url: str = ""
    evidence_for: tuple[Entry, ...] = ()
    evidence_against: tuple[Entry, ...] = ()
    verdict: Entry | None = None
    # Its place in the order people gave (`/rank H2 1`; by default the order they were added), 1 first.
    rank: int = 0

    @property
    def label(self) -> str:
        return f"H{self.id}"

    @property
    def failed(self) -> bool:
        return self.status in ("refuted", "inconclusive")

    @property
    def locations(self) -> tuple[str, ...]:
        """Where it points: its own statement's places, then those its confirming evidence names."""
        out: list[str] = list(self.refs)
        confirming = [self.verdict] if self.verdict is not None and self.verdict.kind == "confirm" else []
        for entry in (*confirming, *self.evidence_for):
            out += [r for r in entry.refs if r not in out]
        return tuple(out[:20])

    def strongest(self) -> Entry | None:
        """The evidence that best explains its fate: its verdict, else the last piece against it."""
        if self.verdict is not None:
            return self.verdict
        return self.evidence_against[-1] if self.evidence_against else None


@dataclass(frozen=True)
class Board:
    hypotheses: tuple[Hypothesis, ...]
    log: tuple[Entry, ...]
    epoch: int
    escalated: Entry | None
    resumes: tuple[Entry, ...] = field(default=())

    @property
    def ranked(self) -> tuple[Hypothesis, ...]:
        """The hypotheses in the order people ranked them (most likely first)."""
        return tuple(sorted(self.hypotheses, key=lambda h: h.rank))

    def get(self, number: int) -> Hypothesis | None:
        return next((h for h in self.hypotheses if h.id == number), None)

    @property
    def confirmed(self) -> tuple[Hypothesis, ...]:
        return tuple(h for h in self.hypotheses if h.status == "confirmed")

    @property
    def current(self) -> tuple[Hypothesis, ...]:
        """The hypotheses of this round (added since the last resume)."""
        return tuple(h for h in self.hypotheses if h.epoch == self.epoch)

    @property
    def escalations(self) -> tuple[Entry, ...]:
        return tuple(e for e in self.log if e.kind == "escalation")

    def next_id(self) -> int:
        return max((h.id for h in self.hypotheses), default=0) + 1


def _parse_at(text: str) -> datetime | None:
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def fold(log: Sequence[Entry], *, now: datetime, pending_timeout: timedelta) -> Board:
    """The board the log describes at ``now`` (a hypothesis pending past ``pending_timeout`` counts as
    inconclusive, shown as timed out)."""
    hyps: dict[int, Hypothesis] = {}
    order: list[int] = []
    epoch = 0
    escalated: Entry | None = None
    resumes: list[Entry] = []
    for entry in sorted(log, key=lambda e: e.seq):
        if entry.kind == "hypothesis":
            if entry.hypothesis not in hyps:
                hyps[entry.hypothesis] = Hypothesis(
                    entry.hypothesis,
                    entry.title,
                    entry.text,
                    entry.refs,
                    entry.author,
                    entry.at,
                    entry.url,
                    epoch,
                )
                order.append(entry.hypothesis)
        elif entry.kind == "rank":
            if entry.hypothesis in order:
                order.remove(entry.hypothesis)
                order.insert(max(entry.position, 1) - 1, entry.hypothesis)
        elif entry.kind == "resume":
            epoch += 1
            escalated = None
            resumes.append(entry)
        elif entry.kind == "escalation":
            escalated = entry
        elif not entry.withdrawn and entry.hypothesis in hyps:
            h = hyps[entry.hypothesis]
            if entry.kind == "evidence":
                if entry.stance == "for":
                    h = replace(h, evidence_for=(*h.evidence_for, entry))
                else:
                    h = replace(h, evidence_against=(*h.evidence_against, entry))
            else:
                status = VERDICTS[entry.kind]
                if entry.kind == "confirm":
                    h = replace(h, evidence_for=(*h.evidence_for, entry))
                elif entry.kind == "refute":
                    h = replace(h, evidence_against=(*h.evidence_against, entry))
                h = replace(
                    h,
                    status=status,
                    decided_by=entry.author,
                    decided_at=entry.at,
                    decided_url=entry.url,
                    verdict=entry,
                )
            hyps[entry.hypothesis] = h
    out: list[Hypothesis] = []
    for h in sorted(hyps.values(), key=lambda x: x.id):
        added = _parse_at(h.at)
        if h.status == "pending" and added is not None and now - added > pending_timeout:
            h = replace(h, status="inconclusive", timed_out=True)
        out.append(replace(h, rank=order.index(h.id) + 1))
    return Board(tuple(out), tuple(sorted(log, key=lambda e: e.seq)), epoch, escalated, tuple(resumes))


def escalation_due(board: Board) -> bool:
    """At least 3 hypotheses of this round, all refuted or inconclusive (none confirmed, none pending),
    and no escalation standing already."""
    current = board.current
    return (
        board.escalated is None
        and len(current) >= ESCALATE_AFTER
        and not board.confirmed
        and all(h.failed for h in current)
    )


def few_all_failed(board: Board) -> bool:
    """Fewer than 3 hypotheses in this round, every one failed: the board suggests more, or a human."""
    current = board.current
    return 0 < len(current) < ESCALATE_AFTER and all(h.failed for h in current) and not board.confirmed


# --- commands -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """Where a command came from."""

    author: str
    at: str
    comment: int
    occurrence: int
    url: str


def _base(board: Board, kind: EntryKind, source: Source, name: str, text: str) -> Entry:
    return Entry(
        seq=max((e.seq for e in board.log), default=0) + 1,
        kind=kind,
        author=source.author,
        at=source.at,
        comment=source.comment,
        occurrence=source.occurrence,
        digest=digest(name, text),
        url=source.url,
    )


def recorded(board: Board, name: str, text: str, source: Source) -> Entry | None:
    """The entry this very command made already (a replay), if any."""
    key = (source.comment, source.occurrence, digest(name, text))
    return next((e for e in board.log if e.key == key and e.kind != "escalation"), None)


def _room(board: Board) -> None:
    if len(board.log) >= MAX_ENTRIES:
        raise Refused(
            f"this board holds {MAX_ENTRIES} entries, the most it keeps. Summarise the investigation in a "
            "new issue and continue there."
        )


def _target(board: Board, word: str, usage: str) -> Hypothesis:
    number = parse_id(word)
    if number is None:
        raise Refused(f"name a hypothesis first, e.g. `{usage}`.")
    found = board.get(number)
    if found is None:
        known = ", ".join(h.label for h in board.hypotheses[:12]) or "none yet"
        raise Refused(f"there is no hypothesis H{number} on this bug (known: {known}). Usage: `{usage}`.")
    return found


def add_hypothesis(board: Board, text: str, source: Source, prefix: str) -> Entry:
    usage = f"/{prefix} hypothesis <title>: <statement naming path:line>"
    title, sep, statement = text.partition(":")
    if not sep or not title.strip() or not statement.strip() or "\n" in title:
        raise Refused(
            f"write a title, a colon, then the statement: `{usage}`, e.g. `/{prefix} hypothesis Stale "
            "cache: the session cache at src/auth/cache.py:88 keeps the old token`."
        )
    if len(board.hypotheses) >= MAX_HYPOTHESES:
        raise Refused(f"this board holds {MAX_HYPOTHESES} hypotheses, the most it keeps.")
    _room(board)
    entry = _base(board, "hypothesis", source, "hypothesis", text)
    statement = clip(statement, TEXT_CHARS)
    return replace(
        entry,
        hypothesis=board.next_id(),
        title=clip(title, TITLE_CHARS),
        text=statement,
        refs=tuple(str(loc) for loc in find_locations(statement)),
    )


def add_evidence(board: Board, args: Sequence[str], text: str, source: Source, prefix: str) -> Entry:
    usage = f"/{prefix} evidence H1 for|against <what you found>"
    if not args:
        raise Refused(f"name a hypothesis: `{usage}`.")
    target = _target(board, args[0], usage)
    stance = args[1].lower() if len(args) > 1 else ""
    if stance not in ("for", "against"):
        raise Refused(f"say whether it speaks `for` or `against` {target.label}: `{usage}`.")
    what = _rest(text, 2)
    if not what:
        raise Refused(f"write what you found after `{stance}`: `{usage}`.")
    _room(board)
    entry = _base(board, "evidence", source, "evidence", text)
    return replace(
        entry,
        hypothesis=target.id,
        stance="for" if stance == "for" else "against",
        text=clip(what, TEXT_CHARS),
        refs=tuple(str(loc) for loc in find_locations(what)),
    )


def add_verdict(
    board: Board, kind: Literal["confirm", "refute", "inconclusive"], args: Sequence[str], text: str,
    source: Source, prefix: str,
) -> Entry:  # fmt: skip
    what_word = {"confirm": "<evidence naming path:line>", "refute": "<evidence>", "inconclusive": "<why>"}[
        kind
    ]
    usage = f"/{prefix} {kind} H1 {what_word}"
    if not args:
        raise Refused(f"name a hypothesis: `{usage}`.")
    target = _target(board, args[0], usage)
    what = _rest(text, 1)
    if not what:
        raise Refused(
            f"write the {'reason' if kind == 'inconclusive' else 'evidence'} after {target.label}: `{usage}`."
        )
    refs = tuple(str(loc) for loc in find_locations(what))
    if kind == "confirm" and not refs:
        raise Refused(
            f"a confirmation needs evidence that points at code: at least one `path:line` "
            f"(`src/auth/login.py:42`) or a link to a line on the forge (…`#L42`). Nothing in your evidence "
            f"is one. Write e.g. `/{prefix} confirm {target.label} src/auth/login.py:42 compares the "
            "expiry in "
            "local time`."
        )
    _room(board)
    entry = _base(board, kind, source, kind, text)
    return replace(entry, hypothesis=target.id, text=clip(what, TEXT_CHARS), refs=refs)


def add_rank(board: Board, args: Sequence[str], text: str, source: Source, prefix: str) -> Entry:
    """`/rank H2 1`: H2 moves to the first place of the order (the others keep theirs, shifted)."""
    usage = f"/{prefix} rank H2 1"
    if not args:
        raise Refused(f"name a hypothesis and its place, most likely first: `{usage}`.")
    target = _target(board, args[0], usage)
    place = args[1] if len(args) > 1 else ""
    if not place.isdigit() or not 1 <= int(place) <= len(board.hypotheses):
        raise Refused(
            f"give {target.label} a place from 1 (most likely) to {len(board.hypotheses)}: `{usage}`."
        )
    _room(board)
    entry = _base(board, "rank", source, "rank", text)
    return replace(entry, hypothesis=target.id, position=int(place))


def add_resume(board: Board, text: str, source: Source, prefix: str) -> Entry:
    if board.escalated is None:
        raise Refused(
            "the investigation is not escalated, so there is nothing to resume. Keep adding hypotheses and "
            f"evidence (`/{prefix} hypothesis …`, `/{prefix} evidence …`)."
        )
    if not text.strip():
        raise Refused(
            f"write your guidance: which assumption to drop, where to look next — `/{prefix} resume-debug "
            "<guidance>`."
        )
    _room(board)
    entry = _base(board, "resume", source, "resume-debug", text)
    return replace(entry, text=clip(text, TEXT_CHARS), refs=tuple(str(loc) for loc in find_locations(text)))


def escalation_entry(board: Board, at: str) -> Entry:
    ids = ",".join(h.label for h in board.current)
    return Entry(
        seq=max((e.seq for e in board.log), default=0) + 1,
        kind="escalation",
        author="",
        at=at,
        text=clip(ids, TEXT_CHARS),
        hypothesis=board.epoch,
    )


def _rest(text: str, words: int) -> str:
    """``text`` without its first ``words`` words (the arguments already read)."""
    rest = text.strip()
    for _ in range(words):
        parts = rest.split(None, 1)
        rest = parts[1] if len(parts) > 1 else ""
    return rest.strip()


def withdraw(
    log: Sequence[Entry], gone: set[int], still_there: Mapping[int, set[tuple[int, str]]]
) -> tuple[Entry, ...]:
    """The log with evidence whose comment is ``gone``, or no longer holds the same command (``still_there``:
    per comment, the (occurrence, digest) pairs it holds now), marked withdrawn. Never un-withdraws."""
    out: list[Entry] = []
    for entry in log:
        if entry.kind in EVIDENCE_KINDS and not entry.withdrawn and entry.comment:
            present = entry.comment not in gone and (entry.occurrence, entry.digest) in still_there.get(
                entry.comment, set()
            )
            if not present:
                entry = replace(entry, withdrawn=True)
        out.append(entry)
    return tuple(out)


def location_list(locations: Sequence[Location]) -> tuple[str, ...]:
    return tuple(str(loc) for loc in locations)
