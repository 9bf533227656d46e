"""The Gitea/Forgejo adapter: the Forge port over py-gitea 0.3.x.

py-gitea is synchronous and is confined to this module and ``gitea_transport``. Every call runs on a
dedicated, bounded ``ThreadPoolExecutor`` (never the loop's default one), over one ``requests.Session``
whose connection pool is sized to that executor and whose every request carries connect/read timeouts
(py-gitea passes none). Calls go through the same retry policy as GitHub's (``bot.forge.retry``) and
writes through the same Redis write budget (``gitea_transport.GiteaCalls``).

Where py-gitea's object model is used, and where it is not:

- ``Gitea.get_user`` (identity) and ``Repository.request`` (repository) are used as they are.
- Issues: ``Issue.request`` fetches the whole repository again for every issue (its ``repository``
  field parser), so issues are read with the raw ``requests_get`` helper and translated here.
- Comments: ``Issue.get_comments`` lists *every* comment of the repository and filters by URL; comments
  are read, created and edited with the raw helpers on ``/issues/{n}/comments`` and
  ``/issues/comments/{id}``. Reactions and dependencies have no object model at all.
- Labels: ``Issue.set_labels`` needs Label objects and drops the response; labels are changed by id with
  the raw helpers, and a name → id map is cached per repository (refreshed when a name is unknown or an
  id turns out stale). ``requests_put`` returns nothing, so the response of a PUT is read from the
  session's last response on that thread.

Gitea has no sub-issues (``list_sub_issues`` answers ``[]``) and no triage/maintain roles: its
``/collaborators/{user}/permission`` answers none, read, write, admin or owner (owner → admin).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from gitea import Repository

from bot.budget import WriteBudget
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
from bot.forge.gitea_transport import GiteaCalls, seg
from bot.forge.retry import RetryPolicy
from bot.forge.shapes import comment_from_json, issue_from_json, label_from_json

_ACCESS_TO_LEVEL: dict[str, PermissionLevel] = {
    "owner": "admin",
    "admin": "admin",
    "write": "write",
    "read": "read",
    "none": "none",
}


class GiteaForge(GiteaCalls):
    """The Forge port for one Gitea or Forgejo instance and one token."""

    kind: ForgeKind = "gitea"

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        policy: RetryPolicy | None = None,
        budget: WriteBudget | None = None,
        timeout: float = 10.0,
        connect_timeout: float | None = None,
        max_threads: int = 8,
    ) -> None:
        super().__init__(
            base_url,
            token,
            policy=policy,
            budget=budget,
            timeout=timeout,
            connect_timeout=connect_timeout,
            max_threads=max_threads,
        )
        self._identity: User | None = None
        self._label_ids: dict[str, dict[str, int]] = {}
        self._label_lock = asyncio.Lock()

    @classmethod
    def from_settings(cls, settings: Any, budget: WriteBudget | None) -> GiteaForge:
        if not settings.gitea_url:
            raise ValueError("Gitea needs STEWARD_GITEA_URL")
        return cls(
            settings.gitea_url,
            settings.gitea_token.get_secret_value() if settings.gitea_token else "",
            policy=RetryPolicy(settings.retry_attempts, settings.retry_base_delay, settings.retry_max_delay),
            budget=budget,
            timeout=settings.http_timeout_seconds,
            max_threads=max(4, int(settings.max_jobs)),
        )

    # --- identity and repository -----------------------------------------------------------------

    async def whoami(self) -> User:
        if self._identity is None:
            me = await self._call("GET", "who am I", self._gitea.get_user)
            self._identity = User(str(me.login), int(me.id or 0), False)
        return self._identity

    async def get_repo(self, repo: RepoRef) -> Repo:
        found = await self._call(
            "GET", f"repository {repo}", lambda: Repository.request(self._gitea, repo.owner, repo.name)
        )
        return Repo(
            ref=RepoRef.parse(str(found.full_name)),
            default_branch=str(found.default_branch or "main"),
            private=bool(found.private),
            html_url=str(found.html_url or ""),
        )

    # --- issues and comments ---------------------------------------------------------------------

    async def get_issue(self, repo: RepoRef, number: int) -> Issue:
        raw = await self._get(f"{self._r(repo)}/issues/{number}", f"issue {repo}#{number}")
        return issue_from_json(raw, milestone_key="id")

    async def list_comments(self, repo: RepoRef, number: int) -> list[Comment]:
        # Gitea answers this list whole (it takes no page/limit).
        raw = await self._get(f"{self._r(repo)}/issues/{number}/comments", f"comments of {repo}#{number}")
        return [comment_from_json(item) for item in raw or []]

    async def create_comment(self, repo: RepoRef, number: int, body: str) -> Comment:
        raw = await self._post(
            f"{self._r(repo)}/issues/{number}/comments", f"comment on {repo}#{number}", {"body": body}
        )
        return comment_from_json(raw)

    async def edit_comment(self, repo: RepoRef, comment_id: int, body: str) -> Comment:
        raw = await self._patch(
            f"{self._r(repo)}/issues/comments/{comment_id}", f"comment {comment_id}", {"body": body}
        )
        return comment_from_json(raw)

    async def add_reaction(self, repo: RepoRef, comment_id: int, content: ReactionContent) -> None:
        await self._post(
            f"{self._r(repo)}/issues/comments/{comment_id}/reactions",
            f"reaction on comment {comment_id}",
            {"content": content},
        )

    # --- labels ------------------------------------------------------------------------------------

    async def _fetch_labels(self, repo: RepoRef) -> list[tuple[int, Label]]:
        items = await self._pages(f"{self._r(repo)}/labels", f"labels of {repo}")
        found = [(int(item["id"]), label_from_json(item)) for item in items]
        self._label_ids[repo.full_name.casefold()] = {
            label.name.casefold(): label_id for label_id, label in reversed(found)
        }
        return found

    async def list_repo_labels(self, repo: RepoRef) -> list[Label]:
        return [label for _, label in await self._fetch_labels(repo)]

    async def _create_label(self, repo: RepoRef, name: str, color: str, description: str) -> int:
        try:
            raw = await self._post(
                f"{self._r(repo)}/labels",
                f"create label {name!r}",
                {"name": name, "color": "#" + color.lstrip("#"), "description": description},
            )
        except ValidationFailed:
            # Created meanwhile by another worker: read the winner's.
            await self._fetch_labels(repo)
            label_id = self._label_ids[repo.full_name.casefold()].get(name.casefold())
            if label_id is None:
                raise
            return label_id
        self._label_ids.setdefault(repo.full_name.casefold(), {})[name.casefold()] = int(raw["id"])
        return int(raw["id"])

    async def _label_ids_for(self, repo: RepoRef, names: list[str], *, refresh: bool = False) -> list[int]:
        """Ids for label names, creating the missing ones (as GitHub does when labels are set)."""
        async with self._label_lock:
            known = self._label_ids.get(repo.full_name.casefold())
            if refresh or known is None or any(n.casefold() not in known for n in names):
                await self._fetch_labels(repo)
                known = self._label_ids[repo.full_name.casefold()]
            ids: list[int] = []
            for name in names:
                label_id = known.get(name.casefold())
                if label_id is None:
                    label_id = await self._create_label(repo, name, "ededed", "")
                if label_id not in ids:
                    ids.append(label_id)
            return ids

    async def ensure_label(
        self, repo: RepoRef, name: str, *, color: str = "ededed", description: str = ""
    ) -> Label:
        for _, label in await self._fetch_labels(repo):
            if label.name.casefold() == name.casefold():
                return label
        label_id = await self._create_label(repo, name, color, description)
        raw = await self._get(f"{self._r(repo)}/labels/{label_id}", f"label {name!r}")
        return label_from_json(raw)

    async def _change_labels(
        self, method: str, repo: RepoRef, number: int, names: list[str]
    ) -> tuple[str, ...]:
        url = f"{self._r(repo)}/issues/{number}/labels"
        what = f"labels of {repo}#{number}"
        for refresh in (False, True):
            ids = await self._label_ids_for(repo, names, refresh=refresh)
            try:
                if method == "PUT":
                    raw = await self._put(url, what, {"labels": ids})
                else:
                    raw = await self._post(url, what, {"labels": ids})
            except (ValidationFailed, NotFound):
                # A cached id may belong to a label deleted since: refresh the map once.
                if refresh:
                    raise
                continue
            return tuple(str(item["name"]) for item in raw or [])
        raise AssertionError("unreachable")

    async def set_labels(self, repo: RepoRef, number: int, names: list[str]) -> tuple[str, ...]:
        return await self._change_labels("PUT", repo, number, names)

    async def add_labels(self, repo: RepoRef, number: int, names: list[str]) -> tuple[str, ...]:
        return await self._change_labels("POST", repo, number, names)

    async def remove_label(self, repo: RepoRef, number: int, name: str) -> None:
        async with self._label_lock:
            known = self._label_ids.get(repo.full_name.casefold())
            if known is None or name.casefold() not in known:
                await self._fetch_labels(repo)
                known = self._label_ids[repo.full_name.casefold()]
        label_id = known.get(name.casefold())
        if label_id is None:
            return
        with contextlib.suppress(NotFound):
            await self._delete(
                f"{self._r(repo)}/issues/{number}/labels/{label_id}", f"label {name!r} of {repo}#{number}"
            )

    # --- people and files --------------------------------------------------------------------------

    async def permission_of(self, repo: RepoRef, login: str) -> PermissionLevel:
        try:
            raw = await self._get(
                f"{self._r(repo)}/collaborators/{seg(login)}/permission", f"permission of {login} on {repo}"
            )
        except NotFound:
            return "none"
        return _ACCESS_TO_LEVEL.get(str(raw.get("permission") or "none"), "none")

    async def read_file(self, repo: RepoRef, path: str, ref: str | None = None) -> FileContent | None:
        url = f"{self._r(repo)}/contents/{quote(path.lstrip('/'))}"
        try:
            raw = await self._get(url, f"file {path} of {repo}", {"ref": ref} if ref else None)
        except NotFound:
            return None
        if not isinstance(raw, Mapping) or raw.get("type", "file") != "file":
            return None
        content = (
            base64.b64decode(raw.get("content") or "") if raw.get("encoding", "base64") == "base64" else b""
        )
        return FileContent(path=raw.get("path") or path, content=content, sha=raw.get("sha") or "")

    # --- issue relations ---------------------------------------------------------------------------

    async def list_sub_issues(self, repo: RepoRef, number: int) -> list[Issue]:
        return []  # Gitea has no sub-issues

    async def list_blocked_by(self, repo: RepoRef, number: int) -> list[int]:
        items = await self._pages(
            f"{self._r(repo)}/issues/{number}/dependencies", f"dependencies of {repo}#{number}"
        )
        return [int(item["number"]) for item in items]

    async def add_blocked_by(self, repo: RepoRef, number: int, blocker: int) -> None:
        await self._post(
            f"{self._r(repo)}/issues/{number}/dependencies",
            f"dependency of {repo}#{number} on #{blocker}",
            {"owner": repo.owner, "repo": repo.name, "index": blocker},
        )
