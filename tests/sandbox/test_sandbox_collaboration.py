"""Who works on a repository: collaborators invited and accepted, organisation members, and branch
protection written by an admin — with each forge's answers."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx2
import pytest

from bot.sandbox.server import SandboxServer

from .helpers import OpenApiCheck, client, gitea_client, recorded
from .test_sandbox_gitea import GiteaApiCheck
from .test_sandbox_records import _app_token


@pytest.fixture
def bob(sandbox: SandboxServer) -> Iterator[httpx2.Client]:
    with client(sandbox, "bob-token") as c:
        yield c


def _org(sandbox: SandboxServer, login: str, members: dict[str, str]) -> None:
    answer = httpx2.post(sandbox.url + "/_sandbox/orgs", json={"login": login, "members": members})
    assert answer.status_code == 201, answer.text


def test_github_invites_a_collaborator_who_gets_access_on_accepting(
    alice: httpx2.Client, bob: httpx2.Client, repo: str, openapi: OpenApiCheck
) -> None:
    """FORGE-FACTS "Collaborators": `PUT /collaborators/{u}` answers 201 with an invitation (`Location` the
    invitation); the invitee has no access until `PATCH /user/repository_invitations/{id}` (204); the
    repository's `GET /invitations` lists it meanwhile; afterwards `PUT` answers 204 and changes the role.
    Listings carry `permissions` and `role_name`. As octokit/fixtures `add-and-remove-repository-collaborator`
    recorded each answer."""
    steps = {(r["method"], r["status"]): r for r in recorded("add-and-remove-repository-collaborator")}
    invited = openapi(alice.put(repo + "/collaborators/bob", json={"permission": "push"}))
    assert invited.status_code == 201
    assert set(invited.json()) >= set(steps[("put", 201)]["response"])
    assert invited.json()["permissions"] == steps[("put", 201)]["response"]["permissions"] == "write"
    assert invited.headers["location"] == invited.json()["url"]
    assert bob.post(repo + "/labels", json={"name": "mine"}).status_code == 403, "not yet a writer"
    assert alice.get(repo + "/collaborators/bob").status_code == 404
    pending = openapi(alice.get(repo + "/invitations")).json()
    assert [i["invitee"]["login"] for i in pending] == ["bob"]
    again = alice.put(repo + "/collaborators/bob", json={"permission": "triage"})
    assert (again.status_code, again.json()["id"]) == (201, invited.json()["id"]), "one pending invitation"
    assert [i["id"] for i in openapi(bob.get("/user/repository_invitations")).json()] == [
        invited.json()["id"]
    ]
    assert openapi(bob.patch(f"/user/repository_invitations/{invited.json()['id']}")).status_code == 204
    assert openapi(alice.get(repo + "/collaborators/bob")).status_code == 204
    listed = openapi(alice.get(repo + "/collaborators")).json()
    real = steps[("get", 200)]["response"]
    assert set(listed[0]) == set(real[0])
    assert [(c["login"], c["role_name"], c["permissions"]) for c in listed] == [
        ("alice", "admin", {"admin": True, "maintain": True, "push": True, "triage": True, "pull": True}),
        ("bob", "triage", {"admin": False, "maintain": False, "push": False, "triage": True, "pull": True}),
    ]
    assert openapi(alice.put(repo + "/collaborators/bob", json={"permission": "push"})).status_code == 204
    assert alice.get(repo + "/collaborators/bob/permission").json()["role_name"] == "write"
    assert openapi(alice.delete(repo + "/collaborators/bob")).status_code == 204
    assert alice.get(repo + "/collaborators/bob").status_code == 404


def test_github_invitations_are_answered_by_the_invitee_only(
    sandbox: SandboxServer, alice: httpx2.Client, bob: httpx2.Client, repo: str, openapi: OpenApiCheck
) -> None:
    """`PATCH`/`DELETE /user/repository_invitations/{id}` are the invitee's: anyone else gets 404; declining
    (DELETE) leaves no access. The repository's admins change (`PATCH /invitations/{id}`, `permissions`) or
    withdraw (`DELETE`) an invitation."""
    made = alice.put(repo + "/collaborators/bob", json={"permission": "pull"}).json()
    with client(sandbox, "carol-token") as carol:
        assert carol.patch(f"/user/repository_invitations/{made['id']}").status_code == 404
    changed = openapi(alice.patch(f"{repo}/invitations/{made['id']}", json={"permissions": "maintain"}))
    assert changed.json()["permissions"] == "maintain"
    assert alice.patch(f"{repo}/invitations/{made['id']}", json={"permissions": "owner"}).status_code == 422
    assert openapi(bob.delete(f"/user/repository_invitations/{made['id']}")).status_code == 204
    assert alice.get(repo + "/invitations").json() == []
    assert alice.get(repo + "/collaborators/bob/permission").json()["permission"] == "read"
    withdrawn = alice.put(repo + "/collaborators/carol", json={}).json()
    assert openapi(alice.delete(f"{repo}/invitations/{withdrawn['id']}")).status_code == 204
    with client(sandbox, "carol-token") as carol:
        assert carol.get("/user/repository_invitations").json() == []


def test_github_organisation_members_are_added_at_once_outsiders_invited(
    sandbox: SandboxServer, alice: httpx2.Client, bob: httpx2.Client, openapi: OpenApiCheck
) -> None:
    """GitHub's description of "Add a repository collaborator": 204 "when an organization member is added
    as an individual collaborator"; an outside collaborator of an organisation's repository is invited like
    anyone (201). "List repository collaborators" of an organisation's repository names its members (read,
    the default base permission) and owners."""
    _org(sandbox, "acme", {"alice": "admin", "bob": "member"})
    assert openapi(alice.post("/orgs/acme/repos", json={"name": "tool"})).status_code == 201
    repo = "/repos/acme/tool"
    assert alice.get(repo + "/collaborators/bob/permission").json()["role_name"] == "read"
    assert openapi(alice.put(repo + "/collaborators/bob", json={"permission": "push"})).status_code == 204
    assert alice.get(repo + "/collaborators/bob/permission").json()["role_name"] == "write"
    outsider = openapi(alice.put(repo + "/collaborators/carol", json={"permission": "push"}))
    assert outsider.status_code == 201
    assert [c["login"] for c in alice.get(repo + "/collaborators").json()] == ["alice", "bob"]
    with client(sandbox, "carol-token") as carol:
        assert carol.post("/orgs/acme/repos", json={"name": "mine"}).status_code == 403
    assert bob.post("/orgs/acme/repos", json={"name": "tool"}).status_code == 422
    assert alice.post("/orgs/nobody/repos", json={"name": "x"}).status_code == 404


def test_the_admin_api_adds_a_collaborator_at_once_on_both_flavours(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str
) -> None:
    """The sandbox's shortcut, so that tests stay short:
    `PUT /_sandbox/repos/{o}/{r}/collaborators/{login}`."""
    answer = httpx2.put(
        sandbox.url + "/_sandbox/repos/alice/demo/collaborators/bob", json={"permission": "triage"}
    )
    assert answer.json() == {"repo": "alice/demo", "login": "bob", "role": "triage"}
    assert alice.get(repo + "/collaborators/bob/permission").json()["role_name"] == "triage"
    bad = httpx2.put(
        sandbox.url + "/_sandbox/repos/alice/demo/collaborators/bob", json={"permission": "boss"}
    )
    assert bad.status_code == 422


def test_github_branch_protection_written_by_an_admin(
    sandbox: SandboxServer, alice: httpx2.Client, bob: httpx2.Client, openapi: OpenApiCheck
) -> None:
    """`PUT /branches/{b}/protection` with GitHub's body (`required_status_checks`, `enforce_admins`,
    `required_pull_request_reviews`, `restrictions`, each may be null) answers 200 with the protection;
    `DELETE` 204 — as octokit/fixtures `branch-protection` recorded on an organisation's repository. A body
    without the four keys is 422; a user without admin gets 404 (FORGE-FACTS "Branch protection a bot can
    read"), an App without the Administration permission 403. Readers then see the checks on the branch."""
    steps = recorded("branch-protection")
    _org(sandbox, "octo", {"alice": "admin"})
    alice.post("/orgs/octo/repos", json={"name": "guarded"}).raise_for_status()
    repo = "/repos/octo/guarded"
    assert openapi(alice.get(repo + "/branches/main/protection")).json()["message"] == "Branch not protected"
    empty = openapi(alice.put(repo + "/branches/main/protection", json=steps[1]["body"]))
    assert set(empty.json()) >= set(steps[1]["response"]) and "required_status_checks" not in empty.json()
    # The recorded body, its people being the sandbox's (octokit-fixture-user-a is alice here).
    full_body = json.loads(json.dumps(steps[2]["body"]).replace("octokit-fixture-user-a", "alice"))
    full_body["restrictions"]["teams"] = []
    full = openapi(alice.put(repo + "/branches/main/protection", json=full_body)).json()
    real = steps[2]["response"]
    assert set(full) >= set(real)
    assert (
        full["required_status_checks"]["contexts"]
        == real["required_status_checks"]["contexts"]
        == ["foo/bar"]
    )
    assert full["enforce_admins"]["enabled"] is True
    assert [u["login"] for u in full["required_pull_request_reviews"]["dismissal_restrictions"]["users"]] == [
        "alice"
    ]
    assert [u["login"] for u in full["restrictions"]["users"]] == ["alice"]
    assert bob.get(repo + "/branches/main").json()["protection"]["required_status_checks"]["contexts"] == [
        "foo/bar"
    ]
    missing = alice.put(repo + "/branches/main/protection", json={"enforce_admins": True})
    assert missing.status_code == 422 and "weren't supplied" in missing.json()["message"]
    assert bob.put(repo + "/branches/main/protection", json=steps[1]["body"]).status_code == 404
    with client(sandbox, _app_token(sandbox, "octo", "guarded")) as app:
        assert app.delete(repo + "/branches/main/protection").status_code == 403
    assert openapi(alice.delete(repo + "/branches/main/protection")).status_code == 204
    assert alice.delete(repo + "/branches/main/protection").status_code == 404
    alice.post("/user/repos", json={"name": "personal"}).raise_for_status()
    personal = alice.put(
        "/repos/alice/personal/branches/main/protection",
        json={**steps[1]["body"], "restrictions": {"users": []}},
    )
    assert personal.status_code == 422


def test_gitea_branch_protections_written_by_a_repository_admin(sandbox: SandboxServer) -> None:
    """Gitea — `POST /branch_protections` (routers/api/v1/repo/branch.go CreateBranchProtection: 201; a rule
    of that name again 403), `GET`/`PATCH`/`DELETE /branch_protections/{name}`, all under reqRepoAdmin; the
    branch then shows its required checks to readers."""
    check = GiteaApiCheck.load()
    with gitea_client(sandbox, "alice-token") as g, gitea_client(sandbox, "bob-token") as gbob:
        g.post("/user/repos", json={"name": "gprot"}).raise_for_status()
        repo = "/repos/alice/gprot"
        rule = {"rule_name": "main", "enable_status_check": True, "status_check_contexts": ["ci/test"]}
        made = check(g.post(repo + "/branch_protections", json=rule))
        assert (made.status_code, made.json()["status_check_contexts"]) == (201, ["ci/test"])
        assert g.post(repo + "/branch_protections", json=rule).status_code == 403
        assert gbob.get(repo + "/branches/main").json()["status_check_contexts"] == ["ci/test"]
        edited = check(
            g.patch(repo + "/branch_protections/main", json={"status_check_contexts": ["ci/a", "ci/b"]})
        )
        assert edited.json()["status_check_contexts"] == ["ci/a", "ci/b"]
        assert check(g.get(repo + "/branch_protections/main")).json()["rule_name"] == "main"
        assert gbob.post(repo + "/branch_protections", json={"rule_name": "dev"}).status_code == 403
        assert check(g.delete(repo + "/branch_protections/main")).status_code == 204
        assert g.get(repo + "/branch_protections/main").status_code == 404


def github_collaboration_routes(check: OpenApiCheck, sandbox: SandboxServer, alice: httpx2.Client) -> None:
    """This module's GitHub routes, for the every-operation test (test_sandbox_openapi.py)."""
    alice.post("/user/repos", json={"name": "team"}).raise_for_status()
    repo = "/repos/alice/team"
    made = check(alice.put(repo + "/collaborators/carol", json={"permission": "pull"})).json()
    check(alice.get(repo + "/invitations"))
    check(alice.patch(f"{repo}/invitations/{made['id']}", json={"permissions": "write"}))
    with client(sandbox, "carol-token") as carol:
        check(carol.get("/user/repository_invitations"))
        check(carol.patch(f"/user/repository_invitations/{made['id']}"))
    check(alice.get(repo + "/collaborators/carol"))
    check(alice.delete(repo + "/collaborators/carol"))
    dropped = check(alice.put(repo + "/collaborators/dave", json={})).json()
    check(alice.delete(f"{repo}/invitations/{dropped['id']}"))
    declined = check(alice.put(repo + "/collaborators/dave", json={})).json()
    with client(sandbox, "dave-token") as dave:
        check(dave.delete(f"/user/repository_invitations/{declined['id']}"))
    body = {
        "required_status_checks": {"strict": True, "contexts": ["ci"]},
        "enforce_admins": False,
        "required_pull_request_reviews": None,
        "restrictions": None,
    }
    check(alice.put(repo + "/branches/main/protection", json=body))
    check(alice.delete(repo + "/branches/main/protection"))


def gitea_collaboration_routes(check: GiteaApiCheck, g: httpx2.Client) -> None:
    """This module's Gitea routes, for the every-operation test (test_sandbox_gitea.py)."""
    g.post("/user/repos", json={"name": "gteam"}).raise_for_status()
    repo = "/repos/alice/gteam"
    check(g.post(repo + "/branch_protections", json={"rule_name": "main", "status_check_contexts": ["ci"]}))
    check(g.get(repo + "/branch_protections/main"))
    check(g.patch(repo + "/branch_protections/main", json={"status_check_contexts": []}))
    check(g.delete(repo + "/branch_protections/main"))
