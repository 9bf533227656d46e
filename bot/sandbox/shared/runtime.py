"""What a running sandbox holds besides its forge state: deliveries, faults, the request log, auth."""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jwt

from .hooks import Deliverer
from .state import App, SandboxState, Token


@dataclass
class Principal:
    """Who a request authenticates as: a user or bot (`login`), or a GitHub App by its JWT (`app`)."""

    login: str | None = None
    token: Token | None = None
    app: App | None = None
    error: str | None = None

    @property
    def label(self) -> str | None:
        if self.app is not None:
            return f"app:{self.app.id}"
        return self.login


@dataclass
class Fault:
    """An injected failure for requests matching `method`, `path` (a regex) and `login`, `times` times.

    By default the request is refused: answered `status` without being applied. With `apply`, the request
    is applied first and then answered `status` — a proxy that timed out after the forge did the write — or,
    with `drop`, its connection is closed before a complete answer (FORGE-FACTS: "A 5xx or a dropped
    connection after a write does not mean the write did not happen"). `hang` never answers (with `apply`,
    after doing the write). `reset` closes the connection without applying the request (a reset on the way
    in). The first `skip` matching requests pass untouched.

    For fault injection under load: `probability` (0..1) makes a matching request fault only that often (a
    seeded draw when `seed` is given; a request the draw spares goes on to the next fault); `delay` ..
    `delay_max` seconds of latency come first (uniformly drawn); `passthrough` makes the fault latency only
    (the request is then answered normally); `seconds` keeps the fault active only that long after it is
    added; method `WRITE` matches every method but GET and HEAD. `rate_limit` answers the way each forge
    rate-limits (see ``rate_limit_answer``)."""

    method: str
    path: str
    status: int = 500
    times: int = 1
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    hang: bool = False
    hang_seconds: float = 3600.0
    login: str | None = None
    apply: bool = False
    drop: bool = False
    # Let this many matching requests through first (to reach, say, the write after a read to the same path).
    skip: int = 0
    reset: bool = False
    probability: float = 1.0
    seed: int | None = None
    delay: float = 0.0
    delay_max: float | None = None
    passthrough: bool = False
    seconds: float | None = None
    rate_limit: str | None = None
    added: float = field(default_factory=time.monotonic)
    fired: int = 0
    _rng: random.Random = field(default_factory=random.Random, repr=False)

    def __post_init__(self) -> None:
        if self.seed is not None:
            self._rng = random.Random(self.seed)

    def active(self) -> bool:
        return self.seconds is None or time.monotonic() < self.added + self.seconds

    def remaining(self) -> float:
        """Seconds until the fault ends (its `seconds`), or 60 for a fault without an end."""
        if self.seconds is None:
            return 60.0
        return max(0.0, self.added + self.seconds - time.monotonic())

    def matches(self, method: str, path: str, login: str | None) -> bool:
        wanted = self.method in ("*", method) or (self.method == "WRITE" and method not in ("GET", "HEAD"))
        return (
            self.times > 0
            and wanted
            and (self.login is None or self.login == login)
            and re.search(self.path, path) is not None
            and self.active()
        )

    def draw(self) -> bool:
        """Whether this matching request faults (`probability`)."""
        return self.probability >= 1.0 or self._rng.random() < self.probability

    def latency(self) -> float:
        if self.delay_max is None or self.delay_max <= self.delay:
            return self.delay
        return self._rng.uniform(self.delay, self.delay_max)

    def public(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "status": self.status,
            "times": self.times,
            "headers": self.headers,
            "body": self.body,
            "hang": self.hang,
            "login": self.login,
            "apply": self.apply,
            "drop": self.drop,
            "skip": self.skip,
            "reset": self.reset,
            "probability": self.probability,
            "seed": self.seed,
            "delay": self.delay,
            "delay_max": self.delay_max,
            "passthrough": self.passthrough,
            "seconds": self.seconds,
            "rate_limit": self.rate_limit,
            "fired": self.fired,
        }


RATE_LIMIT_KINDS = ("github-primary", "github-secondary", "gitea-proxy")


