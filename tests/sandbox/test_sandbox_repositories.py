"""Repositories as the forges keep them: the labels a new one has and which labels they take, refs listed,
routes by id, renames and transfers with their redirects and webhooks, and GitHub's repository object."""

from __future__ import annotations

import base64
from typing import Any

import httpx2
import pytest

from bot.sandbox.server import SandboxServer

from .helpers import CaptureServer, OpenApiCheck, client, gitea_client, idle, recorded, schema_errors
from .test_sandbox_gitea import GiteaApiCheck
from .test_sandbox_webhooks import _hook


@pytest.fixture(scope="module")
def gitea_api() -> GiteaApiCheck:
    return GiteaApiCheck.load()


def _recorded_answer(scenario: str, method: str, status: int) -> dict[str, Any]:
    return next(r for r in recorded(scenario) if r["method"] == method and r["status"] == status)


# --- default labels and label validation ------------------------------------------------------------------


def test_a_new_github_repository_has_githubs_nine_default_labels(
    alice: httpx2.Client, repo: str, openapi: OpenApiCheck
) -> None:
    """FORGE-FACTS "Default labels": GitHub gives every new repository `bug`, `documentation`, `duplicate`,
    `enhancement`, `good first issue`, `help wanted`, `invalid`, `question`, `wontfix` with fixed colours and
    descriptions, `default: true` — exactly as GitHub listed them on a new repository (octokit/fixtures
    `labels`)."""
    listed = openapi(alice.get(repo + "/labels")).json()
    real = _recorded_answer("labels", "get", 200)["response"]
    assert isinstance(real, list)
    keys = ("name", "color", "default", "description")
    assert [{k: lb[k] for k in keys} for lb in listed] == [{k: lb[k] for k in keys} for lb in real]


def test_github_label_writes_are_validated_as_github_does(
    alice: httpx2.Client, repo: str, openapi: OpenApiCheck
) -> None:
    """FORGE-FACTS "Label validation": an invalid colour is 422 `Validation Failed` with `errors:
    [{"resource": "Label", "code": "invalid", "field": "color"}]` (octokit/fixtures `errors`, recorded), a
    duplicate name `already_exists`; a name over 50 characters is `invalid` with its `value`
    (semantic-release/github#518); a description over 100 characters is refused (docs.github.com "Create a
    label"); a colour keeps its case (octokit/fixtures `labels`: `BADA55` reads back `BADA55`)."""
    real = _recorded_answer("errors", "post", 422)
    bad = openapi(alice.post(repo + "/labels", json=real["body"]))
    assert bad.status_code == 422
    assert {k: bad.json()[k] for k in ("message", "errors")} == {
        k: real["response"][k] for k in ("message", "errors")
    }
    dup = openapi(alice.post(repo + "/labels", json={"name": "Bug", "color": "ff0000"}))
    assert dup.json()["errors"] == [{"resource": "Label", "code": "already_exists", "field": "name"}]
    long_name = "x" * 51
    too_long = alice.post(repo + "/labels", json={"name": long_name})
    assert too_long.json()["errors"] == [
        {"value": long_name, "resource": "Label", "field": "name", "code": "invalid"}
    ]
    wordy = alice.post(repo + "/labels", json={"name": "wordy", "description": "d" * 101})
    assert (wordy.status_code, wordy.json()["errors"][0]["field"]) == (422, "description")
    both = alice.post(repo + "/labels", json={"name": "", "color": "nope"}).json()["errors"]
    assert {(e["field"], e["code"]) for e in both} == {("name", "missing_field"), ("color", "invalid")}
    made = openapi(alice.post(repo + "/labels", json={"name": "test-label", "color": "663399"}))
    assert made.headers["location"].endswith("/repos/alice/demo/labels/test-label")
    edited = openapi(
        alice.patch(repo + "/labels/test-label", json={"new_name": "renamed", "color": "BADA55"})
    )
    assert edited.json()["color"] == "BADA55"
    refused = alice.patch(repo + "/labels/renamed", json={"color": "#12345"})
    assert refused.json()["errors"] == [{"resource": "Label", "code": "invalid", "field": "color"}]
    assert alice.get(repo + "/labels/renamed").json()["color"] == "BADA55", "a refused edit changes nothing"


