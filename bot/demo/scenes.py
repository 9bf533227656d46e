"""The capability scenes of `steward demo --all` that need no module of their own: commands and who may run
them, backlog refinement, the configuration file, the milestone gate, the catch-up after
downtime. Each prints what people did and what Steward answered."""

from __future__ import annotations

from typing import Any

from bot.demo.stage import CONFIG_PATHS, DEMO_CONFIG, Stage, quote, say
from bot.demo.texts import BACKLOG_ITEM, CASUAL_BUG


def commands_scene(stage: Stage) -> None:
    say("\n▶ Commands, and who may run them")
    number = stage.issue(stage.maintainer, "Login fails after password reset", "Steps to follow.")
    stage.comment(stage.maintainer, number, "/steward help")
    stage.comment(stage.outsider, number, "Can the bot look again?\n\n/steward refresh")
    say(
        "  @maintainer asked for `/steward help`; @outsider (no access to the repository) tried "
        "`/steward refresh`, which needs triage access."
    )
    stage.settle()
    stage.show(number)


def backlog_scene(stage: Stage) -> None:
    say("\n▶ Backlog refinement: an interview, then a spec")
    path = CONFIG_PATHS[stage.flavor]
    stage.put_file(path, DEMO_CONFIG + "backlog:\n  round_cap: 1\n")
    say(
        f"  @maintainer allowed one round of questions here (`backlog.round_cap: 1` in `{path}`; 5 by "
        "default)."
    )
    stage.settle()
    number = stage.issue(stage.maintainer, "Export orders as CSV", BACKLOG_ITEM, labels=["refine"])
    say("  @maintainer labelled a backlog item `refine`.")
    stage.settle()
    stage.show(number, max_lines=10)
    stage.comment(
        stage.maintainer,
        number,
        "/steward answer g1 A button on the orders page downloads every order of the year as a CSV file, "
        "written by orders/export.py.\n"
        "/steward answer g2 In: orders of the current year. Out: invoices and refunds.",
    )
    say("\n  @maintainer answered two questions in one comment; that was the one round, with the acceptance "
        "question still open, so the interview stopped degraded.")  # fmt: skip
    stage.settle()
    stage.show(number, max_lines=8)
    stage.comment(stage.maintainer, number, "/steward approve-spec")
    say("\n  @maintainer tried to approve the spec as it is.")
    stage.settle()
    stage.show(number, max_lines=3)
    enough = "the acceptance is the file opening in a spreadsheet, checked by hand"
    stage.comment(stage.maintainer, number, f"/steward approve-spec --accept-degraded {enough}")
    say("\n  @maintainer approved it anyway, saying why — but the spec cites `orders/export.py`, a file the "
        "repository does not have.")  # fmt: skip
    stage.settle()
    stage.show(number, max_lines=3)
    why = "orders/export.py is written by this work"
    stage.comment(
        stage.maintainer, number, f"/steward approve-spec --accept-degraded {enough} --ungrounded {why}"
    )
    say("\n  @maintainer approved it, saying why the file does not exist yet.")
    stage.settle()
    stage.show(number, max_lines=3)
    stage.put_file(path, DEMO_CONFIG)
    stage.settle()


def config_scene(stage: Stage) -> None:
    say("\n▶ Per-repository configuration: a typo is caught, then fixed")
    path = CONFIG_PATHS[stage.flavor]
    sha = stage.put_file(
        path, DEMO_CONFIG + "commands:\n  refresh: {permission: anyone}\nbacklog:\n  roundcap: 3\n"
    )
    say(f"  @maintainer pushed `{path}` letting anyone run `/steward refresh`, with a typo (`roundcap`).")
    stage.settle()
    for status in stage.maintainer("GET", f"/repos/{stage.repo}/commits/{sha}/statuses"):
        if status["context"] == "steward/config":
            state = status.get("state") or status.get("status")
            say(f"\n    commit status steward/config: {state} — {status['description']}")
    issues = stage.maintainer("GET", f"/repos/{stage.repo}/issues?state=open")
    error = next((i for i in issues if i["title"] == "Steward configuration error"), None)
    if error is not None:
        say(f"\n    Steward opened #{error['number']} “{error['title']}”:")
        quote(error["body"], 8)
    stage.put_file(
        path, DEMO_CONFIG + "commands:\n  refresh: {permission: anyone}\nbacklog:\n  round_cap: 3\n"
    )
    say("\n  @maintainer fixed the typo.")
    stage.settle()
    if error is not None:
        state = stage.maintainer("GET", f"/repos/{stage.repo}/issues/{error['number']}")["state"]
        say(f"    #{error['number']} is now {state}.")
    number = stage.issue(stage.outsider, "Which settings apply here?")
    stage.comment(stage.outsider, number, "/steward config")
    say("  @outsider asked `/steward config`.")
    stage.settle()
    stage.show(number, max_lines=8)


