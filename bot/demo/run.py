"""``steward demo``: the sandbox forge, a receiver and a worker, and a scripted story that prints what people
did and what Steward answered. Needs only Redis. By default the first hour on GitHub (installed, invited,
the first verdict); ``--all`` the tour of every capability on both forges. The scenes live in
``bot.demo.onboarding``, ``bot.demo.scenes`` and the other modules of ``bot.demo``, on ``bot.demo.stage``."""

from __future__ import annotations

import logging
import secrets
import sys
import tempfile
import time
from collections.abc import Callable
from typing import IO

import httpx2

from bot.config.settings import Settings
from bot.demo import forks as demo_forks
from bot.demo import onboarding as demo_onboarding
from bot.demo import scenes as demo_scenes
from bot.demo.bugfix import bugfix_scene
from bot.demo.bugfix_reviewers import bugfix_reviewers_scene
from bot.demo.debug import debug_scene
from bot.demo.hold import hold_scene
from bot.demo.integrity import integrity_scene
from bot.demo.newcomer import newcomer_scene
from bot.demo.overview import overview_scene
from bot.demo.rename import rename_scene
from bot.demo.reports import reports_scene
from bot.demo.scratch_redis import NoDatabase, base_of, claim
from bot.demo.shadow import shadow_scene
from bot.demo.stage import (
    CONFIG_PATHS,
    DEMO_CONFIG,
    USERS,
    Person,
    Stage,
    add_collaborator,
    redis_hint,
    redis_ok,
    say,
    settle,
)
from bot.demo.threads import ThreadedServer, ThreadedWorker, run_periodic_now
from bot.demo.triage import triage_scene
from bot.telemetry import logs

Scene = Callable[[Stage], None]


def tune_scene(stage: Stage) -> None:
    """The tour runs dozens of commands a minute: the demo's settings (``DEMO_CONFIG``) lift the limit."""
    path = CONFIG_PATHS[stage.flavor]
    stage.put_file(path, DEMO_CONFIG)
    say(
        f"\n  For the tour, @maintainer replaced `{path}` with the demo's settings: 200 commands and 1,000 "
        "other events a minute per person (10 and 30 by default) and a 2-second grace period before the "
        "milestone gate (a minute)."
    )
    stage.settle()


# `steward demo`: the first hour, on GitHub.
STORY: tuple[Scene, ...] = demo_onboarding.STORY
# `steward demo --all`: the first hour and then every capability, on GitHub and on Gitea.
TOUR: tuple[Scene, ...] = (
    *STORY,
    tune_scene,
    demo_scenes.commands_scene,
    demo_scenes.backlog_scene,
    demo_scenes.config_scene,
    demo_scenes.milestone_scene,
    demo_scenes.catch_up_scene,
    demo_forks.forks_scene,
    debug_scene,
    bugfix_scene,
    bugfix_reviewers_scene,
    integrity_scene,
    rename_scene,
    reports_scene,
    newcomer_scene,
    overview_scene,
    triage_scene,
    hold_scene,
    shadow_scene,
)


def _reconcile_with(settings: Settings) -> Callable[[str, str], list[str]]:
    """`steward reconcile --repo FLAVOR:REPO`, in this process; returns its report lines."""

    def run(flavor: str, repo: str) -> list[str]:
        import asyncio

        from bot.catchup.reconcile import reconcile_all
        from bot.forge import ForgeKind, RepoRef
        from bot.queue.jobs import make_redis
        from bot.records.signing import install_from_settings
        from bot.worker.jobs import build_runtime

        lines: list[str] = []

        async def go() -> None:
            redis_client = make_redis(settings.redis_url)
            # The demo's scenes spend the write budget in bursts; the operator's run here waits for room (up
            # to a minute) rather than leave an issue to the next run, so the scene shows its outcome.
            patient = settings.model_copy(update={"budget_max_wait_seconds": 65.0})
            runtime = build_runtime(patient, redis_client)
            try:
                await install_from_settings(settings, redis_client, runtime.state)
                kind: ForgeKind = "gitea" if flavor == "gitea" else "github"
                report = await reconcile_all(runtime, [(kind, RepoRef.parse(repo))], say=lines.append)
                lines.append(f"re-checked {report.issues} issue(s); {len(report.errors)} error(s)")
            finally:
                await runtime.aclose()
                await redis_client.aclose()

        asyncio.run(go())
        return lines

    return run


def _install(sandbox_url: str, receiver_url: str, secret: str, flavor: str) -> tuple[Person, Person, str]:
    """A new sandbox repository with Steward installed (its webhook, the bot a collaborator), and no
    configuration file yet."""
    maintainer, outsider = Person(sandbox_url, "maintainer", flavor), Person(sandbox_url, "outsider", flavor)
    name = "GitHub" if flavor == "github" else "Gitea"
    hook_url = f"{receiver_url}/webhooks/{flavor}"
    repo = maintainer("POST", "/user/repos", {"name": f"demo-{flavor}-{secrets.token_hex(3)}"})["full_name"]
    say(f"\n═══ On {name} (the sandbox's {name} API{' at /api/v1' if flavor == 'gitea' else ''}) " + "═" * 30)
    say(
        f"@maintainer created {repo} and installed Steward: a webhook to {hook_url}, and @steward-bot as a "
        f"collaborator ({'Administrator, as Gitea needs' if flavor == 'gitea' else 'write access'})."
    )
    config = {"url": hook_url, "content_type": "json", "secret": secret}
    if flavor == "gitea":
        # Gitea shows other people's permissions only to repository admins (see the README).
        add_collaborator(maintainer, repo, Person(sandbox_url, "steward-bot", flavor), "admin")
        events = ["issues", "issue_comment", "pull_request", "push"]
        maintainer(
            "POST",
            f"/repos/{repo}/hooks",
            {"type": "gitea", "config": config, "events": events, "active": True},
        )
    else:
        # GitHub invites the bot's account; it accepts, as a person would.
        add_collaborator(maintainer, repo, Person(sandbox_url, "steward-bot", flavor), "push")
        maintainer("POST", f"/repos/{repo}/hooks", {"config": config, "events": ["*"]})
    return maintainer, outsider, repo


