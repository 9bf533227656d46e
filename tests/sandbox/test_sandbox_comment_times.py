"""The comment times decision provenance relies on (``handlers/forks/juror.py``): a comment never edited has
``updated_at == created_at``; a reaction does not touch it; an edit of the body moves ``updated_at``.

Sources: GitHub's issue-comment schema (``created_at``, ``updated_at``; reactions are their own resource,
``/issues/comments/{id}/reactions``); Gitea ``models/issues/comment.go``: ``UpdatedUnix`` carries xorm's
``updated`` tag, so ``UpdateComment`` (an edit) sets it, while reactions live in their own ``reaction`` table
(and Gogs' migration v14 "setCommentUpdatedWithCreated" made unedited comments' times equal)."""

from __future__ import annotations

import time

import httpx2
import pytest

from bot.sandbox.server import SandboxServer
from bot.sandbox.shared.state import now_iso


def _next_second(after: str) -> None:
    deadline = time.monotonic() + 3
    while now_iso() <= after:
        assert time.monotonic() < deadline, "the clock did not move"


@pytest.mark.parametrize("flavour", ["github", "gitea"])
def test_comment_times_move_on_edit_only(sandbox: SandboxServer, flavour: str) -> None:
    prefix = "/api/v1" if flavour == "gitea" else ""
    with httpx2.Client(
        base_url=sandbox.url + prefix, headers={"Authorization": "token alice-token"}, timeout=10
    ) as c:
        assert c.post("/user/repos", json={"name": f"times-{flavour}"}).status_code == 201
        repo = f"/repos/alice/times-{flavour}"
        number = c.post(f"{repo}/issues", json={"title": "t", "body": ""}).json()["number"]
        made = c.post(f"{repo}/issues/{number}/comments", json={"body": "Postgres"}).json()
        assert made["updated_at"] == made["created_at"]
        _next_second(made["created_at"])
        c.post(f"{repo}/issues/comments/{made['id']}/reactions", json={"content": "+1"})
        again = c.get(f"{repo}/issues/comments/{made['id']}").json()
        assert again["updated_at"] == made["created_at"], "a reaction is not an edit"
        edited = c.patch(f"{repo}/issues/comments/{made['id']}", json={"body": "SQLite"}).json()
        assert edited["updated_at"] > edited["created_at"] == made["created_at"]
