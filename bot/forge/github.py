"""The GitHub adapter: the Forge port over gidgethub's httpx client.

One shared ``httpx2.AsyncClient`` per process; an ETag cache per token or installation;
installation tokens cached until shortly before ``expires_at``; every call goes through
the retry policy and every write through the shared write budget.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import time
from collections import OrderedDict
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote

import gidgethub
import httpx2
from gidgethub import apps as gh_apps
from gidgethub.httpx import GitHubAPI

from bot import metrics
from bot.budget import WriteBudget
from bot.forge import (
    Comment,
    FileContent,
    ForgeError,
    ForgeKind,
    ForgeUnavailable,
    Issue,
    Label,
    NotFound,
    PermissionDenied,
    PermissionLevel,
    RateLimited,
    ReactionContent,
    Repo,
    RepoRef,
    User,
    ValidationFailed,
)
from bot.forge.retry import RetryPolicy, classify, resendable, transport_error
from bot.forge.shapes import budget_key, comment_from_json, issue_from_json, label_from_json

USER_AGENT = "steward-bot"
_WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})
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


class LRUCache(OrderedDict[str, Any]):
    """A bounded mapping for gidgethub's ETag cache."""

    def __init__(self, maxsize: int = 512) -> None:
        super().__init__()
        self.maxsize = maxsize

    def __getitem__(self, key: str) -> Any:
        value = super().__getitem__(key)
        self.move_to_end(key)
        return value

    def __setitem__(self, key: str, value: Any) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > self.maxsize:
            self.popitem(last=False)


class _RetryingAPI(GitHubAPI):
    """gidgethub with Steward's retry policy, write budget and metrics around each request."""

    def __init__(
        self,
        client: httpx2.AsyncClient,
        *,
        policy: RetryPolicy,
        budget: WriteBudget | None,
        budget_key: str,
        base_url: str,
        oauth_token: str | None = None,
        cache: LRUCache | None = None,
    ) -> None:
        super().__init__(client, USER_AGENT, oauth_token=oauth_token, cache=cache, base_url=base_url)
        self.policy = policy
        self.budget = budget
        self.budget_key = budget_key

    async def _request(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes = b""
    ) -> tuple[int, Mapping[str, str], bytes]:
        if method in _WRITE_METHODS and self.budget is not None:
            await self.budget.take(self.budget_key, forge="github")
        attempt = 0
        while True:
            attempt += 1
            try:
                status, response_headers, content = await super()._request(method, url, headers, body)
            except httpx2.TransportError as exc:
                metrics.FORGE_CALLS.labels("github", method, "transport_error").inc()
                sent = not isinstance(exc, httpx2.ConnectError | httpx2.ConnectTimeout)
                decision = transport_error(
                    attempt, self.policy, unsafe_to_resend=sent and not resendable(method, _path(url))
                )
                if decision.action != "retry":
                    raise ForgeUnavailable(f"{method} {_path(url)}: {type(exc).__name__}") from None
                await asyncio.sleep(decision.delay)
                continue
            metrics.FORGE_CALLS.labels("github", method, str(status)).inc()
            return status, response_headers, content

    async def handle_rate_limit_error(
        self, *, method: str, url: str, exception: gidgethub.HTTPException, attempt: int
    ) -> bool:
        decision = classify(
            int(exception.status_code),
            exception.headers,
            attempt=attempt,
            policy=self.policy,
            now=time.time(),
            resend_ok=resendable(method, _path(url)),
        )
        if decision.action == "retry":
            await asyncio.sleep(decision.delay)
            return True
        if decision.action == "defer":
            raise RateLimited(
                f"{method} {_path(url)}: {decision.reason}",
                retry_after=decision.delay,
                status=int(exception.status_code),
            )
        return False


def _path(url: str) -> str:
    return httpx2.URL(url).path


def _translate(exc: gidgethub.GitHubException, what: str) -> ForgeError:
    if isinstance(exc, gidgethub.HTTPException):
        status = int(exc.status_code)
        message = f"{what}: {status} {exc}"
        if status == 404:
            return NotFound(message, status=status)
        if status in (401, 403):
            return PermissionDenied(message, status=status)
        if status == 422:
            return ValidationFailed(message, status=status)
        if status == 429:
            return RateLimited(message, retry_after=60.0, status=status)
        if status >= 500:
            return ForgeUnavailable(message, status=status)
        return ForgeError(message, status=status)
    return ForgeError(f"{what}: {exc}")


class GitHubForge:
    """The Forge port for one token or one installation."""

    kind: ForgeKind = "github"

    def __init__(self, api: _RetryingAPI, *, identity: User | None = None) -> None:
        self._api = api
        self._identity = identity

    async def _get(self, url: str, what: str, **kwargs: Any) -> Any:
        try:
            return await self._api.getitem(url, **kwargs)
        except gidgethub.GitHubException as exc:
            raise _translate(exc, what) from None

    async def _iter(self, url: str, what: str) -> list[Any]:
        try:
            return [item async for item in self._api.getiter(url)]
        except gidgethub.GitHubException as exc:
            raise _translate(exc, what) from None

    async def _write(self, method: str, url: str, what: str, data: Any = b"", **kwargs: Any) -> Any:
        call = getattr(self._api, method)
        try:
            if method == "delete":
                return await call(url, **kwargs)
            return await call(url, data=data, **kwargs)
        except gidgethub.GitHubException as exc:
            raise _translate(exc, what) from None

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


