"""``steward demo``: the sandbox forge, a receiver and a worker, and a scripted walk-through
that prints what Steward did. Needs only Redis."""

from __future__ import annotations

import secrets
import sys
import time
from typing import Any

import httpx2
import redis

from bot import logs
from bot.runner import ThreadedServer, ThreadedWorker
from bot.scratch import NoDatabase, base_of, claim
from bot.settings import Settings

USERS = {
    "maintainer": "demo-maintainer-token",
    "outsider": "demo-outsider-token",
    "steward-bot": "demo-bot-token",
}


class Person:
    """Someone using the sandbox through GitHub's API (`/`) or Gitea's (`/api/v1`)."""

    def __init__(self, base_url: str, login: str, flavor: str = "github") -> None:
        self.login = login
        self.flavor = flavor
        self.http = httpx2.Client(
            base_url=base_url + ("/api/v1" if flavor == "gitea" else ""),
            headers={"Authorization": f"token {USERS[login]}"},
            timeout=30,
        )

    def __call__(self, method: str, path: str, body: Any = None) -> Any:
        response = self.http.request(method, path, json=body)
        response.raise_for_status()
        return response.json() if response.content else None


def _redis_ok(url: str) -> bool:
    client = redis.Redis.from_url(url, socket_connect_timeout=1)
    try:
        return bool(client.ping())
    except (redis.RedisError, OSError):
        return False
    finally:
        client.close()


def _settle(sandbox_url: str, redis_url: str, timeout: float = 60.0) -> None:
    """Wait until every webhook is delivered and every job done, twice in a row."""
    client = redis.Redis.from_url(redis_url)
    http = httpx2.Client(base_url=sandbox_url, timeout=timeout)
    deadline = time.monotonic() + timeout
    quiet_rounds = 0
    try:
        while quiet_rounds < 2:
            if time.monotonic() > deadline:
                raise RuntimeError("Steward did not finish within a minute")
            idle = http.get("/_sandbox/deliveries/idle", params={"timeout": 5}).json()["idle"]
            queued = int(client.zcard("steward:queue"))  # type: ignore[arg-type]
            running = len(list(client.scan_iter("arq:in-progress:*", count=1000)))
            jobs = queued + running
            quiet_rounds = quiet_rounds + 1 if idle and not jobs else 0
            if quiet_rounds < 2:
                time.sleep(0.05)
    finally:
        client.close()


def _say(text: str) -> None:
    print(text, flush=True)


def _show_thread(person: Person, repo: str, number: int) -> None:
    issue = person("GET", f"/repos/{repo}/issues/{number}")
    _say(f"\n── {repo}#{number}: {issue['title']} (opened by @{issue['user']['login']}) " + "─" * 20)
    for comment in person("GET", f"/repos/{repo}/issues/{number}/comments?per_page=100"):
        reactions = person("GET", f"/repos/{repo}/issues/comments/{comment['id']}/reactions")
        emoji = {"eyes": "👀", "+1": "👍", "confused": "😕", "-1": "👎"}
        marks = " ".join(emoji.get(r["content"], r["content"]) for r in reactions)
        body = "\n".join(
            line for line in comment["body"].splitlines() if not line.startswith("<!-- steward:")
        )
        _say(f"\n  @{comment['user']['login']} wrote:{'   [' + marks + ']' if marks else ''}")
        _say("\n".join(f"    │ {line}".rstrip() for line in body.strip().splitlines()))


