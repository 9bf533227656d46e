"""What the forges record of who did what — who put on or took off a label, who reviewed a pull request and
how — served on both flavours with each forge's shapes, status codes and webhooks."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from bot.sandbox.server import SandboxServer

from .helpers import CaptureServer, OpenApiCheck, client, collaborate, gitea_client, idle, schema_errors
from .test_sandbox_gitea import SECRET, GiteaApiCheck
from .test_sandbox_pushes import gitea_push_history, github_push_history


@pytest.fixture
def bob(sandbox: SandboxServer) -> Iterator[httpx2.Client]:
    with client(sandbox, "bob-token") as c:
        yield c


@pytest.fixture
def gbob(sandbox: SandboxServer) -> Iterator[httpx2.Client]:
    with gitea_client(sandbox, "bob-token") as c:
        yield c


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def github_pull(alice: httpx2.Client, repo: str, branch: str = "fix") -> tuple[int, str]:
    """A pull request of a new branch `branch` of alice's GitHub-flavoured `repo`: (number, head sha)."""
    head = alice.get(repo + "/git/ref/heads/main").json()["object"]["sha"]
    alice.post(repo + "/git/refs", json={"ref": f"refs/heads/{branch}", "sha": head}).raise_for_status()
    put = {"message": "change", "content": _b64(f"{branch}\n"), "branch": branch}
    alice.put(f"{repo}/contents/src/{branch}.py", json=put).raise_for_status()
    made = alice.post(repo + "/pulls", json={"title": "Fix", "head": branch, "base": "main"})
    assert made.status_code == 201, made.text
    return made.json()["number"], made.json()["head"]["sha"]


def gitea_pull(g: httpx2.Client, repo: str, branch: str = "fix") -> tuple[int, str]:
    g.post(repo + "/branches", json={"new_branch_name": branch, "old_ref_name": "main"}).raise_for_status()
    g.post(
        f"{repo}/contents/src/{branch}.py",
        json={"message": "change", "content": _b64(f"{branch}\n"), "branch": branch},
    ).raise_for_status()
    made = g.post(repo + "/pulls", json={"title": "Fix", "head": branch, "base": "main"})
    assert made.status_code == 201, made.text
    return made.json()["number"], made.json()["head"]["sha"]


def github_records_routes(check: OpenApiCheck, sandbox: SandboxServer, alice: httpx2.Client) -> None:
    """Every GitHub route of this module, for the every-operation test (test_sandbox_openapi.py)."""
    from .test_sandbox_review_requests import github_review_requests

    alice.post("/user/repos", json={"name": "records"}).raise_for_status()
    with client(sandbox, "bob-token") as bob:
        github_label_events(check, alice, bob, "/repos/alice/records")
        github_reviews(check, alice, bob, "/repos/alice/records")
        github_review_requests(check, alice, bob, "/repos/alice/records")
    alice.post("/user/repos", json={"name": "branches"}).raise_for_status()
    github_branches(check, sandbox, alice, "/repos/alice/branches")
    alice.post("/user/repos", json={"name": "checks"}).raise_for_status()
    github_check_output(check, sandbox, alice, "/repos/alice/checks")
    github_create_check_run(check, sandbox, alice, "/repos/alice/checks")
    github_push_history(check, sandbox, alice)


def gitea_records_routes(check: GiteaApiCheck, sandbox: SandboxServer, g: httpx2.Client) -> None:
    """Every Gitea route of this module, for the every-operation test (test_sandbox_gitea.py)."""
    from .test_sandbox_review_requests import gitea_review_requests

    g.post("/user/repos", json={"name": "grecords"}).raise_for_status()
    with gitea_client(sandbox, "bob-token") as gbob:
        gitea_timeline(check, g, gbob, "/repos/alice/grecords")
        gitea_reviews(check, g, gbob, "/repos/alice/grecords")
        gitea_review_requests(check, g, gbob, "/repos/alice/grecords")
    g.post("/user/repos", json={"name": "gbranches"}).raise_for_status()
    gitea_branches(check, sandbox, g, "/repos/alice/gbranches")
    gitea_push_history(check, sandbox, g)


# --- who applied a label ---------------------------------------------------------------------------------


