"""The `steward demo` scene of signed records: a collaborator with write access edits the milestone
dashboard's record to add an override by the maintainer; the record no longer verifies, so Steward rebuilds it
and says who changed it (docs/integrity.md). Self-contained: it makes its own milestone."""

from __future__ import annotations

import json
from typing import Any

from bot.demo.stage import Stage, add_collaborator, say
from bot.records import sticky

_say = say


def _dashboard(stage: Stage, title: str) -> dict[str, Any]:
    query = "?labels=milestone-dashboard&state=all" + ("&type=issues" if stage.flavor == "gitea" else "")
    found = stage.maintainer("GET", f"/repos/{stage.repo}/issues{query}")
    return next(i for i in found if i["title"].startswith(f"Milestone {title} "))


def integrity_scene(stage: Stage) -> None:
    _say("\n▶ Signed records: a hand-edited record is noticed and rebuilt")
    made = stage.maintainer("POST", f"/repos/{stage.repo}/milestones", {"title": "v2.0"})
    key = int(made["id"] if stage.flavor == "gitea" else made["number"])
    data = {"title": "Import orders", "body": "", "milestone": key}
    stage.maintainer("POST", f"/repos/{stage.repo}/issues", data)
    add_collaborator(
        stage.maintainer, stage.repo, stage.outsider, "write" if stage.flavor == "gitea" else "push"
    )
    stage.settle()
    board = _dashboard(stage, "v2.0")
    record = sticky.unverified_data(board["body"]) or {}
    record["override"] = {
        "by": "maintainer",
        "at": "2026-01-01T00:00:00Z",
        "reason": "ship it",
        "overrode": [],
    }
    lines = board["body"].splitlines()
    forged = "\n".join(
        sticky.encode_data(record) if ln.startswith("<!-- steward:data ") else ln for ln in lines
    )
    stage.outsider("PATCH", f"/repos/{stage.repo}/issues/{board['number']}", {"body": forged})
    _say(
        "  @outsider, now a collaborator with write access, edited the v2.0 dashboard's hidden record to\n"
        f"  say that @maintainer overrode the gate: {json.dumps(record['override'])}"
    )
    stage.settle()
    _say("  The record's signature no longer matched, so Steward rebuilt it from the milestone and said so:")
    stage.show(board["number"], max_lines=3)
    after = sticky.unverified_data(_dashboard(stage, "v2.0")["body"]) or {}
    _say(f"  The override in the rebuilt record: {after.get('override')} — closing v2.0 would reopen it.")
