"""`steward demo --all`: bug reports as people write them (issue 34) — GitHub's default template with one
field left as the template had it, then filled in; the reporter is asked one plain question, and the labels
say who acts next; then, with nudges switched on, a report left waiting gets one reminder."""

from __future__ import annotations

import httpx2

from bot.demo.stage import CONFIG_PATHS, DEMO_CONFIG, Stage, say

TEMPLATE_REPORT = """**Describe the bug**
Saving a draft with an emoji in its title loses the draft.

**To Reproduce**
Steps to reproduce the behavior:
1. Write a draft titled "Launch 🎉"
2. Press Save

**Expected behavior**
The draft is saved.

**Screenshots**
https://example.org/draft-gone.png

**Desktop (please complete the following information):**
 - OS: [e.g. iOS]
 - Browser [e.g. chrome, safari]
 - Version [e.g. 22]
"""
FILLED = TEMPLATE_REPORT.replace(
    " - OS: [e.g. iOS]\n - Browser [e.g. chrome, safari]\n - Version [e.g. 22]",
    " - OS: Windows 11\n - Browser: Firefox 133\n - Version: 2.4.1",
)


def reports_scene(stage: Stage) -> None:
    say("\n▶ Bug reports as people write them: one plain question, and labels that say who acts next")
    number = stage.issue(stage.outsider, "Drafts with an emoji are lost", TEMPLATE_REPORT, ["bug", "refine"])
    say("  @outsider filled in GitHub's bug template but left the Desktop field as the template had it.")
    stage.settle()
    stage.show(number, max_lines=9)
    stage.outsider("PATCH", f"/repos/{stage.repo}/issues/{number}", {"body": FILLED})
    say("\n  @outsider filled in the Desktop field.")
    stage.settle()
    stage.show(number, max_lines=3)

    stage.put_file(
        CONFIG_PATHS[stage.flavor],
        DEMO_CONFIG + "bug_refinement:\n  remind_after_days: 14\n  close_after_days: 14\n",
    )
    stage.settle()
    waiting = stage.issue(stage.outsider, "Search ignores accents", TEMPLATE_REPORT, ["bug", "refine"])
    stage.settle()
    # Two weeks pass in the sandbox (its test control moves the thread's times back); the job runs twice.
    sandbox = str(stage.maintainer.http.base_url).removesuffix("/").removesuffix("/api/v1")
    httpx2.post(
        f"{sandbox}/_sandbox/repos/{stage.repo}/issues/{waiting}/age", json={"days": 15}
    ).raise_for_status()
    for _ in range(2):
        stage.poll("bug-nudges")
        stage.settle()
    say(
        f"\n  With `bug_refinement.remind_after_days: 14` on, #{waiting} waited two weeks for @outsider's "
        "answer: one reminder (a second run sends none)."
    )
    stage.show(waiting, max_lines=2)
