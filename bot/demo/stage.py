"""What every `steward demo` scene works with: the people on the sandbox forge (``Person``), the repository
and a way to wait for Steward (``Stage``), and how a thread is printed. The scenes (the other modules of
``bot.demo``) import this module and ``bot.demo.run`` imports them: nothing here imports a scene or the
runner.
"""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx2
import redis

from bot.demo.texts import CART_CODE
from bot.demo.threads import jobs_outstanding

USERS = {
    "maintainer": "demo-maintainer-token",
    "outsider": "demo-outsider-token",
    # Someone new to the repository (the welcome's scene, `bot.demo.newcomer`).
    "newcomer": "demo-newcomer-token",
    # The security reviewer of the bugfix scene (`bot.demo.bugfix`): maintain access, writes no code.
    "guard": "demo-guard-token",
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

    def get_optional(self, path: str) -> Any:
        """GET ``path``, or None when the forge answers 404."""
        response = self.http.get(path)
        if response.status_code == 404:
            return None
        response.raise_for_status()
        return response.json()

    def __call__(self, method: str, path: str, body: Any = None) -> Any:
        response = self.http.request(method, path, json=body)
        response.raise_for_status()
        return response.json() if response.content else None


def add_collaborator(maintainer: Person, repo: str, person: Person, permission: str) -> None:
    """Make `person` a collaborator of `repo`: Gitea adds them at once; GitHub invites them (201 with the
    invitation), and they accept it."""
    made = maintainer("PUT", f"/repos/{repo}/collaborators/{person.login}", {"permission": permission})
    if isinstance(made, dict) and made.get("id") is not None:
        person("PATCH", f"/user/repository_invitations/{made['id']}")


def redis_ok(url: str) -> bool:
    client = redis.Redis.from_url(url, socket_connect_timeout=1)
    try:
        return bool(client.ping())
    except (redis.RedisError, OSError):
        return False
    finally:
        client.close()


def redis_hint(url: str) -> str:
    """How to start the Redis that ``url`` names: a local one on that URL's port (the one the demo checked),
    or, for another host, to start it there."""
    parsed = urlsplit(url)
    host, port = parsed.hostname or "127.0.0.1", parsed.port or 6379
    if parsed.scheme == "redis" and host in ("127.0.0.1", "localhost", "::1"):
        start = f"redis-server --daemonize yes --port {port} --save ''"
        return f"start it with `{start}` (or set STEWARD_REDIS_URL)"
    return f"start the Redis at {host}:{port} (or set STEWARD_REDIS_URL to one that runs)"


def settle(sandbox_url: str, redis_url: str, timeout: float = 60.0) -> None:
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
            jobs = jobs_outstanding(client)
            quiet_rounds = quiet_rounds + 1 if idle and not jobs else 0
            if quiet_rounds < 2:
                time.sleep(0.05)
    finally:
        client.close()


def say(text: str) -> None:
    print(text, flush=True)


_DETAILS = re.compile(r"<details><summary>(?P<summary>.*?)</summary>.*?</details>", re.DOTALL)
EMOJI = {"eyes": "👀", "+1": "👍", "confused": "😕", "-1": "👎"}


def readable(body: str, max_lines: int) -> list[str]:
    """A comment as a reader first sees it: markers dropped, folded sections as one line, the first lines."""
    text = _DETAILS.sub(lambda m: f"▸ {m.group('summary')} (folded)", body)
    lines = [line for line in text.strip().splitlines() if not line.startswith("<!-- steward:")]
    while lines and not lines[0].strip():
        lines.pop(0)
    if len(lines) > max_lines:
        lines = [*lines[:max_lines], f"… ({len(lines) - max_lines} more lines)"]
    return lines


@dataclass
class Stage:
    """One sandbox repository with Steward installed, the people who use it, and a way to wait for Steward."""

    flavor: str
    repo: str
    maintainer: Person
    outsider: Person
    settle: Callable[[], None]
    # Runs `steward reconcile` for this repository; returns what it printed.
    reconcile: Callable[[str, str], list[str]] = lambda flavor, repo: []
    # Run a periodic job now (``bot.demo.threads.run_periodic_now``) rather than at its next slot.
    poll: Callable[[str], None] = lambda name: None
    shown: dict[int, dict[int, str]] = field(default_factory=dict)
    # What one scene leaves for the next (the story's bug report: "bug" → its number).
    kept: dict[str, int] = field(default_factory=dict)

    def issue(self, who: Person, title: str, body: str = "", labels: list[str] | None = None) -> int:
        data: dict[str, Any] = {"title": title, "body": body}
        number = int(who("POST", f"/repos/{self.repo}/issues", data)["number"])
        if labels:
            self.label(number, labels)
        return number

    def label(self, number: int, names: list[str]) -> None:
        wanted: list[Any] = list(names)
        if self.flavor == "gitea":  # Gitea labels issues by label id
            existing = {lb["name"]: lb["id"] for lb in self.maintainer("GET", f"/repos/{self.repo}/labels")}
            for name in names:
                if name not in existing:
                    made = self.maintainer(
                        "POST", f"/repos/{self.repo}/labels", {"name": name, "color": "ededed"}
                    )
                    existing[name] = made["id"]
            wanted = [existing[name] for name in names]
        self.maintainer("POST", f"/repos/{self.repo}/issues/{number}/labels", {"labels": wanted})

    def put_file(self, path: str, text: str) -> str:
        """Commit ``text`` to ``path`` on the default branch (the contents API); returns the commit."""
        found = self.maintainer.get_optional(f"/repos/{self.repo}/contents/{path}")
        body: dict[str, Any] = {
            "message": f"Update {path}",
            "content": base64.b64encode(text.encode()).decode(),
        }
        if found:
            body["sha"] = found["sha"]
        method = "POST" if self.flavor == "gitea" and not found else "PUT"
        return str(self.maintainer(method, f"/repos/{self.repo}/contents/{path}", body)["commit"]["sha"])

    def comment(self, who: Person, number: int, body: str) -> None:
        who("POST", f"/repos/{self.repo}/issues/{number}/comments", {"body": body})

    def show(self, number: int, *, max_lines: int = 14) -> None:
        """Print what is new in the thread since it was last shown, and the issue's labels."""
        person = self.maintainer
        issue = person("GET", f"/repos/{self.repo}/issues/{number}")
        comments = person("GET", f"/repos/{self.repo}/issues/{number}/comments")
        seen = self.shown.setdefault(number, {})
        if not seen:
            say(f"\n  ── #{number}: {issue['title']} (opened by @{issue['user']['login']}) " + "─" * 20)
        for comment in comments:
            if seen.get(comment["id"]) == comment["body"]:
                continue
            edited = comment["id"] in seen
            seen[comment["id"]] = comment["body"]
            reactions = person("GET", f"/repos/{self.repo}/issues/comments/{comment['id']}/reactions")
            marks = " ".join(EMOJI.get(r["content"], r["content"]) for r in reactions)
            how = "edited its comment" if edited else "wrote"
            say(f"\n    @{comment['user']['login']} {how}:{'   [' + marks + ']' if marks else ''}")
            limit = max_lines if comment["user"]["login"] == "steward-bot" else 4
            say("\n".join(f"      │ {line}".rstrip() for line in readable(comment["body"], limit)))
        labels = sorted(label["name"] for label in issue["labels"])
        say(f"\n    labels: {', '.join(labels) if labels else '(none)'}")


CONFIG_PATHS = {"github": ".github/steward.yml", "gitea": ".gitea/steward.yml"}

# The settings of the demo's repositories once Steward is invited: a maintainer runs dozens of commands and
# edits, comments and labels a minute here (the defaults, 10 and 30, are meant for people: beyond them each
# event waits seconds for its slot), and the milestone gate is checked two seconds after a
# close rather than a minute, so the walk-through does not wait.
DEMO_CONFIG = """\
# Steward's settings for this demo repository: tuned for a walk-through, not for people.
limits:
  commands_per_minute: 200
  events_per_minute: 1000
milestones:
  grace_period_seconds: 2
  refresh_debounce_seconds: 0.5
  notify: ["maintainer"]
"""


def quote(text: str, max_lines: int) -> None:
    """Print ``text`` (a body Steward wrote) as a reader first sees it, indented under the story."""
    say("\n".join(f"      │ {line}".rstrip() for line in readable(text, max_lines)))


def put_cart_code(stage: Stage) -> None:
    """Commit the cart's code the scenes cite, when the repository does not have it yet."""
    for path, text in CART_CODE.items():
        if stage.maintainer.get_optional(f"/repos/{stage.repo}/contents/{path}") is None:
            stage.put_file(path, text)
