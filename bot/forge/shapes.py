"""JSON → port types for the fields GitHub's and Gitea's REST APIs share (issues, comments,
labels), and the budget key of a token. The adapters differ only where the forges do."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from bot.forge import Comment, Issue, Label


def issue_from_json(raw: Mapping[str, Any], *, milestone_key: str = "number") -> Issue:
    """``milestone_key``: GitHub names a milestone by ``number``, Gitea by ``id``."""
    milestone = raw.get("milestone")
    return Issue(
        number=int(raw["number"]),
        title=raw.get("title") or "",
        body=raw.get("body") or "",
        state="closed" if raw.get("state") == "closed" else "open",
        author=(raw.get("user") or {}).get("login") or "",
        labels=tuple(label["name"] for label in raw.get("labels") or ()),
        milestone=milestone.get(milestone_key) if isinstance(milestone, Mapping) else None,
        is_pull_request=isinstance(raw.get("pull_request"), Mapping),
        html_url=raw.get("html_url") or "",
        id=int(raw.get("id") or 0),
    )


def comment_from_json(raw: Mapping[str, Any]) -> Comment:
    return Comment(
        id=int(raw["id"]),
        author=(raw.get("user") or {}).get("login") or "",
        body=raw.get("body") or "",
        created_at=raw.get("created_at") or "",
        updated_at=raw.get("updated_at") or "",
        html_url=raw.get("html_url") or "",
    )


def label_from_json(raw: Mapping[str, Any]) -> Label:
    # Gitea writes colours with a leading '#', GitHub without.
    return Label(
        name=raw["name"],
        color=str(raw.get("color") or "").lstrip("#"),
        description=raw.get("description") or "",
    )


def budget_key(forge: str, token: str) -> str:
    """The write budget is per token; the key is a digest so the token never reaches Redis."""
    return f"{forge}:" + hashlib.sha256(token.encode()).hexdigest()[:16]
