"""GitHub's edit history of an issue's body, through GraphQL (GitHub's REST API has none; the sources are
quoted in ``bot/sandbox/github/graphql.py``): none until the body is edited; then the creation's version and
one per edit, newest first, each with its editor and the whole body; a title change is no content edit.
Gitea's API has no edit history (its content history is a web page's: ``bot/forge/gitea_issues.py``)."""

from __future__ import annotations

from typing import Any

import httpx2

from .helpers import collaborate

HISTORY = """query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    issue(number: $number) {
      includesCreatedEdit lastEditedAt
      userContentEdits(first: 10) { totalCount nodes { editedAt diff editor { login } } }
    }
  }
}"""


def _history(who: httpx2.Client, number: int) -> dict[str, Any]:
    answer = who.post("/graphql", json={"query": HISTORY, "variables": {"owner": "alice", "name": "demo",
                                                                          "number": number}})  # fmt: skip
    assert answer.status_code == 200 and "errors" not in answer.json(), answer.text
    issue: dict[str, Any] = answer.json()["data"]["repository"]["issue"]
    return issue


def test_an_issue_never_edited_has_no_history(alice: httpx2.Client, repo: str) -> None:
    number = alice.post(repo + "/issues", json={"title": "t", "body": "as written"}).json()["number"]
    alice.patch(f"{repo}/issues/{number}", json={"title": "renamed"}).raise_for_status()
    assert _history(alice, number) == {
        "includesCreatedEdit": False,
        "lastEditedAt": None,
        "userContentEdits": {"totalCount": 0, "nodes": []},
    }


def test_each_body_edit_is_a_version_with_its_editor_newest_first(
    sandbox: Any, alice: httpx2.Client, repo: str
) -> None:
    collaborate(alice, repo, "bob", "push")
    number = alice.post(repo + "/issues", json={"title": "t", "body": "v1"}).json()["number"]
    with httpx2.Client(base_url=sandbox.url, headers={"Authorization": "token bob-token"}, timeout=10) as bob:
        bob.patch(f"{repo}/issues/{number}", json={"body": "v2 by bob"}).raise_for_status()
    alice.patch(f"{repo}/issues/{number}", json={"body": "v3 by alice"}).raise_for_status()
    alice.patch(f"{repo}/issues/{number}", json={"body": "v3 by alice"}).raise_for_status()  # no change
    found = _history(alice, number)
    edits = found["userContentEdits"]
    assert found["includesCreatedEdit"] is True and edits["totalCount"] == 3
    assert [(n["editor"]["login"], n["diff"]) for n in edits["nodes"]] == [
        ("alice", "v3 by alice"),
        ("bob", "v2 by bob"),
        ("alice", "v1"),
    ]
    assert found["lastEditedAt"] == edits["nodes"][0]["editedAt"]
    assert edits["nodes"][0]["editedAt"] >= edits["nodes"][1]["editedAt"] >= edits["nodes"][2]["editedAt"]


def test_an_unknown_field_of_an_edit_is_refused_as_github_does(alice: httpx2.Client, repo: str) -> None:
    number = alice.post(repo + "/issues", json={"title": "t", "body": "v1"}).json()["number"]
    edits = "userContentEdits(first: 1) { nodes { body } }"
    query = f'{{ repository(owner: "alice", name: "demo") {{ issue(number: {number}) {{ {edits} }} }} }}'
    errors = alice.post("/graphql", json={"query": query}).json()["errors"]
    assert errors[0]["extensions"] == {
        "code": "undefinedField",
        "typeName": "UserContentEdit",
        "fieldName": "body",
    }
