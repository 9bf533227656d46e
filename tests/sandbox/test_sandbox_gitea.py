"""The sandbox's Gitea side: API v1 answers in the shapes of Gitea's vendored OpenAPI description,
Gitea auth and pagination, and Gitea-shaped signed webhooks that follow the repository's flavour."""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest
from openapi_core import OpenAPI
from openapi_core.datatypes import RequestParameters
from werkzeug.datastructures import Headers, ImmutableMultiDict

from bot.events.gitea import normalise_gitea
from bot.receiver.signatures import verify_gitea, verify_github
from bot.sandbox.server import SandboxServer

from .helpers import CaptureServer, _OARequest, _OAResponse, gitea_client, idle, served_operations

GITEA = Path(__file__).resolve().parent.parent / "fixtures" / "gitea"
SECRET = "gitea-hook-secret"


def _strip_nulls(data: Any) -> Any:
    """Gitea sends null for nil pointers (milestone, closed_at, …) but its swagger marks nothing
    nullable; a null is read as "absent" before validating."""
    if isinstance(data, dict):
        return {k: _strip_nulls(v) for k, v in data.items() if v is not None}
    if isinstance(data, list):
        return [_strip_nulls(v) for v in data]
    return data


# Operations whose swagger response says an array where Gitea answers one object: the `UserSettings`
# response is declared `[]*api.UserSettings`, while routers/api/v1/user/settings.go answers
# convert.User2UserSettings(ctx.Doer) — one object. It is validated as the one element of that array.
_ONE_NOT_AN_ARRAY = {"getUserSettings", "updateUserSettings"}


@dataclass
class GiteaApiCheck:
    spec: dict[str, Any]
    openapi: OpenAPI
    checked: set[str] = field(default_factory=set)

    @classmethod
    def load(cls) -> GiteaApiCheck:
        spec = json.loads((GITEA / "openapi3.v1.json").read_text())
        spec["servers"] = [{"url": "http://sandbox/api/v1"}]
        return cls(spec, OpenAPI.from_dict(spec))

    def _operation(self, method: str, path: str) -> tuple[str, str, dict[str, str]]:
        relative = path.removeprefix("/api/v1")
        best: tuple[str, str, dict[str, str]] | None = None
        for template, item in self.spec["paths"].items():
            op = item.get(method.lower())
            if not isinstance(op, dict):
                continue
            # file paths and git refs (`heads/main`) hold slashes, as they do on Gitea
            pattern = re.sub(r"\{(filepath|ref)\}", r"(?P<\1>.+)", template)
            pattern = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", pattern)
            found = re.match("^" + pattern + "$", relative)
            # a literal segment beats a parameter: prefer the template with the fewest parameters
            if found and (best is None or template.count("{") < best[1].count("{")):
                best = (op["operationId"], template, found.groupdict())
        assert best is not None, f"{method} {path} is not in Gitea's OpenAPI description"
        return best

    def __call__(self, response: httpx2.Response) -> httpx2.Response:
        assert response.status_code < 400, f"{response.status_code} {response.text[:300]}"
        request = response.request
        op_id, template, params = self._operation(request.method, request.url.path)
        data = _strip_nulls(response.json()) if response.content else None
        if op_id in _ONE_NOT_AN_ARRAY and isinstance(data, dict):
            data = [data]
        self.openapi.validate_response(
            _OARequest(
                method=request.method.lower(),
                path=request.url.path,
                parameters=RequestParameters(
                    query=ImmutableMultiDict(list(request.url.params.multi_items())),
                    header=Headers(list(request.headers.items())),
                    cookie={},
                    path=params,
                ),
                body=request.content or None,
                content_type="application/json",
                path_pattern="/api/v1" + template,
                host_url="http://sandbox",
            ),
            _OAResponse(
                status_code=response.status_code,
                content_type=response.headers.get("content-type", "application/json").split(";")[0],
                headers=Headers(list(response.headers.items())),
                data=json.dumps(data).encode() if data is not None else None,
            ),
        )
        self.checked.add(op_id)
        return response


