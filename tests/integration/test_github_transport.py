"""GitHub's transport under gidgethub (aiohttp, one session per process): GitHub's redirect for a renamed
repository is followed as GitHub asks, the same request (method and body) repeated at the new address, and
never to another host; no cookie travels from one installation's request to another's; the environment's
proxy is honoured, read once per host.

The forge here is a few lines of aiohttp.web: the sandbox sets no cookie (its renames' redirects are followed
end to end in tests/e2e/test_rename_e2e.py)."""

from __future__ import annotations

from typing import Any

import gidgethub
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from yarl import URL

from bot.forge.github_transport import RetryingAPI, SharedSession
from bot.forge.retry import RetryPolicy


async def _forge(seen: list[tuple[str, str, str, bytes]]) -> TestServer:
    async def moved(request: web.Request) -> web.Response:
        seen.append((request.method, request.path, request.headers.get("Cookie", ""), await request.read()))
        # As GitHub answers a renamed repository's old name: 301 to a GET, 307 to other methods.
        if request.method == "GET":
            raise web.HTTPMovedPermanently("/repositories/1/issues/1/comments")
        raise web.HTTPTemporaryRedirect(str(request.url.with_path("/repositories/1/issues/1/comments")))

    async def away(request: web.Request) -> web.Response:
        seen.append((request.method, request.path, "", b""))
        raise web.HTTPTemporaryRedirect("http://elsewhere.invalid/repositories/1/issues/1/comments")

    async def target(request: web.Request) -> web.Response:
        seen.append((request.method, request.path, request.headers.get("Cookie", ""), await request.read()))
        response = web.json_response({"id": 1}, status=201 if request.method == "POST" else 200)
        response.set_cookie("session", "installation-one")
        return response

    app = web.Application()
    app.router.add_route("*", "/repos/o/r/issues/1/comments", moved)
    app.router.add_route("*", "/repos/o/gone/issues/1/comments", away)
    app.router.add_route("*", "/repositories/1/issues/1/comments", target)
    server = TestServer(app)
    await server.start_server()
    return server


def _api(shared: SharedSession, base: str, token: str) -> RetryingAPI:
    return RetryingAPI(
        shared,
        policy=RetryPolicy(2, 0.01, 0.1),
        budget=None,
        budget_key=token,
        base_url=base,
        oauth_token=token,
    )


async def test_githubs_redirect_is_followed_with_the_same_request_and_no_cookie_is_kept() -> None:
    seen: list[tuple[str, str, str, bytes]] = []
    server = await _forge(seen)
    shared = SharedSession(timeout=5)
    base = str(server.make_url("")).rstrip("/")
    try:
        made = await _api(shared, base, "one").post("/repos/o/r/issues/1/comments", data={"body": "hi"})
        assert made == {"id": 1}
        assert [(m, p, b) for m, p, _, b in seen] == [
            ("POST", "/repos/o/r/issues/1/comments", b'{"body": "hi"}'),
            ("POST", "/repositories/1/issues/1/comments", b'{"body": "hi"}'),
        ], "the 307 was followed with the same method and body"
        seen.clear()
        await _api(shared, base, "one").getitem("/repos/o/r/issues/1/comments")
        await _api(shared, base, "two").getitem("/repositories/1/issues/1/comments")
        assert [p for _, p, _, _ in seen] == [
            "/repos/o/r/issues/1/comments",
            "/repositories/1/issues/1/comments",
            "/repositories/1/issues/1/comments",
        ]
        assert [cookie for _, _, cookie, _ in seen] == ["", "", ""], "no cookie travels between requests"
        seen.clear()
        with pytest.raises(gidgethub.RedirectionException):
            await _api(shared, base, "one").post("/repos/o/gone/issues/1/comments", data={"body": "hi"})
        assert [p for _, p, _, _ in seen] == ["/repos/o/gone/issues/1/comments"], "not to another host"
    finally:
        await shared.aclose()
        await server.close()


def test_the_environments_proxy_is_honoured_and_no_proxy_exempts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "ghe.internal")
    shared = SharedSession()
    proxy: Any
    proxy, _ = shared.proxy_for(URL("https://api.github.com/repos/o/r"))
    assert proxy == URL("http://proxy.example:3128")
    assert shared.proxy_for(URL("https://ghe.internal/api/v3/repos/o/r")) == (None, None)
    monkeypatch.delenv("HTTPS_PROXY")
    assert shared.proxy_for(URL("https://api.github.com/user"))[0] == proxy, "read once per host"
