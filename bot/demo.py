"""``steward demo``: the sandbox forge, a receiver and a worker, and a scripted walk-through
that prints what Steward did. Needs only Redis."""

from __future__ import annotations

import base64
import re
import secrets
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2
import redis

from bot import demo_forks, demo_onboarding, logs
from bot.demo_bugfix import bugfix_scene
from bot.demo_debug import debug_scene
from bot.demo_integrity import integrity_scene
from bot.demo_texts import APPROVED_BUG, BACKLOG_ITEM, CASUAL_BUG
from bot.runner import ThreadedServer, ThreadedWorker, jobs_outstanding, run_periodic_now
from bot.scratch import NoDatabase, base_of, claim
from bot.settings import HandlerSettings, Settings

# Every repository's defaults, but a short grace period before the milestone gate is checked (a minute by
# default) and a short wait before a dashboard is refreshed, so the walk-through does not wait.
DEMO_HANDLER_SETTINGS = HandlerSettings.model_validate(
    {"milestones": {"grace_period_seconds": 2, "refresh_debounce_seconds": 0.5, "notify": ["maintainer"]}}
)

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
            jobs = jobs_outstanding(client)
            quiet_rounds = quiet_rounds + 1 if idle and not jobs else 0
            if quiet_rounds < 2:
                time.sleep(0.05)
    finally:
        client.close()


def _say(text: str) -> None:
    print(text, flush=True)


_DETAILS = re.compile(r"<details><summary>(?P<summary>.*?)</summary>.*?</details>", re.DOTALL)
EMOJI = {"eyes": "👀", "+1": "👍", "confused": "😕", "-1": "👎"}


def _readable(body: str, max_lines: int) -> list[str]:
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
    # Run a periodic job now (``bot.runner.run_periodic_now``) rather than at its next slot.
    poll: Callable[[str], None] = lambda name: None
    shown: dict[int, dict[int, str]] = field(default_factory=dict)

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
            _say(f"\n  ── #{number}: {issue['title']} (opened by @{issue['user']['login']}) " + "─" * 20)
        for comment in comments:
            if seen.get(comment["id"]) == comment["body"]:
                continue
            edited = comment["id"] in seen
            seen[comment["id"]] = comment["body"]
            reactions = person("GET", f"/repos/{self.repo}/issues/comments/{comment['id']}/reactions")
            marks = " ".join(EMOJI.get(r["content"], r["content"]) for r in reactions)
            how = "edited its comment" if edited else "wrote"
            _say(f"\n    @{comment['user']['login']} {how}:{'   [' + marks + ']' if marks else ''}")
            limit = max_lines if comment["user"]["login"] == "steward-bot" else 4
            _say("\n".join(f"      │ {line}".rstrip() for line in _readable(comment["body"], limit)))
        labels = sorted(label["name"] for label in issue["labels"])
        _say(f"\n    labels: {', '.join(labels) if labels else '(none)'}")


def _commands_scene(stage: Stage) -> None:
    _say("\n▶ Commands, and who may run them")
    number = stage.issue(stage.maintainer, "Login fails after password reset", "Steps to follow.")
    stage.comment(stage.maintainer, number, "/steward help")
    stage.comment(stage.outsider, number, "Can the bot look again?\n\n/steward refresh")
    _say(
        "  @maintainer asked for `/steward help`; @outsider (no access to the repository) tried "
        "`/steward refresh`, which needs triage access."
    )
    stage.settle()
    stage.show(number)


def _bug_scene(stage: Stage) -> None:
    _say("\n▶ Bug refinement (RA9): a casual report, then a complete one")
    number = stage.issue(stage.outsider, "App crashes", CASUAL_BUG)
    stage.label(number, ["bug", "refine"])
    _say("  @outsider reported a crash in one line; @maintainer labelled it `bug` and `refine`.")
    stage.settle()
    stage.show(number)
    stage.outsider("PATCH", f"/repos/{stage.repo}/issues/{number}", {"body": APPROVED_BUG})
    _say("\n  @outsider rewrote the description with every RA9 section (from the template Steward offered).")
    stage.settle()
    stage.show(number, max_lines=6)


def _backlog_scene(stage: Stage) -> None:
    _say("\n▶ Backlog refinement: an interview, then a spec")
    number = stage.issue(stage.maintainer, "Export orders as CSV", BACKLOG_ITEM, labels=["refine"])
    _say("  @maintainer labelled a backlog item `refine`.")
    stage.settle()
    stage.show(number, max_lines=10)
    stage.comment(
        stage.maintainer,
        number,
        "/steward answer g1 A button on the orders page downloads every order of the year as a CSV file.\n"
        "/steward answer g2 In: orders of the current year. Out: invoices and refunds.",
    )
    _say("\n  @maintainer answered two questions in one comment.")
    stage.settle()
    stage.show(number, max_lines=6)
    stage.comment(stage.maintainer, number, "/steward enough")
    _say("\n  @maintainer ended the interview with `/steward enough`.")
    stage.settle()
    stage.show(number, max_lines=8)
    stage.comment(stage.maintainer, number, "/steward approve-spec")
    _say("\n  @maintainer approved the spec.")
    stage.settle()
    stage.show(number, max_lines=3)


