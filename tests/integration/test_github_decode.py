"""GitHub's answers are decoded once, by orjson, and exactly as gidgethub decodes them: the same data, the
same next page, the same rate limit, the same ETag cache, the same exceptions (``decipher`` and
``RetryingAPI._make_request`` in bot/forge/github_transport.py). gidgethub's own decoding is reached only for
what it alone handles (an error status, another content type, a body orjson refuses or would read otherwise).

The forge here is a few lines of aiohttp.web."""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable
from typing import Any

import gidgethub
import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from gidgethub import sansio
from gidgethub.abc import GitHubAPI

from bot.forge import github_transport
from bot.forge.github_transport import LRUCache, RetryingAPI, SharedSession, decipher
from bot.forge.retry import RetryPolicy

ISSUE = {"number": 1, "title": "Déjà vu ✓", "labels": [{"name": "bug"}], "body": None, "big": 2**53 + 1}
RATE = {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "4999", "x-ratelimit-reset": "1700000000"}


async def _forge(seen: list[str]) -> TestServer:
    async def issue(request: web.Request) -> web.Response:
        seen.append(request.path)
        if request.headers.get("if-none-match") == '"v1"':
            return web.Response(status=304, headers={"etag": '"v1"', **RATE})
        return web.json_response(ISSUE, headers={"etag": '"v1"', **RATE})

    async def page(request: web.Request) -> web.Response:
        seen.append(request.path)
        n = int(request.query.get("page", "1"))
        link = {"link": f'<{request.url.with_query(page=2)}>; rel="next"'} if n == 1 else {}
        return web.json_response([{"id": n * 10 + i} for i in range(2)], headers={**link, **RATE})

    async def missing(request: web.Request) -> web.Response:
        return web.json_response({"message": "Not Found"}, status=404, headers=RATE)

    async def invalid(request: web.Request) -> web.Response:
        return web.json_response(
            {"message": "Validation Failed", "errors": [{"code": "missing_field", "field": "title"}]},
            status=422,
        )

    app = web.Application()
    app.router.add_get("/repos/o/r/issues/1", issue)
    app.router.add_get("/repos/o/r/issues", page)
    app.router.add_get("/repos/o/r/issues/2", missing)
    app.router.add_post("/repos/o/r/issues", invalid)
    server = TestServer(app)
    await server.start_server()
    return server


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How often orjson and gidgethub's own decoding decode an answer."""
    calls = {"orjson": 0, "gidgethub": 0}
    real_loads, real_decipher = orjson.loads, sansio.decipher_response

    def loads(data: Any) -> Any:
        calls["orjson"] += 1
        return real_loads(data)

    def gidgethub_decipher(*args: Any) -> Any:
        calls["gidgethub"] += 1
        return real_decipher(*args)

    monkeypatch.setattr(github_transport.orjson, "loads", loads)
    monkeypatch.setattr(sansio, "decipher_response", gidgethub_decipher)
    return calls


