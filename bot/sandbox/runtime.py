"""What a running sandbox holds besides its forge state: deliveries, faults, the request log, auth."""

from __future__ import annotations

import asyncio
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
    connection after a write does not mean the write did not happen"). `hang` never answers. The first `skip`
    matching requests pass untouched."""

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

    def matches(self, method: str, path: str, login: str | None) -> bool:
        return (
            self.times > 0
            and self.method in ("*", method)
            and (self.login is None or self.login == login)
            and re.search(self.path, path) is not None
        )

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
        }


RATE_LIMIT = 5000


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
                fault.times -= 1
                return fault
        return None

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
