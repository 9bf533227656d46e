"""CPU per forge request of each layer of Steward's GitHub client, against a plain keep-alive ``http.client``,
side by side in one run on one sandbox (issue 28, item 1: where the CPU per event goes).

    .venv/bin/python bench/client_overhead.py [--requests 400] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx2
from gidgethub.httpx import GitHubAPI

from bench.stack import _up
from bot.forge.github_transport import LRUCache, RetryingAPI
from bot.forge.retry import RetryPolicy
from bot.runner import free_port
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
            out["httpx2.AsyncClient"] = await timed_inner(count, lambda: client.get(path))
            gh = GitHubAPI(client, "steward-bot", oauth_token=TOKEN, base_url=url)
            out["gidgethub over httpx2"] = await timed_inner(count, lambda: gh.getitem(path))
            gh_cached = GitHubAPI(client, "steward-bot", oauth_token=TOKEN, base_url=url, cache=LRUCache())
            out["gidgethub + ETag cache (304s)"] = await timed_inner(count, lambda: gh_cached.getitem(path))
            steward = RetryingAPI(
                client,
                policy=RetryPolicy(3, 0.05, 1.0),
                budget=None,
                budget_key="bench",
                base_url=url,
                oauth_token=TOKEN,
                cache=LRUCache(),
            )
            out["Steward's RetryingAPI (gidgethub, retry, metrics, ETag)"] = await timed_inner(
                count, lambda: steward.getitem(path)
            )

    async def alternatives() -> None:
        try:
            import aiohttp
            from gidgethub.aiohttp import GitHubAPI as AioGitHubAPI
        except ImportError:  # not a dependency: measured when installed (pip install aiohttp)
            return
        async with aiohttp.ClientSession(base_url=url, headers=headers) as session:

            async def aio_get() -> None:
                async with session.get(path) as response:
                    await response.read()

            out["aiohttp.ClientSession (measured alternative)"] = await timed_inner(count, aio_get)
        async with aiohttp.ClientSession() as session:
            gh = AioGitHubAPI(session, "steward-bot", oauth_token=TOKEN, base_url=url)
            out["gidgethub over aiohttp (measured alternative)"] = await timed_inner(
                count, lambda: gh.getitem(path)
            )

    asyncio.run(go())
    asyncio.run(alternatives())
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
    finally:
        sandbox.terminate()
        sandbox.wait(10)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"== CPU per GET of one issue, client side ({when}; {args.rounds} rounds: median, range)")
    for name in rounds[0]:
        values = [r[name] * 1e6 for r in rounds]
        ratios = [r[name] / r["http.client (the floor)"] for r in rounds]
        print(
            f"{name:<58}{statistics.median(values):>8.0f} µs  ×{statistics.median(ratios):.1f}"
            f"  ({min(ratios):.1f}–{max(ratios):.1f})"
        )


if __name__ == "__main__":
    main()
