"""Pure parsing: the forks an issue or pull request lists, and the arguments of `/decide` and `/reopen-fork`.

An issue lists its forks in a level-2 section (``## Open forks``, ``## Forks``, ``## Design forks``,
``## Decisões em aberto`` by default: ``forks.headings``) as task items ``- [ ] F1: <question>``. A checked
item ``- [x] F1: … — resolved: <choice>`` is a *claim* (the REST APIs do not say reliably who edited a body),
never a record. Ids are ``F<n>``, unique per issue: a repeated id is reported and its first item used.
Items inside code fences do not count. Only the first ``MAX_BODY_CHARS`` characters of a body are read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.records import neutralise
from handlers.bug_refinement.api import MAX_REPORT_CHARS, clip_report

__all__ = [
    "MAX_BODY_CHARS",
    "DecideArgs",
    "Fork",
    "ForkList",
    "UsageError",
    "normalise",
    "normalise_id",
    "parse_decide",
    "parse_forks",
    "parse_reopen",
    "sentences",
    "whole_sentences",
]

_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]++(.*)$")  # the text's closing `#`s are stripped where it is read
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ITEM = re.compile(
    r"^[ \t]{0,8}[-*+][ \t]+\[(?P<mark>[ xX])\][ \t]+"
    r"(?:\*\*)?(?P<id>[Ff]\d{1,4})(?:\*\*)?[ \t]*+[:.)\-–—][ \t]*+"
    r"(?P<rest>.*)$"
)
# "— resolved: X", "- resolved: X", "(resolved: X)", "resolvido: X", "decided: X": the word and its colon;
# what may precede it (blanks, a dash run or one of `(;,`, blanks) is found by walking back (`_resolved`), as
# a leading `[ \t]*` would make every search quadratic in a line of blanks.
_RESOLVED = re.compile(r"\b(?:resolved|resolvido|resolvida|decided)\b[ \t]*+:[ \t]*+", re.I)
_ID = re.compile(r"^[Ff](\d{1,4})$")
MAX_FORKS = 50
# How much of a body `parse_forks` reads: GitHub holds an issue or pull request body to 65,536 characters,
# Gitea holds none. The parse is linear, and this bound keeps its cost at every event small; a body is cut
# at the end of a line as a bug report is (``clip_report``), and the reconciliation comment says so.
MAX_BODY_CHARS = MAX_REPORT_CHARS


class UsageError(ValueError):
    """A command's arguments do not say what it needs."""


@dataclass(frozen=True)
class Fork:
    """One fork as the body lists it. ``checked`` and ``claimed`` are what the body claims, nothing more."""

    id: str
    question: str
    checked: bool = False
    claimed: str = ""


@dataclass(frozen=True)
class ForkList:
    forks: tuple[Fork, ...] = ()
    # Ids listed more than once (the first item counts).
    duplicates: tuple[str, ...] = ()
    # (characters read, characters in all) when the body was longer than ``MAX_BODY_CHARS``.
    cut: tuple[int, int] | None = None

    def get(self, fork_id: str) -> Fork | None:
        return next((f for f in self.forks if f.id == fork_id), None)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(f.id for f in self.forks)


def normalise_id(text: str) -> str | None:
    """``f1``/``F01`` → ``F1``; None when ``text`` is not a fork id."""
    found = _ID.match(text.strip())
    return f"F{int(found.group(1))}" if found else None


def normalise(text: str) -> str:
    """Text compared for a quote: case folded, runs of whitespace made one space, trimmed."""
    return " ".join(text.casefold().split())


def _heading_key(text: str) -> str:
    return normalise(text.rstrip(":").strip())


def parse_forks(body: str | None, headings: Sequence[str]) -> ForkList:
    """The forks listed under any of ``headings`` (level-2 sections, case-insensitive), in the body's first
    ``MAX_BODY_CHARS`` characters."""
    text, cut = clip_report(body or "", MAX_BODY_CHARS)
    wanted = {_heading_key(h) for h in headings}
    forks: list[Fork] = []
    seen: set[str] = set()
    duplicates: list[str] = []
    inside = False
    fence: str | None = None
    for line in text.splitlines():
        fenced = _FENCE.match(line)
        if fence is not None:
            if fenced and fenced.group(1)[0] == fence[0] and len(fenced.group(1)) >= len(fence):
                fence = None
            continue
        if fenced:
            fence = fenced.group(1)
            continue
        heading = _HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            if level <= 2:
                inside = level == 2 and _heading_key(heading.group(2).rstrip(" \t#")) in wanted
            continue
        if not inside:
            continue
        item = _ITEM.match(line)
        if item is None:
            continue
        fork_id = normalise_id(item.group("id"))
        assert fork_id is not None
        if fork_id in seen:
            if fork_id not in duplicates:
                duplicates.append(fork_id)
            continue
        if len(forks) >= MAX_FORKS:
            continue
        seen.add(fork_id)
        rest = item.group("rest").strip()
        question, claimed = rest, ""
        split = _resolved(rest)
        if split is not None:
            question, claimed = rest[: split[0]].strip(), rest[split[1] :].strip().rstrip(")").strip()
        forks.append(Fork(fork_id, question, item.group("mark") != " ", claimed))
    return ForkList(tuple(forks), tuple(duplicates), cut)