@pytest.fixture(scope="session")
def gitea_api() -> GiteaApiCheck:
    return GiteaApiCheck.load()


@pytest.fixture
def grepo(g: httpx2.Client) -> str:
    assert g.post("/user/repos", json={"name": "gdemo", "description": "gitea demo"}).status_code == 201
    return "/repos/alice/gdemo"


def _gitea_repository_and_people(check: GiteaApiCheck, g: httpx2.Client, grepo: str) -> None:
    check(g.get("/user"))
    check(g.get("/users/bob"))
    check(g.post("/user/repos", json={"name": "gsecond"}))
    mine = check(g.get("/user/repos", params={"limit": 50})).json()
    assert {r["full_name"] for r in mine} >= {"alice/gsecond"}
    assert all(r["permissions"]["admin"] for r in mine if r["owner"]["login"] == "alice")
    check(g.get(grepo))
    assert check(g.put(grepo + "/collaborators/bob", json={"permission": "write"})).status_code == 204
    assert check(g.get(grepo + "/collaborators/bob/permission")).json()["permission"] == "write"
    assert g.get(grepo + "/collaborators/alice/permission").json()["permission"] == "owner"
    listed = check(g.get(grepo + "/collaborators")).json()
    assert [user["login"] for user in listed] == ["bob"], "collaborators without access; the owner is none"
    # routers/api/v1/repo/teams.go ListTeams: a user's repository has no teams (405, which Gitea's
    # description leaves out: nothing to validate the answer against but the source).
    teams = g.get(grepo + "/teams")
    assert teams.status_code == 405 and teams.json()["message"] == "repo is not owned by an organization"
    check.checked.add("repoListTeams")
    hook = {"type": "gitea", "config": {"url": "http://x", "content_type": "json"}}
    made = check(g.post(grepo + "/hooks", json=hook)).json()
    check(g.get(grepo + "/hooks"))
    check(g.get(f"{grepo}/hooks/{made['id']}"))
    check(g.patch(f"{grepo}/hooks/{made['id']}", json={"active": False}))
    assert check(g.delete(f"{grepo}/hooks/{made['id']}")).status_code == 204


