"""The `steward demo` scene of a renamed repository: a milestone with its dashboard, the repository renamed,
and the next issue in the milestone listed on the same dashboard — Steward keeps what it knows of a
repository under its id, which a rename keeps (docs/operations.md "Renamed and transferred repositories").
Self-contained: it makes its own milestone."""

from __future__ import annotations

from typing import Any

from bot.demo.stage import Stage, say


def _dashboards(stage: Stage, title: str) -> list[dict[str, Any]]:
    query = "?labels=milestone-dashboard&state=all" + ("&type=issues" if stage.flavor == "gitea" else "")
    found = stage.maintainer("GET", f"/repos/{stage.repo}/issues{query}")
    return [i for i in found if i["title"].startswith(f"Milestone {title} ")]


def _refresh(stage: Stage) -> None:
    stage.settle()
    if stage.flavor == "gitea":  # Gitea sends no milestone webhooks: the periodic job polls
        stage.poll("milestones")
        stage.settle()


def rename_scene(stage: Stage) -> None:
    say("\n▶ A renamed repository: Steward follows it by its id")
    made = stage.maintainer("POST", f"/repos/{stage.repo}/milestones", {"title": "v3.0"})
    key = int(made["id"] if stage.flavor == "gitea" else made["number"])
    stage.maintainer("POST", f"/repos/{stage.repo}/issues", {"title": "Import invoices", "milestone": key})
    _refresh(stage)
    [board] = _dashboards(stage, "v3.0")
    old = stage.repo
    owner, name = old.split("/")
    stage.maintainer("PATCH", f"/repos/{old}", {"name": f"{name}-2"})
    stage.repo = f"{owner}/{name}-2"
    how = (
        "GitHub answers the old name with 301 (307 for writes) to `/repositories/{id}` and sends a "
        "`repository.renamed` webhook"
        if stage.flavor == "github"
        else "Gitea answers the old name with 307 to the new one and sends no webhook"
    )
    say(f"  @maintainer renamed {old} to {stage.repo}; {how}.")
    later = stage.maintainer(
        "POST", f"/repos/{stage.repo}/issues", {"title": "Export to CSV", "milestone": key}
    )
    _refresh(stage)
    boards = _dashboards(stage, "v3.0")
    listed = [b for b in boards if f"#{later['number']}" in b["body"]]
    number, first = later["number"], board["number"]
    if [b["number"] for b in listed] == [first] and len(boards) == 1:
        say(
            f"  A new issue in v3.0 (#{number}) is listed on the same dashboard, #{first}, made before the "
            "rename: Steward found it under the new name and made nothing again."
        )
    else:
        found = ", ".join(f"#{b['number']}" for b in boards) or "none"
        say(f"  The v3.0 dashboards after the rename: {found} (expected only #{first}, listing #{number}).")
