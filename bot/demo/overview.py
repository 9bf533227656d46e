"""`steward demo --all`: the overview issue (issue 39) — switched on, it appears pinned and says what needs
whom (people shown, never pinged); a label change moves an issue; a forged body is rebuilt, the editor
named."""

from __future__ import annotations

from typing import Any

from bot.demo.stage import CONFIG_PATHS, DEMO_CONFIG, Stage, quote, say

ON = "triage:\n  overview: true\n  overview_refresh_seconds: 0.5\n"


def _overview(stage: Stage) -> dict[str, Any]:
    found = stage.maintainer("GET", f"/repos/{stage.repo}/issues?state=all&labels=steward-overview")
    [overview] = [i for i in found if i["user"]["login"] == "steward-bot"]
    return dict(overview)


def _pinned(stage: Stage) -> list[int]:
    if stage.flavor == "gitea":
        return [int(i["number"]) for i in stage.maintainer("GET", f"/repos/{stage.repo}/issues/pinned")]
    owner, name = stage.repo.split("/")
    query = """query($owner: String!, $name: String!) {
      repository(owner: $owner, name: $name) { pinnedIssues(first: 3) { nodes { issue { number } } } }
    }"""
    answer = stage.maintainer(
        "POST", "/graphql", {"query": query, "variables": {"owner": owner, "name": name}}
    )
    nodes = answer["data"]["repository"]["pinnedIssues"]["nodes"]
    return [int(node["issue"]["number"]) for node in nodes]


def _headline(stage: Stage) -> str:
    body = str(_overview(stage)["body"])
    return next((line for line in body.splitlines() if line.startswith("**")), "")


def overview_scene(stage: Stage) -> None:
    say("\n▶ One issue that says what needs whom: the overview a maintainer opens in the morning")
    path = CONFIG_PATHS[stage.flavor]
    stage.put_file(path, DEMO_CONFIG + ON)
    say(f"  @maintainer set `triage.overview: true` in `{path}`.")
    stage.settle()
    overview = _overview(stage)
    pinned = "pinned" if overview["number"] in _pinned(stage) else "not pinned"
    say(f"\n  ── overview #{overview['number']} ({pinned}): {overview['title']}")
    quote(overview["body"], 14)

    report = stage.issue(stage.outsider, "Search ignores accents", "Searching “cafe” does not find “café”.")
    stage.label(report, ["bug", "refinement:needs-triage"])
    say(f"\n  @outsider reported #{report}; it now waits for the maintainers (`refinement:needs-triage`).")
    stage.settle()
    say(f"    The overview's first line: {_headline(stage)}")

    number = overview["number"]
    stage.maintainer("PATCH", f"/repos/{stage.repo}/issues/{number}", {"body": "Nothing to do here. ✓"})
    say("\n  @maintainer replaced the overview's text with “Nothing to do here. ✓”.")
    stage.settle()
    say(f"    The overview's first line again: {_headline(stage)}")
    stage.show(number, max_lines=2)
    stage.put_file(path, DEMO_CONFIG)
    stage.settle()
