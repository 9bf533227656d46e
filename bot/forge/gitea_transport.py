"""Gitea's transport: py-gitea's raw ``requests_*`` helpers on a dedicated, bounded thread pool, under
Steward's retry policy and write budget. ``GiteaCalls`` is what every part of the Gitea adapter builds on.

py-gitea speaks HTTP through whatever its ``requests`` attribute is; Steward gives it ``_Transport``, a
requests-like shim over the standard library's ``http.client`` with one keep-alive connection per pool
thread. requests itself spent about 3.5× the CPU of a bare ``http.client`` per request (hooks, cookies,
adapters, the environment read per request), and its answer objects decode text by sniffing the charset;
measured side by side in ``bench/client_overhead.py`` (docs/performance.md).

py-gitea raises exceptions that carry only a message; the status and headers the retry policy needs
(``Retry-After``, ``X-RateLimit-*``) are read from the transport's last response on the calling thread.
"""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import os
import select
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote, urlencode, urljoin, urlsplit

import requests
from gitea import Gitea
from gitea.exceptions import GiteaApiException
from requests.utils import DEFAULT_CA_BUNDLE_PATH, select_proxy

from bot.forge import (
    ForgeError,
    ForgeUnavailable,
    NotFound,
    PermissionDenied,
    RateLimited,
    RepoRef,
    TooManyItems,
    Unauthorized,
    User,
    ValidationFailed,
)
from bot.forge.retry import RetryPolicy, classify, resendable, transport_error
from bot.forge.shapes import budget_key
from bot.forge.write_budget import WriteBudget
from bot.telemetry import metrics

USER_AGENT = "steward-bot"
# Gitea's default [api] MAX_RESPONSE_ITEMS; a larger `limit` is silently capped by the server.
PAGE_LIMIT = 50
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_MAX_REDIRECTS = 30  # requests' limit


@dataclass
class _HTTPFailure(Exception):
    status: int
    headers: Mapping[str, str]
    message: str


@dataclass
class _TransportFailure(Exception):
    """No answer. ``sent`` False only when the connection was never made (refused, unresolvable, the
    connect, the proxy's tunnel or the TLS handshake failed or timed out): nothing reached Gitea. Once a
    request has been written to a connection it may have reached Gitea, whatever went wrong after."""

    kind: str
    sent: bool


class _Response:
    """An answer, with the names py-gitea and the adapter read of ``requests.Response``."""

    __slots__ = ("_text", "content", "headers", "status_code", "url")

    def __init__(self, status_code: int, headers: http.client.HTTPMessage, content: bytes, url: str) -> None:
        self.status_code = status_code
        self.headers = headers
        self.content = content
        self.url = url
        self._text: str | None = None

    @property
    def ok(self) -> bool:
        return self.status_code < 400

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self.content.decode(self.headers.get_content_charset() or "utf-8", errors="replace")
        return self._text

    def json(self) -> Any:
        return json.loads(self.content)


def _dropped(conn: http.client.HTTPConnection) -> bool:
    """Whether an idle keep-alive connection was closed by the other end (readable while idle: EOF or
    junk), checked before a request is written to it, as urllib3 does."""
    sock = conn.sock
    if sock is None:
        return True
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