def test_a_new_gitea_repository_has_no_labels_unless_a_label_set_is_named(
    g: httpx2.Client, gitea_api: GiteaApiCheck
) -> None:
    """FORGE-FACTS "Default labels": Gitea creates none unless `issue_labels` names a label set
    (go-gitea/gitea `options/label/Default`, `Advanced.yaml`); an unknown set is refused with 422
    (routers/api/v1/repo/repo.go: `label.IsErrTemplateLoad`)."""
    g.post("/user/repos", json={"name": "bare"}).raise_for_status()
    assert gitea_api(g.get("/repos/alice/bare/labels")).json() == []
    g.post("/user/repos", json={"name": "kinds", "issue_labels": "Advanced"}).raise_for_status()
    advanced = gitea_api(g.get("/repos/alice/kinds/labels")).json()
    assert len(advanced) == 18
    assert {lb["name"]: lb["exclusive"] for lb in advanced}["Priority/High"] is True
    g.post("/user/repos", json={"name": "plain", "issue_labels": "Default"}).raise_for_status()
    names = [lb["name"] for lb in g.get("/repos/alice/plain/labels").json()]
    assert names == ["bug", "duplicate", "enhancement", "help wanted", "invalid", "question", "wontfix"]
    unknown = g.post("/user/repos", json={"name": "odd", "issue_labels": "Nope"})
    assert unknown.status_code == 422 and g.get("/repos/alice/odd").status_code == 404


# --- refs ------------------------------------------------------------------------------------------------


def test_github_lists_every_ref_and_moves_branches_only_forward(
    alice: httpx2.Client, repo: str, openapi: OpenApiCheck
) -> None:
    """`GET /git/refs/` lists every ref (octokit/fixtures `git-refs`: the listing before and after a new ref,
    whose creation answers 201 with a `Location`); `GET /git/matching-refs/{ref}`; `PATCH /git/refs/heads/{b}`
    moves a branch forward and refuses a move that is not a fast-forward without `force` (FORGE-FACTS
    "Branches, commits …": 422 "Update is not a fast forward")."""
    head = openapi(alice.get(repo + "/git/ref/heads/main")).json()["object"]["sha"]
    listed = alice.get(repo + "/git/refs/").json()
    assert [r["ref"] for r in listed] == ["refs/heads/main"]
    assert set(listed[0]) == set(_recorded_answer("git-refs", "get", 200)["response"][0])
    made = openapi(alice.post(repo + "/git/refs", json={"ref": "refs/heads/test", "sha": head}))
    assert made.headers["location"] == made.json()["url"]
    assert [r["ref"] for r in alice.get(repo + "/git/refs").json()] == ["refs/heads/main", "refs/heads/test"]
    assert [r["ref"] for r in openapi(alice.get(repo + "/git/matching-refs/heads/te")).json()] == [
        "refs/heads/test"
    ]
    content = base64.b64encode(b"x\n").decode()
    alice.put(repo + "/contents/x.txt", json={"message": "x", "content": content, "branch": "test"})
    ahead = alice.get(repo + "/git/ref/heads/test").json()["object"]["sha"]
    assert openapi(alice.patch(repo + "/git/refs/heads/main", json={"sha": ahead})).status_code == 200
    back = openapi(alice.patch(repo + "/git/refs/heads/main", json={"sha": head}))
    assert (back.status_code, back.json()["message"]) == (422, "Update is not a fast forward")
    forced = alice.patch(repo + "/git/refs/heads/main", json={"sha": head, "force": True})
    assert forced.json()["object"]["sha"] == head