def _dashboard(stage: Stage) -> dict[str, Any]:
    found = stage.maintainer("GET", f"/repos/{stage.repo}/issues?state=all&labels=milestone-dashboard")
    [board] = [i for i in found if i["user"]["login"] == "steward-bot"]
    return dict(board)


def _show_dashboard(stage: Stage, max_lines: int) -> None:
    board = _dashboard(stage)
    say(f"\n  ── dashboard #{board['number']} ({board['state']}): {board['title']}")
    quote(board["body"], max_lines)


def _close_milestone(stage: Stage, key: int) -> str:
    """Close the milestone, let Steward see it (Gitea sends no milestone webhook: the periodic job, run now
    rather than at the next minute), and answer its state once the grace period is over."""
    stage.maintainer("PATCH", f"/repos/{stage.repo}/milestones/{key}", {"state": "closed"})
    stage.settle()
    if stage.flavor == "gitea":
        stage.poll("milestones")
        stage.settle()
    return str(stage.maintainer("GET", f"/repos/{stage.repo}/milestones/{key}")["state"])


def milestone_scene(stage: Stage) -> None:
    say("\n▶ The milestone gate: a dashboard per milestone; closed too early, a milestone is reopened")
    made = stage.maintainer("POST", f"/repos/{stage.repo}/milestones", {"title": "v1.0"})
    key = int(made["id"] if stage.flavor == "gitea" else made["number"])

    def add(title: str, labels: list[str]) -> int:
        data = {"title": title, "body": "", "milestone": key}
        number = int(stage.maintainer("POST", f"/repos/{stage.repo}/issues", data)["number"])
        stage.label(number, labels)
        return number

    work = add("Export orders as CSV", ["cycle"])
    scenario = add("Scenario: export a year of orders", ["fieldtest"])
    say(
        f"  @maintainer put #{work} (work, labelled `cycle`) and #{scenario} (a field-test scenario) in v1.0."
    )
    stage.settle()
    board = _dashboard(stage)["number"]
    promise = f"/gate promise add Orders export as CSV — #{scenario}"
    stage.maintainer("POST", f"/repos/{stage.repo}/issues/{board}/comments", {"body": promise})
    say(f"  @maintainer listed on the dashboard what v1.0 promises its users: `{promise}`.")
    stage.settle()
    _show_dashboard(stage, 13)
    how = (
        " (Gitea sends no milestone webhook: Steward notices it by polling)"
        if stage.flavor == "gitea"
        else ""
    )
    say(f"\n  @maintainer closed v1.0 anyway{how}.")
    state = _close_milestone(stage, key)
    say(f"  After the grace period, milestone v1.0 is {state} again:")
    stage.show(_dashboard(stage)["number"], max_lines=6)
    for number, labels in ((work, ["audit:clean"]), (scenario, ["fieldtest:pass"])):
        stage.label(number, labels)
        stage.maintainer("PATCH", f"/repos/{stage.repo}/issues/{number}", {"state": "closed"})
    say(
        f"\n  #{work} was audited (`audit:clean`) and closed; the scenario passed (`fieldtest:pass`) and "
        "was closed."
    )
    stage.settle()
    state = _close_milestone(stage, key)
    say(f"  @maintainer closed v1.0 again: it stays {state}.")
    _show_dashboard(stage, 3)


def catch_up_scene(stage: Stage) -> None:
    say("\n▶ Catch-up after downtime")
    [hook] = stage.maintainer("GET", f"/repos/{stage.repo}/hooks")
    stage.maintainer("PATCH", f"/repos/{stage.repo}/hooks/{hook['id']}", {"active": False})
    number = stage.issue(stage.outsider, "Search returns nothing", CASUAL_BUG)
    stage.label(number, ["bug", "refine"])
    say(
        "  While Steward's webhook was off (as when Steward is down), @outsider reported a bug and "
        "@maintainer labelled it `bug` and `refine`. The forge will not send those events again."
    )
    stage.settle()
    stage.show(number, max_lines=3)
    stage.maintainer("PATCH", f"/repos/{stage.repo}/hooks/{hook['id']}", {"active": True})
    say(f"\n  The operator runs `steward reconcile --repo {stage.flavor}:{stage.repo}`:")
    for line in stage.reconcile(stage.flavor, stage.repo):
        say(f"    $ {line}")
    stage.settle()
    stage.show(number, max_lines=4)
