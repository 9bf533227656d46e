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

What Steward remembers in its own comment (``recorded``: the hash of each record when first seen, with the
fork's question then; ``remembered``: the forks the issue has listed) can only make a record invalid or a
fork unresolved — a deciding comment deleted or edited within the second it was made, a question changed
after its decision, a fork removed from the description without one — never resolve a fork: editing
Steward's comment by hand cannot settle anything, and losing it only forgets those warnings.

A ``--source`` decision carries the sentence(s) it rests on (``--quote``, or the source itself when it is
one sentence): the quote must be whole sentences of the source and contain the resolution. Records Steward
saw before this rule (``legacy`` in its memory) keep the earlier check — the source contains the
resolution — so upgrading reopens nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from bot.commands.permissions import decide
from bot.config.settings import Permission
from bot.forge import Comment, Issue, PermissionLevel
from handlers.forks.parse import Fork, ForkList, normalise, parse_forks, sentences, whole_sentences
from handlers.forks.records import (
    COMMANDS,
    DEFAULT_HEADINGS,
    QUESTION_CHARS,
    QUOTE_CHARS,
    ForkStatus,
    Record,
    RecordedRecord,
    RecordState,
    Request,
    Source,
    Status,
    Verdict,
    record_hash,
    requests_in,
    requests_of,
)

__all__ = [
    "COMMANDS",
    "DEFAULT_HEADINGS",
    "ForkStatus",
    "Record",
    "RecordedRecord",
    "Request",
    "Source",
    "Verdict",
    "fork_status",
    "record_hash",
    "requests_in",
    "requests_of",
]


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
    question: str,
    sources: Mapping[str, Source],
    permissions: Mapping[str, PermissionLevel],
    required: Permission,
    author: str,
    recorded: Mapping[str, RecordedRecord],
    bot_login: str,
) -> Record:
    made = request.comment
    known = recorded.get(request.key)
    legacy = known is not None and known.legacy
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
        legacy=legacy,
        question=known.question if known is not None and known.question else question,
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
    quote = _quote(deciding.body)
    if deciding is not made and not legacy:
        one = sentences(deciding.body)
        quote = request.quote or (deciding.body.strip() if len(one) == 1 else "")
    decided = _replace(
        base,
        decider=deciding.author,
        url=url,
        decided_at=deciding.created_at,
        comment_id=deciding.id,
        quote=quote,
        hash=_hash(request, deciding, None if legacy else base.question, quote),
    )
    if deciding is not made and bot_login and deciding.author.casefold() == bot_login.casefold():
        return _replace(
            decided,
            state="invalid",
            reason="a decision must come from a person: the source was written by Steward itself",
        )
    if _edited_after(made, made.created_at) or (
        deciding is not made and _edited_after(deciding, made.created_at)
    ):
        return _replace(decided, state="invalid", reason="the deciding comment was edited after the record")
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
        if legacy:
            if normalise(request.text) not in normalise(deciding.body):
                return _replace(
                    decided,
                    state="invalid",
                    reason="the deciding comment does not contain the resolution (quote mismatch)",
                )
        elif not quote:
            return _replace(
                decided,
                state="invalid",
                reason="the deciding comment has several sentences: name the one that decides with "
                '`--quote "the sentence"`',
            )
        elif not whole_sentences(quote, deciding.body):
            return _replace(
                decided,
                state="invalid",
                reason="the quote is not one or more whole sentences of the deciding comment "
                "(quote mismatch)",
            )
        elif normalise(request.text) not in normalise(quote):
            return _replace(
                decided,
                state="invalid",
                reason="the quoted sentence does not contain the resolution (quote mismatch)",
            )
    if normalise(base.question) != normalise(question):
        return _replace(
            decided,
            state="invalid",
            stale=True,
            reason=f"question changed after the decision (it was “{base.question}”)",
        )
    return decided


def _hash(request: Request, deciding: Comment, question: str | None, quote: str) -> str:
    return record_hash(
        request.fork,
        request.text,
        deciding.id,
        deciding.author,
        deciding.created_at,
        deciding.body,
        question=question,
        quote=quote if question is not None else "",
    )


def _replace(record: Record, **changes: object) -> Record:
    from dataclasses import replace

    return replace(record, **changes)  # type: ignore[arg-type]


def _quote(body: str) -> str:
    text = " ".join(body.split())
    return text if len(text) <= QUOTE_CHARS else text[:QUOTE_CHARS] + "…"


def _plain(request: Request, state: RecordState, reason: str = "") -> Record:
    made = request.comment
    return Record(
        request.key,
        request.kind,
        request.fork,
        state,
        request.text,
        made.author,
        made.created_at,
        made.html_url,
        reason=reason,
    )


