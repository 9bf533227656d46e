"""Merging a pull request into the default branch closes the issues its description and its commits name
with a closing keyword (GitHub, "Linking a pull request to an issue"; Gitea, modules/references/references.go
with the default CloseKeywords, resolved on merge) — and nothing else: not a keyword broken by Steward's
neutraliser, not a bare reference, not a merge into another branch."""

from __future__ import annotations

import base64

import httpx2
import pytest

from bot.records.neutralise import inert
from bot.sandbox.shared.closing_refs import closed_by


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


BODY = "Closes #1, fixes #3. See #4. FIXED: alice/demo#5, resolves other/repo#2, Resolves https://x/alice/demo/issues/6"


def test_the_rules() -> None:
    assert closed_by(BODY, "alice", "demo") == [1, 3, 5, 6]
    assert closed_by("closes  #1\n**Fixes** #2\n(resolved #3)\nprefixes #4", "o", "r") == [1, 2, 3]
    assert closed_by(inert(BODY), "alice", "demo") == []


def _issues(client: httpx2.Client, repo: str, count: int) -> None:
    for i in range(count):
        assert client.post(repo + "/issues", json={"title": f"bug {i + 1}"}).status_code == 201


def _states(client: httpx2.Client, repo: str, numbers: range) -> dict[int, str]:
    return {n: client.get(f"{repo}/issues/{n}").json()["state"] for n in numbers}


@pytest.mark.parametrize("body", [BODY, inert(BODY)], ids=["live", "neutralised"])
def test_github_merge_closes_what_the_description_and_commits_name(
    alice: httpx2.Client, repo: str, body: str
) -> None:
    _issues(alice, repo, 6)
    head = alice.get(repo + "/git/ref/heads/main").json()["object"]["sha"]
    alice.post(repo + "/git/refs", json={"ref": "refs/heads/fix", "sha": head})
    alice.put(repo + "/contents/a.py", json={"message": "a\n\nfix #2", "content": _b64("x"), "branch": "fix"})
    n = alice.post(repo + "/pulls", json={"title": "t", "head": "fix", "base": "main", "body": body}).json()
    assert alice.put(f"{repo}/pulls/{n['number']}/merge", json={"merge_method": "merge"}).status_code == 200
    closed = {k for k, v in _states(alice, repo, range(1, 7)).items() if v == "closed"}
    assert closed == ({1, 2, 3, 5, 6} if body == BODY else {2})


def test_gitea_merge_closes_what_the_description_names_but_not_into_another_branch(g: httpx2.Client) -> None:
    g.post("/user/repos", json={"name": "demo"})
    repo = "/repos/alice/demo"
    _issues(g, repo, 3)
    for branch, base in (("side", "main"), ("fix", "side"), ("fix2", "main")):
        change = {
            "branch": base,
            "new_branch": branch,
            "files": [{"operation": "create", "path": f"{branch}.py", "content": _b64("x")}],
        }
        assert g.post(repo + "/contents", json=change).status_code == 201
    n = g.post(
        repo + "/pulls", json={"title": "t", "head": "fix", "base": "side", "body": "Closes #1"}
    ).json()
    g.post(f"{repo}/pulls/{n['number']}/merge", json={"Do": "merge"})
    assert _states(g, repo, range(1, 4)) == {1: "open", 2: "open", 3: "open"}
    body = f"Closes #1\n\n{inert('fixes #2 @alice')}"
    n = g.post(repo + "/pulls", json={"title": "t", "head": "fix2", "base": "main", "body": body}).json()
    g.post(f"{repo}/pulls/{n['number']}/merge", json={"Do": "merge"})
    assert _states(g, repo, range(1, 4)) == {1: "closed", 2: "open", 3: "open"}