def _walk_through(
    sandbox_url: str,
    receiver_url: str,
    redis_url: str,
    secret: str,
    flavor: str,
    reconcile: Callable[[str, str], list[str]],
    scenes: tuple[Scene, ...],
) -> None:
    """``scenes``, on a GitHub-flavoured or on a Gitea-flavoured sandbox repository."""
    maintainer, outsider, repo = _install(sandbox_url, receiver_url, secret, flavor)
    stage = Stage(
        flavor,
        repo,
        maintainer,
        outsider,
        lambda: settle(sandbox_url, redis_url),
        reconcile=reconcile,
        poll=lambda name: run_periodic_now(redis_url, name),
    )
    for scene in scenes:
        scene(stage)


FLAVORS = ("github", "gitea")


def flavors_of(*, tour: bool, forges: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The forges a demo is told on: ``forges`` (``--forge``) in the order of ``FLAVORS``, else both for the
    tour and GitHub for the story."""
    return tuple(f for f in FLAVORS if f in forges) or (FLAVORS if tour else ("github",))


def main(*, keep_running: bool = False, tour: bool = False, forges: tuple[str, ...] = ()) -> int:
    """``tour``: every capability on both forges (``steward demo --all``); otherwise the first hour on
    GitHub, in well under a minute. ``forges`` (``--forge``): on these forges instead, in the order of
    ``FLAVORS``."""
    base = Settings()
    if not redis_ok(base.redis_url):
        say(
            f"Steward's demo needs Redis and nothing answers at {base.redis_url}: "
            f"{redis_hint(base.redis_url)}, and run `make demo` again."
        )
        return 1
    try:
        scratch = claim(base_of(base.redis_url))
    except NoDatabase as exc:
        say(f"Steward's demo needs a free Redis database: {exc}.")
        return 1
    try:
        with tempfile.NamedTemporaryFile("w", prefix="steward-demo-", suffix=".log", delete=False) as log:
            return _run(base, scratch.url, keep_running=keep_running, tour=tour, forges=forges, log=log)
    finally:
        scratch.release()


def _run(
    base: Settings, redis_url: str, *, keep_running: bool, tour: bool, forges: tuple[str, ...], log: IO[str]
) -> int:
    # Steward's own log lines (a deferred job, a warning) go to a file: the story is what people see.
    logging.basicConfig(stream=log, level=logging.INFO, format="%(name)s %(levelname)s %(message)s")
    logs.configure("info", "json", stream=log)
    from bot.receiver.app import create_app
    from bot.sandbox.server import SandboxServer

    secret = secrets.token_hex(16)
    started = time.monotonic()
    with SandboxServer(USERS) as sandbox:
        settings = Settings.model_validate(
            {
                **base.model_dump(
                    exclude={"github_webhook_secrets", "github_token", "gitea_webhook_secrets", "gitea_token"}
                ),
                "redis_url": redis_url,
                # The write budget keeps Steward under a real forge's secondary limits (80 writes a minute
                # by default); the sandbox has none, and the tour writes faster than that: under the
                # default, the milestone scene waited most of a minute for budget.
                "write_budget_per_minute": 10_000,
                "write_budget_per_hour": 100_000,
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
            say(
                f"Sandbox forge at {sandbox.url}; Steward's receiver at {receiver.url}; one worker; Redis "
                f"database {redis_url.rsplit('/', 1)[-1]} at {base_of(redis_url)} (a scratch database of its "
                "own, emptied when the demo ends)."
            )
            scenes = TOUR if tour else STORY
            for flavor in flavors_of(tour=tour, forges=forges):
                _walk_through(
                    sandbox.url,
                    receiver.url,
                    settings.redis_url,
                    secret,
                    flavor,
                    _reconcile_with(settings),
                    scenes,
                )
            deliveries = httpx2.get(f"{sandbox.url}/_sandbox/deliveries", timeout=30).json()
            codes = sorted({str(d["status_code"]) for d in deliveries})
            say(
                f"\n{len(deliveries)} signed webhook deliveries; the receiver answered with HTTP "
                f"{', '.join(codes)}. {round(time.monotonic() - started)} s. Steward's own log: {log.name}."
            )
            if not tour:
                say(
                    "`steward demo --all` (`make demo-all`) tours every capability on both forges: commands, "
                    "backlog refinement, the configuration file, the milestone gate, the catch-up after "
                    "downtime, decision provenance, root-cause discipline and regression-first bugfixes."
                )
            if keep_running:
                say("Everything keeps running; press Ctrl-C to stop.")
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
