"""Bot-owned comments that are edited in place, never reposted (DESIGN §3.3).

Each starts with a hidden marker line ``<!-- steward:KIND:KEY -->`` and may carry a data
block ``<!-- steward:data {json} -->`` that reads back exactly, signed on the next line
(``bot.records.signing``, DESIGN §3.13). Only comments written by the bot's own account are
considered, so a user who pastes a marker cannot hijack it; anyone with write access can
still edit the bot's comment, so a data block is only ever read through ``read_record`` /
``verify``, which say whether it verifies (``Record.trusted`` is None when it does not).

A new comment's id is not known before it exists, and the signature covers it: a comment that
carries data is created without its data block, then edited once to add the signed block (one
extra write per new data-bearing comment; comments without data are written once).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from bot.forge import Comment, Forge, Issue, RepoRef
from bot.records.signing import (
    QUIET,
    SIG_RE,
    TRUSTED,
    Container,
    Keyring,
    Outcome,
    Place,
    parse_signature,
    parse_time,
)

_SAFE = re.compile(r"^[A-Za-z0-9_.#/@=+-]{1,200}$")
_DATA_RE = re.compile(r"^<!-- steward:data (?P<json>.*) -->$", re.MULTILINE)
# DESIGN §3.11: GitHub refuses bodies over 65,536 characters; every comment stays under this, with room.
MAX_CHARS = 60_000
_DETAILS = re.compile(r"<details>.*?</details>", re.DOTALL)
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)


# The kinds of record Steward always writes with a data block: one of its comments (or issue bodies) with
# such a marker and no block had its block removed — tampering, not "no record" (``steward verify``). Kept
# beside the handlers' own names by tests/unit/test_signing.py.
DATA_KINDS: frozenset[str] = frozenset(
    {
        "milestone-dashboard",
        "ra9-verdict",
        "debug-board",
        "forks",
        "ratification",
        "bugfix",
        "backlog-interview",
        "backlog-spec",
        "triage-overview",
    }
)


class CommentTooLong(ValueError):
    """A comment's data block alone does not fit: the handler must bound what it keeps (a bug)."""


def marker(kind: str, key: str) -> str:
    if not _SAFE.match(kind) or not _SAFE.match(key) or "--" in kind + key:
        raise ValueError(f"unsafe sticky marker: {kind!r} {key!r}")
    return f"<!-- steward:{kind}:{key} -->"


_MARKER_RE = re.compile(
    r"\A\s*<!-- steward:(?P<kind>[A-Za-z0-9_.#/@=+-]{1,200}):(?P<key>[A-Za-z0-9_.#/@=+-]{1,200}) -->"
)


def marker_of(body: str) -> tuple[str, str] | None:
    """The (kind, key) of the marker ``body`` starts with, if any."""
    found = _MARKER_RE.match(body)
    return (found.group("kind"), found.group("key")) if found else None


def encode_data(data: Any) -> str:
    """A one-line HTML comment holding ``data`` as JSON.

    JSON only contains ``--`` inside strings, so escaping every second ``-`` of a pair as
    ``\\u002d`` keeps ``-->`` out of the comment while ``json.loads`` reads back the same value.
    """
    text = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    text = text.replace("\n", "\\n").replace("\r", "\\r")
    while "--" in text:
        text = text.replace("--", "-\\u002d")
    # People's text inside the block stays inert even where a renderer shows the raw comment (or a reader's
    # tool reads it as markdown): no `@mention`, `#N` reference, `![image`, tag or entity survives as such.
    # These characters occur only inside JSON strings, where the escapes read back the same.
    for char in "<>@#!&":
        text = text.replace(char, f"\\u{ord(char):04x}")
    return f"<!-- steward:data {text} -->"


def _data_text(body: str) -> str | None:
    match = _DATA_RE.search(body)
    return match.group("json") if match else None


def unverified_data(body: str) -> Any | None:
    """The data block of ``body`` as JSON, WITHOUT checking its signature: for tests and displays that say so,
    never for a decision (use ``verify`` / ``EventContext.record``)."""
    text = _data_text(body)
    return _decode(text) if text is not None else None


def _decode(text: str) -> Any | None:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def render(kind: str, key: str, text: str, data: Any = None, *, signature: str = "") -> str:
    parts = [marker(kind, key)]
    if data is not None:
        parts.append(encode_data(data))
        if signature:
            parts.append(signature)
    parts.append(text.rstrip("\n"))
    return "\n".join(parts) + "\n"


