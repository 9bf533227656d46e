"""GitHub's transport under gidgethub (aiohttp, one session per process) keeps what httpx did for Steward: a
redirect is answered to gidgethub, not followed (a followed 301 turns a POST into a GET); no cookie travels
from one installation's request to another's; the environment's proxy is honoured, read once per host.

The forge here is a few lines of aiohttp.web: the sandbox never answers a redirect or sets a cookie."""

from __future__ import annotations

from typing import Any

import gidgethub
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from yarl import URL

from bot.forge.github_transport import RetryingAPI, SharedSession
from bot.forge.retry import RetryPolicy


async def _forge(seen: list[tuple[str, str, str]]) -> TestServer:
    async def moved(request: web.Request) -> web.Response:
        seen.append((request.method, request.path, request.headers.get("Cookie", "")))
        raise web.HTTPMovedPermanently("/repositories/1/issues/1/comments")

    async def target(request: web.Request) -> web.Response:
        seen.append((request.method, request.path, request.headers.get("Cookie", "")))
        response = web.json_response({"id": 1})
        response.set_cookie("session", "installation-one")
        return response

    app = web.Application()
    app.router.add_post("/repos/o/r/issues/1/comments", moved)
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


async def test_a_redirect_is_not_followed_and_no_cookie_is_kept() -> None:
    seen: list[tuple[str, str, str]] = []
    server = await _forge(seen)
    shared = SharedSession(timeout=5)
    base = str(server.make_url("")).rstrip("/")
    try:
        with pytest.raises(gidgethub.RedirectionException):
            await _api(shared, base, "one").post("/repos/o/r/issues/1/comments", data={"body": "hi"})
        assert seen == [("POST", "/repos/o/r/issues/1/comments", "")], "the 301 was not followed"
        await _api(shared, base, "one").getitem("/repositories/1/issues/1/comments")
        await _api(shared, base, "two").getitem("/repositories/1/issues/1/comments")
        assert [cookie for *_, cookie in seen[1:]] == ["", ""], "no cookie travels between requests"
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