def test_gitea_lists_refs_by_prefix(g: httpx2.Client, gitea_api: GiteaApiCheck) -> None:
    """Gitea — routers/api/v1/repo/git_ref.go: `GET /git/refs` every ref, `GET /git/refs/{ref}` those under
    it, always a list; none is a 404."""
    g.post("/user/repos", json={"name": "grefs"}).raise_for_status()
    g.post("/repos/alice/grefs/branches", json={"new_branch_name": "feature"}).raise_for_status()
    assert [r["ref"] for r in gitea_api(g.get("/repos/alice/grefs/git/refs")).json()] == [
        "refs/heads/feature",
        "refs/heads/main",
    ]
    only = gitea_api(g.get("/repos/alice/grefs/git/refs/heads/feat")).json()
    assert [r["ref"] for r in only] == ["refs/heads/feature"]
    assert g.get("/repos/alice/grefs/git/refs/tags").status_code == 404


# --- routes by id, renames, transfers ---------------------------------------------------------------------


def test_github_serves_every_repository_route_by_id_and_links_pages_that_way(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str
) -> None:
    """GitHub answers `/repositories/{id}` and everything under it as it answers the named routes, and its
    pagination `Link` headers name the repository by id (octokit/fixtures `paginate-issues`: the first page
    read at `/repos/o/r/issues?per_page=3` links `/repositories/{id}/issues?per_page=3&page=2`)."""
    ident = alice.get(repo).json()["id"]
    for i in range(5):
        alice.post(repo + "/issues", json={"title": f"issue {i}"})
    first = alice.get(repo + "/issues", params={"per_page": 3})
    real = _recorded_answer("paginate-issues", "get", 200)["headers"]["link"]
    assert real.startswith("<https://api.github.com/repositories/1000/issues?per_page=3&page=2>")
    by_id = f"{sandbox.url}/repositories/{ident}/issues"
    assert (
        first.headers["link"]
        == f'<{by_id}?per_page=3&page=2>; rel="next", <{by_id}?per_page=3&page=2>; rel="last"'
    )
    second = alice.get(f"/repositories/{ident}/issues", params={"per_page": 3, "page": 2})
    assert [i["title"] for i in second.json()] == ["issue 1", "issue 0"]
    assert alice.get(f"/repositories/{ident}").json()["full_name"] == "alice/demo"
    assert alice.get(f"/repositories/{ident}/issues/1").json()["title"] == "issue 0"
    made = alice.post(f"/repositories/{ident}/issues/1/comments", json={"body": "by id"})
    assert made.status_code == 201 and made.json()["html_url"].endswith(
        "/alice/demo/issues/1#issuecomment-" + str(made.json()["id"])
    )
    assert alice.get("/repositories/999999").status_code == 404
    with client(sandbox, "carol-token") as carol:
        alice.post("/user/repos", json={"name": "secret", "private": True})
        hidden = alice.get("/repos/alice/secret").json()["id"]
        assert carol.get(f"/repositories/{hidden}").status_code == 404


