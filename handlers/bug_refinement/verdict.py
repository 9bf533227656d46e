"""A verdict: its values, its hash, its lifecycle, and the `## Refinement Verdict` block that records it.

Pure: no I/O, no clock (the caller supplies `refined_at`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, cast, get_args

import yaml

from .document import Document, fold, parse_document

__all__ = [
    "STATUS_LINE",
    "STATUS_TRANSITIONS",
    "VERDICT_HEADING",
    "Blocker",
    "BugVerdict",
    "RecordedVerdict",
    "RefinementWarning",
    "StoryVerdict",
    "Verdict",
    "apply_verdict",
    "format_refined_at",
    "is_locked",
    "is_refined",
    "next_verdict",
    "read_verdict_block",
    "render_verdict_block",
    "same_outcome",
    "story_verdict_hash",
    "verdict_hash",
]

Verdict = Literal["pending", "rejected", "approved"]
_VERDICTS: frozenset[str] = frozenset(get_args(Verdict))

VERDICT_HEADING = "Refinement Verdict"


@dataclass(frozen=True, slots=True)
class Blocker:
    code: str
    message: str  # one line: what to write, and where


@dataclass(frozen=True, slots=True)
class RefinementWarning:
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class BugVerdict:
    bug_id: str
    verdict: Verdict  # "approved" or "rejected": the engine never computes "pending"
    verdict_hash: str
    refined_at: str  # YYYY-MM-DDTHH:MM:SSZ
    blockers: tuple[Blocker, ...]
    warnings: tuple[RefinementWarning, ...]
    cut: tuple[int, int] | None = None  # (characters read, characters in all) when the report was cut
    asks: tuple[str, ...] = ()  # the reporter's items the report lacks ("1", "5.1" … "5.3o", "5.3e", "5.4")
    labels: tuple[tuple[str, str], ...] = ()  # (item, the label the reporter's template gave it, left empty)
    language: str = "en"  # the report's language, by its words
    sources: tuple[tuple[str, str, str], ...] = ()  # (item, author, comment url): answers read from replies

    @property
    def blocker_codes(self) -> tuple[str, ...]:
        return tuple(b.code for b in self.blockers)

    @property
    def warning_codes(self) -> tuple[str, ...]:
        return tuple(w.code for w in self.warnings)


@dataclass(frozen=True, slots=True)
class StoryVerdict:
    bug_id: str
    story: str  # the story's name: its file name without `.md` (or, on a forge, its reference)
    verdict: Verdict
    verdict_hash: str
    refined_at: str
    blockers: tuple[Blocker, ...]
    status_transition: str | None = None  # a story file's `Pendente→Refinada` when its approval wrote it
    language: str = "en"  # the story's language, by its words (as a bug report's)

    @property
    def blocker_codes(self) -> tuple[str, ...]:
        return tuple(b.code for b in self.blockers)


@dataclass(frozen=True, slots=True)
class RecordedVerdict:
    """A `## Refinement Verdict` block as found in a file or a comment."""

    status: Verdict
    verdict_hash: str
    refined_at: str
    blockers: tuple[str, ...]


# `**Status:** <value>` (also `**Status**: <value>`, in a list item): seed 000's status line.
STATUS_LINE = re.compile(r"^[ \t]{0,3}(?:[-*+][ \t]++)?\*\*Status(?::\*\*|\*\*[ \t]*+:)[ \t]*+(.*)$", re.M)


# --- hashes -----------------------------------------------------------------------------------------------


def format_refined_at(refined_at: datetime | str) -> str:
    """`YYYY-MM-DDTHH:MM:SSZ` in UTC; a naive datetime is taken to be UTC, a string is kept as given."""
    if isinstance(refined_at, str):
        return refined_at
    if refined_at.tzinfo is None:
        refined_at = refined_at.replace(tzinfo=UTC)
    return refined_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def verdict_hash(bug_id: str, verdict: str, refined_at: datetime | str) -> str:
    """Hex SHA-256 of `"<bugId>:<verdict>:<refinedAt>\\n"` (what `echo … | sha256sum` gives)."""
    payload = f"{bug_id}:{verdict}:{format_refined_at(refined_at)}\n"
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def story_verdict_hash(bug_id: str, story: str, verdict: str, refined_at: datetime | str) -> str:
    """Hex SHA-256 of `"<bugId>:<story name without .md>:<verdict>:<refinedAt>\\n"`."""
    name = story[:-3] if story.endswith(".md") else story
    payload = f"{bug_id}:{name}:{verdict}:{format_refined_at(refined_at)}\n"
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


# --- lifecycle --------------------------------------------------------------------------------------------

# pending → rejected | approved; rejected → approved (or rejected again); approved is locked.
_TRANSITIONS: Mapping[str | None, frozenset[str]] = {
    None: frozenset({"rejected", "approved"}),
    "pending": frozenset({"rejected", "approved"}),
    "rejected": frozenset({"rejected", "approved"}),
    "approved": frozenset(),
}


def is_locked(recorded: RecordedVerdict | None) -> bool:
    """An approved verdict never changes: refining again writes nothing."""
    return recorded is not None and recorded.status == "approved"


def next_verdict(current: Verdict | None, outcome: Verdict) -> Verdict:
    """The verdict after refining: `outcome`, unless `current` is approved (locked)."""
    if current is not None and outcome not in _TRANSITIONS[current]:
        return current
    return outcome


def is_refined(*verdicts: RecordedVerdict | None) -> bool:
    """The gate other capabilities ask: every verdict given (the bug's, and the story's where one is named)
    is recorded and approved."""
    return bool(verdicts) and all(v is not None and v.status == "approved" for v in verdicts)


def same_outcome(recorded: RecordedVerdict | None, verdict: BugVerdict | StoryVerdict) -> bool:
    """Whether re-refining changed nothing that matters (status, blockers): then nothing is written."""
    return (
        recorded is not None
        and recorded.status == verdict.verdict
        and recorded.blockers == verdict.blocker_codes
    )


# --- the verdict block ------------------------------------------------------------------------------------


def render_verdict_block(
    status: Verdict, verdict_hash: str, refined_at: datetime | str, blockers: Iterable[str | Blocker]
) -> str:
    """The `## Refinement Verdict` heading and its YAML fence, without a trailing newline."""
    codes = [b.code if isinstance(b, Blocker) else b for b in blockers]
    lines = [
        f"## {VERDICT_HEADING}",
        "",
        "```yaml",
        f"status: {status}",
        f'verdictHash: "{verdict_hash}"',
        f'refinedAt: "{format_refined_at(refined_at)}"',
    ]
    if codes:
        lines.append("blockers:")
        lines.extend(f"  - {code}" for code in codes)
    else:
        lines.append("blockers: []")
    lines.append("```")
    return "\n".join(lines)


def _render(verdict: BugVerdict | StoryVerdict) -> str:
    return render_verdict_block(verdict.verdict, verdict.verdict_hash, verdict.refined_at, verdict.blockers)


def _verdict_span(doc: Document) -> tuple[int, int, int, int] | None:
    """(heading line, block end, fence start, fence end) of the first top-level verdict block."""
    target = fold(VERDICT_HEADING)
    top = [h for h in doc.headings if h.top_level and h.level <= 2]
    for idx, h in enumerate(top):
        if h.level != 2 or fold(h.text.strip("*_ ")) != target:
            continue
        end = top[idx + 1].line if idx + 1 < len(top) else len(doc.lines)
        for b in doc.blocks:
            if b.kind == "fence" and b.top_level and h.end_line <= b.start < end:
                if b.info.split(maxsplit=1)[:1] in (["yaml"], ["yml"]):
                    return h.line, b.end, b.start, b.end
                break
        return h.line, h.end_line, -1, -1
    return None


def read_verdict_block(text: str | Document) -> RecordedVerdict | None:
    """The verdict recorded in `text` (a bug file, a story file or a bot comment; parsed already, or its
    text), if it has a valid one."""
    doc = text if isinstance(text, Document) else parse_document(text)
    span = _verdict_span(doc)
    if span is None or span[2] < 0:
        return None
    _, _, fence_start, fence_end = span
    closed = fence_end - 1 > fence_start and doc.lines[fence_end - 1].strip().startswith(("```", "~~~"))
    body = doc.text(fence_start + 1, fence_end - 1 if closed else fence_end)
    try:
        data = yaml.safe_load(body)
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict):
        return None
    status = data.get("status")
    if not isinstance(status, str) or status.strip().lower() not in _VERDICTS:
        return None
    raw_blockers = data.get("blockers") or []
    if not isinstance(raw_blockers, list):
        raw_blockers = [raw_blockers]
    refined = data.get("refinedAt")
    return RecordedVerdict(
        status=cast(Verdict, status.strip().lower()),
        verdict_hash=str(data.get("verdictHash") or ""),
        refined_at=format_refined_at(refined) if isinstance(refined, datetime) else str(refined or ""),
        blockers=tuple(str(b) for b in raw_blockers if b is not None),
    )


# Seed 000's status transition, in the language the file uses: Pendente → Refinada, or Pending → Refined.
_PENDING = re.compile(
    r"^([ \t]{0,3}(?:[-*+][ \t]+)?\*\*Status(?::\*\*|\*\*[ \t]*:)[ \t]*)(Pendente|Pending)\b", re.I
)
STATUS_TRANSITIONS: Mapping[str, tuple[str, str]] = {
    "pendente": ("Pendente", "Refinada"),
    "pending": ("Pending", "Refined"),
}


def _transition_status(doc: Document, lines: list[str]) -> str | None:
    for i in range(doc.body_start, len(lines)):
        if "Status" in lines[i] and not doc.is_hidden(i):
            m = STATUS_LINE.match(lines[i])
            if m is None:
                continue
            pending = _PENDING.match(lines[i])
            if pending is None:
                return None  # the first Status line decides
            before, after = STATUS_TRANSITIONS[pending.group(2).lower()]
            lines[i] = pending.group(1) + after + lines[i][pending.end() :]
            return f"{before}→{after}"
    return None


def apply_verdict(text: str | Document, verdict: BugVerdict | StoryVerdict) -> tuple[str, str | None]:
    """`text` with its verdict block replaced (or appended) and, for an approved bug or story,
    `**Status:** Pendente` turned into `**Status:** Refinada` (`Pending` into `Refined`: the file's language
    is kept). Returns the new text (with `\\n` newlines) and the status transition (`"Pendente→Refinada"`,
    `"Pending→Refined"` or None). Extra verdict blocks after the first are left alone. ``text`` may be
    parsed already.
    """
    doc = text if isinstance(text, Document) else parse_document(text)
    lines = list(doc.lines)
    block = _render(verdict).split("\n")
    span = _verdict_span(doc)
    transition = None
    if verdict.verdict == "approved":  # a story's status line changes as the bug's does (issue 36 §4)
        transition = _transition_status(doc, lines)
    if span is not None:
        start, end = span[0], span[1]
        lines[start:end] = block
        return "\n".join(lines), transition
    while lines and not lines[-1].strip():
        lines.pop()
    if lines:
        lines.append("")
    lines.extend(block)
    lines.append("")
    return "\n".join(lines), transition