def _walk_through(sandbox_url: str, receiver_url: str, redis_url: str, secret: str, flavor: str) -> None:
    """The same exchange on a GitHub-flavoured and on a Gitea-flavoured sandbox repository."""
    maintainer, outsider = Person(sandbox_url, "maintainer", flavor), Person(sandbox_url, "outsider", flavor)
    name = "GitHub" if flavor == "github" else "Gitea"
    hook_url = f"{receiver_url}/webhooks/{flavor}"
    repo = maintainer("POST", "/user/repos", {"name": f"demo-{flavor}-{secrets.token_hex(3)}"})["full_name"]
    _say(
        f"\n═══ On {name} (the sandbox's {name} API{' at /api/v1' if flavor == 'gitea' else ''}) " + "═" * 30
    )
    _say(
        f"1. @maintainer created {repo} and installed Steward: a webhook to {hook_url}, "
        "and @steward-bot as a collaborator."
    )
    config = {"url": hook_url, "content_type": "json", "secret": secret}
    if flavor == "gitea":
        # Gitea shows other people's permissions only to repository admins (see the README).
        maintainer("PUT", f"/repos/{repo}/collaborators/steward-bot", {"permission": "admin"})
        events = ["issues", "issue_comment", "pull_request", "push"]
        maintainer(
            "POST",
            f"/repos/{repo}/hooks",
            {"type": "gitea", "config": config, "events": events, "active": True},
        )
    else:
        maintainer("PUT", f"/repos/{repo}/collaborators/steward-bot", {"permission": "push"})
        maintainer("POST", f"/repos/{repo}/hooks", {"config": config, "events": ["*"]})
    number = maintainer(
        "POST",
        f"/repos/{repo}/issues",
        {"title": "Login fails after password reset", "body": "Steps to follow."},
    )["number"]
    _say(f"2. @maintainer opened issue #{number}.")
    maintainer("POST", f"/repos/{repo}/issues/{number}/comments", {"body": "/steward help"})
    _say("3. @maintainer commented `/steward help`.")
    outsider(
        "POST",
        f"/repos/{repo}/issues/{number}/comments",
        {"body": "Can the bot look again?\n\n/steward refresh"},
    )
    _say(
        "4. @outsider (no access to the repository) commented `/steward refresh`, which needs triage access."
    )
    _settle(sandbox_url, redis_url)
    _say("5. Steward answered. The thread now reads:")
    _show_thread(maintainer, repo, number)


def main(*, keep_running: bool = False) -> int:
    base = Settings()
    if not _redis_ok(base.redis_url):
        _say(
            f"Steward's demo needs Redis and nothing answers at {base.redis_url}: start it with "
            "`redis-server --daemonize yes --save ''` (or set STEWARD_REDIS_URL) and run `make demo` again."
        )
        return 1
    try:
        scratch = claim(base_of(base.redis_url))
    except NoDatabase as exc:
        _say(f"Steward's demo needs a free Redis database: {exc}.")
        return 1
    try:
        return _run(base, scratch.url, keep_running=keep_running)
    finally:
        scratch.release()


def _run(base: Settings, redis_url: str, *, keep_running: bool) -> int:
    logs.configure("warning")
    from bot.sandbox.server import SandboxServer
    from bot.web import create_app

    secret = secrets.token_hex(16)
    with SandboxServer(USERS) as sandbox:
        settings = Settings.model_validate(
            {
                **base.model_dump(
                    exclude={"github_webhook_secrets", "github_token", "gitea_webhook_secrets", "gitea_token"}
                ),
                "redis_url": redis_url,
                "github_api_url": sandbox.url,
                "github_token": USERS["steward-bot"],
                "github_webhook_secrets": secret,
                "gitea_url": sandbox.url,
                "gitea_token": USERS["steward-bot"],
                "gitea_webhook_secrets": secret,
            }
        )
        receiver = ThreadedServer(create_app(settings)).start()
        worker = ThreadedWorker(settings).start()
        try:
            _say(
                f"Sandbox forge at {sandbox.url}; Steward's receiver at {receiver.url}; one worker; Redis "
                f"database {redis_url.rsplit('/', 1)[-1]} at {base_of(redis_url)} (a scratch database of its "
                "own, emptied when the demo ends)."
            )
            for flavor in ("github", "gitea"):
                _walk_through(sandbox.url, receiver.url, settings.redis_url, secret, flavor)
            deliveries = httpx2.get(f"{sandbox.url}/_sandbox/deliveries", timeout=30).json()
            codes = sorted({str(d["status_code"]) for d in deliveries})
            _say(
                f"\n{len(deliveries)} signed webhook deliveries (GitHub- and Gitea-shaped); "
                f"the receiver answered with HTTP {', '.join(codes)}."
            )
            if keep_running:
                _say("Everything keeps running; press Ctrl-C to stop.")
                try:
                    while True:
                        time.sleep(3600)
                except KeyboardInterrupt:
                    pass
        finally:
            worker.stop()
            receiver.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