class _Transport:
    """What py-gitea calls as ``requests``: ``get/post/patch/put/delete(url, headers=, params=, data=)``,
    answered over ``http.client`` with one keep-alive connection per thread (the pool is the executor's
    threads). Connect timeout and read timeout apart; the User-Agent on every request; the environment's
    proxy (``HTTP(S)_PROXY``, ``ALL_PROXY``, ``NO_PROXY``) and CA bundle (``REQUESTS_CA_BUNDLE``,
    ``CURL_CA_BUNDLE``; certifi's otherwise, as requests) read once, when it is made; TLS always verified.
    The last response of each thread is remembered (py-gitea's exceptions do not carry it)."""

    trust_env = False  # the environment is read once, in __init__, never per request

    def __init__(self, base_url: str, *, timeout: tuple[float, float]) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"STEWARD_GITEA_URL must be an http(s) URL, not {base_url!r}")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._https else 80)
        # The origin as py-gitea writes it (it prefixes every endpoint with the base URL as given).
        self._origin = "/".join(base_url.split("/", 3)[:3])
        self._connect_timeout, self._read_timeout = timeout
        found = requests.Session().merge_environment_settings(base_url, {}, None, None, None)
        self.proxies: dict[str, str] = dict(found["proxies"])
        # REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE, or True (certifi's bundle, as requests); never off.
        self.verify: bool | str = found["verify"] if isinstance(found["verify"], str) else True
        self._headers = {"User-Agent": USER_AGENT, "Accept": "*/*"}
        self._proxy: tuple[str, int] | None = None
        self._tunnel_headers: dict[str, str] = {}
        proxy = select_proxy(base_url, self.proxies)
        if proxy:
            pp = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
            if pp.scheme != "http" or not pp.hostname:
                raise ValueError(f"only http:// proxies are supported for Gitea, not {proxy!r}")
            self._proxy = (pp.hostname, pp.port or 80)
            if pp.username is not None:
                credentials = f"{unquote(pp.username)}:{unquote(pp.password or '')}"
                auth = "Basic " + base64.b64encode(credentials.encode()).decode()
                if self._https:
                    self._tunnel_headers["Proxy-Authorization"] = auth
                else:
                    self._headers["Proxy-Authorization"] = auth
        self._ssl: ssl.SSLContext | None = None
        if self._https:
            where = self.verify if isinstance(self.verify, str) else DEFAULT_CA_BUNDLE_PATH
            self._ssl = ssl.create_default_context(
                cafile=None if os.path.isdir(where) else where, capath=where if os.path.isdir(where) else None
            )
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open: set[http.client.HTTPConnection] = set()

    def _new_connection(self) -> http.client.HTTPConnection:
        host, port = self._proxy or (self._host, self._port)
        conn: http.client.HTTPConnection
        if self._ssl is not None:
            conn = http.client.HTTPSConnection(host, port, timeout=self._connect_timeout, context=self._ssl)
            if self._proxy is not None:
                conn.set_tunnel(self._host, self._port, headers=self._tunnel_headers)
        else:
            conn = http.client.HTTPConnection(host, port, timeout=self._connect_timeout)
        try:
            conn.connect()
        except TimeoutError:
            conn.close()
            raise _TransportFailure("ConnectTimeout", sent=False) from None
        except (OSError, http.client.HTTPException):
            conn.close()
            raise _TransportFailure("ConnectError", sent=False) from None
        assert conn.sock is not None
        conn.sock.settimeout(self._read_timeout)
        with self._lock:
            self._open.add(conn)
        return conn

    def _discard(self, conn: http.client.HTTPConnection) -> None:
        conn.close()
        with self._lock:
            self._open.discard(conn)
        self._local.conn = None

    def _connection(self) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is not None and _dropped(conn):
            self._discard(conn)
            conn = None
        if conn is None:
            conn = self._new_connection()
            self._local.conn = conn
        return conn

    def request(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        data: str | bytes | None = None,
        **_: Any,
    ) -> _Response:
        self._local.response = None
        if not url.startswith(self._origin + "/"):
            raise ValueError(f"{url!r} is not on {self._origin}")
        if params:
            query = urlencode([(k, v) for k, v in params.items() if v is not None], doseq=True)
            if query:
                url += ("&" if "?" in url else "?") + query
        body = data.encode() if isinstance(data, str) else data
        sent = {**self._headers, **headers} if headers else self._headers
        response = self._send(method, url, body, sent)
        # Redirects are followed as requests follows them (a renamed or transferred repository answers 307
        # with its new address), within the same Gitea; one to another host is answered as it is.
        for _hop in range(_MAX_REDIRECTS):
            location = response.headers.get("Location")
            if response.status_code not in _REDIRECTS or not location:
                break
            url = urljoin(url, location)
            if not url.startswith(self._origin + "/"):
                break
            status = response.status_code
            if (status in (302, 303) and method != "HEAD") or (status == 301 and method == "POST"):
                method = "GET"
            if status not in (307, 308):  # only these keep the body
                body = None
                sent = {k: v for k, v in sent.items() if k.lower() not in ("content-type", "content-length")}
            response = self._send(method, url, body, sent)
        self._local.response = response
        return response

    def _send(self, method: str, url: str, body: bytes | None, headers: Mapping[str, str]) -> _Response:
        target = url if self._proxy is not None and self._ssl is None else url[len(self._origin) :]
        conn = self._connection()
        try:
            conn.request(method, target, body=body, headers=headers)
            answer = conn.getresponse()
            content = answer.read()
        except TimeoutError:
            self._discard(conn)
            raise _TransportFailure("ReadTimeout", sent=True) from None
        except (OSError, http.client.HTTPException) as exc:
            self._discard(conn)
            raise _TransportFailure(type(exc).__name__, sent=True) from None
        if conn.sock is None:  # the server closed it (Connection: close)
            self._discard(conn)
        return _Response(answer.status, answer.headers, content, url)

    def get(self, url: str, **kwargs: Any) -> _Response:
        return self.request("GET", url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> _Response:
        return self.request("POST", url, **kwargs)

    def patch(self, url: str, **kwargs: Any) -> _Response:
        return self.request("PATCH", url, **kwargs)

    def put(self, url: str, **kwargs: Any) -> _Response:
        return self.request("PUT", url, **kwargs)

    def delete(self, url: str, **kwargs: Any) -> _Response:
        return self.request("DELETE", url, **kwargs)

    @property
    def last_response(self) -> _Response | None:
        return getattr(self._local, "response", None)

    def close(self) -> None:
        with self._lock:
            conns, self._open = list(self._open), set()
        for conn in conns:
            conn.close()


def _message(response: _Response | None) -> str:
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


def translate(failure: _HTTPFailure, what: str) -> ForgeError:
    status = failure.status
    message = f"{what}: {status} {failure.message}"
    if status == 404:
        return NotFound(message, status=status)
    if status == 401:
        return Unauthorized(message, status=status)
    if status == 403:
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
        # One keep-alive connection per pool thread: the connection pool is sized to the thread pool.
        self._session = _Transport(self._base_url, timeout=(connect, timeout))
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
        except _TransportFailure:
            metrics.FORGE_CALLS.labels("gitea", method, "transport_error").inc()
            raise
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
