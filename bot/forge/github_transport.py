"""GitHub's transport: gidgethub over one shared ``aiohttp`` session per process (keep-alive), with
Steward's retry policy, write budget and metrics around every request, an ETag cache, and the translation
of gidgethub's exceptions into the port's errors. ``GitHubCalls`` is what every part of the adapter builds
on.

aiohttp, not httpx: measured side by side (``bench/client_overhead.py``), gidgethub over aiohttp spends
about half the CPU per request of gidgethub over httpx2 (docs/performance.md)."""

from __future__ import annotations

import asyncio
import json
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

import aiohttp
import gidgethub
from aiohttp.helpers import get_env_proxy_for_url
from gidgethub import sansio
from gidgethub.abc import GitHubAPI
from yarl import URL

from bot.forge import (
    ForgeError,
    ForgeUnavailable,
    NotFound,
    NotSupported,
    PermissionDenied,
    RateLimited,
    TooManyItems,
    Unauthorized,
    User,
    ValidationFailed,
)
from bot.forge.etag_store import EtagStore, persisted
from bot.forge.known_labels import KnownLabels
from bot.forge.links import github_graphql_url
from bot.forge.retry import RetryPolicy, classify, resendable, resendable_graphql, transport_error
from bot.forge.write_budget import WriteBudget
from bot.telemetry import metrics

USER_AGENT = "steward-bot"
_WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})
# A renamed or transferred repository's old name answers 301 (GET) or 307 (other methods) with
# `Location: …/repositories/{id}/…`; GitHub's docs ("Best practices for using the REST API", redirects) ask
# clients to repeat the request there as it was: same method, same body. gidgethub raises on any 3xx, so the
# transport follows them, within GitHub's API only (a token never goes to another host), a few hops at most.
_REDIRECTS = frozenset({301, 302, 307, 308})
_MAX_REDIRECTS = 5


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


# The REST API version the adapter speaks, sent as `X-GitHub-Api-Version` on every request
# (docs.github.com "API Versions"; unversioned requests get the same). Its shapes are the ones `shapes.py`
# reads; 2026-03-10 only adds `archived_at`/`archived_by` to labels, which the adapter does not read.
API_VERSION = "2022-11-28"


class SharedSession:
    """One ``aiohttp.ClientSession`` for a process's GitHub requests, keeping its connections alive.

    Made on first use: aiohttp binds a session to the running event loop, and the runtime is built before
    one runs. ``timeout`` bounds the connect (at most 5 s), each read, and the wait for a free connection,
    as the worker's httpx2 client did (``STEWARD_HTTP_TIMEOUT_SECONDS``)."""

    def __init__(self, *, timeout: float = 10.0, max_connections: int = 100) -> None:
        self._timeout = aiohttp.ClientTimeout(
            total=None, connect=timeout, sock_connect=min(5.0, timeout), sock_read=timeout
        )
        self._max_connections = max_connections
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        # (scheme, host) → the proxy the environment names for it (HTTPS_PROXY, NO_PROXY…), read once.
        self._proxies: dict[tuple[str, str | None], tuple[URL | None, aiohttp.BasicAuth | None]] = {}

    def session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._session
        if session is None or session.closed or self._loop is not loop:
            connector = aiohttp.TCPConnector(limit=self._max_connections, limit_per_host=0)
            # No cookie jar: one session serves every installation's token, and the API needs no cookies.
            session = aiohttp.ClientSession(
                connector=connector, timeout=self._timeout, cookie_jar=aiohttp.DummyCookieJar()
            )
            self._session, self._loop = session, loop
        return session

    def proxy_for(self, url: URL) -> tuple[URL | None, aiohttp.BasicAuth | None]:
        """The proxy the environment names for `url`'s host, as httpx honoured it (``HTTP(S)_PROXY``,
        ``NO_PROXY``), looked up once per host rather than on every request."""
        key = (url.scheme, url.host)
        found = self._proxies.get(key)
        if found is None:
            try:
                found = get_env_proxy_for_url(url)
            except LookupError:
                found = (None, None)
            self._proxies[key] = found
        return found

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()


# Connection failures before anything was sent: a write may be sent again after these.
_NOT_SENT = (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError)