def _gitea_issues(check: GiteaApiCheck, g: httpx2.Client, grepo: str) -> None:
    bug = check(
        g.post(grepo + "/labels", json={"name": "bug", "color": "#d73a4a", "description": "broken"})
    ).json()
    assert bug["color"] == "d73a4a"
    check(g.get(grepo + "/labels"))
    check(g.get(f"{grepo}/labels/{bug['id']}"))
    check(g.patch(f"{grepo}/labels/{bug['id']}", json={"description": "very broken"}))
    temp = g.post(grepo + "/labels", json={"name": "temp", "color": "ffffff"}).json()
    assert check(g.delete(f"{grepo}/labels/{temp['id']}")).status_code == 204
    ms = check(g.post(grepo + "/milestones", json={"title": "v1"})).json()
    check(g.get(grepo + "/milestones"))
    check(g.get(f"{grepo}/milestones/{ms['id']}"))
    check(g.patch(f"{grepo}/milestones/{ms['id']}", json={"description": "first"}))
    gone = g.post(grepo + "/milestones", json={"title": "v0"}).json()
    assert check(g.delete(f"{grepo}/milestones/{gone['id']}")).status_code == 204

    issue = check(
        g.post(grepo + "/issues", json={"title": "Crash", "body": "boom", "labels": [bug["id"]]})
    ).json()
    n = issue["number"]
    assert [lb["name"] for lb in issue["labels"]] == ["bug"]
    check(g.get(grepo + "/issues"))
    check(g.get(f"{grepo}/issues/{n}"))
    edited = check(
        g.patch(f"{grepo}/issues/{n}", json={"title": "Crash on start", "milestone": ms["id"]})
    ).json()
    assert edited["milestone"]["id"] == ms["id"]
    other = g.post(grepo + "/labels", json={"name": "ui", "color": "00aabb"}).json()
    check(g.post(f"{grepo}/issues/{n}/labels", json={"labels": [other["id"]]}))
    check(g.put(f"{grepo}/issues/{n}/labels", json={"labels": ["bug"]}))
    check(g.get(f"{grepo}/issues/{n}/labels"))
    assert check(g.delete(f"{grepo}/issues/{n}/labels/{bug['id']}")).status_code == 204
    assert check(g.delete(f"{grepo}/issues/{n}/labels")).status_code == 204
    check(g.post(f"{grepo}/issues/{n}/reactions", json={"content": "rocket"}))
    check(g.get(f"{grepo}/issues/{n}/reactions"))
    check(g.request("DELETE", f"{grepo}/issues/{n}/reactions", json={"content": "rocket"}))

    comment = check(g.post(f"{grepo}/issues/{n}/comments", json={"body": "/steward help"})).json()
    check(g.get(f"{grepo}/issues/{n}/comments"))
    # The repository's comments since a time (the catch-up after downtime, bot/catchup/comments.py).
    listed = check(g.get(f"{grepo}/issues/comments?since=2000-01-01T00:00:00Z&limit=50")).json()
    assert comment["id"] in [c["id"] for c in listed]
    check(g.get(f"{grepo}/issues/comments/{comment['id']}"))
    check(g.patch(f"{grepo}/issues/comments/{comment['id']}", json={"body": "edited"}))
    reaction = check(g.post(f"{grepo}/issues/comments/{comment['id']}/reactions", json={"content": "eyes"}))
    assert reaction.status_code == 201
    again = g.post(f"{grepo}/issues/comments/{comment['id']}/reactions", json={"content": "eyes"})
    assert check(again).status_code == 200
    check(g.get(f"{grepo}/issues/comments/{comment['id']}/reactions"))
    check(g.request("DELETE", f"{grepo}/issues/comments/{comment['id']}/reactions", json={"content": "eyes"}))
    assert check(g.delete(f"{grepo}/issues/comments/{comment['id']}")).status_code == 204

    assert check(g.post(f"{grepo}/issues/{n}/pin")).status_code == 204
    assert [i["pin_order"] for i in check(g.get(grepo + "/issues/pinned")).json()] == [1]
    assert check(g.get(grepo + "/new_pin_allowed")).json() == {"issues": True, "pull_requests": True}
    assert check(g.delete(f"{grepo}/issues/{n}/pin")).status_code == 204

    blocker = g.post(grepo + "/issues", json={"title": "blocker"}).json()["number"]
    dependency = {"owner": "alice", "repo": "gdemo", "index": blocker}
    check(g.post(f"{grepo}/issues/{n}/dependencies", json=dependency))
    assert [i["number"] for i in check(g.get(f"{grepo}/issues/{n}/dependencies")).json()] == [blocker]
    assert [i["number"] for i in check(g.get(f"{grepo}/issues/{blocker}/blocks")).json()] == [n]
    check(g.request("DELETE", f"{grepo}/issues/{n}/dependencies", json=dependency))


def _gitea_contents(check: GiteaApiCheck, g: httpx2.Client, grepo: str) -> None:
    made = g.post(
        grepo + "/contents/docs/a.md", json={"content": base64.b64encode(b"hello").decode(), "message": "add"}
    )
    check(made)
    sha = made.json()["content"]["sha"]
    check(
        g.put(grepo + "/contents/docs/a.md", json={"content": base64.b64encode(b"bye").decode(), "sha": sha})
    )
    got = check(g.get(grepo + "/contents/docs/a.md")).json()
    assert base64.b64decode(got["content"]) == b"bye"
    check(g.get(grepo + "/contents"))
    # A directory answers a list, which Gitea's description does not say (it documents one object).
    assert [entry["name"] for entry in g.get(grepo + "/contents/docs").json()] == ["a.md"]