def _config_scene(stage: Stage) -> None:
    _say("\n▶ Per-repository configuration: a typo is caught, then fixed")
    path = ".gitea/steward.yml" if stage.flavor == "gitea" else ".github/steward.yml"
    sha = stage.put_file(path, "commands:\n  refresh: {permission: anyone}\nbacklog:\n  roundcap: 3\n")
    _say(f"  @maintainer pushed `{path}` letting anyone run `/steward refresh`, with a typo (`roundcap`).")
    stage.settle()
    for status in stage.maintainer("GET", f"/repos/{stage.repo}/commits/{sha}/statuses"):
        if status["context"] == "steward/config":
            state = status.get("state") or status.get("status")
            _say(f"\n    commit status steward/config: {state} — {status['description']}")
    issues = stage.maintainer("GET", f"/repos/{stage.repo}/issues?state=open")
    error = next((i for i in issues if i["title"] == "Steward configuration error"), None)
    if error is not None:
        _say(f"\n    Steward opened #{error['number']} “{error['title']}”:")
        _say("\n".join(f"      │ {line}".rstrip() for line in _readable(error["body"], 8)))
    stage.put_file(path, "commands:\n  refresh: {permission: anyone}\nbacklog:\n  round_cap: 3\n")
    _say("\n  @maintainer fixed the typo.")
    stage.settle()
    if error is not None:
        state = stage.maintainer("GET", f"/repos/{stage.repo}/issues/{error['number']}")["state"]
        _say(f"    #{error['number']} is now {state}.")
    number = stage.issue(stage.outsider, "Which settings apply here?")
    stage.comment(stage.outsider, number, "/steward config")
    _say("  @outsider asked `/steward config`.")
    stage.settle()
    stage.show(number, max_lines=8)


def _dashboard(stage: Stage) -> dict[str, Any]:
    found = stage.maintainer("GET", f"/repos/{stage.repo}/issues?state=all&labels=milestone-dashboard")
    [board] = [i for i in found if i["user"]["login"] == "steward-bot"]
    return dict(board)


def _show_dashboard(stage: Stage, max_lines: int) -> None:
    board = _dashboard(stage)
    _say(f"\n  ── dashboard #{board['number']} ({board['state']}): {board['title']}")
    _say("\n".join(f"      │ {line}".rstrip() for line in _readable(board["body"], max_lines)))


def _close_milestone(stage: Stage, key: int) -> str:
    """Close the milestone, let Steward see it (Gitea sends no milestone webhook: the periodic job, run now
    rather than at the next minute), and answer its state once the grace period is over."""
    stage.maintainer("PATCH", f"/repos/{stage.repo}/milestones/{key}", {"state": "closed"})
    stage.settle()
    if stage.flavor == "gitea":
        stage.poll("milestones")
        stage.settle()
    return str(stage.maintainer("GET", f"/repos/{stage.repo}/milestones/{key}")["state"])


def _milestone_scene(stage: Stage) -> None:
    _say("\n▶ The milestone gate: a dashboard per milestone; closed too early, a milestone is reopened")
    made = stage.maintainer("POST", f"/repos/{stage.repo}/milestones", {"title": "v1.0"})
    key = int(made["id"] if stage.flavor == "gitea" else made["number"])

    def add(title: str, labels: list[str]) -> int:
        data = {"title": title, "body": "", "milestone": key}
        number = int(stage.maintainer("POST", f"/repos/{stage.repo}/issues", data)["number"])
        stage.label(number, labels)
        return number

    work = add("Export orders as CSV", ["cycle"])
    scenario = add("Scenario: export a year of orders", ["fieldtest"])
    _say(
        f"  @maintainer put #{work} (work, labelled `cycle`) and #{scenario} (a field-test scenario) in v1.0."
    )
    stage.settle()
    _show_dashboard(stage, 9)
    how = (
        " (Gitea sends no milestone webhook: Steward notices it by polling)"
        if stage.flavor == "gitea"
        else ""
    )
    _say(f"\n  @maintainer closed v1.0 anyway{how}.")
    state = _close_milestone(stage, key)
    _say(f"  After the grace period, milestone v1.0 is {state} again:")
    stage.show(_dashboard(stage)["number"], max_lines=6)
    for number, labels in ((work, ["audit:clean"]), (scenario, ["fieldtest:pass"])):
        stage.label(number, labels)
        stage.maintainer("PATCH", f"/repos/{stage.repo}/issues/{number}", {"state": "closed"})
    _say(
        f"\n  #{work} was audited (`audit:clean`) and closed; the scenario passed (`fieldtest:pass`) and "
        "was closed."
    )
    stage.settle()
    state = _close_milestone(stage, key)
    _say(f"  @maintainer closed v1.0 again: it stays {state}.")
    _show_dashboard(stage, 3)