class RetryingAPI(GitHubAPI):
    """gidgethub with Steward's retry policy, write budget and metrics around each request."""

    def __init__(
        self,
        client: SharedSession,
        *,
        policy: RetryPolicy,
        budget: WriteBudget | None,
        budget_key: str,
        base_url: str,
        oauth_token: str | None = None,
        cache: LRUCache | None = None,
        etags: EtagStore | None = None,
    ) -> None:
        super().__init__(USER_AGENT, oauth_token=oauth_token, cache=cache, base_url=base_url)
        self._client = client
        self.policy = policy
        self.budget = budget
        self.budget_key = budget_key
        # ETags kept in Redis across processes for the catch-up's `since` listings (bot.forge.etag_store).
        self.etags = etags

    async def _request(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes = b""
    ) -> tuple[int, Mapping[str, str], bytes]:
        async def send(sent: Mapping[str, str]) -> tuple[int, Mapping[str, str], bytes]:
            target = url
            for _hop in range(_MAX_REDIRECTS + 1):
                answer = await self._send(
                    method,
                    target,
                    {**sent, "x-github-api-version": API_VERSION},
                    body,
                    write=method in _WRITE_METHODS,
                    resend_ok=resendable(method, api_path(target)),
                )
                following = redirect_target(answer[0], answer[1], target, self.base_url)
                if following is None:
                    return answer
                target = following
            return answer

        if self.etags is not None and persisted(method, url):
            return await self.etags.send(self.budget_key, url, headers, send)
        return await send(headers)

    async def _send(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes, *, write: bool, resend_ok: bool
    ) -> tuple[int, Mapping[str, str], bytes]:
        """One request through the write budget (`write`), resent after a transport error unless it may
        have reached GitHub and is not `resend_ok`."""
        attempt = 0
        while True:
            attempt += 1
            # Every try of a write takes budget, a resend after a dropped connection too: it reaches GitHub
            # like the first one (tests/faults/test_forge_stalls.py).
            if write and self.budget is not None:
                await self.budget.take(self.budget_key, forge="github")
            try:
                # The URL is gidgethub's, already encoded: yarl must not re-quote it.
                target = URL(url, encoded=True)
                proxy, proxy_auth = self._client.proxy_for(target)
                # aiohttp follows no redirect: a followed 301 would turn a POST into a GET. ``_request``
                # follows GitHub's own (``redirect_target``), repeating the request as it was.
                async with self._client.session().request(
                    method,
                    target,
                    headers=headers,
                    data=body or None,
                    allow_redirects=False,
                    proxy=proxy,
                    proxy_auth=proxy_auth,
                ) as response:
                    status, response_headers = response.status, response.headers
                    content = await response.read()
            except (aiohttp.ClientError, TimeoutError) as exc:
                metrics.FORGE_CALLS.labels("github", method, "transport_error").inc()
                sent = not isinstance(exc, _NOT_SENT)
                decision = transport_error(attempt, self.policy, unsafe_to_resend=sent and not resend_ok)
                if decision.action != "retry":
                    raise ForgeUnavailable(f"{method} {api_path(url)}: {type(exc).__name__}") from None
                await asyncio.sleep(decision.delay)
                continue
            metrics.FORGE_CALLS.labels("github", method, str(status)).inc()
            metrics.note_rate_limit("github", self.budget_key, response_headers)
            return status, response_headers, content

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    async def graphql_answer(
        self, endpoint: str, query: str, variables: Mapping[str, Any], *, what: str, mutation: str | None
    ) -> dict[str, Any]:
        """GitHub's whole answer to one GraphQL request (``data`` and ``errors``: GitHub refuses a field
        with 200 and an ``errors`` entry), under the retry policy, and for a `mutation` the write budget.

        gidgethub's ``graphql()`` is not used: it raises on ``errors`` and drops the response headers the
        retry policy reads (``Retry-After``, ``X-RateLimit-*``), and a 5xx it meets is never resent, where a
        query or an idempotent mutation (``retry.resendable_graphql``) may be."""
        resend_ok = resendable_graphql(mutation)
        body = json.dumps({"query": query, "variables": dict(variables)}).encode()
        headers = sansio.create_headers(
            self.requester, accept="application/json", oauth_token=self.oauth_token
        )
        headers["content-type"] = "application/json; charset=utf-8"
        headers["content-length"] = str(len(body))
        attempt = 0
        while True:
            attempt += 1
            status, response_headers, content = await self._send(
                "POST", endpoint, headers, body, write=mutation is not None, resend_ok=resend_ok
            )
            if status == 200:
                try:
                    answer = json.loads(content)
                except ValueError:
                    answer = None
                if not isinstance(answer, dict):
                    raise ForgeError(f"{what}: GitHub's GraphQL answered something other than a JSON object")
                return answer
            decision = classify(
                status,
                response_headers,
                attempt=attempt,
                policy=self.policy,
                now=time.time(),
                resend_ok=resend_ok,
            )
            if decision.action == "retry":
                await asyncio.sleep(decision.delay)
                continue
            if decision.action == "defer":
                raise RateLimited(f"{what}: {decision.reason}", retry_after=decision.delay, status=status)
            raise status_error(status, f"{what}: {status} {_message(content)}")

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
    return urlsplit(url).path