# --- signed records ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Record:
    """A data block as read back. ``trusted`` is its data only when it verifies; every other outcome gives
    None, and the caller re-derives the state from its sources (the people's commands, the forge's own
    facts). ``shown`` is the raw data, for display in a report, or as pointers to sources a re-derivation
    checks one by one — never as a fact."""

    outcome: Outcome
    place: Place | None = None
    seq: int = 0
    _data: Any = field(default=None, repr=False)

    @property
    def trusted(self) -> Any | None:
        return self._data if self.outcome in TRUSTED else None

    @property
    def shown(self) -> Any | None:
        return self._data

    @property
    def broken(self) -> bool:
        """A block was there and cannot be trusted (tampered, replayed, signed with an unknown key, or
        legacy): re-derive it from its sources and rewrite it signed."""
        return self.outcome in ("tampered", "replayed", "unknown-key", "legacy")

    @property
    def quiet(self) -> bool:
        """Re-derived without a note: legacy (written before Steward signed) or signed by a key Steward no
        longer holds (a key lost with Redis) — nobody can be shown to have changed it."""
        return self.outcome in QUIET


MISSING = Record("missing")


async def verify(
    keyring: Keyring,
    body: str,
    *,
    forge: str,
    repo_id: int,
    container: Container,
    id: int,
    kind: str,
    key: str,
    changed_at: str = "",
    created_at: str = "",
    expect_data: bool = False,
    remember: bool = True,
) -> Record:
    """What the data block of ``body`` (a comment's or an issue's, at this place) is worth.

    ``created_at``: when the forge says the comment (issue) was created, which nobody can change — an
    unsigned block is legacy only in a place created before Steward started signing (``Keyring.since``).
    ``changed_at``: when the forge says a comment's body last changed — one changed after that is not legacy
    either (an issue's ``updated_at`` moves with every comment and label: give ""). ``expect_data``: Steward
    always writes a block here, so a body without one was tampered with. ``remember``: consult the sequence
    numbers Steward wrote (off for a verifier that only has the public key)."""
    place = Place(forge, repo_id, container, id, kind, key)
    text = _data_text(body)
    if text is None:
        return Record("tampered", place) if expect_data else Record("missing", place)
    data = _decode(text)
    if data is None:
        return Record("tampered", place)
    signature = parse_signature(body)
    if signature is None:
        if SIG_RE.search(body) is not None or _SIG_LINE.search(body) is not None:
            return Record("tampered", place, 0, data)
        signed_here = remember and await keyring.memory.last(place) is not None
        return Record(
            "tampered" if signed_here or not _before_signing(keyring, created_at, changed_at) else "legacy",
            place,
            0,
            data,
        )
    outcome = keyring.check(place, text, signature)
    if outcome == "verified" and remember:
        last = await keyring.memory.last(place)
        if last is not None and signature.seq < last:
            outcome = "replayed"
    if outcome == "verified" and not _text_holds(body, data):
        outcome = "tampered"  # the signed block pins the visible text, and the text was changed
    return Record(outcome, place, signature.seq, data)


def _before_signing(keyring: Keyring, created_at: str, changed_at: str) -> bool:
    """Whether the forge's own times put a place before Steward started signing (a verifier that does not
    know when that was — ``steward verify`` without ``STEWARD_SIGNING_SINCE`` — cannot tell, and reports it
    legacy)."""
    if keyring.since == 0:
        return True
    created, changed = parse_time(created_at), parse_time(changed_at)
    if created is None or created >= keyring.since:
        return False
    return changed is None or changed < keyring.since


# A record whose visible text is itself what readers trust (the RA9 verdict's YAML) pins that text: its
# signed data names the digest of the text (``covered``), and the record verifies only while the text
# still hashes to it.
TEXT_KEY = "shownText"
# Room kept for the signature line when the text is fitted before it is signed.
_SIG_ROOM = 200


def visible_text(body: str) -> str:
    """What a reader sees of a record: ``body`` without its marker, data block and signature lines."""
    rows = body.replace("\r\n", "\n").split("\n")
    if rows and _MARKER_RE.match(rows[0]):
        rows = rows[1:]
    while rows and rows[0].startswith(("<!-- steward:data ", "<!-- steward:sig ")):
        rows = rows[1:]
    return "\n".join(rows)