async def test_an_answer_is_decoded_once_by_orjson_with_its_pages_and_etag(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[str] = []
    server = await _forge(seen)
    shared = SharedSession(timeout=5)
    base = str(server.make_url("")).rstrip("/")
    api = RetryingAPI(
        shared,
        policy=RetryPolicy(2, 0.01, 0.1),
        budget=None,
        budget_key="t",
        base_url=base,
        oauth_token="t",
        cache=LRUCache(),
    )
    calls = _counting(monkeypatch)
    try:
        assert await api.getitem("/repos/o/r/issues/1") == ISSUE
        assert calls == {"orjson": 1, "gidgethub": 0}, "one answer, decoded once, by orjson"
        assert api.rate_limit is not None and api.rate_limit.remaining == 4999
        assert await api.getitem("/repos/o/r/issues/1") == ISSUE, "a 304 gives the cached data"
        assert calls["orjson"] == 1, "a 304 is not decoded"
        items = [item async for item in api.getiter("/repos/o/r/issues")]
        assert items == [{"id": 10}, {"id": 11}, {"id": 20}, {"id": 21}], "the next page was followed"
        assert calls == {"orjson": 3, "gidgethub": 0}
        with pytest.raises(gidgethub.BadRequest) as missing:
            await api.getitem("/repos/o/r/issues/2")
        assert missing.value.status_code == 404 and str(missing.value) == "Not Found"
        with pytest.raises(gidgethub.InvalidField) as invalid:
            await api.post("/repos/o/r/issues", data={"title": ""})
        assert str(invalid.value) == "Validation Failed for 'title'"
        assert calls["gidgethub"] == 2, "an error is gidgethub's to decode and raise, as before"
    finally:
        await shared.aclose()
        await server.close()


JSON = "application/json; charset=utf-8"
CASES: list[tuple[int, dict[str, str], bytes]] = [
    (200, {"content-type": JSON, **RATE}, orjson.dumps(ISSUE)),
    (200, {"content-type": "application/json", "link": '<https://x/?page=3>; rel="next"'}, b"[1, 2]"),
    (201, {"content-type": "Application/JSON; charset=UTF-8"}, b'{"id": 5}'),
    (204, {"content-type": JSON}, b""),
    (200, {}, b'{"a": 1}'),
    (200, {"content-type": "text/plain"}, b"hello"),
    (200, {"content-type": "application/vnd.github.diff; charset=utf-8"}, b"diff --git"),
    (200, {"content-type": JSON}, b'{"n": NaN}'),  # json reads it; orjson refuses: gidgethub's decodes it
    (200, {"content-type": JSON}, b'{"big": 123456789012345678901234567890}'),  # past 64 bits
    (200, {"content-type": JSON}, b'{"n": -9223372036854775809, "s": "x"}'),
    (200, {"content-type": JSON}, b'{"n": 1e400}'),
    (200, {"content-type": JSON}, b'["\\ud800"]'),
    (200, {"content-type": JSON}, b'{"a": 1, "a": 2}'),
]


@pytest.mark.parametrize("status,headers,body", CASES)
def test_decipher_answers_as_gidgethub_does(status: int, headers: dict[str, str], body: bytes) -> None:
    def summary(found: tuple[Any, sansio.RateLimit | None, str | None]) -> Any:
        data, rate, more = found
        return repr(data), rate and (rate.limit, rate.remaining, rate.reset_datetime), more

    assert summary(decipher(status, headers, body)) == summary(
        sansio.decipher_response(status, headers, body)
    )


@pytest.mark.parametrize("body", [b"{", b"\xff\xfe"])
def test_a_body_that_is_not_json_raises_as_gidgethub_raises(body: bytes) -> None:
    def error(call: Callable[[], Any]) -> type[BaseException]:
        with pytest.raises(Exception) as caught:
            call()
        return caught.type

    headers = {"content-type": JSON}
    assert error(lambda: decipher(200, headers, body)) is error(
        lambda: sansio.decipher_response(200, headers, body)
    )


def test_gidgethubs_request_and_decoding_are_the_ones_copied() -> None:
    """``RetryingAPI._make_request`` is gidgethub 6.0's, but for its decoding: a gidgethub that changes these
    must be read and copied again (then update the digests)."""
    digests = {
        "GitHubAPI._make_request": (
            GitHubAPI._make_request,
            "28f282b5a7c8639e37fb7cb729f8987d27791172b4439245854a962db1ae450c",
        ),
        "sansio.decipher_response": (
            sansio.decipher_response,
            "bd5e841ac19b087e01ce09c9306f19b38114f32d403e626a04805f737b9f97d9",
        ),
        "sansio._decode_body": (
            sansio._decode_body,
            "376b51d7cc73a9bfedba2510d82a2e794ad98db75967eeef09a7e6f70df5a200",
        ),
    }
    for name, (function, digest) in digests.items():
        assert hashlib.sha256(inspect.getsource(function).encode()).hexdigest() == digest, name
