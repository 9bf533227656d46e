"""HTTP plumbing shared by the forge APIs: errors, JSON with ETags, pagination, and the API middleware."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import math
import secrets
import time
from collections.abc import Sequence
from typing import Any, TypeVar

from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bot.sandbox.github.shapes import API_VERSIONS

from .addressing import id_form
from .addressing import is_gitea as is_gitea
from .runtime import Principal, Sandbox, rate_limit_answer

DOCS = "https://docs.github.com/rest"
T = TypeVar("T")


class ApiError(Exception):
    def __init__(self, status: int, message: str, errors: list[Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = errors


def not_found() -> ApiError:
    return ApiError(404, "Not Found")


def validation_failed(resource: str, field: str, code: str, message: str | None = None) -> ApiError:
    error: dict[str, Any] = {"resource": resource, "field": field, "code": code}
    if message:
        error["message"] = message
    return ApiError(422, "Validation Failed", [error])


def dumps(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode()


def json_response(
    request: Request, data: Any, status: int = 200, headers: dict[str, str] | None = None
) -> Response:
    """A JSON response; GitHub's GETs carry a strong ETag and answer 304 when If-None-Match matches
    (docs.github.com, "Best practices for using the REST API" › "Use conditional requests if appropriate";
    the 304 does not count against the rate limit: ``ApiMiddleware``). Gitea's JSON answers carry no ETag
    and ignore If-None-Match: its API handlers end in ``ctx.JSON(http.StatusOK, …)`` (``ListIssues``,
    ``ListRepoIssueComments`` in routers/api/v1/repo/), and only raw file downloads go through
    ``HandleGenericETagCache``."""
    body = dumps(data)
    out = dict(headers or {})
    if request.method in ("GET", "HEAD") and status == 200 and not is_gitea(request.url.path):
        etag = '"' + hashlib.sha256(body).hexdigest()[:40] + '"'
        out["ETag"] = etag
        wanted = {t.strip().removeprefix("W/") for t in request.headers.get("if-none-match", "").split(",")}
        if etag in wanted or "*" in wanted:
            return Response(status_code=304, headers=out)
    return Response(body, status_code=status, headers=out, media_type="application/json; charset=utf-8")


def no_content() -> Response:
    return Response(status_code=204)


def error_response(status: int, message: str, errors: list[Any] | None = None) -> Response:
    data: dict[str, Any] = {"message": message, "documentation_url": DOCS}
    if errors is not None:
        data["errors"] = errors
    return Response(dumps(data), status_code=status, media_type="application/json; charset=utf-8")


def gitea_error_response(request: Request, status: int, message: str) -> Response:
    """Gitea's APIError shape: {"message", "url"}."""
    data = {"message": message, "url": f"{str(request.base_url).rstrip('/')}/api/swagger"}
    return Response(dumps(data), status_code=status, media_type="application/json; charset=utf-8")


