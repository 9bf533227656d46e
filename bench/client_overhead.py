"""CPU per forge request of each layer of Steward's GitHub client, against a plain keep-alive ``http.client``,
side by side in one run on one sandbox (issue 28, item 1: where the CPU per event goes).

    .venv/bin/python bench/client_overhead.py [--requests 400] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiohttp
import httpx2
import requests
import urllib3
from gidgethub.aiohttp import GitHubAPI as AioGitHubAPI
from gidgethub.httpx import GitHubAPI
from gitea import Gitea
from requests.adapters import HTTPAdapter
from yarl import URL

from bench.stack import _up
from bot.demo.threads import free_port
from bot.forge.gitea_transport import GiteaCalls, _Transport
from bot.forge.github_transport import LRUCache, RetryingAPI, SharedSession
from bot.forge.retry import RetryPolicy
from bot.telemetry import metrics
from tests.e2e.stack import ForgeUser, wait_for

TOKEN = "bench-bot-token"


def timed(count: int, one: Callable[[], Any]) -> float:
    for _ in range(10):
        one()
    started = time.process_time()
    for _ in range(count):
        one()
    return (time.process_time() - started) / count


def layers(url: str, path: str, count: int) -> dict[str, float]:
    host, port = url.removeprefix("http://").split(":")
    headers = {"Authorization": f"token {TOKEN}", "Accept": "application/vnd.github+json"}
    out: dict[str, float] = {}
    conn = http.client.HTTPConnection(host, int(port))

    def plain() -> None:
        conn.request("GET", path, headers=headers)
        conn.getresponse().read()

    out["http.client (the floor)"] = timed(count, plain)
    conn.close()

    def timed_inner(n: int, one: Callable[[], Any]) -> Any:
        async def run() -> float:
            for _ in range(10):
                await one()
            started = time.process_time()
            for _ in range(n):
                await one()
            return (time.process_time() - started) / n

        return run()

    async def go() -> None:
        async with httpx2.AsyncClient(base_url=url, headers=headers) as client:
            out["httpx2.AsyncClient (before)"] = await timed_inner(count, lambda: client.get(path))
            gh = GitHubAPI(client, "steward-bot", oauth_token=TOKEN, base_url=url)
            out["gidgethub over httpx2 (before)"] = await timed_inner(count, lambda: gh.getitem(path))
            gh_cached = GitHubAPI(client, "steward-bot", oauth_token=TOKEN, base_url=url, cache=LRUCache())
            out["gidgethub over httpx2 + ETag cache (304s, before)"] = await timed_inner(
                count, lambda: gh_cached.getitem(path)
            )

    async def steward_layer() -> None:
        shared = SharedSession(timeout=10.0)

        def api(cache: LRUCache | None) -> RetryingAPI:
            return RetryingAPI(
                shared,
                policy=RetryPolicy(3, 0.05, 1.0),
                budget=None,
                budget_key="bench",
                base_url=url,
                oauth_token=TOKEN,
                cache=cache,
            )

        steward, uncached = api(LRUCache()), api(None)
        out["Steward's RetryingAPI (gidgethub over aiohttp, retry, metrics, ETag)"] = await timed_inner(
            count, lambda: steward.getitem(path)
        )
        out["Steward's RetryingAPI, no ETag cache (full answers)"] = await timed_inner(
            count, lambda: uncached.getitem(path)
        )
        await shared.aclose()

    async def alternatives() -> None:
        async with aiohttp.ClientSession(base_url=url, headers=headers) as session:

            async def aio_get() -> None:
                async with session.get(path) as response:
                    await response.read()

            out["aiohttp.ClientSession"] = await timed_inner(count, aio_get)
        async with aiohttp.ClientSession() as session:
            gh = AioGitHubAPI(session, "steward-bot", oauth_token=TOKEN, base_url=url)
            out["gidgethub over aiohttp (gidgethub.aiohttp)"] = await timed_inner(
                count, lambda: gh.getitem(path)
            )

    asyncio.run(go())
    asyncio.run(alternatives())
    asyncio.run(steward_layer())
    return out


class _RequestsSession(requests.Session):
    """Steward's Gitea session before issue 28's round two: requests, the environment read once, the last
    response remembered for the retry policy (``bot/forge/gitea_transport.py`` at 77abe38)."""

    def __init__(self, base_url: str) -> None:
        super().__init__()
        adapter = HTTPAdapter(pool_connections=4, pool_maxsize=4, max_retries=0)
        self.mount("http://", adapter)
        self.headers["User-Agent"] = "steward-bot"
        found = self.merge_environment_settings(base_url, {}, None, None, None)
        self.proxies, self.verify, self.trust_env = dict(found["proxies"]), found["verify"], False
        self._local = threading.local()

    def request(self, method: Any, url: Any, *args: Any, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("timeout", (5.0, 10.0))
        self._local.response = None
        response = super().request(method, url, *args, **kwargs)
        self._local.response = response
        return response

    @property
    def last_response(self) -> requests.Response | None:
        return getattr(self._local, "response", None)


def gitea_layers(url: str, path: str, count: int) -> dict[str, float]:
    """The same for Gitea's client: the transports under py-gitea, py-gitea itself, and Steward's
    ``GiteaCalls`` (py-gitea on its thread pool, retry, metrics) over requests (before) and over the
    ``http.client`` shim (after), and the other candidate: GiteaCalls speaking HTTP itself over the
    process-wide aiohttp session GitHub uses, no thread hop. CPU of the whole process: the pool's threads
    count."""
    headers = {"Authorization": f"token {TOKEN}"}
    out: dict[str, float] = {}
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port))

    def plain() -> None:
        conn.request("GET", "/api/v1" + path, headers=headers)
        conn.getresponse().read()

    out["http.client (the floor)"] = timed(count, plain)
    conn.close()
    for trust_env in (True, False):
        with requests.Session() as session:
            session.trust_env = trust_env
            name = "requests.Session" + ("" if trust_env else " (trust_env off)")
            out[name] = timed(count, lambda: session.get(f"{url}/api/v1{path}", headers=headers).content)
    pool = urllib3.HTTPConnectionPool(host, int(port), maxsize=4, retries=False)
    out["urllib3.HTTPConnectionPool"] = timed(
        count, lambda: pool.urlopen("GET", "/api/v1" + path, headers=headers).data
    )
    pool.close()
    shim = _Transport(url, timeout=(5.0, 10.0))
    out["Steward's _Transport (http.client shim, keep-alive per thread)"] = timed(
        count, lambda: shim.get(f"{url}/api/v1{path}", headers=headers).content
    )
    for name, transport in (("requests", _RequestsSession(url)), ("the shim", shim)):
        gitea = Gitea(url, token_text=TOKEN, log_level="CRITICAL")
        gitea.requests = transport
        out[f"py-gitea over {name} (no thread pool)"] = timed(count, lambda g=gitea: g.requests_get(path))
    shim.close()

    async def steward(before: bool) -> float:
        calls = GiteaCalls(url, TOKEN, policy=RetryPolicy(3, 0.05, 1.0), max_threads=4)
        if before:
            calls._session.close()
            calls._session = calls._gitea.requests = _RequestsSession(url)  # type: ignore[assignment]
        try:
            for _ in range(10):
                await calls._get(path, "bench")
            started = time.process_time()
            for _ in range(count):
                await calls._get(path, "bench")
            return (time.process_time() - started) / count
        finally:
            calls.close()

    out["GiteaCalls over requests (py-gitea, thread pool, retry, metrics; before)"] = asyncio.run(
        steward(True)
    )
    out["GiteaCalls over the shim (py-gitea, thread pool, retry, metrics; after)"] = asyncio.run(
        steward(False)
    )

    async def aio() -> float:
        """Candidate (b): what GiteaCalls would spend speaking HTTP itself on the shared aiohttp session:
        the request, the status check, the JSON, the metric, under a retry loop; no thread hop."""
        shared = SharedSession(timeout=10.0)
        target = URL(f"{url}/api/v1{path}")
        proxy, proxy_auth = shared.proxy_for(target)
        sent = {**headers, "User-Agent": "steward-bot", "Accept": "application/json"}

        async def get() -> Any:
            for _attempt in range(3):
                async with shared.session().get(
                    target, headers=sent, proxy=proxy, proxy_auth=proxy_auth
                ) as response:
                    body = await response.read()
                    metrics.FORGE_CALLS.labels("gitea", "GET", str(response.status)).inc()
                    if response.status < 400:
                        return json.loads(body)
            return None

        try:
            for _ in range(10):
                await get()
            started = time.process_time()
            for _ in range(count):
                await get()
            return (time.process_time() - started) / count
        finally:
            await shared.aclose()

    out["aiohttp SharedSession, no thread hop (GET, status, JSON, metric)"] = asyncio.run(aio())
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    users = ["--user", "maintainer=bench-maintainer-token", "--user", f"steward-bot={TOKEN}"]
    sandbox = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "sandbox", "--port", str(port), *users],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: _up(f"{url}/_sandbox/state"), timeout=60, what="the sandbox")
        owner = ForgeUser(url, "maintainer", "bench-maintainer-token")
        repo = owner.create_repo()
        owner.add_collaborator(repo, "steward-bot", "admin")
        number = owner.open_issue(repo, "Login fails", "It fails.\n" * 40)
        path = f"/repos/{repo}/issues/{number}"
        rounds = [layers(url, path, args.requests) for _ in range(args.rounds)]
        gitea = ForgeUser(url, "maintainer", "bench-maintainer-token", flavor="gitea")
        grepo = gitea.create_repo()
        gitea.add_collaborator(grepo, "steward-bot", "admin")
        gnumber = gitea.open_issue(grepo, "Login fails", "It fails.\n" * 40)
        gitea_rounds = [
            gitea_layers(url, f"/repos/{grepo}/issues/{gnumber}", args.requests) for _ in range(args.rounds)
        ]
    finally:
        sandbox.terminate()
        sandbox.wait(10)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    for forge, measured in (("GitHub", rounds), ("Gitea", gitea_rounds)):
        print(
            f"== {forge}: CPU per GET of one issue, client side ({when}; {args.rounds} rounds: median, range)"
        )
        for name in measured[0]:
            values = [r[name] * 1e6 for r in measured]
            ratios = [r[name] / r["http.client (the floor)"] for r in measured]
            print(
                f"{name:<76}{statistics.median(values):>8.0f} µs  ×{statistics.median(ratios):.1f}"
                f"  ({min(ratios):.1f}–{max(ratios):.1f})"
            )


if __name__ == "__main__":
    main()