def github_label_events(check: OpenApiCheck, alice: httpx2.Client, bob: httpx2.Client, repo: str) -> None:
    collaborate(alice, repo, "bob", "triage")
    alice.post(repo + "/labels", json={"name": "triaged", "color": "00ff00"}).raise_for_status()
    n = alice.post(repo + "/issues", json={"title": "Crash"}).json()["number"]
    bob.post(f"{repo}/issues/{n}/labels", json={"labels": ["triaged"]}).raise_for_status()
    alice.delete(f"{repo}/issues/{n}/labels/triaged").raise_for_status()
    events = check(alice.get(f"{repo}/issues/{n}/events")).json()
    assert [(e["event"], e["actor"]["login"], e["label"]) for e in events] == [
        ("labeled", "bob", {"name": "triaged", "color": "00ff00"}),
        ("unlabeled", "alice", {"name": "triaged", "color": "00ff00"}),
    ]
    assert events[0]["performed_via_github_app"] is None and events[0]["commit_id"] is None


def test_github_issue_events_name_who_labeled_and_unlabeled(
    alice: httpx2.Client, bob: httpx2.Client, repo: str, openapi: OpenApiCheck
) -> None:
    """GitHub `GET /repos/{o}/{r}/issues/{n}/events` — docs.github.com REST "Issue events" ("List issue
    events"): `labeled`/`unlabeled` events with the `actor` who did it and the label's name and colour,
    oldest first; a label given when the issue is opened is a `labeled` event too."""
    github_label_events(openapi, alice, bob, repo)
    alice.post(repo + "/labels", json={"name": "bug"})
    n = alice.post(repo + "/issues", json={"title": "Boom", "labels": ["bug"]}).json()["number"]
    events = openapi(alice.get(f"{repo}/issues/{n}/events")).json()
    assert [(e["event"], e["actor"]["login"], e["label"]["name"]) for e in events] == [
        ("labeled", "alice", "bug")
    ]
    assert alice.get(f"{repo}/issues/999/events").status_code == 404


def gitea_timeline(check: GiteaApiCheck, g: httpx2.Client, gbob: httpx2.Client, repo: str) -> None:
    g.put(repo + "/collaborators/bob", json={"permission": "write"}).raise_for_status()
    label = g.post(repo + "/labels", json={"name": "triaged", "color": "00ff00"}).json()
    n = g.post(repo + "/issues", json={"title": "Crash"}).json()["number"]
    gbob.post(f"{repo}/issues/{n}/labels", json={"labels": [label["id"]]}).raise_for_status()
    g.post(f"{repo}/issues/{n}/comments", json={"body": "thanks"}).raise_for_status()
    g.delete(f"{repo}/issues/{n}/labels/{label['id']}").raise_for_status()
    entries = check(g.get(f"{repo}/issues/{n}/timeline")).json()
    assert [
        (e["type"], e["user"]["login"], e["body"], (e.get("label") or {}).get("name")) for e in entries
    ] == [
        ("label", "bob", "1", "triaged"),
        ("comment", "alice", "thanks", None),
        ("label", "alice", "", "triaged"),
    ]


def test_gitea_timeline_names_who_added_and_removed_a_label(
    sandbox: SandboxServer, g: httpx2.Client, gbob: httpx2.Client
) -> None:
    """Gitea `GET /api/v1/repos/{o}/{r}/issues/{index}/timeline` — routers/api/v1/repo/issue_comment.go
    ListIssueCommentsAndTimeline; a label change is a comment of type "label" made by the `user` who changed
    it, body "1" when added and "" when removed (models/issues/issue_label.go newIssueLabel /
    deleteIssueLabel); shapes checked against Gitea's description (`TimelineComment`)."""
    g.post("/user/repos", json={"name": "tl"}).raise_for_status()
    gitea_timeline(GiteaApiCheck.load(), g, gbob, "/repos/alice/tl")
    assert g.get("/repos/alice/tl/issues/99/timeline").status_code == 404


# --- who moved an issue between milestones, and labels renamed since -------------------------------------