def test_github_rename_redirects_the_old_name_and_says_so(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, capture: CaptureServer, openapi: OpenApiCheck
) -> None:
    """FORGE-FACTS "Renames and transfers": `PATCH /repos/{o}/{r}` with `name` renames the repository (200,
    the repository as it is now); the old name answers a GET with 301 and other methods with 307, `Location`
    `…/repositories/{id}` (with the rest of the path), body `{"message": "Moved Permanently", "url",
    "documentation_url"}` — as octokit/fixtures `rename-repository` recorded it; a `repository.renamed`
    webhook says `changes.repository.name.from`."""
    _hook(alice, repo, capture)
    ident = alice.get(repo).json()["id"]
    renamed = openapi(alice.patch(repo, json={"name": "renamed", "description": "now renamed"}))
    assert (renamed.json()["full_name"], renamed.json()["description"]) == ("alice/renamed", "now renamed")
    real = _recorded_answer("rename-repository", "get", 301)
    moved = alice.get(repo, follow_redirects=False)
    assert moved.status_code == 301
    assert moved.headers["location"] == f"{sandbox.url}/repositories/{ident}"
    assert set(moved.json()) == set(real["response"])
    assert moved.json()["message"] == "Moved Permanently" and moved.json()["url"] == moved.headers["location"]
    deep = alice.get(repo + "/issues", params={"state": "all"}, follow_redirects=False)
    assert deep.headers["location"] == f"{sandbox.url}/repositories/{ident}/issues?state=all"
    write = alice.post(repo + "/issues", json={"title": "to the old name"}, follow_redirects=False)
    assert (write.status_code, write.headers["location"]) == (
        307,
        f"{sandbox.url}/repositories/{ident}/issues",
    )
    followed = alice.post(repo + "/issues", json={"title": "followed"}, follow_redirects=True)
    assert followed.status_code == 201 and followed.json()["repository_url"].endswith("/repos/alice/renamed")
    idle(sandbox)
    said = {r.payload["action"]: r for r in capture.capture.received if r.event == "repository"}
    assert set(said) == {"renamed", "edited"}, "the description changed too"
    assert said["edited"].payload["changes"] == {"description": {"from": "a demo"}}
    assert schema_errors("repository", "edited", said["edited"].payload) == []
    renaming = said["renamed"]
    assert renaming.payload["changes"] == {"repository": {"name": {"from": "demo"}}}
    assert renaming.payload["repository"]["full_name"] == "alice/renamed"
    assert schema_errors("repository", "renamed", renaming.payload) == []
    # A repository made under the old name takes it: the redirect ends.
    alice.post("/user/repos", json={"name": "demo"}).raise_for_status()
    assert alice.get(repo, follow_redirects=False).status_code == 200


def test_github_redirects_only_those_who_may_read_the_repository(
    sandbox: SandboxServer, alice: httpx2.Client
) -> None:
    """A private repository's old name is a 404 to whoever may not read it, as the repository is."""
    alice.post("/user/repos", json={"name": "hidden", "private": True}).raise_for_status()
    alice.patch("/repos/alice/hidden", json={"name": "hidden2"}).raise_for_status()
    with client(sandbox, "carol-token") as carol:
        assert carol.get("/repos/alice/hidden", follow_redirects=False).status_code == 404
    assert alice.get("/repos/alice/hidden", follow_redirects=False).status_code == 301


def test_github_repository_updates_are_for_admins_and_validated(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, openapi: OpenApiCheck
) -> None:
    """docs.github.com REST "Update a repository": admins only (403 "Must have admin rights to Repository."),
    a name already taken on the account is 422, a `default_branch` that is no branch is refused; settings
    show back in `GET /repos/{o}/{r}`."""
    alice.post("/user/repos", json={"name": "other"}).raise_for_status()
    with client(sandbox, "bob-token") as bob:
        refused = bob.patch(repo, json={"description": "mine"})
        assert (refused.status_code, refused.json()["message"]) == (
            403,
            "Must have admin rights to Repository.",
        )
    taken = openapi(alice.patch(repo, json={"name": "other"}))
    assert taken.status_code == 422 and taken.json()["errors"][0]["field"] == "name"
    nowhere = openapi(alice.patch(repo, json={"default_branch": "nope"}))
    assert nowhere.json()["errors"] == [
        {"resource": "Repository", "code": "invalid", "field": "default_branch"}
    ]
    changed = openapi(
        alice.patch(repo, json={"allow_update_branch": True, "squash_merge_commit_title": "PR_TITLE"})
    )
    assert (changed.json()["allow_update_branch"], changed.json()["squash_merge_commit_title"]) == (
        True,
        "PR_TITLE",
    )
    assert alice.get(repo).json()["allow_update_branch"] is True
    assert alice.patch(repo, json={"squash_merge_commit_title": "NOPE"}).status_code == 422


