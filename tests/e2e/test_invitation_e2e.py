"""Nothing acts until invited (DESIGN §3.15, issue 27 §1): a repository without a Steward configuration file
gets the onboarding pull request and help, ping, init and config — no verdict, no dashboard, no reopened
milestone (the Gitea poll reopened one before) — until the maintainer merges the file; then everything acts.
An invalid file is no invitation until it has validated once; removing the file stops the capabilities
again without deleting what they wrote. Both forges."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import Steward
from tests.e2e.stack import ForgeUser

BRANCH = "steward/configure"
FAST = {"grace_period_seconds": 1, "refresh_debounce_seconds": 0.3, "notify": ["maintainer"]}
pytestmark = pytest.mark.handler_settings(milestones=FAST)

REPORT = "It crashes when I open the cart.\n\nSteps: open the app, tap the cart. It closes."


def pulls(user: ForgeUser, repo: str) -> list[dict[str, Any]]:
    size = "limit" if user.flavor == "gitea" else "per_page"
    return [
        p for p in user.call("GET", f"/repos/{repo}/pulls?state=all&{size}=50") if p["head"]["ref"] == BRANCH
    ]


def replies(steward: Steward, repo: str, number: int) -> list[str]:
    return [c["body"] for c in steward.bot_comments(repo, number) if "steward:reply:" in c["body"]]


def dashboards(steward: Steward, repo: str) -> list[dict[str, Any]]:
    return [
        i
        for i in steward.maintainer.issues(repo, "milestone-dashboard")
        if i["user"]["login"] == "steward-bot"
    ]


def close_milestone(steward: Steward, repo: str, key: int) -> None:
    """Close it as a person would; GitHub sends a webhook, Gitea is polled."""
    steward.maintainer.set_milestone_state(repo, key, "closed")
    steward.settle()
    if steward.forge == "gitea":
        steward.run_periodic("milestones")
    steward.settle()


def config_path(steward: Steward) -> str:
    return ".gitea/steward.yml" if steward.forge == "gitea" else ".github/steward.yml"


def test_no_capability_acts_until_the_onboarding_pull_request_is_merged(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo(configured=False)
    bug = m.open_issue(repo, "The cart crashes", REPORT, labels=["bug", "refine"])
    key = m.create_milestone(repo, "v1")
    m.open_issue(repo, "Export orders", milestone=key)
    steward.settle()
    close_milestone(steward, repo, key)

    assert steward.bot_comments(repo, bug) == [], "no verdict before the invitation"
    assert not any(label.startswith("refinement:") for label in m.labels_of(repo, bug))
    assert m.milestone(repo, key)["state"] == "closed", "the gate does not reopen a milestone uninvited"
    assert dashboards(steward, repo) == []

    # The core commands are answered; every other command says why it does nothing yet, and what to do.
    m.comment(repo, bug, "/steward ping")
    refused = m.comment(repo, bug, "/steward refine")
    steward.settle()
    answers = replies(steward, repo, bug)
    assert any("pong — Steward" in a for a in answers)
    m.comment(repo, bug, "/steward help")
    steward.settle()
    [help_text] = [a for a in replies(steward, repo, bug) if "**Steward commands**" in a]
    assert "**Note:** Steward is not switched on in this repository yet" in help_text
    [refusal] = [a for a in answers if "/steward refine" in a]
    assert "Steward is not switched on in this repository yet" in refusal
    assert "`/steward init`" in refusal and "merging it switches Steward on" in refusal
    assert "confused" in m.reactions(repo, refused)
    assert not any(label.startswith("refinement:") for label in m.labels_of(repo, bug))

    m.comment(repo, bug, "/steward init")
    steward.settle()
    [pull] = pulls(m, repo)
    m.merge_pull(repo, pull["number"])
    steward.settle()

    # Invited: Steward says so once on the pull request, and refines the bug already labelled at once
    # (issue 37 §3), not at the next hourly catch-up.
    [on] = [
        c["body"] for c in steward.bot_comments(repo, pull["number"]) if "steward:onboarding-on:" in c["body"]
    ]
    assert "**Steward is on in this repository.** It will run:" in on and "- RA9 bug refinement" in on
    assert f"It is refining now the open issues already labelled for refinement: #{bug}." in on
    assert "refinement:needs-info" in m.labels_of(repo, bug)
    assert any(
        "steward:bug-refinement" in c["body"] or "RA9" in c["body"] for c in steward.bot_comments(repo, bug)
    )
    # Merged again (a redelivery): nothing new is said.
    deliveries = m.call("GET", f"{steward.sandbox.url}/_sandbox/deliveries?event=pull_request")
    closed = [d for d in deliveries if d["action"] == "closed"][-1]
    m.call("POST", f"{steward.sandbox.url}/_sandbox/deliveries/{closed['id']}/redeliver")
    steward.settle()
    assert len([c for c in steward.bot_comments(repo, pull["number"]) if "onboarding-on" in c["body"]]) == 1

    # The next change gets its verdict, and a milestone closed too early is reopened.
    m.edit_issue(repo, bug, body=REPORT + "\n\nIt happens every time.")
    steward.settle()
    assert "refinement:needs-info" in m.labels_of(repo, bug)
    # Day one (issue 37 §4): the proposed preset runs bug refinement only, so closing an ordinary milestone
    # gets nothing reopened; choosing `everything` switches the milestone gate on.
    m.set_milestone_state(repo, key, "open")
    steward.settle()
    close_milestone(steward, repo, key)
    assert m.milestone(repo, key)["state"] == "closed", "the gate is not part of the proposed preset"
    where = ".gitea" if steward.forge == "gitea" else ".github"
    m.put_file(repo, f"{where}/steward.yml", "preset: everything\n")
    m.set_milestone_state(repo, key, "open")
    steward.settle()
    if steward.forge == "gitea":
        steward.run_periodic("milestones")
        steward.settle()
    close_milestone(steward, repo, key)
    assert m.milestone(repo, key)["state"] == "open", "the gate acts once chosen"


def test_an_invalid_file_is_no_invitation_until_it_validates_and_removing_it_stops_steward(
    steward: Steward,
) -> None:
    m = steward.maintainer
    repo = steward.new_repo(configured=False)
    path = config_path(steward)
    m.put_file(repo, path, "limits:\n  commands_per_minute: lots\n")
    steward.settle()
    bug = m.open_issue(repo, "The cart crashes", REPORT, labels=["bug", "refine"])
    m.comment(repo, bug, "/steward refine")
    steward.settle()
    [refusal] = [a for a in replies(steward, repo, bug) if "/steward refine" in a]
    assert f"`{path}` does not validate and never has" in refusal
    [error_issue] = [i for i in m.issues_in(repo) if i["title"] == "Steward configuration error"]
    assert "Steward stays switched off here" in error_issue["body"]
    assert not any(label.startswith("refinement:") for label in m.labels_of(repo, bug))

    m.put_file(repo, path, "limits:\n  commands_per_minute: 50\n")
    steward.settle()
    m.edit_issue(repo, bug, body=REPORT + "\n\nEvery time.")
    steward.settle()
    assert "refinement:needs-info" in m.labels_of(repo, bug), "a valid file is the invitation"
    verdicts = len(steward.bot_comments(repo, bug))

    # Removing the file: Steward stops, and what it wrote stays.
    sha = m.file_sha(repo, path)
    if steward.forge == "gitea":
        change = {"operation": "delete", "path": path, "sha": sha}
        m.call("POST", f"/repos/{repo}/contents", {"message": "remove Steward", "files": [change]})
    else:
        m.call("DELETE", f"/repos/{repo}/contents/{path}", {"message": "remove Steward", "sha": sha})
    steward.settle()
    m.edit_issue(repo, bug, body=REPORT + "\n\nEvery single time.")
    steward.settle()
    assert len(steward.bot_comments(repo, bug)) == verdicts, "nothing new once the file is gone"
    assert "refinement:needs-info" in m.labels_of(repo, bug), "what Steward wrote stays"


@pytest.mark.settings(require_config=False)
def test_an_operator_may_run_every_repository_on_the_defaults(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo(configured=False)
    bug = m.open_issue(repo, "The cart crashes", REPORT, labels=["bug", "refine"])
    steward.settle()
    assert "refinement:needs-info" in m.labels_of(repo, bug)
