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
    text = text.replace("<!", "<\\u0021").replace("->", "-\\u003e")
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
) -> UpsertResult:
    """Create the sticky comment, edit it when its text changed, or write nothing."""
    body = render(kind, key, text, data)
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