def _gitea_code(check: GiteaApiCheck, sandbox: SandboxServer, g: httpx2.Client, grepo: str) -> None:
    main = check(g.get(grepo + "/branches/main")).json()["commit"]["id"]
    check(g.post(grepo + "/branches", json={"new_branch_name": "side", "old_ref_name": "main"}))
    red = base64.b64encode(b"def test_it():\n    assert False\n").decode()
    change = {
        "branch": "main",
        "new_branch": "fix",
        "message": "Regression test",
        "files": [{"operation": "create", "path": "tests/test_it.py", "content": red}],
    }
    made = check(g.post(grepo + "/contents", json=change)).json()
    sha = made["commit"]["sha"]
    commit = check(g.get(f"{grepo}/git/commits/{sha}")).json()
    assert [p["sha"] for p in commit["parents"]] == [main]
    # The recursive tree (routers/api/v1/repo/tree.go): trees and blobs by full path, paged by per_page with
    # `truncated` while more follow; an unknown sha is a 400, not a 404.
    tree = check(g.get(f"{grepo}/git/trees/{sha}", params={"recursive": "true"})).json()
    assert ("tests", "tree") in [(e["path"], e["type"]) for e in tree["tree"]]
    assert ("tests/test_it.py", "blob") in [(e["path"], e["type"]) for e in tree["tree"]]
    assert tree["truncated"] is False and tree["total_count"] == len(tree["tree"])
    first = check(g.get(f"{grepo}/git/trees/fix", params={"recursive": "true", "per_page": 1})).json()
    assert len(first["tree"]) == 1 and first["truncated"] is True and first["page"] == 1
    assert [e["path"] for e in check(g.get(f"{grepo}/git/trees/{sha}")).json()["tree"]] == sorted(
        {e["path"].split("/")[0] for e in tree["tree"]}
    )
    assert g.get(f"{grepo}/git/trees/{'0' * 40}").status_code == 400
    assert commit["files"] == [{"filename": "tests/test_it.py", "status": "added"}]
    pull = check(
        g.post(grepo + "/pulls", json={"head": "fix", "base": "main", "title": "WIP: fix it", "body": "b"})
    ).json()
    assert pull["draft"] is True
    n = pull["number"]
    check(g.get(grepo + "/pulls"))
    check(g.get(f"{grepo}/pulls/{n}"))
    check(g.get(f"{grepo}/pulls/{n}/commits"))
    check(g.get(f"{grepo}/pulls/{n}/files"))
    status = {"state": "failure", "context": "ci/test", "description": "red", "target_url": "http://ci/1"}
    check(g.post(f"{grepo}/statuses/{sha}", json=status))
    check(g.get(f"{grepo}/commits/{sha}/statuses"))
    assert check(g.get(f"{grepo}/commits/{sha}/status")).json()["state"] == "failure"
    check(g.post(f"{grepo}/pulls/{n}/merge", json={"Do": "merge"}))


def test_every_operation_the_sandbox_serves_matches_giteas_description(
    sandbox: SandboxServer, g: httpx2.Client, grepo: str, gitea_api: GiteaApiCheck
) -> None:
    """Every Gitea route the sandbox serves is exercised here, and each answer is valid against Gitea's
    OpenAPI description (tests/fixtures/gitea/openapi3.v1.json)."""
    _gitea_repository_and_people(gitea_api, g, grepo)
    _gitea_issues(gitea_api, g, grepo)
    _gitea_contents(gitea_api, g, grepo)
    _gitea_code(gitea_api, sandbox, g, grepo)
    from .test_sandbox_edits import gitea_edit_pull, gitea_single_file  # they import this module
    from .test_sandbox_records import gitea_records_routes

    gitea_records_routes(gitea_api, sandbox, g)
    from .test_sandbox_collaboration import gitea_collaboration_routes
    from .test_sandbox_locks import gitea_lock_routes
    from .test_sandbox_repositories import gitea_repository_routes
    from .test_sandbox_search import gitea_search_routes

    gitea_repository_routes(gitea_api, sandbox, g)
    gitea_lock_routes(gitea_api, g)
    gitea_collaboration_routes(gitea_api, g)
    gitea_search_routes(gitea_api, g)
    from .test_sandbox_assignees import gitea_assignee_routes

    gitea_assignee_routes(gitea_api, g)
    g.post("/user/repos", json={"name": "gedits"}).raise_for_status()
    gitea_edit_pull(gitea_api, g, "/repos/alice/gedits")
    gitea_single_file(gitea_api, g, "/repos/alice/gedits")
    from .test_sandbox_forks import gitea_fork_pull

    g.post("/user/repos", json={"name": "gforked"}).raise_for_status()
    with gitea_client(sandbox, "bob-token") as gbob:
        gitea_fork_pull(gitea_api, g, gbob, "/repos/alice/gforked")
    served, _ = served_operations(sandbox.app, "gitea", gitea_api.spec)
    assert sorted(served - gitea_api.checked) == []


