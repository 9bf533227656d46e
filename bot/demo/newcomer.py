"""`steward demo --all`: a newcomer's report (issue 39) — welcomed once, closed as a duplicate with a link
both ways, reopened by whoever the forge lets reopen it, and a second report closed by its own author."""

from __future__ import annotations

from bot.demo.stage import CONFIG_PATHS, DEMO_CONFIG, Person, Stage, say

WELCOME = "Thanks for your first report here! A maintainer reads new reports every Monday."


def _state(stage: Stage, number: int) -> None:
    issue = stage.maintainer("GET", f"/repos/{stage.repo}/issues/{number}")
    reason = f" ({issue['state_reason'].replace('_', ' ')})" if issue.get("state_reason") else ""
    say(f"    #{number} is {issue['state']}{reason if issue['state'] == 'closed' else ''}")


def newcomer_scene(stage: Stage) -> None:
    say("\n▶ A newcomer: welcomed once, a duplicate closed with a link both ways, and who may reopen it")
    path = CONFIG_PATHS[stage.flavor]
    stage.put_file(path, DEMO_CONFIG + f"triage:\n  welcome: {WELCOME}\n")
    say(f"  @maintainer set `triage.welcome` in `{path}`.")
    stage.settle()
    sandbox = str(stage.maintainer.http.base_url).removesuffix("/").removesuffix("/api/v1")
    newcomer = Person(sandbox, "newcomer", stage.flavor)
    original = stage.issue(stage.outsider, "Dark mode resets after a restart", "Light again after a restart.")
    first = stage.issue(newcomer, "Dark mode is forgotten", "I pick dark mode; after a restart it is light.")
    say(f"\n  @outsider reported #{original}; @newcomer, new here, reported the same as #{first}.")
    stage.settle()
    stage.show(first, max_lines=2)

    stage.comment(stage.maintainer, first, f"/steward duplicate #{original}")
    say(f"\n  @maintainer marked #{first} a duplicate of #{original}.")
    stage.settle()
    stage.show(first, max_lines=2)
    _state(stage, first)
    stage.show(original, max_lines=2)

    stage.comment(newcomer, first, "Mine happens without any restart, though.\n\n/steward reopen")
    say(f"\n  @newcomer asked to reopen #{first}.")
    stage.settle()
    stage.show(first, max_lines=4)
    _state(stage, first)
    if stage.flavor == "github":
        stage.comment(stage.maintainer, first, "/steward reopen")
        say("\n  On GitHub an author may reopen only what they closed themselves: @maintainer reopened it.")
        stage.settle()
        stage.show(first, max_lines=2)
        _state(stage, first)
    else:
        say("    (On Gitea an issue's author may reopen it whoever closed it, so Steward does too.)")

    second = stage.issue(newcomer, "Typo on the settings page", "It says “Prefrences”.")
    stage.settle()
    stage.comment(newcomer, second, "/steward close fixed in the docs repository")
    say(f"\n  @newcomer's second report (#{second}) gets no welcome; they closed it themselves.")
    stage.settle()
    stage.show(second, max_lines=2)
    _state(stage, second)
    stage.put_file(path, DEMO_CONFIG)
    stage.settle()
