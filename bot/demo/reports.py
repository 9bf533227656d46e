"""`steward demo --all`: bug reports as people write them (issue 34) — GitHub's default template with one
field left as the template had it, then filled in; the reporter is asked one plain question, and the labels
say who acts next."""

from __future__ import annotations

from bot.demo.stage import Stage, say

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