def test_gitea_auth_errors_and_flavour(sandbox: SandboxServer, g: httpx2.Client, grepo: str) -> None:
    with gitea_client(sandbox, None) as anonymous:
        assert anonymous.get("/user").status_code == 401
    with gitea_client(sandbox, "wrong") as wrong:
        assert wrong.get("/user").status_code == 401
    missing = g.get("/repos/alice/nope")
    assert missing.status_code == 404 and set(missing.json()) == {"message", "url"}
    with gitea_client(sandbox, "bob-token") as bob:
        refused = bob.post(grepo + "/labels", json={"name": "x", "color": "ffffff"})
        assert refused.status_code == 403
    assert sandbox.forge.repo("alice", "gdemo").flavor == "gitea"  # type: ignore[union-attr]
    assert "X-GitHub-Request-Id" not in g.get(grepo).headers


def test_gitea_lets_only_repository_admins_read_another_users_permission(
    sandbox: SandboxServer, g: httpx2.Client, grepo: str
) -> None:
    """FORGE-FACTS: Gitea answers GET /collaborators/{user}/permission with 403 unless the caller is a site
    admin, an admin of the repository, or asks about itself (GetRepoPermissions)."""
    g.put(grepo + "/collaborators/bob", json={"permission": "write"})
    g.put(grepo + "/collaborators/carol", json={"permission": "admin"})
    with gitea_client(sandbox, "bob-token") as bob:
        refused = bob.get(grepo + "/collaborators/alice/permission")
        assert refused.status_code == 403
        assert refused.json()["message"].startswith("Only admins can query all permissions")
        assert bob.get(grepo + "/collaborators/bob/permission").json()["permission"] == "write"
    with gitea_client(sandbox, "carol-token") as carol:
        assert carol.get(grepo + "/collaborators/bob/permission").json()["permission"] == "write"


def test_gitea_pagination_has_link_and_total_count(g: httpx2.Client, grepo: str) -> None:
    """FORGE-FACTS "Sizes and limits": Gitea's [api] MAX_RESPONSE_ITEMS defaults to 50: a larger `limit` is
    cut to 50; lists are paged with X-Total-Count (and Link)."""
    for i in range(65):
        g.post(grepo + "/labels", json={"name": f"l{i:02}", "color": "ededed"})
    first = g.get(grepo + "/labels", params={"limit": 1000})
    assert len(first.json()) == 50, "limit is capped at Gitea's MAX_RESPONSE_ITEMS"
    assert first.headers["X-Total-Count"] == "65"
    assert 'rel="next"' in first.headers["Link"] and "page=2" in first.headers["Link"]
    second = g.get(grepo + "/labels", params={"page": 2, "limit": 50})
    assert len(second.json()) == 15 and 'rel="next"' not in second.headers["Link"]
    assert len(g.get(grepo + "/labels").json()) == 30, "the default page is 30"


