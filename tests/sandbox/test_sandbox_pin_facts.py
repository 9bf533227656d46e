"""Pinned issues, as the real forges do them: one test per fact, its docstring naming the fact and its source
(the sources are quoted in full in ``bot/sandbox/gitea/pins.py`` and ``bot/sandbox/github/graphql.py``)."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from bot.events.event import Unhandled
from bot.events.github import normalise_github
from bot.sandbox.server import SandboxServer

from .helpers import CaptureServer, client, collaborate, idle, schema_errors

PIN = "mutation($id: ID!) { pinIssue(input: {issueId: $id}) { issue { id number isPinned } } }"
UNPIN = "mutation($id: ID!) { unpinIssue(input: {issueId: $id}) { id issue { isPinned } } }"
PINNED = """query($owner: String!, $name: String!) {
  repository(owner: $owner, name: $name) { pinnedIssues(first: 3) { nodes { issue { number state } } } }
}"""


def _gql(who: httpx2.Client, query: str, **variables: Any) -> dict[str, Any]:
    answer = who.post("/graphql", json={"query": query, "variables": variables})
    assert answer.status_code == 200, answer.text
    data: dict[str, Any] = answer.json()
    return data


def _issues(alice: httpx2.Client, repo: str, count: int) -> list[dict[str, Any]]:
    return [alice.post(repo + "/issues", json={"title": f"issue {i}"}).json() for i in range(count)]


def _pinned_on_github(alice: httpx2.Client) -> list[int]:
    nodes = _gql(alice, PINNED, owner="alice", name="demo")["data"]["repository"]["pinnedIssues"]["nodes"]
    return [node["issue"]["number"] for node in nodes]


@pytest.fixture
def grepo(g: httpx2.Client) -> str:
    assert g.post("/user/repos", json={"name": "gpins"}).status_code == 201
    return "/repos/alice/gpins"


# --- GitHub ----------------------------------------------------------------------------------------------


def test_github_pins_through_graphql_with_the_rest_node_id(alice: httpx2.Client, repo: str) -> None:
    """GitHub has no REST endpoint for pins (and its REST issue no pinned field): the GraphQL mutation
    ``pinIssue(input: {issueId})`` takes the issue's node id, the ``node_id`` of the REST issue."""
    [issue] = _issues(alice, repo, 1)
    rest = alice.get(f"{repo}/issues/{issue['number']}").json()
    assert not {"pinned", "is_pinned", "pin_order"} & set(rest)
    pinned = _gql(alice, PIN, id=issue["node_id"])
    assert pinned == {
        "data": {"pinIssue": {"issue": {"id": issue["node_id"], "number": 1, "isPinned": True}}}
    }
    read = _gql(alice, '{ repository(owner: "alice", name: "demo") { issue(number: 1) { id isPinned } } }')
    assert read["data"]["repository"]["issue"] == {"id": issue["node_id"], "isPinned": True}
    assert _pinned_on_github(alice) == [1]
    # (The sandbox's request log names each GraphQL operation, so a test can tell a read from a write.)
    log = httpx2.get(str(alice.base_url).rstrip("/") + "/_sandbox/requests").json()
    assert [r["graphql"] for r in log if r["path"] == "/graphql"] == [
        "mutation pinIssue",
        "query repository",
        "query repository",
    ]


def test_github_pins_at_most_three_issues_and_checks_the_limit_first(alice: httpx2.Client, repo: str) -> None:
    """GitHub: "You can pin up to three important issues"; the fourth is refused 200 with errors
    UNPROCESSABLE "Maximum 3 pinned issues per repository" — checked before whether the issue is pinned
    already; below the limit a pinned issue is refused "The issue is already pinned or could not be pinned at
    this time". A closed pinned issue stays pinned and keeps its place."""
    issues = _issues(alice, repo, 4)
    for issue in issues[:2]:
        _gql(alice, PIN, id=issue["node_id"])
    again = _gql(alice, PIN, id=issues[0]["node_id"])
    assert again["data"] == {"pinIssue": None}
    [error] = again["errors"]
    assert error["type"] == "UNPROCESSABLE" and error["path"] == ["pinIssue"]
    assert error["message"] == "The issue is already pinned or could not be pinned at this time"

    _gql(alice, PIN, id=issues[2]["node_id"])
    alice.patch(f"{repo}/issues/{issues[0]['number']}", json={"state": "closed"})
    assert _pinned_on_github(alice) == [1, 2, 3], "closing does not unpin"
    for refused in (issues[3], issues[1]):
        answer = _gql(alice, PIN, id=refused["node_id"])
        assert answer["data"] == {"pinIssue": None}
        assert [(e["type"], e["message"]) for e in answer["errors"]] == [
            ("UNPROCESSABLE", "Maximum 3 pinned issues per repository")
        ]

    unpinned = _gql(alice, UNPIN, id=issues[0]["node_id"])
    assert unpinned["data"]["unpinIssue"]["issue"] == {"isPinned": False}
    not_pinned = _gql(alice, UNPIN, id=issues[0]["node_id"])
    assert not_pinned["errors"][0]["message"] == "The issue is not pinned or cannot be unpinned at this time"
    assert _gql(alice, PIN, id=issues[3]["node_id"])["data"]["pinIssue"]["issue"]["isPinned"] is True


