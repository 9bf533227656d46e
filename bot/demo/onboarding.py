"""The first hour, as `steward demo` tells it: Steward is installed on a repository and waits (nothing acts
until it is invited); `/steward init` proposes the configuration in a pull request and merging it switches
Steward on; then a bug report gets its verdict, and a complete one is approved."""

from __future__ import annotations

from typing import Any

from bot.demo.stage import CONFIG_PATHS, Stage, quote, say
from bot.demo.texts import APPROVED_BUG, CASUAL_BUG

BRANCH = "steward/configure"


def _onboarding_pull(stage: Stage) -> dict[str, Any] | None:
    size = "limit" if stage.flavor == "gitea" else "per_page"
    pulls = stage.maintainer("GET", f"/repos/{stage.repo}/pulls?state=open&{size}=50")
    return next((p for p in pulls if p["head"]["ref"] == BRANCH), None)


def waiting_scene(stage: Stage) -> None:
    say("\n▶ Installed, not yet invited: Steward waits for its configuration file")
    number = stage.issue(stage.outsider, "App crashes", CASUAL_BUG)
    stage.label(number, ["bug", "refine"])
    stage.comment(stage.maintainer, number, "/steward refine")
    say(
        "  @outsider reported a crash in one line; @maintainer labelled it `bug` and `refine`, then asked "
        "`/steward refine`."
    )
    stage.settle()
    stage.show(number, max_lines=6)
    stage.kept["bug"] = number


def invitation_scene(stage: Stage) -> None:
    say("\n▶ The invitation: `/steward init` proposes the configuration in a pull request")
    number = stage.issue(stage.maintainer, "Set Steward up here")
    stage.comment(stage.outsider, number, "/steward init")
    stage.comment(stage.maintainer, number, "/steward init")
    say("  @outsider, then @maintainer (a repository admin) asked `/steward init`.")
    stage.settle()
    stage.show(number, max_lines=3)
    pull = _onboarding_pull(stage)
    if pull is None:
        say("\n    (no onboarding pull request was opened)")
        return
    say(f"\n    Steward opened #{pull['number']} “{pull['title']}” from `{BRANCH}`:")
    quote(pull["body"], 10)
    files = stage.maintainer("GET", f"/repos/{stage.repo}/pulls/{pull['number']}/files")
    say("    files: " + ", ".join(f"`{f['filename']}`" for f in files))
    # One page holds them all (GitHub's new repository has nine labels already; Gitea pages by `limit`).
    every = f"/repos/{stage.repo}/labels?per_page=100&limit=50"
    before = {label["name"] for label in stage.maintainer("GET", every)}
    merge = {"Do": "merge"} if stage.flavor == "gitea" else {}
    method = "POST" if stage.flavor == "gitea" else "PUT"
    stage.maintainer(method, f"/repos/{stage.repo}/pulls/{pull['number']}/merge", merge)
    say(f"\n  @maintainer merged it: `{CONFIG_PATHS[stage.flavor]}` is on the default branch.")
    stage.settle()
    after = {label["name"] for label in stage.maintainer("GET", every)}
    made = sorted(after - before)
    say(f"    Steward created {len(made)} labels at the merge: {', '.join(made) if made else '(none new)'}")


def first_verdict_scene(stage: Stage) -> None:
    say("\n▶ Switched on: the bug report's verdict (RA9), then a complete report")
    number = stage.kept.get("bug") or stage.issue(
        stage.outsider, "App crashes", CASUAL_BUG, ["bug", "refine"]
    )
    stage.comment(stage.maintainer, number, "/steward refine")
    say(f"  @maintainer asked `/steward refine` on #{number} again.")
    stage.settle()
    stage.show(number, max_lines=10)
    stage.outsider("PATCH", f"/repos/{stage.repo}/issues/{number}", {"body": APPROVED_BUG})
    say("\n  @outsider rewrote the description with every RA9 section.")
    stage.settle()
    stage.show(number, max_lines=4)


STORY = (waiting_scene, invitation_scene, first_verdict_scene)
