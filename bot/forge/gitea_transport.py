"""Gitea's transport: py-gitea's raw ``requests_*`` helpers on a dedicated, bounded thread pool, over one
``requests.Session`` with timeouts and a pool sized to that pool, under Steward's retry policy and write
budget. ``GiteaCalls`` is what every part of the Gitea adapter builds on.

py-gitea raises exceptions that carry only a message; the status and headers the retry policy needs
(``Retry-After``, ``X-RateLimit-*``) are read from the session's last response on the calling thread.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import quote

import requests
from gitea import Gitea
from gitea.exceptions import GiteaApiException
from requests.adapters import HTTPAdapter

from bot import metrics
from bot.budget import WriteBudget
from bot.forge import (
    ForgeError,
    ForgeUnavailable,
    NotFound,
    PermissionDenied,
    RateLimited,
    RepoRef,
    TooManyItems,
    User,
    ValidationFailed,
)
from bot.forge.retry import RetryPolicy, classify, resendable, transport_error
from bot.forge.shapes import budget_key

USER_AGENT = "steward-bot"
# Gitea's default [api] MAX_RESPONSE_ITEMS; a larger `limit` is silently capped by the server.
PAGE_LIMIT = 50


class _Session(requests.Session):
    """A requests session with default timeouts, a pool sized to the executor, and the last
    response of each thread remembered (py-gitea's exceptions do not carry it)."""

    def __init__(self, base_url: str, *, timeout: tuple[float, float], pool_size: int) -> None:
        super().__init__()
        adapter = HTTPAdapter(pool_connections=pool_size, pool_maxsize=pool_size, max_retries=0)
        self.mount("http://", adapter)
        self.mount("https://", adapter)
        self.headers["User-Agent"] = USER_AGENT
        self.default_timeout = timeout
        self._local = threading.local()
        # requests reads the environment (HTTP(S)_PROXY, NO_PROXY, REQUESTS_CA_BUNDLE, ~/.netrc) again on
        # every request, a fifth of its CPU per request (bench/client_overhead.py). It is read once here,
        # for the one Gitea this session speaks to, and then not again.
        found = self.merge_environment_settings(base_url, {}, None, None, None)
        self.proxies = dict(found["proxies"])
        self.verify = found["verify"]
        self.trust_env = False

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


def _message(response: requests.Response | None) -> str:
    """Gitea's own words for a refusal (its APIError ``message``), cut short; py-gitea's exceptions drop
    them, and the adapter decides on some ("pull request already exists for these targets")."""
    if response is None:
        return ""
    try:
        data = response.json()
    except ValueError:
        return ""
    message = data.get("message") if isinstance(data, dict) else None
    return str(message)[:300] if isinstance(message, str) else ""


def _was_sent(exc: requests.RequestException) -> bool:
    """Whether the request may have reached Gitea (then a write is not resent blindly)."""
    if isinstance(exc, requests.ConnectTimeout):
        return False
    if isinstance(exc, requests.ReadTimeout):
        return True
    return "NewConnectionError" not in repr(exc.args)


def translate(failure: _HTTPFailure, what: str) -> ForgeError:
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


def seg(value: str | int) -> str:
    return quote(str(value), safe="")


class GiteaCalls:
    """One Gitea instance and one token: the session, the thread pool and the calls."""

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
        max_items: int = 1000,
    ) -> None:
        if not token:
            raise ValueError("Gitea needs STEWARD_GITEA_TOKEN")
        self._base_url = base_url.rstrip("/")
        # STEWARD_GITEA_URL is the web root too (comment links are checked against it).
        self._web_base = self._base_url
        self._max_items = max_items
        self._identity: User | None = None
        self._policy = policy or RetryPolicy()
        self._budget = budget
        self._budget_key = budget_key("gitea", token)
        self._executor = ThreadPoolExecutor(max_workers=max_threads, thread_name_prefix="steward-gitea")
        connect = connect_timeout if connect_timeout is not None else min(5.0, timeout)
        self._session = _Session(self._base_url, timeout=(connect, timeout), pool_size=max_threads)
        # log_level CRITICAL: py-gitea logs every non-2xx at ERROR; Steward logs what matters itself.
        self._gitea = Gitea(self._base_url, token_text=token, log_level="CRITICAL")
        self._gitea.requests = self._session

    async def whoami(self) -> User:
        if self._identity is None:
            me = await self._call("GET", "who am I", self._gitea.get_user)
            self._identity = User(str(me.login), int(me.id or 0), False)
        return self._identity

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._session.close()

    def _in_thread[T](self, method: str, fn: Callable[[], T]) -> T:
        try:
            result = fn()
        except GiteaApiException as exc:
            response = self._session.last_response
            status = response.status_code if response is not None else 0
            metrics.FORGE_CALLS.labels("gitea", method, str(status)).inc()
            headers = dict(response.headers) if response is not None else {}
            raise _HTTPFailure(status, headers, _message(response) or type(exc).__name__) from None
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
        loop = asyncio.get_running_loop()
        attempt = 0
        while True:
            attempt += 1
            # Every try of a write takes budget: a resend after a 5xx, a 429 or a dropped connection reaches
            # the forge like the first one (tests/faults/test_forge_stalls.py found resends unbudgeted).
            if write and self._budget is not None:
                await self._budget.take(self._budget_key, forge="gitea")
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
                raise translate(failure, what) from None
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

    async def _post_empty(self, endpoint: str, what: str) -> None:
        """A POST that Gitea answers 204 No Content, which py-gitea's ``requests_post`` takes for an error."""

        def post() -> None:
            try:
                self._gitea.requests_post(endpoint, {})
            except GiteaApiException:
                response = self._session.last_response
                if response is None or response.status_code != 204:
                    raise

        await self._call("POST", what, post, endpoint)

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

    async def _pages(
        self, endpoint: str, what: str, params: dict[str, Any] | None = None, *, limit: int | None = None
    ) -> list[Any]:
        """Every item of a paginated list (``page``/``limit``; stops at X-Total-Count or a short page).
        Past `limit` items ``TooManyItems``, known from X-Total-Count before the rest is read."""
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
            if limit is not None and max(total or 0, len(items)) > limit:
                raise TooManyItems(f"{what}: more than {limit} items (STEWARD_MAX_LIST_ITEMS)", limit=limit)
            if len(batch) < PAGE_LIMIT or (total is not None and len(items) >= total):
                return items
            page += 1

    def _r(self, repo: RepoRef) -> str:
        return f"/repos/{seg(repo.owner)}/{seg(repo.name)}"