def test_github_repository_object_has_the_current_keys(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, openapi: OpenApiCheck
) -> None:
    """`GET /repos/{o}/{r}` carries `allow_update_branch`, `use_squash_pr_title_as_default` and every key
    GitHub answered for a repository (octokit/fixtures `get-repository`), valid against GitHub's current
    `full-repository`."""
    mine = openapi(alice.get(repo)).json()
    real = _recorded_answer("get-repository", "get", 200)["response"]
    # The recorded repository is an organisation's: it names the organisation, a user's does not.
    assert set(real) - set(mine) == {"organization"}
    org = {"login": "acme", "members": {"alice": "admin"}}
    assert httpx2.post(sandbox.url + "/_sandbox/orgs", json=org).status_code == 201
    alice.post("/orgs/acme/repos", json={"name": "tools"}).raise_for_status()
    theirs = openapi(alice.get("/repos/acme/tools")).json()
    assert set(real) - set(theirs) == set() and theirs["organization"]["type"] == "Organization"
    assert (mine["allow_update_branch"], mine["use_squash_pr_title_as_default"]) == (False, False)
    assert mine["temp_clone_token"] == "" and mine["merge_commit_title"] == "MERGE_MESSAGE"


def test_github_transfer_to_an_organisation_moves_the_repository_and_redirects(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, capture: CaptureServer, openapi: OpenApiCheck
) -> None:
    """docs.github.com REST "Transfer a repository": 202 with the repository as it was (its original owner);
    to an organisation the caller belongs to it moves, keeping its id, and the old name redirects; a
    `repository.transferred` webhook names the old owner (`changes.owner.from.user`). To another user it
    waits for that user to accept (the sandbox's admin API stands for GitHub's e-mail)."""
    org = {"login": "acme", "members": {"alice": "admin", "bob": "member"}}
    assert httpx2.post(sandbox.url + "/_sandbox/orgs", json=org).status_code == 201
    _hook(alice, repo, capture)
    ident = alice.get(repo).json()["id"]
    answer = openapi(alice.post(repo + "/transfer", json={"new_owner": "acme", "new_name": "tool"}))
    assert (answer.status_code, answer.json()["full_name"]) == (202, "alice/demo")
    now = alice.get(f"/repositories/{ident}").json()
    assert (now["full_name"], now["organization"]["login"]) == ("acme/tool", "acme")
    assert (
        alice.get(repo, follow_redirects=False).headers["location"] == f"{sandbox.url}/repositories/{ident}"
    )
    idle(sandbox)
    (moved,) = [r.payload for r in capture.capture.received if r.event == "repository"]
    assert (moved["action"], moved["changes"]["owner"]["from"]["user"]["login"]) == ("transferred", "alice")
    assert schema_errors("repository", "transferred", moved) == []
    # To a user: nothing moves until they accept.
    alice.post("/user/repos", json={"name": "gift"}).raise_for_status()
    waiting = alice.post("/repos/alice/gift/transfer", json={"new_owner": "bob"})
    assert waiting.status_code == 202 and alice.get("/repos/alice/gift").status_code == 200
    assert httpx2.post(sandbox.url + "/_sandbox/repos/alice/gift/transfer").status_code == 200
    assert alice.get("/repos/bob/gift").json()["owner"]["login"] == "bob"
    nobody = alice.post("/repos/acme/tool/transfer", json={"new_owner": "ghost"})
    assert nobody.status_code == 422