def _resolved(rest: str) -> tuple[int, int] | None:
    """Where `rest`'s "resolved:" part starts (with the blanks and the one separator before it) and ends."""
    found = _RESOLVED.search(rest)
    if found is None:
        return None
    start = len(rest[: found.start()].rstrip(" \t"))
    if start and rest[start - 1] in "(;,":
        start -= 1
    else:
        start = len(rest[:start].rstrip("—–-"))
    return len(rest[:start].rstrip(" \t")), found.end()


@dataclass(frozen=True)
class DecideArgs:
    fork: str
    resolution: str
    source: str | None = None
    # The sentence(s) of the source that decide (`--quote "<text>"`).
    quote: str | None = None


_SOURCE = re.compile(r"(?:^|\s)--source(?:[ \t]+|=)(?P<url>\S+)\s*$")
_QUOTE = re.compile(r"(?:^|\s)--quote(?:[ \t]+|=)(?:\"(?P<a>[^\"]*)\"|“(?P<b>[^”]*)”|'(?P<c>[^']*)')")
# A sentence ends at . ! ? or … followed by blanks, or at a line break; list, quote and emphasis marks are
# not part of what a sentence says.
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")
_MARKS = re.compile(r"^\s*(?:[-*+>]|\d+[.)])\s+|[*_`]")


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, each normalised (``normalise``), without list, quote and emphasis marks
    and without the final punctuation."""
    found: list[str] = []
    for part in _SENTENCE_END.split(text.replace("\r\n", "\n")):
        clean = normalise(_MARKS.sub("", part)).rstrip(".!?…").strip()
        if clean:
            found.append(clean)
    return found


def whole_sentences(quote: str, source: str) -> bool:
    """Whether ``quote`` is one or more whole, consecutive sentences of ``source`` (case and blanks
    normalised): "We should NOT use Postgres." quotes that comment; "use Postgres" does not."""
    wanted = sentences(quote)
    have = sentences(source)
    if not wanted:
        return False
    return any(have[i : i + len(wanted)] == wanted for i in range(len(have) - len(wanted) + 1))


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0].strip() if text.strip() else ""


def parse_decide(text: str) -> DecideArgs:
    """``F1 <resolution> [--source <comment link>]`` from the command's line (the lines below it are the
    rationale, not the resolution)."""
    line = _first_line(text)
    head, _, rest = line.partition(" ")
    fork = normalise_id(head)
    if fork is None:
        raise UsageError(
            f"`{head or '…'}` is not a fork id (F1, F2, …)" if head else "name the fork (F1, F2, …)"
        )
    rest = rest.strip()
    quote: str | None = None
    quoted = _QUOTE.search(rest)
    if quoted is not None:
        quote = next(g for g in quoted.group("a", "b", "c") if g is not None).strip()
        rest = (rest[: quoted.start()] + " " + rest[quoted.end() :]).strip()
        if not quote:
            raise UsageError("`--quote` needs the sentence that decides, in quotes")
    elif "--quote" in rest.split():
        raise UsageError('`--quote` needs the sentence that decides, in quotes: `--quote "the sentence"`')
    source: str | None = None
    found = _SOURCE.search(rest)
    if found is not None:
        source = found.group("url").strip("<>")
        rest = rest[: found.start()].strip()
    elif "--source" in rest.split():
        raise UsageError("`--source` needs the link of the comment where it was decided")
    resolution = rest.strip().strip('"“”').strip()
    if not resolution:
        raise UsageError(f"say what was decided for {fork}")
    return DecideArgs(fork, resolution, source, quote)


def parse_reopen(text: str) -> tuple[str, str]:
    """``F1 <reason>`` → (fork id, reason) (`/reopen-fork` and `/drop-fork`)."""
    line = _first_line(text)
    head, _, rest = line.partition(" ")
    fork = normalise_id(head)
    if fork is None:
        raise UsageError(
            f"{neutralise.code(head, 40)} is not a fork id (F1, F2, …)"
            if head
            else "name the fork (F1, F2, …)"
        )
    if not rest.strip():
        raise UsageError(f"say why {fork} is reopened")
    return fork, rest.strip()
