"""Repository permission levels, as GitHub reports and enforces them."""

from __future__ import annotations

import httpx2
import pytest

from bot.sandbox.server import SandboxServer

from .helpers import client, collaborate


@pytest.mark.parametrize(
    ("granted", "permission", "role_name"),
    [
        ("pull", "read", "read"),
        ("triage", "read", "triage"),
        ("push", "write", "write"),
        ("maintain", "write", "maintain"),
        ("admin", "admin", "admin"),
    ],
)
def test_collaborator_permission_levels(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, granted: str, permission: str, role_name: str
) -> None:
    """Each role, once bob accepted the invitation the PUT sent (FORGE-FACTS "Collaborators")."""
    invited = alice.put(repo + "/collaborators/bob", json={"permission": granted})
    assert invited.status_code == 201
    with client(sandbox, "bob-token") as bob:
        assert bob.patch(f"/user/repository_invitations/{invited.json()['id']}").status_code == 204
    answer = alice.get(repo + "/collaborators/bob/permission").json()
    assert (answer["permission"], answer["role_name"], answer["user"]["login"]) == (
        permission,
        role_name,
        "bob",
    )


def test_owner_is_admin_strangers_read_public_and_nothing_private(alice: httpx2.Client, repo: str) -> None:
    assert alice.get(repo + "/collaborators/alice/permission").json()["permission"] == "admin"
    assert alice.get(repo + "/collaborators/carol/permission").json()["permission"] == "read"
    assert alice.get(repo + "/collaborators/ghost/permission").status_code == 404
    alice.post("/user/repos", json={"name": "secret", "private": True})
    answer = alice.get("/repos/alice/secret/collaborators/carol/permission").json()
    assert (answer["permission"], answer["role_name"]) == ("none", "none")


def test_what_each_level_may_do(sandbox: SandboxServer, alice: httpx2.Client, repo: str) -> None:
    collaborate(alice, repo, "bob", "triage")
    issue = alice.post(repo + "/issues", json={"title": "by alice"}).json()["number"]
    with client(sandbox, "bob-token") as bob, client(sandbox, "carol-token") as carol:
        # anyone who can read a public repo may open issues and comment
        assert carol.post(repo + "/issues", json={"title": "by carol"}).status_code == 201
        assert carol.post(f"{repo}/issues/{issue}/comments", json={"body": "me too"}).status_code == 201
        # ...but not label, close others' issues or change repository labels
        assert carol.post(f"{repo}/issues/{issue}/labels", json=["bug"]).status_code == 403
        assert carol.patch(f"{repo}/issues/{issue}", json={"state": "closed"}).status_code == 403
        assert carol.post(repo + "/labels", json={"name": "x"}).status_code == 403
        # labels offered by a reader when opening an issue are silently dropped, as on GitHub
        dropped = carol.post(repo + "/issues", json={"title": "t", "labels": ["bug"]}).json()
        assert dropped["labels"] == []
        # triage may label and close, but not edit someone else's title or create repository labels
        assert bob.post(f"{repo}/issues/{issue}/labels", json=["bug"]).status_code == 200
        assert bob.patch(f"{repo}/issues/{issue}", json={"state": "closed"}).json()["state"] == "closed"
        assert bob.patch(f"{repo}/issues/{issue}", json={"title": "mine now"}).status_code == 403
        assert bob.post(repo + "/milestones", json={"title": "v1"}).status_code == 403
        # only admins manage collaborators and hooks
        assert bob.put(repo + "/collaborators/carol", json={"permission": "push"}).status_code == 403
        assert bob.get(repo + "/hooks").status_code == 403


def test_a_private_repository_is_invisible_to_outsiders(sandbox: SandboxServer, alice: httpx2.Client) -> None:
    alice.post("/user/repos", json={"name": "secret", "private": True})
    with client(sandbox, "carol-token") as carol:
        assert carol.get("/repos/alice/secret").status_code == 404
        assert carol.post("/repos/alice/secret/issues", json={"title": "x"}).status_code == 404
    collaborate(alice, "/repos/alice/secret", "carol", "pull")
    with client(sandbox, "carol-token") as carol:
        assert carol.get("/repos/alice/secret").json()["permissions"]["pull"] is True
