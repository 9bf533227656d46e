"""The records of decision provenance as data: what a fork command asked (``Request``), what a
``--source`` link named (``Source``), what Steward remembers (``RecordedRecord``), what the juror made of
each (``Record``, ``ForkStatus``, ``Verdict``), the record hash, and the fork commands of a thread."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from bot.commands.grammar import Command, parse_commands
from bot.forge import Comment
from handlers.forks.parse import UsageError, parse_decide, parse_reopen

Status = Literal["resolved", "open", "claimed", "invalid"]
RecordState = Literal["valid", "invalid", "ignored", "reopen", "drop"]
Kind = Literal["decide", "reopen", "drop"]
COMMANDS: frozenset[str] = frozenset({"decide", "reopen-fork", "drop-fork"})
_KINDS: dict[str, Kind] = {"decide": "decide", "reopen-fork": "reopen", "drop-fork": "drop"}
QUOTE_CHARS = 200
# The part of a fork's question a record covers and Steward remembers (its comment's data block stays far
# below the comment limit with 60 records and 60 forks).
QUESTION_CHARS = 120
DEFAULT_HEADINGS: tuple[str, ...] = ("Open forks", "Forks", "Design forks", "Decisões em aberto")


def record_hash(
    fork: str,
    resolution: str,
    comment_id: int,
    author: str,
    created_at: str,
    body: str,
    *,
    question: str | None = None,
    quote: str = "",
) -> str:
    """SHA-256, as hex, of ``"v2\\n<fork id>\\n<question>\\n<resolution>\\n<quote>\\n<comment id>\\n<author>
    \\n<created_at>\\n<comment body>"`` (the deciding comment's id, author, creation time and body; the
    fork's question as the description listed it). Without ``question``: the earlier form, without the
    ``v2``, question and quote lines (legacy records)."""
    if question is None:
        text = f"{fork}\n{resolution}\n{comment_id}\n{author}\n{created_at}\n{body}"
    else:
        text = f"v2\n{fork}\n{question}\n{resolution}\n{quote}\n{comment_id}\n{author}\n{created_at}\n{body}"
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Request:
    """One fork command found in a comment: ``kind`` decide or reopen, with its parsed arguments (or the
    usage problem that makes it no command)."""

    key: str
    kind: Kind
    comment: Comment
    fork: str = ""
    text: str = ""
    source: str | None = None
    problem: str = ""
    quote: str | None = None


@dataclass(frozen=True)
class Source:
    """What the forge said of a ``--source`` link: the comment (None: not there any more, or never was), or
    why the link names no comment Steward may read (``problem``; ``foreign``: another forge or host)."""

    url: str
    comment: Comment | None = None
    number: int = 0
    html_url: str = ""
    problem: str = ""
    foreign: bool = False


@dataclass(frozen=True)
class RecordedRecord:
    """What Steward's own comment remembers of a record it has seen valid (see the module docstring)."""

    key: str
    fork: str
    hash: str
    created_at: str = ""
    resolution: str = ""
    decider: str = ""
    url: str = ""
    # The fork's question when Steward first saw the record ("" when not known: a legacy record).
    question: str = ""
    # Seen before records carried a quote and covered the question: checked by the earlier rules.
    legacy: bool = False


@dataclass(frozen=True)
class Record:
    """A fork command as the juror judged it. For a decision: who decided (``decider``, the deciding comment's
    author), where (``url``), when (``decided_at``, that comment's creation time), the deciding text
    (``quote``) and the record hash; ``recorder`` wrote the command."""

    key: str
    kind: Kind
    fork: str
    state: RecordState
    text: str
    recorder: str
    recorded_at: str
    recorder_url: str = ""
    decider: str = ""
    url: str = ""
    decided_at: str = ""
    quote: str = ""
    hash: str = ""
    reason: str = ""
    source: str | None = None
    # The deciding comment's id (0 when unknown).
    comment_id: int = 0
    # Judged by the rules before quotes (see the module docstring).
    legacy: bool = False
    # The fork's question when the record was made (from Steward's memory; "" when unknown).
    question: str = ""
    # Valid once, but the fork's question changed since: the fork counts as open.
    stale: bool = False


@dataclass(frozen=True)
class ForkStatus:
    id: str
    question: str
    status: Status
    reason: str = ""
    record: Record | None = None
    history: tuple[Record, ...] = ()
    # The body lists the fork as open (unchecked) although a valid record resolves it.
    body_lags: bool = False
    claimed: str = ""
    # No longer listed in the description, and never decided: it blocks until `/drop-fork`.
    removed: bool = False


@dataclass(frozen=True)
class Verdict:
    forks: tuple[ForkStatus, ...] = ()
    duplicates: tuple[str, ...] = ()
    # Records naming a fork the issue does not list (refused as such), and ignored ones.
    stray: tuple[Record, ...] = ()
    records: tuple[Record, ...] = field(default=(), repr=False)
    # (characters read, characters in all) when the body was read in part (``parse.MAX_BODY_CHARS``).
    cut: tuple[int, int] | None = None

    @property
    def unresolved(self) -> tuple[str, ...]:
        return tuple(f.id for f in self.forks if f.status != "resolved")

    @property
    def all_resolved(self) -> bool:
        return not self.unresolved

    def get(self, fork_id: str) -> ForkStatus | None:
        return next((f for f in self.forks if f.id == fork_id), None)


def _order(comment: Comment) -> tuple[str, int]:
    return (comment.created_at, comment.id)


def requests_in(
    comments: Sequence[Comment], *, bot_login: str = "", prefix: str = "steward"
) -> list[Request]:
    """Every `/decide`, `/reopen-fork` and `/drop-fork` in the comments (not the bot's own), oldest first."""
    found: list[Request] = []
    for comment in sorted(comments, key=_order):
        if bot_login and comment.author.casefold() == bot_login.casefold():
            continue
        if "/" not in comment.body:
            continue
        found += requests_of(comment, parse_commands(comment.body, known=COMMANDS, prefix=prefix))
    return found


def requests_of(comment: Comment, commands: Sequence[Command]) -> list[Request]:
    """The fork commands among ``commands`` (one comment's, parsed), as requests."""
    found: list[Request] = []
    counts: dict[str, int] = {}
    for command in commands:
        if command.name not in COMMANDS:
            continue
        n = counts.get(command.name, 0)
        counts[command.name] = n + 1
        key = f"{comment.id}:{command.name}:{n}"
        kind = _KINDS[command.name]
        try:
            if kind == "decide":
                args = parse_decide(command.text)
                found.append(
                    Request(key, kind, comment, args.fork, args.resolution, args.source, quote=args.quote)
                )
            else:
                fork, reason = parse_reopen(command.text)
                found.append(Request(key, kind, comment, fork, reason))
        except UsageError as exc:
            found.append(Request(key, kind, comment, problem=str(exc)))
    return found
