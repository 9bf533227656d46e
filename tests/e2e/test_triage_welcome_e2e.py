"""The welcome end to end, on both forges (issue 39, `triage.welcome`): a first-time contributor's first issue
or pull request gets the configured words once — never twice, not on their next issue, not for a replayed
delivery (even under a new delivery id, as after a Redis flush), and never for the repository's own people."""

from __future__ import annotations

import json
import uuid

from tests.e2e.conftest import Steward
from tests.e2e.stack import TEST_CONFIG_PATHS

WELCOME = "triage:\n  welcome: Thanks for your first contribution! A maintainer will look at it this week.\n"


def welcomes(steward: Steward, repo: str, number: int) -> list[str]:
    return [c["body"] for c in steward.bot_comments(repo, number) if "steward:welcome:" in c["body"]]


def welcoming_repo(steward: Steward) -> str:
    repo = steward.new_repo()
    steward.maintainer.put_file(repo, TEST_CONFIG_PATHS[steward.forge], WELCOME)
    steward.settle()
    return repo


def test_a_newcomers_first_issue_is_welcomed_once_and_their_next_is_not(steward: Steward) -> None:
    repo = welcoming_repo(steward)
    first = steward.outsider.open_issue(repo, "Dark mode flickers")
    steward.settle()
    [welcome] = welcomes(steward, repo, first)
    assert "@outsider: Thanks for your first contribution!" in welcome

    deliveries = steward.maintainer.call("GET", f"{steward.sandbox.url}/_sandbox/deliveries?event=issues")
    opened = [d for d in deliveries if d["action"] == "opened"][-1]
    payload = steward.maintainer.call("GET", f"{steward.sandbox.url}/_sandbox/deliveries/{opened['id']}")[
        "payload"
    ]
    steward.deliver("issues", json.dumps(payload).encode(), delivery=str(uuid.uuid4()))
    steward.settle()
    assert len(welcomes(steward, repo, first)) == 1

    second = steward.outsider.open_issue(repo, "And the icons are blurry")
    own = steward.maintainer.open_issue(repo, "Release checklist")
    colleague = steward.triager.open_issue(repo, "Triage notes")
    steward.settle()
    for number in (second, own, colleague):
        assert welcomes(steward, repo, number) == []


def test_a_newcomers_first_pull_request_is_welcomed(steward: Steward) -> None:
    repo = welcoming_repo(steward)
    name = repo.rsplit("/", 1)[1]
    assert steward.outsider.client.post(f"/repos/{repo}/forks", json={}).status_code == 202
    fork = f"outsider/{name}"
    steward.outsider.create_branch(fork, "typo")
    steward.outsider.put_file(fork, "README.md", "Fixed a typo.\n", branch="typo")
    opened = steward.outsider.client.post(
        f"/repos/{repo}/pulls", json={"title": "Fix a typo", "head": "outsider:typo", "base": "main"}
    )
    assert opened.status_code == 201, opened.text
    steward.settle()
    [welcome] = welcomes(steward, repo, int(opened.json()["number"]))
    assert welcome.count("@outsider") == 1


def test_without_the_setting_nobody_is_welcomed(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.outsider.open_issue(repo, "Hello")
    steward.settle()
    assert welcomes(steward, repo, number) == []
