"""The juror: a pure checker that says, for each fork of an issue, whether a checked record resolves it.

Steward *records* human decisions and never makes one. The records are the human comments themselves:
``/decide F1 <resolution>`` (the comment is the decision) and ``/decide F1 <resolution> --source <link>`` (a
decision made in another comment), and ``/reopen-fork F1 <reason>``. For each fork the latest of them
counts (a later record supersedes an earlier one, a reopening reopens); the others are its history.

A record counts only when it checks out: its recorder may decide (else it is ignored: an outsider's
comment cannot unsettle a fork), and the deciding comment exists, was not edited after the record, was
written by someone who may decide, contains the resolution (when it is another comment) and is on this
repository. A record that fails one of these checks is ``invalid`` with the reason, and makes its fork
``invalid`` until a later record or a reopening.

What Steward remembers in its own comment (``recorded``: the hash of each record when first seen) can only
make a record invalid — a deciding comment deleted, or edited within the second it was made — never resolve a
fork: editing Steward's comment by hand cannot settle anything.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from bot.commands import parse_commands
from bot.forge import Comment, Issue, PermissionLevel
from bot.permissions import decide
from bot.settings import Permission
from handlers.forks.parse import (
    ForkList,
    UsageError,
    normalise,
    parse_decide,
    parse_forks,
    parse_reopen,
)

__all__ = [
    "COMMANDS",
    "ForkStatus",
    "Record",
    "RecordedRecord",
    "Request",
    "Source",
    "Verdict",
    "fork_status",
    "record_hash",
    "requests_in",
]

Status = Literal["resolved", "open", "claimed", "invalid"]
RecordState = Literal["valid", "invalid", "ignored", "reopen"]
COMMANDS: frozenset[str] = frozenset({"decide", "reopen-fork"})
QUOTE_CHARS = 200
DEFAULT_HEADINGS: tuple[str, ...] = ("Open forks", "Forks", "Design forks", "Decisões em aberto")


def record_hash(fork: str, resolution: str, comment_id: int, author: str, created_at: str, body: str) -> str:
    """SHA-256 of ``"<fork id>\\n<resolution>\\n<comment id>\\n<author>\\n<created_at>\\n<comment body>"``
    (the deciding comment's id, author, creation time and body), as hex."""
    text = f"{fork}\n{resolution}\n{comment_id}\n{author}\n{created_at}\n{body}"
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Request:
    """One fork command found in a comment: ``kind`` decide or reopen, with its parsed arguments (or the
    usage problem that makes it no command)."""

    key: str
    kind: Literal["decide", "reopen"]
    comment: Comment
    fork: str = ""
    text: str = ""
    source: str | None = None
    problem: str = ""


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


@dataclass(frozen=True)
class Record:
    """A fork command as the juror judged it. For a decision: who decided (``decider``, the deciding comment's
    author), where (``url``), when (``decided_at``, that comment's creation time), the deciding text
    (``quote``) and the record hash; ``recorder`` wrote the command."""

    key: str
    kind: Literal["decide", "reopen"]
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


@dataclass(frozen=True)
class Verdict:
    forks: tuple[ForkStatus, ...] = ()
    duplicates: tuple[str, ...] = ()
    # Records naming a fork the issue does not list (refused as such), and ignored ones.
    stray: tuple[Record, ...] = ()
    records: tuple[Record, ...] = field(default=(), repr=False)

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
    """Every `/decide` and `/reopen-fork` in the comments (not the bot's own), oldest first."""
    found: list[Request] = []
    for comment in sorted(comments, key=_order):
        if bot_login and comment.author.casefold() == bot_login.casefold():
            continue
        if "/" not in comment.body:
            continue
        counts: dict[str, int] = {}
        for command in parse_commands(comment.body, known=COMMANDS, prefix=prefix):
            if command.name not in COMMANDS:
                continue
            n = counts.get(command.name, 0)
            counts[command.name] = n + 1
            key = f"{comment.id}:{command.name}:{n}"
            try:
                if command.name == "decide":
                    args = parse_decide(command.text)
                    found.append(Request(key, "decide", comment, args.fork, args.resolution, args.source))
                else:
                    fork, reason = parse_reopen(command.text)
                    found.append(Request(key, "reopen", comment, fork, reason))
            except UsageError as exc:
                kind: Literal["decide", "reopen"] = "decide" if command.name == "decide" else "reopen"
                found.append(Request(key, kind, comment, problem=str(exc)))
    return found


def _may(login: str, permissions: Mapping[str, PermissionLevel], required: Permission, author: str) -> bool:
    level = permissions.get(login.casefold(), "none")
    return decide(required, actor=login, author=author, actor_level=level).allowed


def _instant(stamp: str) -> datetime | str:
    """A forge time as an instant (Gitea may write its server's offset rather than ``Z``)."""
    try:
        return datetime.fromisoformat(stamp)
    except ValueError:
        return stamp


def _edited_after(comment: Comment, moment: str) -> bool:
    if not comment.updated_at or not moment:
        return False
    later, then = _instant(comment.updated_at), _instant(moment)
    if isinstance(later, datetime) and isinstance(then, datetime):
        return later > then
    return comment.updated_at > moment


def _judge_decide(
    request: Request,
    *,
    sources: Mapping[str, Source],
    permissions: Mapping[str, PermissionLevel],
    required: Permission,
    author: str,
    recorded: Mapping[str, RecordedRecord],
) -> Record:
    made = request.comment
    base = Record(
        key=request.key,
        kind="decide",
        fork=request.fork,
        state="valid",
        text=request.text,
        recorder=made.author,
        recorded_at=made.created_at,
        recorder_url=made.html_url,
        source=request.source,
    )

    def invalid(reason: str, **more: str) -> Record:
        return _replace(base, state="invalid", reason=reason, **more)

    deciding: Comment | None = made
    url = made.html_url
    if request.source is not None:
        found = sources.get(request.source)
        if found is None:
            return invalid("its source link could not be checked")
        if found.foreign:
            return invalid(f"the source is on another forge or repository ({found.problem})")
        if found.problem:
            return invalid(f"the source link names no comment Steward can check ({found.problem})")
        deciding = found.comment
        url = found.html_url or (deciding.html_url if deciding else request.source)
        if deciding is None:
            return invalid("the deciding comment was deleted (or never existed)", url=url)
    assert deciding is not None
    decided = _replace(
        base,
        decider=deciding.author,
        url=url,
        decided_at=deciding.created_at,
        comment_id=deciding.id,
        quote=_quote(deciding.body),
        hash=record_hash(
            request.fork, request.text, deciding.id, deciding.author, deciding.created_at, deciding.body
        ),
    )
    if _edited_after(made, made.created_at) or (
        deciding is not made and _edited_after(deciding, made.created_at)
    ):
        return _replace(decided, state="invalid", reason="the deciding comment was edited after the record")
    known = recorded.get(request.key)
    if known is not None and known.hash != decided.hash:
        return _replace(
            decided,
            state="invalid",
            reason="the deciding comment was edited after the record (its body no longer hashes to the "
            f"recorded hash `{known.hash[:12]}`)",
        )
    if deciding is not made:
        if not _may(deciding.author, permissions, required, author):
            return _replace(
                decided,
                state="invalid",
                reason=f"the deciding comment's author @{deciding.author} may not decide",
            )
        if normalise(request.text) not in normalise(deciding.body):
            return _replace(
                decided,
                state="invalid",
                reason="the deciding comment does not contain the resolution (quote mismatch)",
            )
    return decided


def _replace(record: Record, **changes: object) -> Record:
    from dataclasses import replace

    return replace(record, **changes)  # type: ignore[arg-type]


def _quote(body: str) -> str:
    text = " ".join(body.split())
    return text if len(text) <= QUOTE_CHARS else text[:QUOTE_CHARS] + "…"


def fork_status(
    issue: Issue,
    comments: Sequence[Comment],
    permissions: Mapping[str, PermissionLevel],
    *,
    forks: ForkList | None = None,
    headings: Sequence[str] = DEFAULT_HEADINGS,
    sources: Mapping[str, Source] | None = None,
    recorded: Mapping[str, RecordedRecord] | None = None,
    required: Permission = "write",
    reopen_required: Permission | None = None,
    bot_login: str = "",
    prefix: str = "steward",
) -> Verdict:
    """The juror. ``comments``: the thread of ``issue``; ``permissions``: the access (casefolded login →
    level) of the people whose comments are records; ``forks``: what the body lists (``parse_forks``);
    ``sources``: what each ``--source`` link resolved to; ``recorded``: what Steward's comment remembers;
    ``required``: who may decide (`commands.decide.permission`); ``reopen_required``: who may reopen
    (`commands.reopen-fork.permission`, by default the same)."""
    if forks is None:
        forks = parse_forks(issue.body, headings)
    sources = sources or {}
    recorded = recorded or {}
    records: list[Record] = []
    present: set[int] = {c.id for c in comments}
    for request in requests_in(comments, bot_login=bot_login, prefix=prefix):
        made = request.comment
        needed = reopen_required if request.kind == "reopen" and reopen_required is not None else required
        if not _may(made.author, permissions, needed, issue.author):
            records.append(
                Record(
                    request.key,
                    request.kind,
                    request.fork,
                    "ignored",
                    request.text,
                    made.author,
                    made.created_at,
                    made.html_url,
                    reason=f"@{made.author} may not decide",
                )
            )
            continue
        if request.problem:
            records.append(
                Record(
                    request.key,
                    request.kind,
                    request.fork,
                    "ignored",
                    request.text,
                    made.author,
                    made.created_at,
                    made.html_url,
                    reason=request.problem,
                )
            )
            continue
        if request.kind == "reopen":
            records.append(
                Record(
                    request.key,
                    "reopen",
                    request.fork,
                    "reopen",
                    request.text,
                    made.author,
                    made.created_at,
                    made.html_url,
                )
            )
            continue
        records.append(
            _judge_decide(
                request,
                sources=sources,
                permissions=permissions,
                required=required,
                author=issue.author,
                recorded=recorded,
            )
        )
    # Records Steward saw whose own comment is gone: the decision was deleted.
    seen_keys = {r.key for r in records}
    for key, old in recorded.items():
        comment_id = int(key.split(":", 1)[0]) if key.split(":", 1)[0].isdigit() else 0
        if key in seen_keys:
            continue
        reason = (
            "the deciding comment was edited after the record (the command is no longer in it)"
            if comment_id in present
            else "the deciding comment was deleted"
        )
        records.append(
            Record(
                key,
                "decide",
                old.fork,
                "invalid",
                old.resolution,
                old.decider,
                old.created_at,
                decider=old.decider,
                url=old.url,
                decided_at=old.created_at,
                hash=old.hash,
                reason=reason,
            )
        )
    records.sort(key=lambda r: (r.recorded_at, _comment_id(r.key), r.key))
    listed = set(forks.ids)
    statuses: list[ForkStatus] = []
    for fork in forks.forks:
        mine = [r for r in records if r.fork == fork.id and r.state != "ignored"]
        current = mine[-1] if mine else None
        history = tuple(mine[:-1])
        if current is None:
            if fork.checked:
                status = ForkStatus(
                    fork.id,
                    fork.question,
                    "claimed",
                    reason="checked in the description, but no `/decide` records it (no provenance)",
                    claimed=fork.claimed,
                )
            else:
                status = ForkStatus(fork.id, fork.question, "open", claimed=fork.claimed)
        elif current.state == "reopen":
            status = ForkStatus(
                fork.id,
                fork.question,
                "open",
                reason=f"reopened by @{current.recorder}: {current.text}",
                record=current,
                history=history,
            )
        elif current.state == "invalid":
            status = ForkStatus(
                fork.id, fork.question, "invalid", reason=current.reason, record=current, history=history
            )
        else:
            status = ForkStatus(
                fork.id,
                fork.question,
                "resolved",
                record=current,
                history=history,
                body_lags=not fork.checked,
                claimed=fork.claimed,
            )
        statuses.append(status)
    stray = tuple(r for r in records if r.state == "ignored" or (r.fork not in listed))
    return Verdict(tuple(statuses), forks.duplicates, stray, tuple(records))


def _comment_id(key: str) -> int:
    head = key.split(":", 1)[0]
    return int(head) if head.isdigit() else 0