def test_gitea_answers_its_listings_without_etags_and_ignores_if_none_match(
    g: httpx2.Client, grepo: str
) -> None:
    """Gitea's API handlers answer with ``ctx.JSON(http.StatusOK, …)`` (``ListIssues``,
    ``ListRepoIssueComments`` in routers/api/v1/repo/): no ETag, and a conditional request gets the whole list
    again (only raw file downloads use ``HandleGenericETagCache``). So Steward sends Gitea none."""
    assert g.post(grepo + "/issues", json={"title": "x"}).status_code == 201
    for path in ("/issues", "/issues/comments"):
        first = g.get(grepo + path, params={"since": "2000-01-01T00:00:00Z"})
        assert first.status_code == 200 and "ETag" not in first.headers
        again = g.get(grepo + path, params={"since": "2000-01-01T00:00:00Z"}, headers={"If-None-Match": "*"})
        assert again.status_code == 200 and again.content == first.content


def test_faults_and_hangs_apply_to_the_gitea_api(
    sandbox: SandboxServer, g: httpx2.Client, grepo: str
) -> None:
    httpx2.post(sandbox.url + "/_sandbox/faults", json={"path": "/api/v1/repos/alice/gdemo$", "status": 503})
    assert g.get(grepo).status_code == 503
    assert g.get(grepo).status_code == 200
    httpx2.post(
        sandbox.url + "/_sandbox/faults", json={"path": "/api/v1/user$", "hang": True, "hang_seconds": 5}
    )
    with pytest.raises(httpx2.ReadTimeout):
        g.get("/user", timeout=0.3)


def _hook(g: httpx2.Client, repo: str, url: str, events: list[str]) -> None:
    body = {
        "type": "gitea",
        "config": {"url": url, "content_type": "json", "secret": SECRET},
        "events": events,
        "active": True,
    }
    assert g.post(repo + "/hooks", json=body).status_code == 201


def test_gitea_webhooks_are_signed_and_shaped_like_giteas(
    sandbox: SandboxServer, g: httpx2.Client, grepo: str, capture: CaptureServer
) -> None:
    """Gitea's headers and signatures; FORGE-FACTS "Webhooks": Gitea label events carry the issue's whole
    label set (issue_label, label_updated)."""
    _hook(g, grepo, capture.hook_url, ["issues", "issue_comment"])
    bug = g.post(grepo + "/labels", json={"name": "bug", "color": "ff0000"}).json()
    n = g.post(grepo + "/issues", json={"title": "t", "body": "b"}).json()["number"]
    g.post(f"{grepo}/issues/{n}/labels", json={"labels": [bug["id"]]})
    comment = g.post(f"{grepo}/issues/{n}/comments", json={"body": "/steward ping"}).json()
    g.patch(f"{grepo}/issues/comments/{comment['id']}", json={"body": "/steward help"})
    received = capture.capture.wait_for(4)
    idle(sandbox)
    kinds = [
        (r.headers["x-gitea-event"], r.headers["x-gitea-event-type"], r.payload.get("action"))
        for r in received
    ]
    assert kinds == [
        ("issues", "issues", "opened"),
        ("issues", "issue_label", "label_updated"),
        ("issue_comment", "issue_comment", "created"),
        ("issue_comment", "issue_comment", "edited"),
    ]
    for r in received:
        assert verify_gitea(r.body, r.headers["x-gitea-signature"], [SECRET])
        assert verify_github(r.body, r.headers["x-hub-signature-256"], [SECRET])
        assert r.headers["x-gitea-delivery"] == r.headers["x-gogs-delivery"] == r.headers["x-github-delivery"]
        assert r.headers["x-github-event"] == r.headers["x-gitea-event"]
        assert r.headers["x-hub-signature"].startswith("sha1=")
        event = normalise_gitea(
            r.headers["x-gitea-event"],
            r.headers["x-gitea-delivery"],
            r.payload,
            event_type=r.headers["x-gitea-event-type"],
        )
        assert event.repo is not None and event.repo.full_name == "alice/gdemo" and event.sender == "alice"
    labelled = normalise_gitea("issues", "d", received[1].payload, event_type="issue_label")
    assert labelled.action == "labeled" and labelled.labels_are_full_set and labelled.issue.labels == ("bug",)  # type: ignore[union-attr]
    edited = normalise_gitea("issue_comment", "d", received[3].payload)
    assert edited.previous_body == "/steward ping" and edited.comment.body == "/steward help"  # type: ignore[union-attr]