def test_github_issue_events_name_the_milestone_by_the_title_it_had(
    alice: httpx2.Client, repo: str, openapi: OpenApiCheck
) -> None:
    """GitHub's issue events of a milestone change: `demilestoned` for the milestone left, then `milestoned`
    for the one joined, each with `milestone: {title}` only — the title it had then, kept when the milestone
    is renamed (rest-api-description components/schemas "milestoned-issue-event" and
    "demilestoned-issue-event"; GraphQL MilestonedEvent.milestoneTitle). An issue opened in a milestone has
    its `milestoned` event. A label's event keeps the name it had too ("labeled-issue-event" `label: {name,
    color}`). The `issues` webhook says `milestoned`/`demilestoned` (test_sandbox_webhooks.py)."""
    one = alice.post(repo + "/milestones", json={"title": "v0.9"}).json()["number"]
    two = alice.post(repo + "/milestones", json={"title": "v1.0"}).json()["number"]
    alice.post(repo + "/labels", json={"name": "looks-good", "color": "ff0000"}).raise_for_status()
    n = alice.post(repo + "/issues", json={"title": "Scenario", "milestone": one}).json()["number"]
    alice.post(f"{repo}/issues/{n}/labels", json={"labels": ["looks-good"]}).raise_for_status()
    alice.patch(f"{repo}/issues/{n}", json={"milestone": two}).raise_for_status()
    alice.patch(f"{repo}/issues/{n}", json={"milestone": None}).raise_for_status()
    alice.patch(f"{repo}/milestones/{one}", json={"title": "v0.9-old"}).raise_for_status()
    alice.patch(repo + "/labels/looks-good", json={"new_name": "fieldtest:pass"}).raise_for_status()
    events = openapi(alice.get(f"{repo}/issues/{n}/events")).json()

    def what(e: dict[str, Any]) -> tuple[str, str]:
        return e["event"], e["milestone"]["title"] if "milestone" in e else e["label"]["name"]

    assert [what(e) for e in events] == [
        ("milestoned", "v0.9"),
        ("labeled", "looks-good"),
        ("demilestoned", "v0.9"),
        ("milestoned", "v1.0"),
        ("demilestoned", "v1.0"),
    ]
    assert events[0]["milestone"] == {"title": "v0.9"} and events[0]["actor"]["login"] == "alice"
    assert len({e["id"] for e in events}) == len(events)


def test_gitea_timeline_names_the_milestone_by_id_and_a_label_by_its_name_now(
    sandbox: SandboxServer, g: httpx2.Client
) -> None:
    """Gitea's timeline: a milestone change is one comment of type "milestone" with `old_milestone` and
    `milestone` (services/issue/milestone.go changeMilestoneAssign: OldMilestoneID, MilestoneID; an issue
    opened in one gets it from models/issues/issue_update.go NewIssueWithIndex, before its labels'), each a
    `Milestone` loaded by id as it is now (services/convert/issue_comment.go ToTimelineComment,
    LoadMilestone): a renamed milestone shows its new title. A label comment shows the label as it is now
    too (LoadLabel by id): renamed, it shows the new name under the same id."""
    check = GiteaApiCheck.load()
    g.post("/user/repos", json={"name": "tlm"}).raise_for_status()
    repo = "/repos/alice/tlm"
    one = g.post(repo + "/milestones", json={"title": "v0.9"}).json()["id"]
    two = g.post(repo + "/milestones", json={"title": "v1.0"}).json()["id"]
    label = g.post(repo + "/labels", json={"name": "bug", "color": "ff0000"}).json()
    n = g.post(
        repo + "/issues", json={"title": "Scenario", "milestone": one, "labels": [label["id"]]}
    ).json()["number"]
    g.patch(f"{repo}/issues/{n}", json={"milestone": two}).raise_for_status()
    g.patch(f"{repo}/issues/{n}", json={"milestone": 0}).raise_for_status()
    g.patch(f"{repo}/milestones/{one}", json={"title": "v0.9-old"}).raise_for_status()
    g.patch(f"{repo}/labels/{label['id']}", json={"name": "fieldtest:pass"}).raise_for_status()
    entries = check(g.get(f"{repo}/issues/{n}/timeline")).json()

    def title(ms: Any) -> Any:
        return (ms["id"], ms["title"]) if ms else None

    assert [
        (
            e["type"],
            title(e.get("old_milestone")),
            title(e.get("milestone")),
            (e.get("label") or {}).get("id"),
        )
        for e in entries
    ] == [
        ("milestone", None, (one, "v0.9-old"), None),
        ("label", None, None, label["id"]),
        ("milestone", (one, "v0.9-old"), (two, "v1.0"), None),
        ("milestone", (two, "v1.0"), None, None),
    ]
    assert entries[1]["label"]["name"] == "fieldtest:pass"