def rate_limit_answer(kind: str, wait: float, now: float) -> tuple[int, dict[str, str], Any]:
    """The status, headers and body each forge answers a request it rate-limits with, `wait` seconds
    before it would take the request again.

    GitHub ("Rate limits for the REST API", docs.github.com/en/rest/using-the-rest-api/
    rate-limits-for-the-rest-api, "Exceeding the rate limit"): over the primary limit "you will receive a
    403 or 429 response, and the x-ratelimit-remaining header will be 0", the reset time in
    x-ratelimit-reset (epoch seconds), body "API rate limit exceeded for user ID …"; over a secondary
    limit "a 403 or 429 response and an error message that indicates that you exceeded a secondary rate
    limit. If the retry-after response header is present, you should not retry your request until after
    that many seconds" — the body seen in practice is "You have exceeded a secondary rate limit. Please
    wait a few minutes before you try again." (octokit/octokit.net#2466, KnpLabs/php-github-api#1072).

    Gitea and Forgejo have no API rate limiter of their own (go-gitea/gitea#9559, "[Feature] API Rate
    Limiting", open): what limits them is the reverse proxy in front, typically nginx `limit_req`, which
    refuses with `limit_req_status` — 503 by default, 429 where configured — an HTML page and no
    Retry-After (nginx ngx_http_limit_req_module). The sandbox answers the 429 flavour."""
    seconds = max(1, int(wait + 0.999))
    docs = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
    if kind == "github-primary":
        headers = {
            "X-RateLimit-Limit": str(RATE_LIMIT),
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Used": str(RATE_LIMIT),
            "X-RateLimit-Reset": str(int(now) + seconds),
            "X-RateLimit-Resource": "core",
        }
        return 403, headers, {"message": "API rate limit exceeded for user ID 1.", "documentation_url": docs}
    if kind == "github-secondary":
        message = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
        return 403, {"Retry-After": str(seconds)}, {"message": message, "documentation_url": docs}
    if kind == "gitea-proxy":
        page = (
            "<html>\r\n<head><title>429 Too Many Requests</title></head>\r\n<body>\r\n"
            "<center><h1>429 Too Many Requests</h1></center>\r\n<hr><center>nginx</center>\r\n"
            "</body>\r\n</html>\r\n"
        )
        return 429, {"Content-Type": "text/html"}, page
    raise ValueError(f"unknown rate limit kind {kind!r} (one of {', '.join(RATE_LIMIT_KINDS)})")


RATE_LIMIT = 5000
# GitHub's search API has a limit of its own: 30 requests a minute for an authenticated caller
# (docs.github.com REST "Search": "Rate limit"; FORGE-FACTS "Search"), `X-RateLimit-Resource: search`
# (octokit/fixtures `search-issues`).
SEARCH_LIMIT = 30


@dataclass
class RateWindow:
    reset: int
    used: int = 0