def test_gitea_rename_redirects_every_method_to_the_new_path(
    sandbox: SandboxServer, g: httpx2.Client, gitea_api: GiteaApiCheck
) -> None:
    """Gitea — `PATCH /repos/{o}/{r}` with `name` renames it (routers/api/v1/repo/repo.go Edit, repository
    admins); the old name answers every method 307 to the same path under the new owner/name, query kept
    (services/context/repo.go RedirectToRepo). Gitea sends no webhook for it. `GET /repositories/{id}`."""
    g.post("/user/repos", json={"name": "gold"}).raise_for_status()
    ident = g.get("/repos/alice/gold").json()["id"]
    assert (
        gitea_api(g.patch("/repos/alice/gold", json={"name": "gnew", "website": "https://x.test"})).json()[
            "full_name"
        ]
        == "alice/gnew"
    )
    for method in ("GET", "POST", "PATCH", "DELETE"):
        moved = g.request(method, "/repos/alice/gold/issues?state=all", follow_redirects=False)
        assert (moved.status_code, moved.headers["location"]) == (
            307,
            "/api/v1/repos/alice/gnew/issues?state=all",
        )
    made = g.post("/repos/alice/gold/issues", json={"title": "followed"}, follow_redirects=True)
    assert made.status_code == 201 and made.json()["repository"]["full_name"] == "alice/gnew"
    assert gitea_api(g.get(f"/repositories/{ident}")).json()["full_name"] == "alice/gnew"
    g.post("/user/repos", json={"name": "taken"}).raise_for_status()
    clash = g.patch("/repos/alice/gnew", json={"name": "taken"})
    assert clash.status_code == 422
    with gitea_client(sandbox, "bob-token") as gbob:
        assert gbob.patch("/repos/alice/gnew", json={"name": "bobs"}).status_code == 403


def github_repository_routes(check: OpenApiCheck, sandbox: SandboxServer, alice: httpx2.Client) -> None:
    """This module's GitHub routes, for the every-operation test (test_sandbox_openapi.py)."""
    alice.post("/user/repos", json={"name": "moving"}).raise_for_status()
    check(alice.patch("/repos/alice/moving", json={"description": "moving soon"}))
    httpx2.post(sandbox.url + "/_sandbox/orgs", json={"login": "movers", "members": {"alice": "admin"}})
    check(alice.post("/orgs/movers/repos", json={"name": "home"}))
    check(alice.post("/repos/alice/moving/transfer", json={"new_owner": "movers"}))
    # A team's members (issue 36 §5: `@org/team` reviewer groups): visible to the organisation's members.
    org = {"login": "guards", "members": {"alice": "member"}, "teams": {"Security": ["carol"]}}
    httpx2.post(sandbox.url + "/_sandbox/orgs", json=org).raise_for_status()
    members = check(alice.get("/orgs/guards/teams/security/members")).json()
    assert [m["login"] for m in members] == ["carol"]
    assert alice.get("/orgs/guards/teams/nobody/members").status_code == 404
    with httpx2.Client(base_url=str(alice.base_url), headers={"Authorization": "token bob-token"}) as bob:
        assert bob.get("/orgs/guards/teams/security/members").status_code == 404, "not a member: not visible"


def gitea_repository_routes(check: GiteaApiCheck, sandbox: SandboxServer, g: httpx2.Client) -> None:
    """This module's Gitea routes, for the every-operation test (test_sandbox_gitea.py)."""
    g.post("/user/repos", json={"name": "gmoving"}).raise_for_status()
    check(g.get("/repos/alice/gmoving/git/refs"))
    check(g.get("/repos/alice/gmoving/git/refs/heads"))
    ident = check(g.patch("/repos/alice/gmoving", json={"name": "gmoved"})).json()["id"]
    check(g.get(f"/repositories/{ident}"))
    httpx2.post(sandbox.url + "/_sandbox/orgs", json={"login": "gmovers", "members": {"alice": "admin"}})
    check(g.post("/orgs/gmovers/repos", json={"name": "home"}))
    # A team by name, then its members (routers/api/v1/org/team.go SearchTeam, GetTeamMembers): for the
    # organisation's members only (403 otherwise).
    org = {"login": "gguards", "members": {"alice": "member"}, "teams": {"Security": ["carol"]}}
    httpx2.post(sandbox.url + "/_sandbox/orgs", json=org).raise_for_status()
    found = check(g.get("/orgs/gguards/teams/search", params={"q": "secur"})).json()
    assert found["ok"] is True and [t["name"] for t in found["data"]] == ["Security"]
    team = found["data"][0]["id"]
    assert [m["login"] for m in check(g.get(f"/teams/{team}/members")).json()] == ["carol"]
    with httpx2.Client(base_url=str(g.base_url), headers={"Authorization": "token bob-token"}) as bob:
        assert bob.get(f"/teams/{team}/members").status_code == 403