# --- reviews ---------------------------------------------------------------------------------------------


def github_reviews(
    check: OpenApiCheck, alice: httpx2.Client, bob: httpx2.Client, repo: str
) -> tuple[int, str]:
    collaborate(alice, repo, "bob", "push")
    n, sha = github_pull(alice, repo, "reviewed")
    approved = check(bob.post(f"{repo}/pulls/{n}/reviews", json={"event": "APPROVE"})).json()
    assert (approved["state"], approved["commit_id"], approved["user"]["login"]) == ("APPROVED", sha, "bob")
    changes = check(
        bob.post(f"{repo}/pulls/{n}/reviews", json={"event": "REQUEST_CHANGES", "body": "a test, please"})
    )
    assert changes.json()["state"] == "CHANGES_REQUESTED"
    commented = check(alice.post(f"{repo}/pulls/{n}/reviews", json={"event": "COMMENT", "body": "on it"}))
    assert commented.json()["state"] == "COMMENTED"
    listed = check(alice.get(f"{repo}/pulls/{n}/reviews")).json()
    assert [(r["user"]["login"], r["state"]) for r in listed] == [
        ("bob", "APPROVED"),
        ("bob", "CHANGES_REQUESTED"),
        ("alice", "COMMENTED"),
    ]
    # "Dismiss a review for a pull request": the approval becomes DISMISSED (a comment cannot be).
    url = f"{repo}/pulls/{n}/reviews/{approved['id']}/dismissals"
    dismissed = check(alice.put(url, json={"message": "stale", "event": "DISMISS"})).json()
    assert (dismissed["id"], dismissed["state"]) == (approved["id"], "DISMISSED")
    assert (
        alice.put(
            url.replace(str(approved["id"]), str(commented.json()["id"])), json={"message": "x"}
        ).status_code
        == 422
    )
    return n, sha


def test_github_reviews_their_states_and_webhook(
    sandbox: SandboxServer,
    alice: httpx2.Client,
    bob: httpx2.Client,
    repo: str,
    openapi: OpenApiCheck,
    capture: CaptureServer,
) -> None:
    """GitHub `POST|GET /repos/{o}/{r}/pulls/{n}/reviews` — docs.github.com REST "Reviews for a pull
    request": 200 with the review, states APPROVED / CHANGES_REQUESTED / COMMENTED and the `commit_id` it
    was made on; the author may not approve (422 "Can not approve your own pull request"); a review
    without `event` stays PENDING and only its author sees it. The `pull_request_review` `submitted` webhook
    names the state in lower case with `review.commit_id` (octokit/webhooks schema); a dismissed review
    (`PUT …/reviews/{id}/dismissals`) sends `dismissed` with the state `dismissed`."""
    hook = {"config": {"url": capture.hook_url, "content_type": "json"}, "events": ["pull_request_review"]}
    alice.post(repo + "/hooks", json=hook).raise_for_status()
    n, sha = github_reviews(openapi, alice, bob, repo)
    own = openapi(alice.post(f"{repo}/pulls/{n}/reviews", json={"event": "APPROVE"}))
    assert (own.status_code, own.json()["errors"]) == (422, ["Can not approve your own pull request"])
    pending = openapi(bob.post(f"{repo}/pulls/{n}/reviews", json={"body": "draft"})).json()
    assert pending["state"] == "PENDING"
    assert "PENDING" not in {r["state"] for r in alice.get(f"{repo}/pulls/{n}/reviews").json()}
    idle(sandbox)
    got = [r for r in capture.capture.wait_for(5) if r.event != "ping"]
    assert [(r.event, r.payload["action"], r.payload["review"]["state"]) for r in got] == [
        ("pull_request_review", "submitted", "approved"),
        ("pull_request_review", "submitted", "changes_requested"),
        ("pull_request_review", "submitted", "commented"),
        ("pull_request_review", "dismissed", "dismissed"),
    ]
    for received in got:
        assert received.payload["review"]["commit_id"] == sha
        assert schema_errors("pull_request_review", received.payload["action"], received.payload) == []