class GitHubForges:
    """Builds the GitHubForge for an event: one per token, or one per App installation."""

    def __init__(
        self,
        client: httpx2.AsyncClient,
        *,
        base_url: str,
        policy: RetryPolicy,
        budget: WriteBudget | None,
        token: str | None = None,
        app_id: str | None = None,
        private_key: str | None = None,
    ) -> None:
        if not token and not (app_id and private_key):
            raise ValueError("GitHub needs STEWARD_GITHUB_TOKEN, or STEWARD_GITHUB_APP_ID with a private key")
        self._client = client
        self._base_url = base_url.rstrip("/")
        self._policy = policy
        self._budget = budget
        self._token = token
        self._app_id = app_id
        self._private_key = private_key
        self._caches: dict[str, LRUCache] = {}
        self._installation_tokens: dict[int, tuple[str, float]] = {}
        self._installation_of_repo: dict[str, int] = {}
        self._app_identity: User | None = None
        self._token_forge: GitHubForge | None = None
        self._lock = asyncio.Lock()

    @classmethod
    def from_settings(
        cls, settings: Any, client: httpx2.AsyncClient, budget: WriteBudget | None
    ) -> GitHubForges:
        key: str | None = None
        if settings.github_private_key_path is not None:
            key = Path(settings.github_private_key_path).read_text()
        return cls(
            client,
            base_url=settings.github_api_url,
            policy=RetryPolicy(settings.retry_attempts, settings.retry_base_delay, settings.retry_max_delay),
            budget=budget,
            token=settings.github_token.get_secret_value() if settings.github_token else None,
            app_id=settings.github_app_id,
            private_key=key,
        )

    def _api(self, *, token: str | None, budget_key: str) -> _RetryingAPI:
        cache = self._caches.setdefault(budget_key, LRUCache())
        return _RetryingAPI(
            self._client,
            policy=self._policy,
            budget=self._budget,
            budget_key=budget_key,
            base_url=self._base_url,
            oauth_token=token,
            cache=cache,
        )

    def _app_jwt(self) -> str:
        assert self._app_id and self._private_key
        return gh_apps.get_jwt(app_id=self._app_id, private_key=self._private_key)

    async def app_identity(self) -> User:
        if self._app_identity is None:
            api = self._api(token=None, budget_key=f"app:{self._app_id}")
            try:
                raw = await api.getitem("/app", jwt=self._app_jwt())
            except gidgethub.GitHubException as exc:
                raise _translate(exc, "the GitHub App") from None
            self._app_identity = User(f"{raw['slug']}[bot]", int(raw.get("id") or 0), True)
        return self._app_identity

    async def _installation_token(self, installation_id: int) -> str:
        async with self._lock:
            cached = self._installation_tokens.get(installation_id)
            if cached is not None and cached[1] > time.time():
                return cached[0]
            api = self._api(token=None, budget_key=f"app:{self._app_id}")
            try:
                raw = await api.post(
                    f"/app/installations/{installation_id}/access_tokens", data=b"", jwt=self._app_jwt()
                )
            except gidgethub.GitHubException as exc:
                raise _translate(exc, f"a token for installation {installation_id}") from None
            expires = datetime.fromisoformat(str(raw["expires_at"]).replace("Z", "+00:00")).timestamp()
            # Renew five minutes early so a token never expires in the middle of a job.
            self._installation_tokens[installation_id] = (raw["token"], expires - 300)
            return cast(str, raw["token"])

    async def _installation_for(self, repo: RepoRef) -> int:
        if repo.full_name not in self._installation_of_repo:
            api = self._api(token=None, budget_key=f"app:{self._app_id}")
            try:
                raw = await api.getitem(f"/repos/{repo.full_name}/installation", jwt=self._app_jwt())
            except gidgethub.GitHubException as exc:
                raise _translate(exc, f"the installation on {repo}") from None
            self._installation_of_repo[repo.full_name] = int(raw["id"])
        return self._installation_of_repo[repo.full_name]

    async def for_event(self, installation_id: int | None, repo: RepoRef | None) -> GitHubForge:
        if self._token:
            if self._token_forge is None:
                self._token_forge = GitHubForge(
                    self._api(token=self._token, budget_key=budget_key("github", self._token))
                )
            return self._token_forge
        if installation_id is None:
            if repo is None:
                raise ForgeError("an App event without an installation or a repository")
            installation_id = await self._installation_for(repo)
        token = await self._installation_token(installation_id)
        api = self._api(token=token, budget_key=f"github:installation:{installation_id}")
        return GitHubForge(api, identity=await self.app_identity())