class Sandbox:
    """The runtime around one SandboxState; the app exposes it as `app.state.sandbox`."""

    def __init__(
        self,
        forge: SandboxState,
        state_file: Path | None = None,
        *,
        auto_ci: bool = False,
        ci_delay: float = 1.0,
    ) -> None:
        self.forge = forge
        self.state_file = state_file
        self.deliverer = Deliverer()
        self.faults: list[Fault] = []
        self.requests: list[dict[str, Any]] = []
        self._rates: dict[str, RateWindow] = {}
        # `steward sandbox --ci`: every push gets a CI report after `ci_delay` seconds (see ci_ops).
        self.auto_ci = auto_ci
        self.ci_delay = ci_delay
        self._tasks: set[asyncio.Task[None]] = set()
        # GitHub's secondary limits on content-creating requests, (count, seconds) per login; off unless set
        # (tests arrange state through the API faster than a person could), e.g. [(80, 60), (500, 3600)].
        self.secondary_limits: list[tuple[int, float]] = []
        self._writes: dict[str, list[float]] = {}
        # Gitea's `[repository.issue] MAX_PINNED` (default 3; 0 switches pinning off): how many issues, and
        # separately how many pull requests, a repository may pin (go-gitea/gitea models/issues/issue_pin.go).
        self.gitea_max_pinned = 3
        # Search: each caller's searches of the last minute, the index and how long it lags (``search_ops``).
        self._searches: dict[str, list[float]] = {}
        self.search_index: dict[int, Any] = {}
        self.search_lag = 2.0

    def secondary_limit_wait(self, who: str) -> int | None:
        """Count a content-creating request of `who`; the seconds to wait when it is over a limit."""
        if not self.secondary_limits:
            return None
        now = time.monotonic()
        longest = max(window for _, window in self.secondary_limits)
        stamps = [t for t in self._writes.get(who, []) if t > now - longest]
        for count, window in self.secondary_limits:
            inside = [t for t in stamps if t > now - window]
            if len(inside) >= count:
                self._writes[who] = stamps
                return max(1, int(inside[0] + window - now) + 1)
        stamps.append(now)
        self._writes[who] = stamps
        return None

    def background(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` on the server's loop after the request that asked for it (delayed CI reports)."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def aclose(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.deliverer.aclose()

    def save(self) -> None:
        if self.state_file is not None:
            self.forge.save(self.state_file)

    def take_fault(self, method: str, path: str, login: str | None) -> Fault | None:
        for fault in self.faults:
            if fault.matches(method, path, login):
                if fault.skip > 0:
                    fault.skip -= 1
                    return None
                if not fault.draw():
                    continue
                fault.times -= 1
                fault.fired += 1
                return fault
        return None

    def new_rate_windows(self) -> None:
        """Start every login's hourly window afresh, as a new hour would: a test session that shares one
        sandbox across hundreds of tests gives each test a quota of its own (without this, a 403 after the
        session's 5000th request of a login read as a spent primary limit, and the job waited an hour)."""
        self._rates.clear()
        self._searches.clear()

    def search_window(self, who: str | None, count: bool) -> tuple[dict[str, str], bool]:
        """The rate-limit headers of `who`'s searches, and whether one more may run now (counting it when
        `count`)."""
        now = time.time()
        key = who or "anonymous"
        stamps = [t for t in self._searches.get(key, []) if t > now - 60]
        allowed = len(stamps) < SEARCH_LIMIT
        if count and allowed:
            stamps.append(now)
        self._searches[key] = stamps
        headers = {
            "X-RateLimit-Limit": str(SEARCH_LIMIT),
            "X-RateLimit-Remaining": str(max(SEARCH_LIMIT - len(stamps), 0)),
            "X-RateLimit-Reset": str(int((stamps[0] if stamps else now) + 60)),
            "X-RateLimit-Used": str(len(stamps)),
            "X-RateLimit-Resource": "search",
        }
        return headers, allowed

    def rate_headers(self, who: str | None, count: bool) -> dict[str, str]:
        now = int(time.time())
        key = who or "anonymous"
        window = self._rates.get(key)
        if window is None or window.reset <= now:
            window = self._rates[key] = RateWindow(reset=now + 3600)
        if count:
            window.used += 1
        return {
            "X-RateLimit-Limit": str(RATE_LIMIT),
            "X-RateLimit-Remaining": str(max(RATE_LIMIT - window.used, 0)),
            "X-RateLimit-Reset": str(window.reset),
            "X-RateLimit-Used": str(window.used),
            "X-RateLimit-Resource": "core",
        }

    def authenticate(self, authorization: str | None) -> Principal:
        if not authorization:
            return Principal(error="Requires authentication")
        scheme, _, credential = authorization.strip().partition(" ")
        credential = credential.strip()
        if scheme.lower() not in ("token", "bearer") or not credential:
            return Principal(error="Bad credentials")
        if scheme.lower() == "bearer" and credential.count(".") == 2:
            return self._authenticate_app(credential)
        token = self.forge.login_for_token(credential)
        if token is None:
            return Principal(error="Bad credentials")
        return Principal(login=token.login, token=token)

    def _authenticate_app(self, credential: str) -> Principal:
        try:
            claims = jwt.decode(credential, options={"verify_signature": False})
            app = self.forge.apps.get(int(claims["iss"]))
            if app is None:
                return Principal(error="Integration not found")
            jwt.decode(
                credential,
                app.public_key_pem,
                algorithms=["RS256"],
                options={"require": ["iat", "exp", "iss"]},
                leeway=60,
            )
            if int(claims["exp"]) - int(claims["iat"]) > 660:
                return Principal(error="'Expiration time' claim ('exp') is too far in the future")
        except (jwt.PyJWTError, KeyError, ValueError, TypeError):
            return Principal(error="A JSON web token could not be decoded")
        return Principal(app=app)