def gitea_reviews(check: GiteaApiCheck, g: httpx2.Client, gbob: httpx2.Client, repo: str) -> tuple[int, str]:
    g.put(repo + "/collaborators/bob", json={"permission": "write"}).raise_for_status()
    n, sha = gitea_pull(g, repo, "reviewed")
    approved = check(gbob.post(f"{repo}/pulls/{n}/reviews", json={"event": "APPROVED"}))
    assert approved.status_code == 200
    assert (approved.json()["state"], approved.json()["commit_id"]) == ("APPROVED", sha)
    check(gbob.post(f"{repo}/pulls/{n}/reviews", json={"event": "REQUEST_CHANGES", "body": "a test"}))
    check(g.post(f"{repo}/pulls/{n}/reviews", json={"event": "COMMENT", "body": "on it"}))
    listed = check(g.get(f"{repo}/pulls/{n}/reviews")).json()
    assert [(r["user"]["login"], r["state"], r["commit_id"]) for r in listed] == [
        ("bob", "APPROVED", sha),
        ("bob", "REQUEST_CHANGES", sha),
        ("alice", "COMMENT", sha),
    ]
    return n, sha


def test_gitea_reviews_their_states_and_webhooks(
    sandbox: SandboxServer, g: httpx2.Client, gbob: httpx2.Client, capture: CaptureServer
) -> None:
    """Gitea `POST|GET /api/v1/repos/{o}/{r}/pulls/{index}/reviews` — routers/api/v1/repo/pull_review.go:
    200 with the `PullReview` (states APPROVED / REQUEST_CHANGES / COMMENT, `commit_id`); the author may not
    approve (services/pull/review.go: 422 "approve your own pull is not allowed"). Webhooks
    (services/webhook/notifier.go PullRequestReview, modules/webhook/type.go): X-Gitea-Event
    pull_request_approved / pull_request_rejected / pull_request_comment, X-Gitea-Event-Type
    pull_request_review_approved / …_rejected / …_comment, action "reviewed", and a `review` with only
    `type` and `content` — no commit."""
    g.post("/user/repos", json={"name": "rv"}).raise_for_status()
    repo = "/repos/alice/rv"
    hook = {
        "type": "gitea",
        "config": {"url": capture.hook_url, "content_type": "json", "secret": SECRET},
        "events": ["pull_request_review"],
        "active": True,
    }
    g.post(repo + "/hooks", json=hook).raise_for_status()
    n, _ = gitea_reviews(GiteaApiCheck.load(), g, gbob, repo)
    own = g.post(f"{repo}/pulls/{n}/reviews", json={"event": "APPROVED"})
    assert (own.status_code, own.json()["message"]) == (422, "approve your own pull is not allowed")
    idle(sandbox)
    got = capture.capture.wait_for(3)
    seen = [(r.headers["x-gitea-event"], r.headers["x-gitea-event-type"], r.payload["action"]) for r in got]
    assert seen == [
        ("pull_request_approved", "pull_request_review_approved", "reviewed"),
        ("pull_request_rejected", "pull_request_review_rejected", "reviewed"),
        ("pull_request_comment", "pull_request_review_comment", "reviewed"),
    ]
    reviews: list[dict[str, Any]] = [r.payload["review"] for r in got]
    assert reviews == [
        {"type": "pull_request_review_approved", "content": ""},
        {"type": "pull_request_review_rejected", "content": "a test"},
        {"type": "pull_request_review_comment", "content": "on it"},
    ]


# --- branch protection, as a bot can read it -------------------------------------------------------------