def test_an_issue_edit_says_what_the_body_was(
    sandbox: SandboxServer, g: httpx2.Client, grepo: str, capture: CaptureServer
) -> None:
    """Gitea's `issues` `edited` webhook carries the body before the edit, `changes.body.from`
    (go-gitea/gitea `services/webhook/notifier.go` `IssueChangeContent`: `Changes: &api.ChangesPayload{Body:
    &api.ChangesFromPayload{From: oldContent}}`), which Steward reads as the event's previous body (a story
    taken off a bug's list is released by it)."""
    _hook(g, grepo, capture.hook_url, ["issues"])
    n = g.post(grepo + "/issues", json={"title": "t", "body": "## Stories\n\n- [ ] #7\n"}).json()["number"]
    g.patch(f"{grepo}/issues/{n}", json={"body": "## Stories\n"})
    received = capture.capture.wait_for(2)
    idle(sandbox)
    assert received[1].payload["action"] == "edited"
    assert received[1].payload["changes"] == {"body": {"from": "## Stories\n\n- [ ] #7\n"}}
    edited = normalise_gitea("issues", "d", received[1].payload)
    assert edited.previous_body == "## Stories\n\n- [ ] #7\n" and edited.issue.body == "## Stories\n"  # type: ignore[union-attr]


def test_hooks_only_get_the_events_they_chose(
    sandbox: SandboxServer, g: httpx2.Client, grepo: str, capture: CaptureServer
) -> None:
    _hook(g, grepo, capture.hook_url, ["issue_comment"])
    n = g.post(grepo + "/issues", json={"title": "t"}).json()["number"]
    g.post(f"{grepo}/issues/{n}/comments", json={"body": "hi"})
    idle(sandbox)
    assert [r.headers["x-gitea-event"] for r in capture.capture.received] == ["issue_comment"]


def test_webhooks_follow_the_repositorys_flavour_whichever_api_changes_it(
    sandbox: SandboxServer, g: httpx2.Client, alice: httpx2.Client, capture: CaptureServer
) -> None:
    """A Gitea-flavoured repository changed through GitHub's API still sends Gitea's webhooks, and the
    other way round; `sandbox_flavor` on GitHub's `POST /user/repos` picks the flavour too."""
    made = alice.post("/user/repos", json={"name": "mixed", "sandbox_flavor": "gitea"})
    assert made.status_code == 201
    _hook(g, "/repos/alice/mixed", capture.hook_url, ["issues", "issue_comment"])
    number = alice.post("/repos/alice/mixed/issues", json={"title": "via GitHub's API"}).json()["number"]
    alice.post(f"/repos/alice/mixed/issues/{number}/comments", json={"body": "hello"})
    capture.capture.wait_for(2)
    assert [r.headers.get("x-gitea-event-type") for r in capture.capture.received] == [
        "issues",
        "issue_comment",
    ]
    assert capture.capture.received[0].payload["issue"]["number"] == number

    assert alice.post("/user/repos", json={"name": "hub"}).status_code == 201
    hook = {"config": {"url": capture.hook_url, "content_type": "json", "secret": SECRET}, "events": ["*"]}
    assert alice.post("/repos/alice/hub/hooks", json=hook).status_code == 201
    number = g.post("/repos/alice/hub/issues", json={"title": "via Gitea's API"}).json()["number"]
    received = capture.capture.wait_for(4)
    github = [r for r in received[2:] if "x-gitea-event" not in r.headers]
    assert [(r.headers["x-github-event"], r.payload.get("action")) for r in github] == [
        ("ping", None),
        ("issues", "opened"),
    ]
    assert github[1].payload["issue"]["number"] == number
