"""The catch-up's ETag store (``bot.forge.etag_store``) against a real Redis: what it keeps, what it sends,
and that it is only ever a cache."""

from __future__ import annotations

from collections.abc import Mapping

from redis.asyncio import Redis

from bot.forge.etag_store import EtagStore, catching_up, persisted

URL = "https://api.github.com/repos/o/r/issues/comments?since=2026-12-01T12:00:00Z&per_page=100"
BODY = b'[{"id": 1, "body": "hello"}]'


class Forge:
    """A forge answering one page, 304 when asked with its ETag (as GitHub does)."""

    def __init__(self, etag: str = '"abc"', body: bytes = BODY) -> None:
        self.etag, self.body = etag, body
        self.asked: list[dict[str, str]] = []

    async def __call__(self, headers: Mapping[str, str]) -> tuple[int, Mapping[str, str], bytes]:
        self.asked.append(dict(headers))
        rate = {"x-ratelimit-remaining": str(4999 - len(self.asked))}
        if headers.get("if-none-match") == self.etag:
            return 304, {"etag": self.etag, **rate}, b""
        link = '<https://api.github.com/x?page=2>; rel="next"'
        return 200, {"etag": self.etag, "content-type": "application/json", "link": link, **rate}, self.body


def test_only_the_catch_ups_listings_are_kept() -> None:
    assert persisted("GET", URL)
    assert persisted(
        "GET", "https://ghe.example/api/v3/repos/o/r/issues?state=open&since=2026-12-01T00:00:00Z"
    )
    assert not persisted("GET", "https://api.github.com/repos/o/r/issues?state=open&per_page=100")
    assert not persisted(
        "GET", "https://api.github.com/repos/o/r/issues/3/comments?since=2026-12-01T00:00:00Z"
    )
    assert not persisted("POST", URL)
    labelled = "https://api.github.com/repos/o/r/issues?state=open&per_page=100&labels=steward%3Aconfig-error"
    with catching_up():
        assert persisted("GET", labelled), "while the catch-up runs, every repository listing is kept"
        assert persisted("GET", "https://api.github.com/repos/o/r/milestones?state=all&per_page=100")
        assert not persisted("GET", "https://api.github.com/repos/o/r/issues/3"), "not a listing"
        assert persisted("GET", "https://api.github.com/repos/o/r/issues/3/sub_issues?per_page=100")
    assert not persisted("GET", "https://api.github.com/repos/o/r/issues/3/sub_issues?per_page=100")
    assert not persisted("GET", labelled), "event handlers keep only the in-memory cache"


async def test_a_second_process_asks_with_the_kept_etag_and_gets_the_kept_body(redis_url: str) -> None:
    first, second = Redis.from_url(redis_url), Redis.from_url(redis_url)
    try:
        forge = Forge()
        status, _, body = await EtagStore(first).send("github:installation:7", URL, {"accept": "x"}, forge)
        assert (status, body) == (200, BODY) and "if-none-match" not in forge.asked[0]
        key = EtagStore(first).key("github:installation:7", URL)
        await first.expire(key, 100)
        status, headers, body = await EtagStore(second).send("github:installation:7", URL, {}, forge)
        assert await first.ttl(key) > 100, "a page still in use stays kept"
        assert forge.asked[1]["if-none-match"] == '"abc"'
        assert (status, body) == (200, BODY), "the 304 is answered with the kept body"
        assert headers["content-type"] == "application/json" and 'rel="next"' in headers["link"]
        assert headers["x-ratelimit-remaining"] == "4997", "the rate limit is the 304's own"
        await EtagStore(second).send("github:installation:8", URL, {}, forge)
        assert "if-none-match" not in forge.asked[2], "another installation's ETag is never sent"
        changed = Forge(etag='"def"', body=b"[]")
        assert (await EtagStore(second).send("github:installation:7", URL, {}, changed))[2] == b"[]"
        assert 0 < await first.ttl(key) <= 12 * 3600
    finally:
        await first.aclose()
        await second.aclose()


async def test_it_is_only_a_cache_too_large_or_damaged_entries_are_asked_for_whole(redis_url: str) -> None:
    client = Redis.from_url(redis_url)
    try:
        small = EtagStore(client, max_bytes=64)
        large = Forge(body=b"[" + b",".join(b'{"id": %d}' % n for n in range(500)) + b"]")
        await small.send("tok", URL, {}, large)
        assert await client.get(small.key("tok", URL)) is None, "a body over the cap is not kept"
        await client.set(EtagStore(client).key("tok", URL), b"not zlib")
        forge = Forge()
        assert (await EtagStore(client).send("tok", URL, {}, forge))[0] == 200
        assert "if-none-match" not in forge.asked[0]
    finally:
        await client.aclose()