def _app_token(sandbox: SandboxServer, owner: str, repo_name: str) -> str:
    """An installation token of a sandbox GitHub App (which, like Steward's, has no Administration
    permission) on `owner/repo_name`."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    app = {"app_id": 5151, "slug": "reader-app", "public_key_pem": public.decode()}
    httpx2.post(sandbox.url + "/_sandbox/apps", json=app).raise_for_status()
    made = httpx2.post(
        f"{sandbox.url}/_sandbox/apps/5151/installations", json={"owner": owner, "repos": [repo_name]}
    )
    now = int(time.time())
    token = jwt.encode({"iat": now - 30, "exp": now + 540, "iss": "5151"}, key, algorithm="RS256")
    minted = httpx2.post(
        f"{sandbox.url}/app/installations/{made.json()['id']}/access_tokens",
        headers={"Authorization": f"Bearer {token}"},
    )
    return str(minted.json()["token"])


def protect(sandbox: SandboxServer, repo: str, branch: str, contexts: list[str], **rule: Any) -> None:
    url = f"{sandbox.url}/_sandbox{repo}/protections/{branch}"
    httpx2.put(url, json={"required_contexts": contexts, **rule}).raise_for_status()


def github_branches(check: OpenApiCheck, sandbox: SandboxServer, alice: httpx2.Client, repo: str) -> None:
    protect(sandbox, repo, "main", ["ci/test", "lint"], strict=True)
    head = alice.get(repo + "/git/ref/heads/main").json()["object"]["sha"]
    alice.post(repo + "/git/refs", json={"ref": "refs/heads/open", "sha": head}).raise_for_status()
    listed = check(alice.get(repo + "/branches")).json()
    assert [(b["name"], b["protected"]) for b in listed] == [("main", True), ("open", False)]
    assert [b["name"] for b in check(alice.get(repo + "/branches", params={"protected": "true"})).json()] == [
        "main"
    ]
    main = check(alice.get(repo + "/branches/main")).json()
    assert (main["commit"]["sha"], main["protected"]) == (head, True)
    assert main["protection"]["required_status_checks"]["contexts"] == ["ci/test", "lint"]
    assert check(alice.get(repo + "/branches/open")).json()["protection"]["enabled"] is False
    protection = check(alice.get(repo + "/branches/main/protection")).json()
    assert protection["required_status_checks"]["contexts"] == ["ci/test", "lint"]
    assert protection["required_status_checks"]["strict"] is True
    unprotected = check(alice.get(repo + "/branches/open/protection"))
    assert (unprotected.status_code, unprotected.json()["message"]) == (404, "Branch not protected")
    assert check(alice.get(repo + "/branches/nope")).status_code == 404
    protect(sandbox, repo, "open", ["build"], ruleset=True)
    assert check(alice.get(repo + "/rules/branches/open")).json()[0]["type"] == "required_status_checks"


def test_github_branch_protection_as_readers_admins_and_apps_see_it(
    sandbox: SandboxServer, alice: httpx2.Client, bob: httpx2.Client, repo: str, openapi: OpenApiCheck
) -> None:
    """GitHub — docs.github.com REST "Branches" ("Get a branch": `protected` and the `protection` summary
    with its required status checks, readable with read access) and "Protected branches" ("Get branch
    protection": admins only — a user without admin gets 404, the same answer as a branch that is not
    protected, "Branch not protected"; an App without the Administration permission 403 "Resource not
    accessible by integration"); "Rules" ("Get rules for a branch": the rules of the rulesets that apply,
    readable with read access, `[]` when none)."""
    github_branches(openapi, sandbox, alice, repo)
    assert bob.get(repo + "/branches/main").json()["protection"]["required_status_checks"]["contexts"] == [
        "ci/test",
        "lint",
    ]
    hidden = openapi(bob.get(repo + "/branches/main/protection"))
    assert (hidden.status_code, hidden.json()["message"]) == (404, "Not Found")
    with client(sandbox, _app_token(sandbox, "alice", "demo")) as app:
        refused = app.get(repo + "/branches/main/protection")
        assert (refused.status_code, refused.json()["message"]) == (
            403,
            "Resource not accessible by integration",
        )
        assert app.get(repo + "/branches/main").json()["protected"] is True
    assert openapi(bob.get(repo + "/rules/branches/main")).json() == []
    protect(sandbox, repo, "release", ["build"], ruleset=True)
    rules = openapi(bob.get(repo + "/rules/branches/release")).json()
    assert [(r["type"], r["ruleset_source"], r["parameters"]["required_status_checks"]) for r in rules] == [
        ("required_status_checks", "alice/demo", [{"context": "build"}])
    ]


def gitea_branches(check: GiteaApiCheck, sandbox: SandboxServer, g: httpx2.Client, repo: str) -> None:
    protect(sandbox, repo, "main", ["ci/test"])
    g.post(repo + "/branches", json={"new_branch_name": "open", "old_ref_name": "main"}).raise_for_status()
    listed = check(g.get(repo + "/branches"))
    assert listed.headers["x-total-count"] == "2"
    assert [(b["name"], b["protected"]) for b in listed.json()] == [("main", True), ("open", False)]
    main = check(g.get(repo + "/branches/main")).json()
    assert (main["enable_status_check"], main["status_check_contexts"]) == (True, ["ci/test"])
    found = check(g.get(repo + "/branch_protections")).json()
    assert [(p["branch_name"], p["status_check_contexts"]) for p in found] == [("main", ["ci/test"])]


def test_gitea_branch_protection_readers_see_the_checks_only_admins_the_rules(
    sandbox: SandboxServer, g: httpx2.Client, gbob: httpx2.Client
) -> None:
    """Gitea — `GET /api/v1/repos/{o}/{r}/branches[/{branch}]` (routers/api/v1/repo/branch.go; the
    branch's `protected`, `enable_status_check`, `status_check_contexts` for whoever may read it:
    services/convert/convert.go ToBranch) and `GET /branch_protections` (reqRepoAdmin in
    routers/api/v1/api.go: 403 below repository admin)."""
    g.post("/user/repos", json={"name": "prot"}).raise_for_status()
    repo = "/repos/alice/prot"
    gitea_branches(GiteaApiCheck.load(), sandbox, g, repo)
    g.put(repo + "/collaborators/bob", json={"permission": "read"}).raise_for_status()
    assert gbob.get(repo + "/branches/main").json()["status_check_contexts"] == ["ci/test"]
    assert gbob.get(repo + "/branch_protections").status_code == 403


# --- check run output ------------------------------------------------------------------------------------


def _wait_for_run(alice: httpx2.Client, repo: str, sha: str, name: str) -> dict[str, Any]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        runs = alice.get(f"{repo}/commits/{sha}/check-runs", params={"check_name": name}).json()["check_runs"]
        if runs and runs[0]["status"] == "completed":
            return dict(runs[0])
        time.sleep(0.05)
    raise AssertionError(f"no completed check run {name} on {sha}")


def github_check_output(check: OpenApiCheck, sandbox: SandboxServer, alice: httpx2.Client, repo: str) -> None:
    sha = alice.get(repo + "/git/ref/heads/main").json()["object"]["sha"]
    failing = {
        "path": "tests/test_api.py",
        "start_line": 12,
        "end_line": 14,
        "annotation_level": "failure",
        "message": "assert 500 == 200",
        "title": "test_get_user",
    }
    play = {
        "repo": repo.removeprefix("/repos/"),
        "sha": sha,
        "kind": "check_run",
        "context": "pytest",
        "conclusion": "failure",
        "title": "1 failed, 41 passed",
        "summary": "test_get_user failed",
        "text": "FAILED tests/test_api.py::test_get_user",
        "annotations": [failing],
    }
    httpx2.post(sandbox.url + "/_sandbox/ci", json=play).raise_for_status()
    run = check(alice.get(f"{repo}/commits/{sha}/check-runs")).json()["check_runs"][0]
    assert {k: run["output"][k] for k in ("title", "summary", "text", "annotations_count")} == {
        "title": "1 failed, 41 passed",
        "summary": "test_get_user failed",
        "text": "FAILED tests/test_api.py::test_get_user",
        "annotations_count": 1,
    }
    assert run["output"]["annotations_url"].endswith(f"/check-runs/{run['id']}/annotations")
    found = check(alice.get(f"{repo}/check-runs/{run['id']}/annotations")).json()
    assert [
        (a["path"], a["start_line"], a["end_line"], a["annotation_level"], a["message"], a["title"])
        for a in found
    ] == [("tests/test_api.py", 12, 14, "failure", "assert 500 == 200", "test_get_user")]


def test_github_check_runs_carry_their_output_and_annotations(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, openapi: OpenApiCheck
) -> None:
    """GitHub — docs.github.com REST "Check runs": a run's `output` (`title`, `summary`, `text`,
    `annotations_count`, `annotations_url`) and "List check run annotations" (`GET
    /check-runs/{id}/annotations`: path, lines, level, message, title), so a red check names the failing
    test."""
    github_check_output(openapi, sandbox, alice, repo)


def github_create_check_run(
    check: OpenApiCheck, sandbox: SandboxServer, alice: httpx2.Client, repo: str
) -> None:
    owner, name = repo.removeprefix("/repos/").split("/")
    sha = alice.get(repo + "/git/ref/heads/main").json()["object"]["sha"]
    # the description lists only 201 for this operation: the 403 is checked by its message
    refused = alice.post(repo + "/check-runs", json={"name": "lint", "head_sha": sha})
    assert (refused.status_code, refused.json()["message"]) == (
        403,
        "You must authenticate via a GitHub App.",
    )
    with client(sandbox, _app_token(sandbox, owner, name)) as app:
        output = {
            "title": "lint found 1 problem",
            "summary": "E501",
            "annotations": [
                {
                    "path": "a.py",
                    "start_line": 1,
                    "end_line": 1,
                    "annotation_level": "warning",
                    "message": "line too long",
                }
            ],
        }
        made = check(
            app.post(
                repo + "/check-runs",
                json={"name": "lint", "head_sha": sha, "conclusion": "neutral", "output": output},
            )
        )
        assert made.status_code == 201
        body = made.json()
        assert (body["status"], body["conclusion"], body["app"]["slug"]) == (
            "completed",
            "neutral",
            "reader-app",
        )
        assert (body["output"]["title"], body["output"]["annotations_count"]) == ("lint found 1 problem", 1)
        going = check(app.post(repo + "/check-runs", json={"name": "build", "head_sha": sha}))
        assert (going.json()["status"], going.json()["conclusion"]) == ("queued", None)


def test_github_apps_create_check_runs_and_other_tokens_may_not(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, openapi: OpenApiCheck
) -> None:
    """GitHub `POST /repos/{o}/{r}/check-runs` — docs.github.com REST "Create a check run": 201 for a
    GitHub App's installation token (Checks: write), 403 "You must authenticate via a GitHub App." for any
    other token; `conclusion` completes the run, without it the run is `queued`."""
    github_create_check_run(openapi, sandbox, alice, repo)


def test_the_sandbox_ci_names_the_failing_test_on_both_forges(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, g: httpx2.Client
) -> None:
    """`steward sandbox --ci`: a red report says which test failed — GitHub's check run in its output title,
    summary, text and one failure annotation per test file; Gitea's commit status in its `description`
    (Gitea has no check runs; its status `description` is what a reader sees)."""
    httpx2.put(
        sandbox.url + "/_sandbox/ci/auto", json={"enabled": True, "delay_seconds": 0}
    ).raise_for_status()
    put = {"message": "red", "content": _b64("def test_it():\n    assert False\n"), "branch": "main"}
    sha = alice.put(repo + "/contents/tests/test_it.py", json=put).json()["commit"]["sha"]
    run = _wait_for_run(alice, repo, sha, "ci/sandbox")
    assert run["conclusion"] == "failure"
    assert run["output"]["title"] == "1 failing test file: tests/test_it.py"
    assert run["output"]["text"] == "FAILED tests/test_it.py"
    notes = alice.get(f"{repo}/check-runs/{run['id']}/annotations").json()
    assert [(a["path"], a["annotation_level"]) for a in notes] == [("tests/test_it.py", "failure")]

    g.post("/user/repos", json={"name": "gci"}).raise_for_status()
    body = {"message": "red", "content": _b64("def test_it():\n    assert False\n")}
    gsha = g.post("/repos/alice/gci/contents/tests/test_it.py", json=body).json()["commit"]["sha"]
    deadline = time.monotonic() + 10
    statuses: list[dict[str, Any]] = []
    while not statuses and time.monotonic() < deadline:
        statuses = g.get(f"/repos/alice/gci/commits/{gsha}/statuses").json()
        time.sleep(0.05)
    assert [(s["status"], s["description"]) for s in statuses] == [
        ("failure", "1 failing test file: tests/test_it.py")
    ]