def _catch_up_scene(stage: Stage) -> None:
    _say("\n▶ Catch-up after downtime")
    [hook] = stage.maintainer("GET", f"/repos/{stage.repo}/hooks")
    stage.maintainer("PATCH", f"/repos/{stage.repo}/hooks/{hook['id']}", {"active": False})
    number = stage.issue(stage.outsider, "Search returns nothing", CASUAL_BUG)
    stage.label(number, ["bug", "refine"])
    _say(
        "  While Steward's webhook was off (as when Steward is down), @outsider reported a bug and "
        "@maintainer labelled it `bug` and `refine`. The forge will not send those events again."
    )
    stage.settle()
    stage.show(number, max_lines=3)
    stage.maintainer("PATCH", f"/repos/{stage.repo}/hooks/{hook['id']}", {"active": True})
    _say(f"\n  The operator runs `steward reconcile --repo {stage.flavor}:{stage.repo}`:")
    for line in stage.reconcile(stage.flavor, stage.repo):
        _say(f"    $ {line}")
    stage.settle()
    stage.show(number, max_lines=4)


SCENES: tuple[Callable[[Stage], None], ...] = (
    _commands_scene,
    _bug_scene,
    _backlog_scene,
    _config_scene,
    _milestone_scene,
    _catch_up_scene,
    demo_forks.forks_scene,
    debug_scene,
    bugfix_scene,
    demo_onboarding.onboarding_scene,
    integrity_scene,
)


def _reconcile_with(settings: Settings) -> Callable[[str, str], list[str]]:
    """`steward reconcile --repo FLAVOR:REPO`, in this process; returns its report lines."""

    def run(flavor: str, repo: str) -> list[str]:
        import asyncio

        from bot.forge import ForgeKind, RepoRef
        from bot.queue import make_redis
        from bot.reconcile import reconcile_all
        from bot.signing import install_from_settings
        from bot.worker import build_runtime

        lines: list[str] = []

        async def go() -> None:
            redis_client = make_redis(settings.redis_url)
            runtime = build_runtime(settings, redis_client)
            try:
                await install_from_settings(settings, redis_client)
                kind: ForgeKind = "gitea" if flavor == "gitea" else "github"
                report = await reconcile_all(runtime, [(kind, RepoRef.parse(repo))], say=lines.append)
                lines.append(f"re-checked {report.issues} issue(s); {len(report.errors)} error(s)")
            finally:
                await runtime.aclose()
                await redis_client.aclose()

        asyncio.run(go())
        return lines

    return run


def _walk_through(
    sandbox_url: str,
    receiver_url: str,
    redis_url: str,
    secret: str,
    flavor: str,
    reconcile: Callable[[str, str], list[str]],
) -> None:
    """Every scene, on a GitHub-flavoured or on a Gitea-flavoured sandbox repository."""
    maintainer, outsider = Person(sandbox_url, "maintainer", flavor), Person(sandbox_url, "outsider", flavor)
    name = "GitHub" if flavor == "github" else "Gitea"
    hook_url = f"{receiver_url}/webhooks/{flavor}"
    repo = maintainer("POST", "/user/repos", {"name": f"demo-{flavor}-{secrets.token_hex(3)}"})["full_name"]
    _say(
        f"\n═══ On {name} (the sandbox's {name} API{' at /api/v1' if flavor == 'gitea' else ''}) " + "═" * 30
    )
    _say(
        f"@maintainer created {repo} and installed Steward: a webhook to {hook_url}, and @steward-bot as a "
        f"collaborator ({'Administrator, as Gitea needs' if flavor == 'gitea' else 'write access'})."
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
    stage = Stage(
        flavor,
        repo,
        maintainer,
        outsider,
        lambda: _settle(sandbox_url, redis_url),
        reconcile=reconcile,
        poll=lambda name: run_periodic_now(redis_url, name),
    )
    for scene in SCENES:
        scene(stage)


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
        worker = ThreadedWorker(settings, handler_settings=DEMO_HANDLER_SETTINGS).start()
        try:
            _say(
                f"Sandbox forge at {sandbox.url}; Steward's receiver at {receiver.url}; one worker; Redis "
                f"database {redis_url.rsplit('/', 1)[-1]} at {base_of(redis_url)} (a scratch database of its "
                "own, emptied when the demo ends)."
            )
            for flavor in ("github", "gitea"):
                _walk_through(
                    sandbox.url, receiver.url, settings.redis_url, secret, flavor, _reconcile_with(settings)
                )
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