def fork_status(
    issue: Issue,
    comments: Sequence[Comment],
    permissions: Mapping[str, PermissionLevel],
    *,
    forks: ForkList | None = None,
    headings: Sequence[str] = DEFAULT_HEADINGS,
    sources: Mapping[str, Source] | None = None,
    recorded: Mapping[str, RecordedRecord] | None = None,
    remembered: Mapping[str, str] | None = None,
    required: Permission = "write",
    reopen_required: Permission | None = None,
    drop_required: Permission | None = None,
    bot_login: str = "",
    prefix: str = "steward",
    requests: Sequence[Request] | None = None,
) -> Verdict:
    """The juror. ``comments``: the thread of ``issue``; ``permissions``: the access (casefolded login →
    level) of the people whose comments are records; ``forks``: what the body lists (``parse_forks``);
    ``sources``: what each ``--source`` link resolved to; ``recorded``: what Steward's comment remembers of
    records, ``remembered`` of the forks the issue listed (id → question); ``required``: who may decide
    (`commands.decide.permission`); ``reopen_required``/``drop_required``: who may reopen or drop (by
    default the same); ``requests``: the thread's fork commands when the caller parsed them already
    (``requests_in`` otherwise)."""
    if forks is None:
        forks = parse_forks(issue.body, headings)
    sources = sources or {}
    recorded = recorded or {}
    remembered = remembered or {}
    questions = {f.id: f.question[:QUESTION_CHARS] for f in forks.forks}
    needs = {"decide": required, "reopen": reopen_required or required, "drop": drop_required or required}
    records: list[Record] = []
    present: set[int] = {c.id for c in comments}
    if requests is None:
        requests = requests_in(comments, bot_login=bot_login, prefix=prefix)
    for request in requests:
        made = request.comment
        if not _may(made.author, permissions, needs[request.kind], issue.author):
            records.append(_plain(request, "ignored", f"@{made.author} may not decide"))
        elif request.problem:
            records.append(_plain(request, "ignored", request.problem))
        elif request.kind != "decide":
            records.append(_plain(request, request.kind))
        else:
            records.append(
                _judge_decide(
                    request,
                    question=questions.get(request.fork, remembered.get(request.fork, "")[:QUESTION_CHARS]),
                    sources=sources,
                    permissions=permissions,
                    required=required,
                    author=issue.author,
                    recorded=recorded,
                    bot_login=bot_login,
                )
            )
    # Records Steward saw whose own comment is gone: the decision was deleted.
    seen_keys = {r.key for r in records}
    for key, old in recorded.items():
        comment_id = _comment_id(key)
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
                legacy=old.legacy,
            )
        )
    records.sort(key=lambda r: (r.recorded_at, _comment_id(r.key), r.key))
    statuses = [_listed_status(fork, records) for fork in forks.forks]
    statuses += _removed(forks, remembered, records)
    known_ids = set(forks.ids) | set(remembered)
    stray = tuple(r for r in records if r.state == "ignored" or (r.fork not in known_ids))
    return Verdict(tuple(statuses), forks.duplicates, stray, tuple(records), forks.cut)


def _listed_status(fork: Fork, records: Sequence[Record]) -> ForkStatus:
    mine = [r for r in records if r.fork == fork.id and r.state != "ignored"]
    current = mine[-1] if mine else None
    history = tuple(mine[:-1])
    if current is None:
        if fork.checked:
            return ForkStatus(
                fork.id,
                fork.question,
                "claimed",
                reason="checked in the description, but no `/decide` records it (no provenance)",
                claimed=fork.claimed,
            )
        return ForkStatus(fork.id, fork.question, "open", claimed=fork.claimed)
    if current.state in ("reopen", "drop"):
        verb = "reopened" if current.state == "reopen" else "dropped (it is listed again)"
        return ForkStatus(
            fork.id,
            fork.question,
            "open",
            reason=f"{verb} by @{current.recorder}: {current.text}",
            record=current,
            history=history,
        )
    if current.state == "invalid":
        status: Status = "open" if current.stale else "invalid"
        return ForkStatus(
            fork.id, fork.question, status, reason=current.reason, record=current, history=history
        )
    return ForkStatus(
        fork.id,
        fork.question,
        "resolved",
        record=current,
        history=history,
        body_lags=not fork.checked,
        claimed=fork.claimed,
    )


def _removed(forks: ForkList, remembered: Mapping[str, str], records: Sequence[Record]) -> list[ForkStatus]:
    """Forks the issue listed once and lists no more: settled when their latest record is a valid decision
    or a `/drop-fork`; otherwise "removed without a decision", blocking like an open fork."""
    found: list[ForkStatus] = []
    listed = set(forks.ids)
    for fork_id, question in remembered.items():
        if fork_id in listed:
            continue
        mine = [r for r in records if r.fork == fork_id and r.state != "ignored"]
        current = mine[-1] if mine else None
        if current is not None and (
            current.state == "drop" or (current.state == "valid" and not current.stale)
        ):
            continue
        found.append(
            ForkStatus(
                fork_id,
                question,
                "open",
                reason="removed without a decision: record one with `/decide`, or drop it with "
                "`/drop-fork " + fork_id + " <reason>`",
                record=current,
                history=tuple(mine[:-1]) if mine else (),
                removed=True,
            )
        )
    return found


def _comment_id(key: str) -> int:
    head = key.split(":", 1)[0]
    return int(head) if head.isdigit() else 0
