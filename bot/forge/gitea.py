"""The Gitea/Forgejo adapter: the Forge port over py-gitea 0.3.x.

py-gitea is synchronous and is confined to this module. Every call runs on a dedicated, bounded
``ThreadPoolExecutor`` (never the loop's default one), over one ``requests.Session`` whose connection
pool is sized to that executor and whose every request carries connect/read timeouts (py-gitea passes
none). Calls go through the same retry policy as GitHub's (``bot.forge.retry``) and writes through the
same Redis write budget.

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
- py-gitea raises exceptions that carry only a message; the status and headers the retry policy needs
  (``Retry-After``, ``X-RateLimit-*``) are read from the session's last response on the calling thread.

Gitea has no sub-issues (``list_sub_issues`` answers ``[]``) and no triage/maintain roles: its
``/collaborators/{user}/permission`` answers none, read, write, admin or owner (owner → admin).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import quote

import requests
from gitea import Gitea, Repository
from gitea.exceptions import GiteaApiException
from requests.adapters import HTTPAdapter

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
# Gitea's default [api] MAX_RESPONSE_ITEMS; a larger `limit` is silently capped by the server.
PAGE_LIMIT = 50
_ACCESS_TO_LEVEL: dict[str, PermissionLevel] = {
    "owner": "admin",
    "admin": "admin",
    "write": "write",
    "read": "read",
    "none": "none",
}


class _Session(requests.Session):
    """A requests session with default timeouts, a pool sized to the executor, and the last
    response of each thread remembered (py-gitea's exceptions do not carry it)."""

    def __init__(self, *, timeout: tuple[float, float], pool_size: int) -> None:
        super().__init__()
        adapter = HTTPAdapter(pool_connections=pool_size, pool_maxsize=pool_size, max_retries=0)
        self.mount("http://", adapter)
        self.mount("https://", adapter)
        self.headers["User-Agent"] = USER_AGENT
        self.default_timeout = timeout
        self._local = threading.local()

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("timeout", self.default_timeout)
        self._local.response = None
        response = super().request(method, url, *args, **kwargs)
        self._local.response = response
        return response

    @property
    def last_response(self) -> requests.Response | None:
        return cast(requests.Response | None, getattr(self._local, "response", None))


@dataclass
class _HTTPFailure(Exception):
    status: int
    headers: Mapping[str, str]
    message: str


@dataclass
class _TransportFailure(Exception):
    kind: str
    sent: bool


def _was_sent(exc: requests.RequestException) -> bool:
    """Whether the request may have reached Gitea (then a write is not resent blindly)."""
    if isinstance(exc, requests.ConnectTimeout):
        return False
    if isinstance(exc, requests.ReadTimeout):
        return True
    return "NewConnectionError" not in repr(exc.args)


def _translate(failure: _HTTPFailure, what: str) -> ForgeError:
    status = failure.status
    message = f"{what}: {status} {failure.message}"
    if status == 404:
        return NotFound(message, status=status)
    if status in (401, 403):
        return PermissionDenied(message, status=status)
    if status in (409, 422):
        return ValidationFailed(message, status=status)
    if status == 429:
        return RateLimited(message, retry_after=60.0, status=status)
    if status >= 500:
        return ForgeUnavailable(message, status=status)
    return ForgeError(message, status=status)


def _seg(value: str | int) -> str:
    return quote(str(value), safe="")


class GiteaForge:
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
        if not token:
            raise ValueError("Gitea needs STEWARD_GITEA_TOKEN")
        self._policy = policy or RetryPolicy()
        self._budget = budget
        self._budget_key = budget_key("gitea", token)
        self._executor = ThreadPoolExecutor(max_workers=max_threads, thread_name_prefix="steward-gitea")
        connect = connect_timeout if connect_timeout is not None else min(5.0, timeout)
        self._session = _Session(timeout=(connect, timeout), pool_size=max_threads)
        # log_level CRITICAL: py-gitea logs every non-2xx at ERROR; Steward logs what matters itself.
        self._gitea = Gitea(base_url.rstrip("/"), token_text=token, log_level="CRITICAL")
        self._gitea.requests = self._session
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

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._session.close()

    # --- the call machinery ----------------------------------------------------------------------

    def _in_thread[T](self, method: str, fn: Callable[[], T]) -> T:
        try:
            result = fn()
        except GiteaApiException as exc:
            response = self._session.last_response
            status = response.status_code if response is not None else 0
            metrics.FORGE_CALLS.labels("gitea", method, str(status)).inc()
            headers = dict(response.headers) if response is not None else {}
            raise _HTTPFailure(status, headers, type(exc).__name__) from None
        except requests.RequestException as exc:
            metrics.FORGE_CALLS.labels("gitea", method, "transport_error").inc()
            raise _TransportFailure(type(exc).__name__, _was_sent(exc)) from None
        response = self._session.last_response
        metrics.FORGE_CALLS.labels(
            "gitea", method, str(response.status_code if response is not None else 0)
        ).inc()
        return result

    async def _call[T](self, method: str, what: str, fn: Callable[[], T], path: str = "") -> T:
        """Run ``fn`` (a py-gitea call of ``method`` on ``path``) under the retry policy and budget."""
        write = method != "GET"
        resend_ok = resendable(method, path)
        if write and self._budget is not None:
            await self._budget.take(self._budget_key, forge="gitea")
        loop = asyncio.get_running_loop()
        attempt = 0
        while True:
            attempt += 1
            try:
                return await loop.run_in_executor(self._executor, self._in_thread, method, fn)
            except _HTTPFailure as failure:
                decision = classify(
                    failure.status,
                    failure.headers,
                    attempt=attempt,
                    policy=self._policy,
                    now=time.time(),
                    resend_ok=resend_ok,
                )
                if decision.action == "retry":
                    await asyncio.sleep(decision.delay)
                    continue
                if decision.action == "defer":
                    raise RateLimited(
                        f"{what}: {decision.reason}", retry_after=decision.delay, status=failure.status
                    ) from None
                raise _translate(failure, what) from None
            except _TransportFailure as failure:
                decision = transport_error(
                    attempt, self._policy, unsafe_to_resend=failure.sent and not resend_ok
                )
                if decision.action != "retry":
                    raise ForgeUnavailable(f"{what}: {failure.kind}") from None
                await asyncio.sleep(decision.delay)

    async def _get(self, endpoint: str, what: str, params: dict[str, Any] | None = None) -> Any:
        return await self._call(
            "GET", what, lambda: self._gitea.requests_get(endpoint, params or {}), endpoint
        )

    async def _post(self, endpoint: str, what: str, data: dict[str, Any]) -> Any:
        return await self._call("POST", what, lambda: self._gitea.requests_post(endpoint, data), endpoint)

    async def _patch(self, endpoint: str, what: str, data: dict[str, Any]) -> Any:
        return await self._call("PATCH", what, lambda: self._gitea.requests_patch(endpoint, data), endpoint)

    async def _put(self, endpoint: str, what: str, data: dict[str, Any]) -> Any:
        def put() -> Any:
            self._gitea.requests_put(endpoint, data)
            response = self._session.last_response
            return response.json() if response is not None and response.content else None

        return await self._call("PUT", what, put, endpoint)

    async def _delete(self, endpoint: str, what: str) -> None:
        await self._call("DELETE", what, lambda: self._gitea.requests_delete(endpoint), endpoint)

    async def _pages(self, endpoint: str, what: str, params: dict[str, Any] | None = None) -> list[Any]:
        """Every item of a paginated list (``page``/``limit``; stops at X-Total-Count or a short page)."""
        items: list[Any] = []
        page = 1
        while True:
            query = {**(params or {}), "page": page, "limit": PAGE_LIMIT}

            def fetch(query: dict[str, Any] = query) -> tuple[list[Any], int | None]:
                found = self._gitea.requests_get(endpoint, query)
                response = self._session.last_response
                total = response.headers.get("X-Total-Count") if response is not None else None
                return (found if isinstance(found, list) else []), (
                    int(total) if total and total.isdigit() else None
                )

            batch, total = await self._call("GET", what, fetch, endpoint)
            items.extend(batch)
            if len(batch) < PAGE_LIMIT or (total is not None and len(items) >= total):
                return items
            page += 1

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

    def _r(self, repo: RepoRef) -> str:
        return f"/repos/{_seg(repo.owner)}/{_seg(repo.name)}"

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
                f"{self._r(repo)}/collaborators/{_seg(login)}/permission", f"permission of {login} on {repo}"
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
