"""`steward demo --all`: the everyday commands (issue 39) — a claim where the forge will assign its holder
(GitHub: whoever commented) and where it will not (Gitea: write access only, so Steward keeps the claim in
its record), labels set by whom the forge lets, a label of Steward's own refused, a misspelt one answered
with the nearest name."""

from __future__ import annotations

from bot.demo.stage import Person, Stage, say


def _assigned(stage: Stage, number: int) -> None:
    issue = stage.maintainer("GET", f"/repos/{stage.repo}/issues/{number}")
    people = ", ".join(f"@{a['login']}" for a in issue.get("assignees") or []) or "(nobody)"
    say(f"    assigned: {people}")


def triage_scene(stage: Stage) -> None:
    say("\n▶ Everyday commands: claim, assign and label, each by whom the forge lets")
    have = {label["name"] for label in stage.maintainer("GET", f"/repos/{stage.repo}/labels")}
    for name in {"good first issue", "area/export"} - have:  # GitHub has `good first issue` already
        stage.maintainer("POST", f"/repos/{stage.repo}/labels", {"name": name, "color": "ededed"})
    sandbox = str(stage.maintainer.http.base_url).removesuffix("/").removesuffix("/api/v1")
    newcomer = Person(sandbox, "newcomer", stage.flavor)  # no access to the repository
    number = stage.issue(newcomer, "CSV export drops the last row", "The last order is missing.")
    stage.comment(newcomer, number, "I'd like to fix this one.\n\n/steward claim")
    say(f"\n  @newcomer reported #{number} and claimed it.")
    stage.settle()
    stage.show(number, max_lines=6)
    _assigned(stage, number)

    stage.comment(newcomer, number, '/steward label "good first issue"')
    say("\n  @newcomer tried to label it.")
    stage.settle()
    stage.show(number, max_lines=4)

    stage.comment(stage.maintainer, number, "/steward label good-first-issue refinement:approved")
    say("\n  @maintainer misspelt a label and tried one of Steward's own.")
    stage.settle()
    stage.show(number, max_lines=5)

    stage.comment(
        stage.maintainer, number, '/steward label "good first issue" area/export\n/steward assign me'
    )
    say("\n  @maintainer labelled it and assigned themselves too.")
    stage.settle()
    stage.show(number, max_lines=6)
    _assigned(stage, number)