def text_digest(text: str) -> str:
    """The digest a pinned text must keep (line endings and trailing blanks aside)."""
    rows = text.replace("\r\n", "\n").split("\n")
    return hashlib.sha256("\n".join(row.rstrip() for row in rows).strip().encode()).hexdigest()


def _text_holds(body: str, data: Any) -> bool:
    if not isinstance(data, dict) or TEXT_KEY not in data:
        return True
    return bool(data[TEXT_KEY] == text_digest(visible_text(body)))


def covered(
    kind: str, key: str, text: str, data: dict[str, Any], *, limit: int = MAX_CHARS
) -> tuple[str, dict[str, Any]]:
    """``text`` as it will be written (shrunk to fit, as ``fit`` would) and ``data`` pinning it: the signed
    block then covers what a reader sees too."""
    probe = fit(kind, key, text, {**data, TEXT_KEY: "0" * 64}, limit=limit - _SIG_ROOM)
    shown = visible_text(probe).rstrip("\n")
    return shown, {**data, TEXT_KEY: text_digest(shown)}


_SIG_LINE = re.compile(r"^<!-- steward:sig ", re.MULTILINE)


def signed(
    keyring: Keyring, place: Place, text: str, data: Any, *, limit: int = MAX_CHARS, after: int = 0
) -> tuple[str, int]:
    """The body of a record at ``place``: marker, data block, its signature, then the visible text (kept
    under ``limit`` characters). ``after``: the last sequence number Redis remembers at ``place`` (the new
    one is above it)."""
    encoded = encode_data(data)
    text_signed = encoded.removeprefix("<!-- steward:data ").removesuffix(" -->")
    signature = keyring.sign(place, text_signed, after=after)
    return fit(place.kind, place.key, text, data, limit=limit, signature=signature.line()), signature.seq


def unsigned(body: str) -> str:
    """``body`` without its signature line (to compare what it says)."""
    return _SIG_ANY.sub("", body)


_SIG_ANY = re.compile(r"^<!-- steward:sig [^\n]*\n?", re.MULTILINE)


def _close_fences(text: str) -> str:
    """Close a code fence a cut left open, so the rest of the comment does not render as code."""
    opened: str | None = None
    for match in _FENCE_LINE.finditer(text):
        mark = match.group(1)
        if opened is None:
            opened = mark
        elif mark[0] == opened[0] and len(mark) >= len(opened):
            opened = None
    return text + f"\n{opened}" if opened else text


def shrink(text: str, room: int) -> str:
    """``text`` cut to ``room`` characters for a reader: folded ``<details>`` sections go first (from the
    last), then the text is cut at a line break; a note says so. The data block is not part of ``text``."""
    if len(text) <= room:
        return text
    note = "\n\n<sub>(Part of this comment was too long to show here; nothing was lost.)</sub>"
    budget = max(0, room - len(note))
    while len(text) > budget and (blocks := list(_DETAILS.finditer(text))):
        last = blocks[-1]
        text = text[: last.start()].rstrip() + text[last.end() :]
    if len(text) > budget:
        cut = text.rfind("\n", 0, max(0, budget - 16))
        text = _close_fences(text[: cut if cut > 0 else max(0, budget - 16)])
    return text + note


def fit(
    kind: str, key: str, text: str, data: Any = None, *, limit: int = MAX_CHARS, signature: str = ""
) -> str:
    """The comment's body, at most ``limit`` characters: the visible text is shrunk when needed; the data
    block never is (``CommentTooLong`` when it alone leaves no room)."""
    body = render(kind, key, text, data, signature=signature)
    if len(body) <= limit:
        return body
    frame = len(render(kind, key, "", data, signature=signature))
    room = limit - frame - 1
    if room < 1_000:
        raise CommentTooLong(f"the data block of {kind}:{key} takes {frame} of {limit} characters")
    return render(kind, key, shrink(text, room), data, signature=signature)


def find(comments: list[Comment], *, bot_login: str, kind: str, key: str) -> Comment | None:
    head = marker(kind, key)
    for comment in comments:
        if comment.author.casefold() == bot_login.casefold() and comment.body.lstrip().startswith(head):
            return comment
    return None


