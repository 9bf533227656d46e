"""GitHub's transport: gidgethub over one shared ``httpx2.AsyncClient``, with Steward's retry policy,
write budget and metrics around every request, an ETag cache, and the translation of gidgethub's
exceptions into the port's errors. ``GitHubCalls`` is what every part of the adapter builds on."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import gidgethub
import httpx2
from gidgethub.httpx import GitHubAPI

from bot import metrics
from bot.budget import WriteBudget
from bot.forge import (
    ForgeError,
    ForgeUnavailable,
    NotFound,
    PermissionDenied,
    RateLimited,
    TooManyItems,
    User,
    ValidationFailed,
)
from bot.forge.retry import RetryPolicy, classify, resendable, transport_error

USER_AGENT = "steward-bot"
_WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})


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


class RetryingAPI(GitHubAPI):
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
                    attempt, self.policy, unsafe_to_resend=sent and not resendable(method, api_path(url))
                )
                if decision.action != "retry":
                    raise ForgeUnavailable(f"{method} {api_path(url)}: {type(exc).__name__}") from None
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
            resend_ok=resendable(method, api_path(url)),
        )
        if decision.action == "retry":
            await asyncio.sleep(decision.delay)
            return True
        if decision.action == "defer":
            raise RateLimited(
                f"{method} {api_path(url)}: {decision.reason}",
                retry_after=decision.delay,
                status=int(exception.status_code),
            )
        return False


def api_path(url: str) -> str:
    return httpx2.URL(url).path


def translate(exc: gidgethub.GitHubException, what: str) -> ForgeError:
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


@dataclass(frozen=True)
class AppAccess:
    """Calls as the GitHub App itself (a JWT), for what only the App may read: its own webhook's
    deliveries."""

    api: RetryingAPI
    jwt: Callable[[], str]


class GitHubCalls:
    """The adapter's calls: a read, a paged read and a write, each translating gidgethub's errors.

    ``web_base`` is where the forge's pages are (comment links); ``max_items`` bounds the lists that
    could grow without end (``list_issues``); ``app`` is set for an App installation."""

    def __init__(
        self,
        api: RetryingAPI,
        *,
        web_base: str = "https://github.com",
        max_items: int = 1000,
        app: AppAccess | None = None,
        identity: User | None = None,
    ) -> None:
        self._api = api
        self._web_base = web_base.rstrip("/")
        self._max_items = max_items
        self._app = app
        self._identity = identity

    async def whoami(self) -> User:
        if self._identity is None:
            raw = await self._get("/user", "who am I")
            self._identity = User(raw["login"], int(raw.get("id") or 0), raw.get("type") == "Bot")
        return self._identity

    async def _get(self, url: str, what: str, **kwargs: Any) -> Any:
        try:
            return await self._api.getitem(url, **kwargs)
        except gidgethub.GitHubException as exc:
            raise translate(exc, what) from None

    async def _iter(self, url: str, what: str, *, limit: int | None = None, **kwargs: Any) -> list[Any]:
        """Every item of a paged list; past `limit` items, ``TooManyItems`` (read no further)."""
        found: list[Any] = []
        try:
            async for item in self._api.getiter(url, **kwargs):
                found.append(item)
                if limit is not None and len(found) > limit:
                    raise TooManyItems(
                        f"{what}: more than {limit} items (STEWARD_MAX_LIST_ITEMS)", limit=limit
                    )
        except gidgethub.GitHubException as exc:
            raise translate(exc, what) from None
        return found

    async def _write(self, method: str, url: str, what: str, data: Any = b"", **kwargs: Any) -> Any:
        call = getattr(self._api, method)
        try:
            if method == "delete":
                return await call(url, **kwargs)
            return await call(url, data=data, **kwargs)
        except gidgethub.GitHubException as exc:
            raise translate(exc, what) from None
