"""`/steward hold [reason]` and `/steward unhold` on a pull request (issue 39), on both forges: the hold label
and a failing `steward/hold` status on the head with who held it and why, posted again on each new head while
held; refusals that say who may; a writer's own `steward/hold` status does not stand; a label taken off by
hand releases the hold; the short `/hold` stays another bot's unless `triage.short_commands` is on."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import Steward
from tests.e2e.stack import wait_for
from tests.e2e.test_bugfix_e2e import repo_with_ci

LABEL = "do-not-merge/hold"
CONTEXT = "steward/hold"


def head_of(steward: Steward, repo: str, number: int) -> str:
    return str(steward.maintainer.call("GET", f"/repos/{repo}/pulls/{number}")["head"]["sha"])


def hold_status(steward: Steward, repo: str, sha: str) -> tuple[str, str, str] | None:
    """The latest `steward/hold` status of ``sha``: (state, description, who set it)."""
    found: list[dict[str, Any]] = [
        s for s in steward.maintainer.statuses(repo, sha) if s["context"] == CONTEXT
    ]
    if not found:
        return None
    latest = found[0]
    return (latest.get("state") or latest["status"], latest["description"], latest["creator"]["login"])


def record(steward: Steward, repo: str, number: int) -> str:
    [body] = [
        c["body"] for c in steward.bot_comments(repo, number) if c["body"].startswith("<!-- steward:hold:")
    ]
    return body


def test_hold_fails_each_new_head_with_who_and_why_until_unhold(steward: Steward) -> None:
    repo = steward.new_repo()
    pr = steward.maintainer.open_pull(repo, "Add export", "export")
    steward.settle()
    assert hold_status(steward, repo, head_of(steward, repo, pr)) is None  # never held: no status at all
    steward.triager.comment(repo, pr, "/steward hold until the 2.0 release is out")
    steward.settle()
    assert LABEL in steward.maintainer.labels_of(repo, pr)
    first = head_of(steward, repo, pr)
    assert hold_status(steward, repo, first) == (
        "failure",
        "Held by @triager: until the 2.0 release is out",
        "steward-bot",
    )
    assert "**Held — do not merge.** @triager put this pull request on hold" in record(steward, repo, pr)
    # A new head while held: failing again at once.
    second = steward.maintainer.put_file(repo, "export.txt", "two\n", branch="export")
    steward.settle()
    assert hold_status(steward, repo, second) == (
        "failure",
        "Held by @triager: until the 2.0 release is out",
        "steward-bot",
    )
    # Who may: the outsider is told who can release it.
    refused = steward.outsider.comment(repo, pr, "/steward unhold")
    steward.settle()
    assert "confused" in steward.maintainer.reactions(repo, refused)
    who = "triage" if steward.forge == "github" else "write"
    assert any(
        f"can only be run by people with {who} access or more" in c["body"]
        for c in steward.bot_comments(repo, pr)
    )
    assert LABEL in steward.maintainer.labels_of(repo, pr)
    steward.maintainer.comment(repo, pr, "/steward unhold")
    steward.settle()
    assert LABEL not in steward.maintainer.labels_of(repo, pr)
    assert hold_status(steward, repo, second) == (
        "success",
        "Not held (released by @maintainer)",
        "steward-bot",
    )
    assert record(steward, repo, pr).startswith("<!-- steward:hold:")
    assert "Not held: released by @maintainer." in record(steward, repo, pr)


def test_a_writer_s_hold_status_does_not_stand_and_a_label_taken_off_releases(steward: Steward) -> None:
    repo = repo_with_ci(steward)  # Gitea: subscribed to `status` webhooks too
    steward.maintainer.add_collaborator(repo, "outsider", "push" if steward.forge == "github" else "write")
    pr = steward.maintainer.open_pull(repo, "Add import", "import")
    steward.maintainer.comment(repo, pr, "/steward hold")
    steward.settle()
    head = head_of(steward, repo, pr)
    assert hold_status(steward, repo, head) == (
        "failure",
        "Held by @maintainer (no reason given)",
        "steward-bot",
    )
    forged = {"state": "success", "context": CONTEXT, "description": "fine"}
    steward.outsider.call("POST", f"/repos/{repo}/statuses/{head}", forged)
    steward.settle()
    wait_for(
        lambda: (hold_status(steward, repo, head) or ("",))[0] == "failure" or None,
        what="Steward's failing hold status again",
    )
    assert hold_status(steward, repo, head) == (
        "failure",
        "Held by @maintainer (no reason given)",
        "steward-bot",
    )
    # The label taken off by hand: released, and the forge says by whom.
    steward.outsider.remove_label(repo, pr, LABEL)
    steward.settle()
    assert hold_status(steward, repo, head) == ("success", "Not held (released by @outsider)", "steward-bot")


def test_the_short_hold_is_left_to_other_bots_unless_switched_on(steward: Steward) -> None:
    repo = steward.new_repo()
    pr = steward.maintainer.open_pull(repo, "Add sync", "sync")
    said = steward.maintainer.comment(repo, pr, "/hold")
    steward.settle()
    assert steward.bot_comments(repo, pr) == [] and steward.maintainer.reactions(repo, said) == []
    assert LABEL not in steward.maintainer.labels_of(repo, pr)


def test_steward_config_says_whether_the_hold_blocks_merging_and_a_required_hold_passes_unheld_pulls(
    steward: Steward,
) -> None:
    repo = steward.new_repo()
    first = steward.maintainer.open_issue(repo, "settings?")
    steward.maintainer.comment(repo, first, "/steward config")
    steward.settle()
    [before] = [c["body"] for c in steward.bot_comments(repo, first)]
    assert f"`{CONTEXT}` is **not** a required check on `main`" in before
    steward.maintainer.client.put(
        f"{steward.sandbox.url}/_sandbox/repos/{repo}/protections/main", json={"required_contexts": [CONTEXT]}
    ).raise_for_status()
    asked = steward.maintainer.open_issue(repo, "and now?")
    steward.maintainer.comment(repo, asked, "/steward config")
    pr = steward.maintainer.open_pull(repo, "Add docs", "docs")
    steward.settle()
    [after] = [c["body"] for c in steward.bot_comments(repo, asked)]
    assert f"✅ `{CONTEXT}` is a **required** check on `main`: a held pull request cannot be merged." in after
    # Required: every pull request into main needs it, so one never held gets a passing one.
    assert hold_status(steward, repo, head_of(steward, repo, pr)) == ("success", "Not held", "steward-bot")
