"""Bot-owned comments that are edited in place, never reposted (DESIGN §3.3).

Each starts with a hidden marker line ``<!-- steward:KIND:KEY -->`` and may carry a data
block ``<!-- steward:data {json} -->`` that reads back exactly. Only comments written by
the bot's own account are considered, so a user who pastes a marker cannot hijack it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from bot.forge import Comment, Forge, RepoRef

_SAFE = re.compile(r"^[A-Za-z0-9_.#/@=+-]{1,200}$")
_DATA_RE = re.compile(r"^<!-- steward:data (?P<json>.*) -->$", re.MULTILINE)
# DESIGN §3.11: GitHub refuses bodies over 65,536 characters; every comment stays under this, with room.
MAX_CHARS = 60_000
_DETAILS = re.compile(r"<details>.*?</details>", re.DOTALL)
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)


class CommentTooLong(ValueError):
    """A comment's data block alone does not fit: the handler must bound what it keeps (a bug)."""


def marker(kind: str, key: str) -> str:
    if not _SAFE.match(kind) or not _SAFE.match(key) or "--" in kind + key:
        raise ValueError(f"unsafe sticky marker: {kind!r} {key!r}")
    return f"<!-- steward:{kind}:{key} -->"


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


def decode_data(body: str) -> Any | None:
    match = _DATA_RE.search(body)
    if match is None:
        return None
    try:
        return json.loads(match.group("json"))
    except json.JSONDecodeError:
        return None


def render(kind: str, key: str, text: str, data: Any = None) -> str:
    parts = [marker(kind, key)]
    if data is not None:
        parts.append(encode_data(data))
    parts.append(text.rstrip("\n"))
    return "\n".join(parts) + "\n"


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


def fit(kind: str, key: str, text: str, data: Any = None, *, limit: int = MAX_CHARS) -> str:
    """The comment's body, at most ``limit`` characters: the visible text is shrunk when needed; the data
    block never is (``CommentTooLong`` when it alone leaves no room)."""
    body = render(kind, key, text, data)
    if len(body) <= limit:
        return body
    frame = len(render(kind, key, "", data))
    room = limit - frame - 1
    if room < 1_000:
        raise CommentTooLong(f"the data block of {kind}:{key} takes {frame} of {limit} characters")
    return render(kind, key, shrink(text, room), data)


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
) -> UpsertResult:
    """Create the sticky comment, edit it when its text changed, or write nothing. The body is kept under
    ``limit`` characters (see ``fit``)."""
    body = fit(kind, key, text, data, limit=limit)
    if comments is None:
        comments = await forge.list_comments(repo, number)
    existing = find(comments, bot_login=bot_login, kind=kind, key=key)
    if existing is None:
        return UpsertResult("created", await forge.create_comment(repo, number, body))
    if _same(existing.body, body):
        return UpsertResult("unchanged", existing)
    return UpsertResult("edited", await forge.edit_comment(repo, existing.id, body))


async def read(
    forge: Forge, repo: RepoRef, number: int, *, bot_login: str, kind: str, key: str
) -> tuple[Comment | None, Any | None]:
    comment = find(await forge.list_comments(repo, number), bot_login=bot_login, kind=kind, key=key)
    if comment is None:
        return None, None
    return comment, decode_data(comment.body)
