"""`steward demo --all`: a pull request held and a review asked for (issue 39) — `/steward hold` puts the
hold label and a failing `steward/hold` status on the head, a new head is held too, `/steward cc` asks the
forge for a review, `/steward unhold` lets the status pass."""

from __future__ import annotations

import base64

from bot.demo.stage import Stage, add_collaborator, say


def _put(stage: Stage, branch: str, path: str, text: str, *, new_branch: bool) -> str:
    """Commit ``text`` to ``path`` on ``branch`` (made from main first when ``new_branch``); the commit."""
    if new_branch and stage.flavor == "gitea":
        stage.maintainer(
            "POST", f"/repos/{stage.repo}/branches", {"new_branch_name": branch, "old_ref_name": "main"}
        )
    elif new_branch:
        main = stage.maintainer("GET", f"/repos/{stage.repo}/git/ref/heads/main")["object"]["sha"]
        stage.maintainer(
            "POST", f"/repos/{stage.repo}/git/refs", {"ref": f"refs/heads/{branch}", "sha": main}
        )
    found = stage.maintainer.get_optional(f"/repos/{stage.repo}/contents/{path}?ref={branch}")
    body = {
        "message": f"Update {path}",
        "content": base64.b64encode(text.encode()).decode(),
        "branch": branch,
    }
    if found:
        body["sha"] = found["sha"]
    method = "POST" if stage.flavor == "gitea" and not found else "PUT"
    return str(stage.maintainer(method, f"/repos/{stage.repo}/contents/{path}", body)["commit"]["sha"])


def _hold_status(stage: Stage, sha: str) -> None:
    statuses = stage.maintainer("GET", f"/repos/{stage.repo}/commits/{sha}/statuses")
    found = [s for s in statuses if s["context"] == "steward/hold"]
    if not found:
        say(f"    steward/hold on `{sha[:10]}`: (none)")
        return
    latest = found[0]
    state = latest.get("state") or latest.get("status")
    say(f"    steward/hold on `{sha[:10]}`: {state} — {latest['description']}")


def hold_scene(stage: Stage) -> None:
    say("\n▶ A pull request held, and a review asked for")
    access = "pull" if stage.flavor == "github" else "read"
    add_collaborator(stage.maintainer, stage.repo, stage.outsider, access)
    _put(stage, "csv-export", "export/csv.py", "def export(rows):\n    return rows\n", new_branch=True)
    made = stage.maintainer(
        "POST",
        f"/repos/{stage.repo}/pulls",
        {"title": "Export the report as CSV", "head": "csv-export", "base": "main", "body": ""},
    )
    number = int(made["number"])
    stage.comment(stage.maintainer, number, "/steward hold until the 2.0 release is out")
    say(f"\n  @maintainer opened #{number} and held it until the release.")
    stage.settle()
    stage.show(number, max_lines=3)
    _hold_status(stage, str(made["head"]["sha"]))
    head = _put(
        stage, "csv-export", "export/csv.py", "def export(rows):\n    return list(rows)\n", new_branch=False
    )
    say("\n  A new commit on the branch: its head is held too.")
    stage.settle()
    _hold_status(stage, head)
    stage.comment(stage.maintainer, number, "/steward cc @outsider")
    say("\n  @maintainer asked @outsider for a review.")
    stage.settle()
    stage.show(number, max_lines=2)
    pull = stage.maintainer("GET", f"/repos/{stage.repo}/pulls/{number}")
    asked = ", ".join(f"@{u['login']}" for u in pull.get("requested_reviewers") or []) or "(nobody)"
    say(f"    review requested from: {asked}")
    stage.comment(stage.maintainer, number, "/steward unhold")
    say("\n  The release is out: @maintainer released the hold.")
    stage.settle()
    stage.show(number, max_lines=2)
    _hold_status(stage, head)