def redirect_target(status: int, headers: Mapping[str, str], url: str, base_url: str) -> str | None:
    """Where a redirect answer sends the request, when it is one to follow: a 301, 302, 307 or 308 with a
    `Location` on the same API (scheme, host and port of `base_url`, under its path); else None (answered to
    gidgethub as it is, which raises)."""
    location = headers.get("Location") if status in _REDIRECTS else None
    if not location:
        return None
    target = urljoin(url, location)
    there, api = urlsplit(target), urlsplit(base_url)
    if (there.scheme, there.netloc) != (api.scheme, api.netloc):
        return None
    if not (there.path + "/").startswith(api.path.rstrip("/") + "/"):
        return None
    return target


def status_error(status: int, message: str) -> ForgeError:
    """The port's error for an HTTP error status."""
    if status == 404:
        return NotFound(message, status=status)
    if status == 401:
        return Unauthorized(message, status=status)
    if status == 403:
        return PermissionDenied(message, status=status)
    if status == 422:
        return ValidationFailed(message, status=status)
    if status == 429:
        return RateLimited(message, retry_after=60.0, status=status)
    if status >= 500:
        return ForgeUnavailable(message, status=status)
    return ForgeError(message, status=status)


def translate(exc: gidgethub.GitHubException, what: str) -> ForgeError:
    if isinstance(exc, gidgethub.HTTPException):
        status = int(exc.status_code)
        return status_error(status, f"{what}: {status} {exc}")
    return ForgeError(f"{what}: {exc}")


def _message(content: bytes) -> str:
    """GitHub's own words for a refusal (its ``message``), cut short."""
    try:
        data = json.loads(content)
    except ValueError:
        return ""
    message = data.get("message") if isinstance(data, dict) else None
    return message[:300] if isinstance(message, str) else ""


# GraphQL error types (GitHub's ``errors[].type``) and what the port calls them.
_GRAPHQL_REFUSALS: dict[str, tuple[type[ForgeError], int | None]] = {
    "NOT_FOUND": (NotFound, 404),
    "FORBIDDEN": (PermissionDenied, 403),
    "UNPROCESSABLE": (ValidationFailed, 422),
}


def graphql_error(errors: Any, what: str) -> ForgeError:
    """The port's error for GitHub's GraphQL ``errors`` (the first one says it): NOT_FOUND, FORBIDDEN and
    UNPROCESSABLE as NotFound, PermissionDenied and ValidationFailed; RATE_LIMITED as RateLimited; a field
    this GitHub does not have (``undefinedField``, an older GitHub Enterprise Server) as NotSupported."""
    first: dict[str, Any] = (
        errors[0] if isinstance(errors, list) and errors and isinstance(errors[0], dict) else {}
    )
    kind = str(first.get("type") or "")
    found = first.get("extensions")
    extensions: dict[str, Any] = found if isinstance(found, dict) else {}
    words = str(first.get("message") or "GraphQL error")[:300]
    message = f"{what}: {words}"
    if kind in _GRAPHQL_REFUSALS:
        error, status = _GRAPHQL_REFUSALS[kind]
        return error(message, status=status)
    if kind == "RATE_LIMITED":
        return RateLimited(message, retry_after=60.0)
    if extensions.get("code") == "undefinedField":
        return NotSupported(message)
    return ForgeError(message)


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
        known_labels: KnownLabels | None = None,
    ) -> None:
        self._api = api
        self._known_labels = known_labels if known_labels is not None else KnownLabels()
        self._web_base = web_base.rstrip("/")
        self._max_items = max_items
        self._app = app
        self._identity = identity

    @property
    def as_app(self) -> bool:
        """Whether this is an App installation (only an App may post check runs)."""
        return self._app is not None

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

    async def _graphql(self, query: str, what: str, *, mutation: str | None = None, **variables: Any) -> Any:
        """The ``data`` of a GraphQL query (or of the `mutation` it runs); GitHub's ``errors`` raise as the
        port's errors (``graphql_error``)."""
        answer = await self._api.graphql_answer(
            github_graphql_url(self._api.base_url), query, variables, what=what, mutation=mutation
        )
        if answer.get("errors"):
            raise graphql_error(answer["errors"], what)
        return answer.get("data")

    async def _write(self, method: str, url: str, what: str, data: Any = b"", **kwargs: Any) -> Any:
        call = getattr(self._api, method)
        try:
            if method == "delete":  # gidgethub's delete answers nothing; a body only where one is given
                return await call(url, **kwargs) if data == b"" else await call(url, data=data, **kwargs)
            return await call(url, data=data, **kwargs)
        except gidgethub.GitHubException as exc:
            raise translate(exc, what) from None