async def api_error_handler(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    if is_gitea(request.url.path):
        return gitea_error_response(request, exc.status, exc.message)
    return error_response(exc.status, exc.message, exc.errors)


async def http_error_handler(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = "Not Found" if exc.status_code == 404 else str(exc.detail)
    if is_gitea(request.url.path):
        return gitea_error_response(request, exc.status_code, message)
    return error_response(exc.status_code, message)


async def body_json(request: Request) -> Any:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except ValueError:
        raise ApiError(400, "Problems parsing JSON") from None


async def body_object(request: Request) -> dict[str, Any]:
    data = await body_json(request)
    if not isinstance(data, dict):
        raise ApiError(400, "Problems parsing JSON")
    return data


def paginate[T](request: Request, items: Sequence[T]) -> tuple[list[T], dict[str, str]]:
    """GitHub-style `page`/`per_page` (default 30, max 100) with a Link header of absolute URLs."""
    try:
        per_page = min(max(int(request.query_params.get("per_page", "30")), 1), 100)
        page = max(int(request.query_params.get("page", "1")), 1)
    except ValueError:
        per_page, page = 30, 1
    last = max(math.ceil(len(items) / per_page), 1)
    chunk = list(items[(page - 1) * per_page : page * per_page])
    # A repository's lists link their pages by the repository's id, as GitHub's do (``addressing``).
    link_path = id_form(request.url.path, request.app.state.sandbox) or request.url.path

    def url(n: int) -> str:
        params = dict(request.query_params)
        params["per_page"] = str(per_page)
        params["page"] = str(n)
        query = "&".join(f"{k}={v}" for k, v in params.items())
        return str(request.url.replace(path=link_path, query=query))

    links: list[str] = []
    if page > 1:
        links.append(f'<{url(min(page - 1, last))}>; rel="prev"')
    if page < last:
        links.append(f'<{url(page + 1)}>; rel="next"')
        links.append(f'<{url(last)}>; rel="last"')
    if page > 1:
        links.append(f'<{url(1)}>; rel="first"')
    return chunk, ({"Link": ", ".join(links)} if links else {})


def principal(request: Request) -> Principal:
    found = request.scope.get("state", {}).get("principal")
    return found if isinstance(found, Principal) else Principal(error="Requires authentication")


def require_login(request: Request) -> str:
    who = principal(request)
    if who.login is None:
        raise ApiError(401, who.error or "Bad credentials")
    return who.login


class ApiMiddleware:
    """Wraps the REST APIs (not `/_sandbox/`): auth, faults, rate-limit and request-id headers,
    the request log, and saving state after each successful write."""

    def __init__(self, app: ASGIApp, sandbox: Sandbox) -> None:
        self.app = app
        self.sandbox = sandbox

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith("/_sandbox"):
            await self.app(scope, receive, send)
            return
        method: str = scope["method"]
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        who = self.sandbox.authenticate(headers.get("authorization"))
        scope.setdefault("state", {})["principal"] = who
        entry: dict[str, Any] = {
            "method": method,
            "path": scope["path"],
            "query": scope.get("query_string", b"").decode("latin-1"),
            "status": None,
            "login": who.label,
            # When the request came (epoch seconds) and, once answered, how long it took: the benchmarks
            # time a reply from the request log (bench/reply.py).
            "at": time.time(),
        }
        self.sandbox.requests.append(entry)
        scope["state"]["log_entry"] = entry  # a handler may add to it (GraphQL names its operation)
        request_id = f"{secrets.token_hex(4).upper()}:{secrets.token_hex(4).upper()}"
        wait = None
        if not is_gitea(scope["path"]) and method not in ("GET", "HEAD") and who.label is not None:
            wait = self.sandbox.secondary_limit_wait(who.label)
        if wait is not None:
            # FORGE-FACTS "Sizes and limits": past 80 content-creating requests a minute (500 an hour) GitHub
            # answers 403 with Retry-After ("Rate limits for the REST API", secondary rate limits).
            entry["status"] = 403
            response = error_response(
                403,
                "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
            )
            response.headers["Retry-After"] = str(wait)
            response.headers["X-GitHub-Request-Id"] = request_id
            await response(scope, receive, send)
            return
        version = headers.get("x-github-api-version")
        if not is_gitea(scope["path"]) and version is not None:
            if version not in API_VERSIONS:
                entry["status"] = 400
                await version_refused(version, API_VERSIONS)(scope, receive, send)
                return
            scope["state"]["api_version"] = version
            entry["api_version"] = version
        searching = scope["path"].startswith("/search/")
        if searching and not self.sandbox.search_window(who.label, count=True)[1]:
            # Past the search limit: GitHub's primary-limit answer, for the `search` resource.
            entry["status"] = 403
            user = self.sandbox.forge.user(who.login) if who.login else None
            response = error_response(403, f"API rate limit exceeded for user ID {user.id if user else 0}.")
            for key, value in self.sandbox.search_window(who.label, count=False)[0].items():
                response.headers[key] = value
            response.headers["X-GitHub-Request-Id"] = request_id
            await response(scope, receive, send)
            return
        fault = self.sandbox.take_fault(method, scope["path"], who.label)
        if fault is not None:
            entry["fault"] = True
            latency = fault.latency()
            if latency > 0:
                entry["delay"] = round(latency, 3)
                await asyncio.sleep(latency)
            if fault.passthrough:
                fault = None
        if fault is not None:
            if fault.reset:
                # Nothing applied: the connection is cut before a complete answer (a reset on the way in).
                entry["status"] = "reset"
                promised = [(b"content-type", b"application/json"), (b"content-length", b"64")]
                await send({"type": "http.response.start", "status": 200, "headers": promised})
                return
            if fault.hang and fault.apply:
                entry["applied"] = await _apply_silently(self.app, scope, receive)
                if entry["applied"] < 400 and method not in ("GET", "HEAD"):
                    self.sandbox.save()
            if fault.hang:
                await _hang(receive, fault.hang_seconds)
                entry["status"] = "hang"
                return
            if fault.rate_limit is not None:
                status, limit_headers, limit_body = rate_limit_answer(
                    fault.rate_limit, fault.remaining(), time.time()
                )
                entry["status"] = status
                entry["rate_limited"] = fault.rate_limit
                limited = (
                    Response(limit_body, status_code=status, media_type="text/html")
                    if isinstance(limit_body, str)
                    else Response(dumps(limit_body), status_code=status, media_type="application/json")
                )
                if not is_gitea(scope["path"]):
                    limited.headers["X-GitHub-Request-Id"] = request_id
                for key, value in limit_headers.items():
                    limited.headers[key] = value
                await limited(scope, receive, send)
                return
            if fault.apply or fault.drop:
                applied = await _apply_silently(self.app, scope, receive)
                if applied < 400 and method not in ("GET", "HEAD"):
                    self.sandbox.save()
                entry["applied"] = applied
            if fault.drop:
                # Headers promising a body that never comes, then the connection closes: the client sees a
                # reset mid-answer, as when a proxy or the network drops it after the forge did the work.
                entry["status"] = "dropped"
                promised = [(b"content-type", b"application/json"), (b"content-length", b"64")]
                await send({"type": "http.response.start", "status": 200, "headers": promised})
                return
            extra = {**self.sandbox.rate_headers(who.label, count=True), "X-GitHub-Request-Id": request_id}
            response = (
                Response(
                    dumps(fault.body), status_code=fault.status, media_type="application/json; charset=utf-8"
                )
                if fault.body is not None
                else error_response(fault.status, "Sandbox fault")
            )
            for key, value in {**extra, **fault.headers}.items():
                response.headers[key] = value
            entry["status"] = fault.status
            await response(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start" and is_gitea(scope["path"]):
                entry["status"] = int(message["status"])  # Gitea sends no GitHub headers
            elif message["type"] == "http.response.start":
                status = int(message["status"])
                entry["status"] = status
                out = MutableHeaders(scope=message)
                limits = (
                    self.sandbox.search_window(who.label, count=False)[0]
                    if searching
                    else self.sandbox.rate_headers(who.label, count=status != 304)
                )
                for key, value in limits.items():
                    out[key] = value
                out["X-GitHub-Request-Id"] = request_id
                out["X-GitHub-Media-Type"] = "github.v3; format=json"
            await send(message)

        await self.app(scope, receive, send_with_headers)
        entry["seconds"] = round(time.time() - entry["at"], 6)
        status = entry["status"]
        if method not in ("GET", "HEAD") and isinstance(status, int) and status < 400:
            self.sandbox.save()


def version_refused(version: str, known: tuple[str, ...]) -> Response:
    """GitHub's 400 for an `X-GitHub-Api-Version` it does not serve (docs.github.com "API Versions": "If you
    specify an API version that is no longer supported, you will receive a 400 error"; wording as GitHub
    answered it, quoted in expipiplus1/update-nix-fetchgit#79 — with one version listed; the sandbox lists
    each it serves, newest first)."""
    listed = ", ".join(f'"{v}" (most recent)' if i == 0 else f'"{v}"' for i, v in enumerate(reversed(known)))
    message = (
        f'The version you specified in the "X-GitHub-API-Version" request header, "{version}", is not a '
        f"supported version. The following versions are currently supported: {listed}."
    )
    body = {"message": message, "documentation_url": "https://docs.github.com/rest"}
    return Response(dumps(body), status_code=400, media_type="application/json; charset=utf-8")


async def _apply_silently(app: ASGIApp, scope: Scope, receive: Receive) -> int:
    """Run the request through the API and swallow its answer; returns the status it would have had."""
    status = 0

    async def swallow(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])

    await app(scope, receive, swallow)
    return status


async def _hang(receive: Receive, limit: float) -> None:
    """Never answer: wait until the client gives up (disconnects) or `limit` seconds pass."""

    async def until_disconnect() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(until_disconnect(), limit)
