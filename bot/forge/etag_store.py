"""ETags that outlive the process, for the catch-up's listings (issue 26).

Every `steward reconcile` is a new process, and a GitHub App builds a client per event, so gidgethub's
in-memory ETag cache never sees the listing it asked for an hour ago. This store keeps, in Redis, the ETag of
each page of the listings the catch-up reads — the issues and comments updated since the window began
(``GET /repos/{o}/{r}/issues?since=…``, ``GET /repos/{o}/{r}/issues/comments?since=…``), and while it runs
(``catching_up``) every other listing of the repository's issues, milestones and hooks its capabilities look
at — with the body it validates (compressed, at most ``MAX_BYTES``, kept ``TTL_SECONDS`` from its last
use), keyed by forge, token or installation, and URL. The next run asks with ``If-None-Match``; GitHub
answers an unchanged page 304, and the transport hands gidgethub the kept body as if GitHub had sent it.
docs.github.com, "Best practices for using the REST API" › "Use conditional requests if appropriate":
"Making a conditional request does not count against your primary rate limit if a 304 response is returned
and the request was made while correctly authorized with an Authorization header."

Gitea's API does not answer conditional requests on these listings (``ListIssues`` and
``ListRepoIssueComments`` in routers/api/v1/repo/ end in ``ctx.JSON(http.StatusOK, …)``; only raw file
downloads go through ``HandleGenericETagCache``), so only the GitHub transport uses this store.

The store is a cache: a Redis error, a missing or damaged entry, or a body over the cap only means the
request is sent without ``If-None-Match``; a read never fails because of it.
"""

from __future__ import annotations

import hashlib
import json
import re
import zlib
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from typing import Any, cast
from urllib.parse import parse_qsl, unquote, urlsplit

import httpx2
from redis.exceptions import RedisError

PREFIX = "steward:etag"
# A catch-up's listings start on a six-hour grid (``bot.catchup.comments.listing_since``): an entry outlives
# its slot.
TTL_SECONDS = 12 * 3600
# Compressed bytes of one page's body; a larger page is not kept (it is asked for whole next time).
MAX_BYTES = 512 * 1024
# The headers gidgethub reads from a page besides the rate limit: how to decode it and where the next is.
_KEPT_HEADERS = ("content-type", "link")
# A repository's collections: issues (by label, by state, since), comments, milestones, hooks, and an issue's
# sub-issues (the refinement's catch-up lists each refined bug's: handlers.bug_refinement.bot).
# And what Steward is installed on (``bot.catchup.installed``): the token's repositories, the App's
# installations and each installation's repositories.
_LISTING = re.compile(
    r"^(?:/api/v3)?(?:/repos/[^/]+/[^/]+/(?:issues|issues/comments|issues/[0-9]+/sub_issues|milestones|hooks)"
    r"|/user/repos|/app/installations|/installation/repositories)$"
)
# Set while the catch-up runs (``catching_up``): every listing it reads is kept, not only the `since` ones —
# the dashboards and state labels each capability looks for are the same URLs every hour too. Event handlers
# keep using gidgethub's in-memory cache only.
_catching_up: ContextVar[bool] = ContextVar("steward_catching_up", default=False)

Answer = tuple[int, Mapping[str, str], bytes]
Send = Callable[[Mapping[str, str]], Awaitable[Answer]]


@contextmanager
def catching_up() -> Iterator[None]:
    """Inside: the listings read are the catch-up's, and their ETags are kept across processes."""
    token = _catching_up.set(True)
    try:
        yield
    finally:
        _catching_up.reset(token)


def persisted(method: str, url: str) -> bool:
    """Whether this request is one of the catch-up's listings, whose ETags the store keeps: a `since`
    listing of issues or comments, or any repository listing read while the catch-up runs."""
    # Asked of every request the GitHub transport sends: the standard library's split, not a URL object
    # (httpx2.URL validated the host, an IP address parse included, each time).
    if method != "GET":
        return False
    parts = urlsplit(url)
    path = unquote(parts.path)
    if not _LISTING.match(path):
        return False
    return _catching_up.get() or (
        any(name == "since" for name, _ in parse_qsl(parts.query, keep_blank_values=True))
        and not path.endswith(("/milestones", "/hooks"))
    )


class EtagStore:
    def __init__(
        self, redis: Any, *, forge: str = "github", ttl: int = TTL_SECONDS, max_bytes: int = MAX_BYTES
    ) -> None:
        self._redis = redis
        self._forge = forge
        self._ttl = ttl
        self._max_bytes = max_bytes

    def key(self, who: str, url: str) -> str:
        """``who``: the token's digest or the App installation (never a token); an ETag GitHub gave one
        credential is not asked for with another."""
        digest = hashlib.sha256(url.encode()).hexdigest()[:32]
        return f"{PREFIX}:{self._forge}:{who}:{digest}"

    async def send(self, who: str, url: str, headers: Mapping[str, str], send: Send) -> Answer:
        """Send a listing's GET through ``send``, conditional on the kept ETag; a 304 is answered with the
        kept body (status 200 and the 304's own rate-limit headers, so gidgethub reads it as usual)."""
        key = self.key(who, url)
        # gidgethub asks conditionally itself when it has the page in memory; then it also has the body.
        own = "if-none-match" not in {name.lower() for name in headers}
        kept = await self._load(key) if own else None
        if kept is not None:
            headers = {**headers, "if-none-match": kept[0]}
        status, response_headers, content = await send(headers)
        if status == 304 and kept is not None:
            await self._touch(key)  # a listing asked for every hour stays kept while it does not change
            merged = httpx2.Headers(dict(response_headers))
            for name, value in kept[1].items():
                merged[name] = value
            return 200, cast(Mapping[str, str], merged), kept[2]
        if status == 200:
            etag = httpx2.Headers(dict(response_headers)).get("etag")
            if etag:
                await self._save(key, etag, response_headers, content)
        return status, response_headers, content

    async def _load(self, key: str) -> tuple[str, dict[str, str], bytes] | None:
        try:
            raw = await self._redis.get(key)
        except RedisError:
            return None
        if not raw:
            return None
        try:
            data = zlib.decompress(raw)
            head, _, body = data.partition(b"\n")
            meta = json.loads(head)
            return str(meta["etag"]), {str(k): str(v) for k, v in meta["headers"].items()}, body
        except (zlib.error, ValueError, KeyError, TypeError, AttributeError):
            return None

    async def _touch(self, key: str) -> None:
        with suppress(RedisError):
            await self._redis.expire(key, self._ttl)

    async def _save(self, key: str, etag: str, headers: Mapping[str, str], body: bytes) -> None:
        found = httpx2.Headers(dict(headers))
        kept = {name: found[name] for name in _KEPT_HEADERS if name in found}
        head = json.dumps({"etag": etag, "headers": kept}, separators=(",", ":")).encode()
        packed = zlib.compress(head + b"\n" + body, 6)
        try:
            if len(packed) > self._max_bytes:
                await self._redis.delete(key)
                return
            await self._redis.set(key, packed, ex=self._ttl)
        except RedisError:
            pass