def test_github_pinning_needs_write_access(sandbox: SandboxServer, alice: httpx2.Client, repo: str) -> None:
    """GitHub: "People with write access to a repository can pin issue in the repository"; anyone else is
    refused FORBIDDEN "LOGIN does not have the correct permissions to execute `PinIssue`"."""
    [issue] = _issues(alice, repo, 1)
    collaborate(alice, repo, "bob", "triage")
    collaborate(alice, repo, "carol", "push")
    with client(sandbox, "bob-token") as bob:
        refused = _gql(bob, PIN, id=issue["node_id"])
        assert refused["data"] == {"pinIssue": None}
        assert [(e["type"], e["message"]) for e in refused["errors"]] == [
            ("FORBIDDEN", "bob does not have the correct permissions to execute `PinIssue`")
        ]
        assert _pinned_on_github(bob) == [], "reading pins needs only read access"
    with client(sandbox, "carol-token") as carol:
        assert _gql(carol, PIN, id=issue["node_id"])["data"]["pinIssue"]["issue"]["isPinned"] is True


def test_github_answers_graphql_it_cannot_run_with_errors_not_a_crash(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str
) -> None:
    """GitHub's GraphQL answers a document that does not parse or validate with 200 and ``errors`` only
    (``undefinedField``, the path starting with the operation), what it cannot resolve with ``data`` null
    there and a NOT_FOUND error, and a request without a token with 401."""
    unknown = _gql(alice, "{ viewer { login } }")
    assert unknown == {
        "errors": [
            {
                "path": ["query", "viewer"],
                "extensions": {"code": "undefinedField", "typeName": "Query", "fieldName": "viewer"},
                "locations": [{"line": 1, "column": 3}],
                "message": "Field 'viewer' doesn't exist on type 'Query'",
            }
        ]
    }
    broken = _gql(alice, "mutation { pinIssue(input: {issueId: ")
    assert "data" not in broken and broken["errors"][0]["message"].startswith("Parse error on")
    assert "data" not in _gql(alice, "query { repository { ...F } }")
    gone = _gql(alice, PIN, id="not-a-node")
    assert gone["errors"][0]["type"] == "NOT_FOUND"
    missing = _gql(alice, '{ repository(owner: "alice", name: "demo") { issue(number: 9) { id } } }')
    assert missing["data"] == {"repository": {"issue": None}}
    assert missing["errors"][0]["message"] == "Could not resolve to an Issue with the number of 9."
    no_query = alice.post("/graphql", json={"variables": {}})
    assert no_query.status_code == 200 and "query attribute" in no_query.json()["errors"][0]["message"]
    with client(sandbox, None) as anonymous:
        denied = anonymous.post("/graphql", json={"query": "{ repository { id } }"})
        assert denied.status_code == 401
        assert denied.json()["message"] == "This endpoint requires you to be authenticated."


def test_github_sends_issues_pinned_and_unpinned_webhooks(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, capture: CaptureServer
) -> None:
    """GitHub sends the ``issues`` webhook with action ``pinned`` and ``unpinned`` (octokit/webhooks
    ``issues.pinned``, ``issues.unpinned``); Steward's normaliser ignores both (202, nothing queued)."""
    body = {"config": {"url": capture.hook_url, "content_type": "json", "secret": "s"}, "events": ["issues"]}
    alice.post(repo + "/hooks", json=body)
    [issue] = _issues(alice, repo, 1)
    _gql(alice, PIN, id=issue["node_id"])
    _gql(alice, UNPIN, id=issue["node_id"])
    idle(sandbox)
    received = [r for r in capture.capture.received if r.payload.get("action") in ("pinned", "unpinned")]
    assert [r.payload["action"] for r in received] == ["pinned", "unpinned"]
    for r in received:
        assert r.event == "issues"
        assert schema_errors("issues", r.payload["action"], r.payload) == []
        assert r.payload["issue"]["number"] == issue["number"] and r.payload["sender"]["login"] == "alice"
        with pytest.raises(Unhandled):
            normalise_github("issues", "d-pin", r.payload)


# --- Gitea ------------------------------------------------------------------------------------------------