@dataclass(frozen=True)
class UpsertResult:
    outcome: Literal["created", "edited", "unchanged"]
    comment: Comment


def _same(a: str, b: str) -> bool:
    # Forges normalise line endings; compare what a reader sees.
    return a.replace("\r\n", "\n").rstrip() == b.replace("\r\n", "\n").rstrip()


async def upsert(
    forge: Forge,
    repo: RepoRef,
    number: int,
    *,
    bot_login: str,
    kind: str,
    key: str,
    text: str,
    data: Any = None,
    comments: list[Comment] | None = None,
    limit: int = MAX_CHARS,
    keyring: Keyring | None = None,
    repo_id: int = 0,
    pin_text: bool = False,
) -> UpsertResult:
    """Create the sticky comment, edit it when its text changed (or its data block does not verify), or write
    nothing. The body is kept under ``limit`` characters (see ``fit``). With ``data``, the block is signed
    for this comment (``keyring`` and ``repo_id`` are needed then); ``pin_text``: the signed block pins the
    visible text as well (``covered``: an edit of the text then fails verification)."""
    if pin_text and isinstance(data, dict):
        text, data = covered(kind, key, text, data, limit=limit)
    body = fit(kind, key, text, data, limit=limit)
    if comments is None:
        comments = await forge.list_comments(repo, number)
    existing = find(comments, bot_login=bot_login, kind=kind, key=key)
    if data is None:
        if existing is None:
            return UpsertResult("created", await forge.create_comment(repo, number, body))
        if _same(existing.body, body):
            return UpsertResult("unchanged", existing)
        return UpsertResult("edited", await forge.edit_comment(repo, existing.id, body))
    if keyring is None or not repo_id:
        raise ValueError("a sticky comment with data is signed: give keyring and repo_id")
    outcome: Literal["created", "edited"] = "edited"
    if existing is None:
        # The signature names the comment's id: create it without the block, then sign it in (one more write).
        existing = await forge.create_comment(repo, number, fit(kind, key, text, limit=limit))
        outcome = "created"
    else:
        record = await verify_comment(keyring, forge.kind, repo_id, existing, kind, key)
        if record.outcome == "verified" and _same(unsigned(existing.body), body):
            return UpsertResult("unchanged", existing)
    place = Place(forge.kind, repo_id, "comment", existing.id, kind, key)
    after = await keyring.memory.last(place) or 0
    signed_body, seq = signed(keyring, place, text, data, limit=limit, after=after)
    written = await forge.edit_comment(repo, existing.id, signed_body)
    await keyring.memory.note(place, seq)
    return UpsertResult(outcome, written)


async def verify_comment(
    keyring: Keyring,
    forge_kind: str,
    repo_id: int,
    comment: Comment,
    kind: str,
    key: str,
    *,
    expect_data: bool = False,
    remember: bool = True,
) -> Record:
    return await verify(
        keyring,
        comment.body,
        forge=forge_kind,
        repo_id=repo_id,
        container="comment",
        id=comment.id,
        kind=kind,
        key=key,
        changed_at=comment.updated_at,
        created_at=comment.created_at,
        expect_data=expect_data,
        remember=remember,
    )


@dataclass(frozen=True)
class Verifier:
    """Checks Steward's records in one repository (for code that reads without an ``EventContext``)."""

    keyring: Keyring
    forge_kind: str
    repo_id: int

    @classmethod
    async def for_repo(cls, keyring: Keyring, forge: Forge, repo: RepoRef) -> Verifier:
        return cls(keyring, forge.kind, (await forge.get_repo(repo)).id)

    async def comment(
        self, comment: Comment | None, kind: str, key: str, *, expect_data: bool = True
    ) -> Record:
        if comment is None:
            return MISSING
        return await verify_comment(
            self.keyring, self.forge_kind, self.repo_id, comment, kind, key, expect_data=expect_data
        )

    async def issue(self, issue: Issue, kind: str, key: str, *, expect_data: bool = True) -> Record:
        """The record Steward keeps in ``issue``'s body (a milestone's dashboard)."""
        return await verify(
            self.keyring,
            issue.body,
            forge=self.forge_kind,
            repo_id=self.repo_id,
            container="issue",
            id=issue.id,
            kind=kind,
            key=key,
            created_at=issue.created_at,
            expect_data=expect_data,
        )
