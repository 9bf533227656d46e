"""The GitHub adapter: the Forge port over gidgethub (``github_transport``); ``GitHubForges``
(``github_apps``) builds one per token or App installation.

Every call goes through the retry policy and every write through the shared write budget.
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Mapping
from urllib.parse import quote

from bot.forge import (
    Comment,
    FileContent,
    ForgeKind,
    Issue,
    Label,
    NotFound,
    PermissionLevel,
    ReactionContent,
    Repo,
    RepoRef,
    User,
    ValidationFailed,
)
from bot.forge.github_apps import GitHubForges
from bot.forge.github_transport import GitHubCalls, RetryingAPI
from bot.forge.shapes import comment_from_json, issue_from_json, label_from_json

__all__ = ["GitHubForge", "GitHubForges"]

_ROLE_TO_LEVEL: dict[str, PermissionLevel] = {
    "admin": "admin",
    "maintain": "maintain",
    "write": "write",
    "push": "write",
    "triage": "triage",
    "read": "read",
    "pull": "read",
    "none": "none",
}


class GitHubForge(GitHubCalls):
    """The Forge port for one token or one installation."""

    kind: ForgeKind = "github"

    def __init__(self, api: RetryingAPI, *, identity: User | None = None) -> None:
        super().__init__(api)
        self._identity = identity

    # --- identity and repository ---------------------------------------------------------------

    async def whoami(self) -> User:
        if self._identity is None:
            raw = await self._get("/user", "who am I")
            self._identity = User(raw["login"], int(raw.get("id") or 0), raw.get("type") == "Bot")
        return self._identity

    async def get_repo(self, repo: RepoRef) -> Repo:
        raw = await self._get(f"/repos/{repo.full_name}", f"repository {repo}")
        return Repo(
            ref=RepoRef.parse(raw["full_name"]),
            default_branch=raw.get("default_branch") or "main",
            private=bool(raw.get("private")),
            html_url=raw.get("html_url") or "",
        )

    # --- issues and comments -------------------------------------------------------------------

    async def get_issue(self, repo: RepoRef, number: int) -> Issue:
        raw = await self._get(f"/repos/{repo.full_name}/issues/{number}", f"issue {repo}#{number}")
        return issue_from_json(raw)

    async def list_comments(self, repo: RepoRef, number: int) -> list[Comment]:
        items = await self._iter(
            f"/repos/{repo.full_name}/issues/{number}/comments?per_page=100", f"comments of {repo}#{number}"
        )
        return [comment_from_json(item) for item in items]

    async def create_comment(self, repo: RepoRef, number: int, body: str) -> Comment:
        raw = await self._write(
            "post",
            f"/repos/{repo.full_name}/issues/{number}/comments",
            f"comment on {repo}#{number}",
            {"body": body},
        )
        return comment_from_json(raw)

    async def edit_comment(self, repo: RepoRef, comment_id: int, body: str) -> Comment:
        raw = await self._write(
            "patch",
            f"/repos/{repo.full_name}/issues/comments/{comment_id}",
            f"comment {comment_id}",
            {"body": body},
        )
        return comment_from_json(raw)

    async def add_reaction(self, repo: RepoRef, comment_id: int, content: ReactionContent) -> None:
        await self._write(
            "post",
            f"/repos/{repo.full_name}/issues/comments/{comment_id}/reactions",
            f"reaction on comment {comment_id}",
            {"content": content},
        )

    # --- labels ------------------------------------------------------------------------------

    async def list_repo_labels(self, repo: RepoRef) -> list[Label]:
        items = await self._iter(f"/repos/{repo.full_name}/labels?per_page=100", f"labels of {repo}")
        return [label_from_json(item) for item in items]

    async def ensure_label(
        self, repo: RepoRef, name: str, *, color: str = "ededed", description: str = ""
    ) -> Label:
        url = f"/repos/{repo.full_name}/labels"
        try:
            return label_from_json(await self._get(f"{url}/{quote(name, safe='')}", f"label {name!r}"))
        except NotFound:
            pass
        try:
            raw = await self._write(
                "post",
                url,
                f"create label {name!r}",
                {"name": name, "color": color.lstrip("#"), "description": description[:100]},
            )
        except ValidationFailed:
            # Created meanwhile by another worker: read the winner's.
            return label_from_json(await self._get(f"{url}/{quote(name, safe='')}", f"label {name!r}"))
        return label_from_json(raw)

    async def set_labels(self, repo: RepoRef, number: int, names: list[str]) -> tuple[str, ...]:
        raw = await self._write(
            "put",
            f"/repos/{repo.full_name}/issues/{number}/labels",
            f"labels of {repo}#{number}",
            {"labels": names},
        )
        return tuple(item["name"] for item in raw)

    async def add_labels(self, repo: RepoRef, number: int, names: list[str]) -> tuple[str, ...]:
        raw = await self._write(
            "post",
            f"/repos/{repo.full_name}/issues/{number}/labels",
            f"labels of {repo}#{number}",
            {"labels": names},
        )
        return tuple(item["name"] for item in raw)

    async def remove_label(self, repo: RepoRef, number: int, name: str) -> None:
        with contextlib.suppress(NotFound):
            await self._write(
                "delete",
                f"/repos/{repo.full_name}/issues/{number}/labels/{quote(name, safe='')}",
                f"label {name!r} of {repo}#{number}",
            )

    # --- people and files ----------------------------------------------------------------------

    async def permission_of(self, repo: RepoRef, login: str) -> PermissionLevel:
        try:
            raw = await self._get(
                f"/repos/{repo.full_name}/collaborators/{quote(login, safe='')}/permission",
                f"permission of {login} on {repo}",
            )
        except NotFound:
            return "none"
        role = raw.get("role_name") or raw.get("permission") or "none"
        return _ROLE_TO_LEVEL.get(str(role), _ROLE_TO_LEVEL.get(str(raw.get("permission")), "none"))

    async def read_file(self, repo: RepoRef, path: str, ref: str | None = None) -> FileContent | None:
        url = f"/repos/{repo.full_name}/contents/{quote(path.lstrip('/'))}"
        if ref:
            url += f"?ref={quote(ref, safe='')}"
        try:
            raw = await self._get(url, f"file {path} of {repo}")
        except NotFound:
            return None
        if not isinstance(raw, Mapping) or raw.get("type", "file") != "file":
            return None
        content = (
            base64.b64decode(raw.get("content") or "") if raw.get("encoding", "base64") == "base64" else b""
        )
        return FileContent(path=raw.get("path") or path, content=content, sha=raw.get("sha") or "")

    # --- issue relations ------------------------------------------------------------------------

    async def list_sub_issues(self, repo: RepoRef, number: int) -> list[Issue]:
        try:
            items = await self._iter(
                f"/repos/{repo.full_name}/issues/{number}/sub_issues?per_page=100",
                f"sub-issues of {repo}#{number}",
            )
        except NotFound:
            return []
        return [issue_from_json(item) for item in items]

    async def list_blocked_by(self, repo: RepoRef, number: int) -> list[int]:
        items = await self._iter(
            f"/repos/{repo.full_name}/issues/{number}/dependencies/blocked_by?per_page=100",
            f"dependencies of {repo}#{number}",
        )
        return [int(item["number"]) for item in items]

    async def add_blocked_by(self, repo: RepoRef, number: int, blocker: int) -> None:
        blocking = await self.get_issue(repo, blocker)
        await self._write(
            "post",
            f"/repos/{repo.full_name}/issues/{number}/dependencies/blocked_by",
            f"dependency of {repo}#{number} on #{blocker}",
            {"issue_id": blocking.id},
        )