def test_gitea_pinning_needs_repository_admin(sandbox: SandboxServer, g: httpx2.Client, grepo: str) -> None:
    """Gitea's pin routes take ``reqToken(), reqAdmin()`` (routers/api/v1/api.go): a Write collaborator is
    refused 403 "user should be an owner or a collaborator with admin write of a repository"; reading the
    pins needs only read access."""
    g.post(grepo + "/issues", json={"title": "one"})
    g.put(grepo + "/collaborators/bob", json={"permission": "write"})
    with httpx2.Client(
        base_url=sandbox.url + "/api/v1", headers={"Authorization": "token bob-token"}, timeout=10
    ) as bob:
        refused = bob.post(grepo + "/issues/1/pin")
        assert refused.status_code == 403
        assert refused.json()["message"] == (
            "user should be an owner or a collaborator with admin write of a repository"
        )
        assert bob.delete(grepo + "/issues/1/pin").status_code == 403
        assert bob.get(grepo + "/issues/pinned").json() == []
    assert g.post(grepo + "/issues/1/pin").status_code == 204


def test_gitea_answers_500_at_max_pinned_and_for_a_pinned_issue(
    sandbox: SandboxServer, g: httpx2.Client, grepo: str
) -> None:
    """Gitea: ``[repository.issue] MAX_PINNED`` (default 3) pins per kind; past it ``PinIssue`` fails with
    ErrIssueMaxPinReached and the API answers **500** with an empty message (``APIErrorInternal``, the
    message hidden in production); pinning a pinned issue is a second ``IssuePin`` row that
    ``UNIQUE(repo_id, issue_id)`` refuses: 500 as well. ``new_pin_allowed`` says whether another pin fits;
    unpinning an issue that is not pinned answers 204."""
    for i in range(4):
        g.post(grepo + "/issues", json={"title": f"issue {i}"})
    assert g.post(grepo + "/issues/1/pin").status_code == 204
    again = g.post(grepo + "/issues/1/pin")
    assert again.status_code == 500 and again.json()["message"] == ""
    for n in (2, 3):
        assert g.post(f"{grepo}/issues/{n}/pin").status_code == 204
    assert g.get(grepo + "/new_pin_allowed").json() == {"issues": False, "pull_requests": True}
    full = g.post(grepo + "/issues/4/pin")
    assert full.status_code == 500 and full.json()["message"] == ""
    pinned = g.get(grepo + "/issues/pinned").json()
    assert [(i["number"], i["pin_order"]) for i in pinned] == [(1, 1), (2, 2), (3, 3)]
    assert g.get(grepo + "/issues/4").json()["pin_order"] == 0
    assert g.delete(grepo + "/issues/4/pin").status_code == 204
    assert g.delete(grepo + "/issues/1/pin").status_code == 204
    assert [i["number"] for i in g.get(grepo + "/issues/pinned").json()] == [2, 3]
    assert g.get(grepo + "/new_pin_allowed").json()["issues"] is True
    assert g.post(grepo + "/issues/99/pin").status_code == 404


def test_gitea_max_pinned_zero_switches_pinning_off(
    sandbox: SandboxServer, g: httpx2.Client, grepo: str
) -> None:
    """Gitea's app.example.ini: MAX_PINNED "Set to 0 to disable pinning Issues": no pin fits, and
    ``new_pin_allowed`` says so."""
    g.post(grepo + "/issues", json={"title": "one"})
    httpx2.put(sandbox.url + "/_sandbox/limits", json={"gitea_max_pinned": 0}).raise_for_status()
    assert g.get(grepo + "/new_pin_allowed").json() == {"issues": False, "pull_requests": False}
    assert g.post(grepo + "/issues/1/pin").status_code == 500


def test_gitea_closing_does_not_unpin_and_sends_no_pin_webhook(
    sandbox: SandboxServer, g: httpx2.Client, grepo: str, capture: CaptureServer
) -> None:
    """Gitea: closing an issue leaves it pinned (services/issue/status.go CloseIssue touches no pin), and a
    pin sends no webhook (modules/structs/hook.go HookIssueAction has no pinned action)."""
    hook = {
        "type": "gitea",
        "config": {"url": capture.hook_url, "content_type": "json", "secret": "s"},
        "events": ["*"],
        "active": True,
    }
    g.post(grepo + "/hooks", json=hook)
    g.post(grepo + "/issues", json={"title": "one"})
    g.post(grepo + "/issues/1/pin")
    g.patch(grepo + "/issues/1", json={"state": "closed"})
    g.delete(grepo + "/issues/1/pin")
    g.post(grepo + "/issues/1/pin")
    idle(sandbox)
    assert [(r.headers["x-gitea-event-type"], r.payload.get("action")) for r in capture.capture.received] == [
        ("issues", "opened"),
        ("issues", "closed"),
    ]
    [pinned] = g.get(grepo + "/issues/pinned").json()
    assert pinned["number"] == 1 and pinned["state"] == "closed"
