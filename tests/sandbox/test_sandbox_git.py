"""The small git model: contents, blobs, trees, commits, refs and commit statuses, hashed as git hashes."""

from __future__ import annotations

import base64

import httpx2


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_a_new_repository_has_a_readme_commit_on_its_default_branch(alice: httpx2.Client) -> None:
    created = alice.post("/user/repos", json={"name": "trunk", "default_branch": "trunk"}).json()
    assert created["default_branch"] == "trunk"
    head = alice.get("/repos/alice/trunk/git/ref/heads/trunk").json()["object"]["sha"]
    commit = alice.get(f"/repos/alice/trunk/commits/{head}").json()
    assert commit["parents"] == []
    assert [(f["filename"], f["status"]) for f in commit["files"]] == [("README.md", "added")]
    assert alice.get("/repos/alice/trunk/contents/README.md").status_code == 200


def test_blob_shas_are_git_shas(alice: httpx2.Client, repo: str) -> None:
    blob = alice.post(repo + "/git/blobs", json={"content": "hello\n"}).json()
    assert (
        blob["sha"] == "ce013625030ba8dba906f756967f9e9ca394464a"
    )  # `printf 'hello\n' | git hash-object --stdin`


def test_contents_put_creates_commits_and_guards_against_stale_updates(
    alice: httpx2.Client, repo: str
) -> None:
    first = alice.put(repo + "/contents/docs/a.md", json={"message": "add", "content": _b64("one")})
    assert first.status_code == 201
    sha = first.json()["content"]["sha"]
    missing_sha = alice.put(repo + "/contents/docs/a.md", json={"message": "edit", "content": _b64("two")})
    assert missing_sha.status_code == 422
    stale = alice.put(
        repo + "/contents/docs/a.md", json={"message": "edit", "content": _b64("two"), "sha": "0" * 40}
    )
    assert stale.status_code == 409
    second = alice.put(
        repo + "/contents/docs/a.md", json={"message": "edit", "content": _b64("two"), "sha": sha}
    )
    assert second.status_code == 200
    assert second.json()["commit"]["parents"][0]["sha"] == first.json()["commit"]["sha"]
    old = alice.get(repo + "/contents/docs/a.md", params={"ref": first.json()["commit"]["sha"]}).json()
    new = alice.get(repo + "/contents/docs/a.md").json()
    assert base64.b64decode(old["content"]) == b"one" and base64.b64decode(new["content"]) == b"two"
    listing = alice.get(repo + "/contents/docs").json()
    assert [(e["name"], e["type"]) for e in listing] == [("a.md", "file")]


def test_a_branch_with_a_commit_built_from_trees(alice: httpx2.Client, repo: str) -> None:
    head = alice.get(repo + "/git/ref/heads/main").json()["object"]["sha"]
    base_tree = alice.get(f"{repo}/git/commits/{head}").json()["tree"]["sha"]
    tree = alice.post(
        repo + "/git/trees",
        json={
            "base_tree": base_tree,
            "tree": [
                {
                    "path": "tests/test_bug.py",
                    "mode": "100644",
                    "type": "blob",
                    "content": "def test(): 1/0\n",
                }
            ],
        },
    ).json()
    assert {e["path"] for e in tree["tree"]} == {"README.md", "tests"}
    commit = alice.post(
        repo + "/git/commits", json={"message": "Failing test", "tree": tree["sha"], "parents": [head]}
    ).json()
    assert alice.post(repo + "/git/refs", json={"ref": "refs/heads/fix-1", "sha": head}).status_code == 201
    assert alice.post(repo + "/git/refs", json={"ref": "refs/heads/fix-1", "sha": head}).status_code == 422
    assert alice.patch(repo + "/git/refs/heads/fix-1", json={"sha": commit["sha"]}).status_code == 200
    assert (
        alice.patch(repo + "/git/refs/heads/fix-1", json={"sha": head}).status_code == 422
    )  # not a fast forward
    assert alice.patch(repo + "/git/refs/heads/fix-1", json={"sha": head, "force": True}).status_code == 200
    alice.patch(repo + "/git/refs/heads/fix-1", json={"sha": commit["sha"]})
    content = alice.get(repo + "/contents/tests/test_bug.py", params={"ref": "fix-1"}).json()
    assert base64.b64decode(content["content"]) == b"def test(): 1/0\n"
    assert alice.get(repo + "/contents/tests/test_bug.py").status_code == 404  # main is untouched


def test_commit_statuses_list_newest_first_and_combine(alice: httpx2.Client, repo: str) -> None:
    head = alice.get(repo + "/git/ref/heads/main").json()["object"]["sha"]
    alice.post(f"{repo}/statuses/{head}", json={"state": "pending", "context": "ci"})
    alice.post(f"{repo}/statuses/{head}", json={"state": "success", "context": "ci"})
    alice.post(f"{repo}/statuses/{head}", json={"state": "success", "context": "lint"})
    listed = alice.get(f"{repo}/commits/main/statuses").json()
    assert [(s["context"], s["state"]) for s in listed] == [
        ("lint", "success"),
        ("ci", "success"),
        ("ci", "pending"),
    ]
    combined = alice.get(f"{repo}/commits/{head}/status").json()
    assert (combined["state"], combined["total_count"]) == ("success", 2)
    assert alice.post(f"{repo}/statuses/{'f' * 40}", json={"state": "success"}).status_code == 422
