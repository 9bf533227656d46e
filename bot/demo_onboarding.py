"""`steward demo`'s onboarding scene: `/steward init` proposes the configuration in a pull request, and
merging it creates the labels."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.demo import Stage

BRANCH = "steward/configure"


def _say(text: str) -> None:
    print(text, flush=True)


def _delete_file(stage: Stage, path: str) -> None:
    found = stage.maintainer.get_optional(f"/repos/{stage.repo}/contents/{path}")
    if not found:
        return
    message = f"Remove {path}"
    if stage.flavor == "gitea":
        change = {"operation": "delete", "path": path, "sha": found["sha"]}
        stage.maintainer("POST", f"/repos/{stage.repo}/contents", {"message": message, "files": [change]})
    else:
        stage.maintainer.http.request(
            "DELETE", f"/repos/{stage.repo}/contents/{path}", json={"message": message, "sha": found["sha"]}
        ).raise_for_status()


def _onboarding_pull(stage: Stage) -> dict[str, Any] | None:
    size = "limit" if stage.flavor == "gitea" else "per_page"
    pulls = stage.maintainer("GET", f"/repos/{stage.repo}/pulls?state=open&{size}=50")
    return next((p for p in pulls if p["head"]["ref"] == BRANCH), None)


def onboarding_scene(stage: Stage) -> None:
    from bot.demo import _readable

    _say("\n▶ Onboarding: a “Configure Steward” pull request")
    path = ".gitea/steward.yml" if stage.flavor == "gitea" else ".github/steward.yml"
    _delete_file(stage, path)
    stage.settle()
    number = stage.issue(stage.maintainer, "Set Steward up here")
    stage.comment(stage.outsider, number, "/steward init")
    stage.comment(stage.maintainer, number, "/steward init")
    _say(
        f"  @maintainer removed `{path}` to start over; @outsider, then @maintainer (an admin) asked "
        "`/steward init`."
    )
    stage.settle()
    stage.show(number, max_lines=4)
    pull = _onboarding_pull(stage)
    if pull is None:
        _say("\n    (no onboarding pull request was opened)")
        return
    _say(f"\n    Steward opened #{pull['number']} “{pull['title']}” from `{BRANCH}`:")
    _say("\n".join(f"      │ {line}".rstrip() for line in _readable(pull["body"], 12)))
    files = stage.maintainer("GET", f"/repos/{stage.repo}/pulls/{pull['number']}/files")
    _say("    files: " + ", ".join(f"`{f['filename']}`" for f in files))
    before = {label["name"] for label in stage.maintainer("GET", f"/repos/{stage.repo}/labels")}
    merge = {"Do": "merge"} if stage.flavor == "gitea" else {}
    method = "POST" if stage.flavor == "gitea" else "PUT"
    stage.maintainer(method, f"/repos/{stage.repo}/pulls/{pull['number']}/merge", merge)
    _say("\n  @maintainer merged it.")
    stage.settle()
    after = {label["name"] for label in stage.maintainer("GET", f"/repos/{stage.repo}/labels")}
    made = sorted(after - before)
    _say(f"    Steward created {len(made)} labels at the merge: {', '.join(made) if made else '(none new)'}")
