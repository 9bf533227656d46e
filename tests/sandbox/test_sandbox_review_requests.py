"""Review requests on a pull request, as each forge serves them: who may be asked, what the pull request
then lists in `requested_reviewers`, and that a submitted review takes its reviewer off the list.

GitHub: docs.github.com REST "Review requests"
(`POST|GET|DELETE /repos/{o}/{r}/pulls/{n}/requested_reviewers`).
Gitea: routers/api/v1/repo/pull_review.go CreateReviewRequests / DeleteReviewRequests and
services/issue/assignee.go isValidReviewRequest (see bot/sandbox/*/review_requests.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from bot.sandbox.server import SandboxServer

from .helpers import CaptureServer, OpenApiCheck, client, collaborate, gitea_client, idle, schema_errors
from .test_sandbox_gitea import GiteaApiCheck
from .test_sandbox_records import gitea_pull, github_pull

GITEA_HOOKS = Path(__file__).resolve().parents[1] / "fixtures" / "gitea" / "webhooks"


@pytest.fixture
def bob(sandbox: SandboxServer) -> Iterator[httpx2.Client]:
    with client(sandbox, "bob-token") as c:
        yield c


@pytest.fixture
def gbob(sandbox: SandboxServer) -> Iterator[httpx2.Client]:
    with gitea_client(sandbox, "bob-token") as c:
        yield c


def _logins(users: list[dict[str, object]]) -> list[object]:
    return [u["login"] for u in users]


def github_review_requests(check: OpenApiCheck, alice: httpx2.Client, bob: httpx2.Client, repo: str) -> None:
    collaborate(alice, repo, "bob", "push")
    collaborate(alice, repo, "carol", "pull")
    n, _ = github_pull(alice, repo, "asked")
    asked = check(alice.post(f"{repo}/pulls/{n}/requested_reviewers", json={"reviewers": ["Bob", "carol"]}))
    assert asked.status_code == 201, asked.text
    assert _logins(asked.json()["requested_reviewers"]) == ["bob", "carol"]
    # Asking again keeps one request each.
    check(alice.post(f"{repo}/pulls/{n}/requested_reviewers", json={"reviewers": ["bob"]}))
    listed = check(alice.get(f"{repo}/pulls/{n}/requested_reviewers")).json()
    assert (_logins(listed["users"]), listed["teams"]) == (["bob", "carol"], [])
    assert _logins(check(alice.get(f"{repo}/pulls/{n}")).json()["requested_reviewers"]) == ["bob", "carol"]
    # A submitted review takes its reviewer off; withdrawing takes the other off.
    bob.post(f"{repo}/pulls/{n}/reviews", json={"event": "APPROVE"}).raise_for_status()
    assert _logins(alice.get(f"{repo}/pulls/{n}").json()["requested_reviewers"]) == ["carol"]
    gone = check(
        alice.request("DELETE", f"{repo}/pulls/{n}/requested_reviewers", json={"reviewers": ["carol"]})
    )
    assert gone.status_code == 200 and gone.json()["requested_reviewers"] == []


def test_github_review_requests_are_listed_until_the_review_comes(
    alice: httpx2.Client, bob: httpx2.Client, repo: str, openapi: OpenApiCheck
) -> None:
    github_review_requests(openapi, alice, bob, repo)


def test_github_refuses_the_author_and_people_who_are_not_collaborators(
    sandbox: SandboxServer, alice: httpx2.Client, bob: httpx2.Client, repo: str, openapi: OpenApiCheck
) -> None:
    """422 "Review cannot be requested from pull request author." and 422 "Reviews may only be requested
    from collaborators. …"; someone with read access only cannot ask (triage needed: 403)."""
    collaborate(alice, repo, "bob", "pull")
    n, _ = github_pull(alice, repo, "refused")
    url = f"{repo}/pulls/{n}/requested_reviewers"
    own = openapi(alice.post(url, json={"reviewers": ["alice"]}))
    assert (own.status_code, own.json()["message"]) == (
        422,
        "Review cannot be requested from pull request author.",
    )
    stranger = openapi(alice.post(url, json={"reviewers": ["dave"]}))
    assert stranger.status_code == 422
    assert stranger.json()["message"].startswith("Reviews may only be requested from collaborators.")
    assert "alice/demo" in stranger.json()["message"]
    assert bob.post(url, json={"reviewers": ["carol"]}).status_code == 403
    assert alice.get(f"{repo}/pulls/{n}").json()["requested_reviewers"] == []


def gitea_review_requests(check: GiteaApiCheck, g: httpx2.Client, gbob: httpx2.Client, repo: str) -> None:
    g.put(repo + "/collaborators/bob", json={"permission": "write"}).raise_for_status()
    n, sha = gitea_pull(g, repo, "asked")
    asked = check(g.post(f"{repo}/pulls/{n}/requested_reviewers", json={"reviewers": ["bob", "carol"]}))
    assert asked.status_code == 201, asked.text
    assert [(r["user"]["login"], r["state"], r["commit_id"]) for r in asked.json()] == [
        ("bob", "REQUEST_REVIEW", sha),
        ("carol", "REQUEST_REVIEW", sha),
    ]
    assert _logins(check(g.get(f"{repo}/pulls/{n}")).json()["requested_reviewers"]) == ["bob", "carol"]
    gbob.post(f"{repo}/pulls/{n}/reviews", json={"event": "APPROVED"}).raise_for_status()
    assert _logins(g.get(f"{repo}/pulls/{n}").json()["requested_reviewers"]) == ["carol"]
    gone = check(g.request("DELETE", f"{repo}/pulls/{n}/requested_reviewers", json={"reviewers": ["carol"]}))
    assert gone.status_code == 204
    assert g.get(f"{repo}/pulls/{n}").json()["requested_reviewers"] == []


def test_gitea_review_requests_are_listed_until_the_review_comes(
    g: httpx2.Client, gbob: httpx2.Client
) -> None:
    g.post("/user/repos", json={"name": "rr"}).raise_for_status()
    gitea_review_requests(GiteaApiCheck.load(), g, gbob, "/repos/alice/rr")


def test_gitea_refuses_the_poster_unknown_people_and_outsiders_choosing(
    sandbox: SandboxServer, g: httpx2.Client
) -> None:
    """404 "User 'x' not exist"; 422 for the poster ("poster of pr can't be reviewer"), for a reviewer who
    cannot read a private repository ("Reviewer can't read"), and for a caller who is neither the poster
    nor a collaborator ("Doer can't choose reviewer")."""
    g.post("/user/repos", json={"name": "rq", "private": True}).raise_for_status()
    repo = "/repos/alice/rq"
    g.put(repo + "/collaborators/bob", json={"permission": "read"}).raise_for_status()
    n, _ = gitea_pull(g, repo, "refused")
    url = f"{repo}/pulls/{n}/requested_reviewers"
    assert g.post(url, json={"reviewers": ["nobody-here"]}).status_code == 404
    own = g.post(url, json={"reviewers": ["alice"]})
    assert own.status_code == 422 and "poster of pr can't be reviewer" in own.json()["message"]
    unread = g.post(url, json={"reviewers": ["carol"]})
    assert unread.status_code == 422 and "Reviewer can't read" in unread.json()["message"]
    g.post("/user/repos", json={"name": "rp"}).raise_for_status()
    n2, _ = gitea_pull(g, "/repos/alice/rp", "other")
    with gitea_client(sandbox, "dave-token") as dave:
        chooser = dave.post(f"/repos/alice/rp/pulls/{n2}/requested_reviewers", json={"reviewers": ["carol"]})
    assert chooser.status_code == 422 and "Doer can't choose reviewer" in chooser.json()["message"]


READY = (
    "mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id}) "
    "{ pullRequest { number isDraft } } }"
)


def test_github_marks_a_draft_ready_through_graphql_and_says_so_in_a_webhook(
    sandbox: SandboxServer, alice: httpx2.Client, bob: httpx2.Client, repo: str, capture: CaptureServer
) -> None:
    """GitHub turns a draft into a pull request ready for review only through GraphQL
    (``markPullRequestReadyForReview``: REST's "Update a pull request" has no `draft`), then sends
    `pull_request` `ready_for_review` (octokit/webhooks schema). Its author or a writer may; others get
    FORBIDDEN and the draft stays."""
    hook = {
        "config": {"url": capture.hook_url, "content_type": "json", "secret": "s"},
        "events": ["pull_request"],
    }
    alice.post(repo + "/hooks", json=hook).raise_for_status()
    head = alice.get(repo + "/git/ref/heads/main").json()["object"]["sha"]
    alice.post(repo + "/git/refs", json={"ref": "refs/heads/wip", "sha": head}).raise_for_status()
    put = {"message": "wip", "content": "d2lwCg==", "branch": "wip"}
    alice.put(f"{repo}/contents/wip.txt", json=put).raise_for_status()
    made = alice.post(
        repo + "/pulls", json={"title": "WIP", "head": "wip", "base": "main", "draft": True}
    ).json()
    assert made["draft"] is True
    denied = bob.post("/graphql", json={"query": READY, "variables": {"id": made["node_id"]}}).json()
    assert (
        denied["errors"][0]["type"] == "FORBIDDEN"
        and alice.get(f"{repo}/pulls/{made['number']}").json()["draft"]
    )
    answer = alice.post("/graphql", json={"query": READY, "variables": {"id": made["node_id"]}}).json()
    assert answer["data"]["markPullRequestReadyForReview"]["pullRequest"] == {
        "number": made["number"],
        "isDraft": False,
    }
    assert alice.get(f"{repo}/pulls/{made['number']}").json()["draft"] is False
    idle(sandbox)
    [ready] = [r for r in capture.capture.received if r.payload.get("action") == "ready_for_review"]
    assert ready.payload["pull_request"]["draft"] is False
    assert schema_errors("pull_request", "ready_for_review", ready.payload) == []


def test_both_forges_ask_code_owners_when_a_pull_request_opens_ready_and_not_on_a_draft(
    alice: httpx2.Client, g: httpx2.Client, repo: str
) -> None:
    """GitHub (docs "About code owners": owners are requested when a pull request that changes their code
    opens, not for drafts, and when a draft is marked ready) and Gitea (services/issue/pull.go
    PullRequestCodeOwnersReview: none while WIP; on IssueChangeTitle when the WIP prefix comes off; never the
    poster)."""
    collaborate(alice, repo, "bob", "push")
    alice.put(
        f"{repo}/contents/.github/CODEOWNERS",
        json={"message": "owners", "content": "c3JjLyBAYm9iIEBhbGljZQo="},  # "src/ @bob @alice"
    ).raise_for_status()
    n, _ = github_pull(alice, repo, "owned")  # changes src/owned.py
    assert _logins(alice.get(f"{repo}/pulls/{n}").json()["requested_reviewers"]) == ["bob"]  # not the author
    g.post("/user/repos", json={"name": "go"}).raise_for_status()
    g.put("/repos/alice/go/collaborators/bob", json={"permission": "write"}).raise_for_status()
    g.post(
        "/repos/alice/go/contents/CODEOWNERS",
        json={"message": "owners", "content": "c3JjLy4qIEBib2IK"},  # "src/.* @bob"
    ).raise_for_status()
    g.post(
        "/repos/alice/go/branches", json={"new_branch_name": "wip", "old_ref_name": "main"}
    ).raise_for_status()
    g.post(
        "/repos/alice/go/contents/src/wip.py",
        json={"message": "wip", "content": "d2lwCg==", "branch": "wip"},
    ).raise_for_status()
    made = g.post(
        "/repos/alice/go/pulls", json={"title": "WIP: change", "head": "wip", "base": "main"}
    ).json()
    assert made["draft"] is True and made["requested_reviewers"] == []
    g.patch(f"/repos/alice/go/pulls/{made['number']}", json={"title": "change"}).raise_for_status()
    assert _logins(g.get(f"/repos/alice/go/pulls/{made['number']}").json()["requested_reviewers"]) == ["bob"]


def test_a_review_requested_or_withdrawn_sends_its_webhook_on_both_forges(
    sandbox: SandboxServer, alice: httpx2.Client, g: httpx2.Client, repo: str, capture: CaptureServer
) -> None:
    """One webhook per reviewer asked or no longer asked. GitHub: `pull_request` `review_requested` /
    `review_request_removed` with `requested_reviewer` (octokit webhook schemas). Gitea
    (services/webhook/notifier.go PullRequestReviewRequest; modules/webhook/type.go): X-Gitea-Event
    `pull_request`, X-Gitea-Event-Type `pull_request_review_request`, the same actions and
    `requested_reviewer`. Asking someone already asked sends nothing."""
    hook = {
        "config": {"url": capture.hook_url, "content_type": "json", "secret": "s"},
        "events": ["pull_request"],
    }
    alice.post(repo + "/hooks", json=hook).raise_for_status()
    collaborate(alice, repo, "bob", "push")
    n, _ = github_pull(alice, repo, "asked")
    url = f"{repo}/pulls/{n}/requested_reviewers"
    alice.post(url, json={"reviewers": ["bob"]}).raise_for_status()
    alice.post(url, json={"reviewers": ["bob"]}).raise_for_status()
    alice.request("DELETE", url, json={"reviewers": ["bob"]}).raise_for_status()
    idle(sandbox)
    got = [
        r for r in capture.capture.received if str(r.payload.get("action", "")).startswith("review_request")
    ]
    assert [(r.payload["action"], r.payload["requested_reviewer"]["login"]) for r in got] == [
        ("review_requested", "bob"),
        ("review_request_removed", "bob"),
    ]
    assert got[0].payload["pull_request"]["requested_reviewers"][0]["login"] == "bob"
    for r in got:
        assert r.headers["x-github-event"] == "pull_request"
        assert schema_errors("pull_request", r.payload["action"], r.payload) == []
    capture.capture.received.clear()
    g.post("/user/repos", json={"name": "rw"}).raise_for_status()
    g.put("/repos/alice/rw/collaborators/bob", json={"permission": "write"}).raise_for_status()
    g.post(
        "/repos/alice/rw/hooks",
        json={"type": "gitea", "config": {"url": capture.hook_url, "content_type": "json", "secret": "s"},
              "events": ["pull_request_review_request"], "active": True},
    ).raise_for_status()  # fmt: skip
    m, _ = gitea_pull(g, "/repos/alice/rw", "asked")
    gurl = f"/repos/alice/rw/pulls/{m}/requested_reviewers"
    g.post(gurl, json={"reviewers": ["bob"]}).raise_for_status()
    g.post(gurl, json={"reviewers": ["bob"]}).raise_for_status()
    g.request("DELETE", gurl, json={"reviewers": ["bob"]}).raise_for_status()
    idle(sandbox)
    seen = [
        (r.headers["x-gitea-event"], r.headers["x-gitea-event-type"], r.payload["action"],
         r.payload["requested_reviewer"]["login"], r.payload["number"])
        for r in capture.capture.received
    ]  # fmt: skip
    recorded = json.loads((GITEA_HOOKS / "woodpecker" / "HookPullRequestAddReviewRequest.json").read_text())
    assert set(capture.capture.received[0].payload) == set(recorded)
    assert seen == [
        ("pull_request", "pull_request_review_request", "review_requested", "bob", m),
        ("pull_request", "pull_request_review_request", "review_request_removed", "bob", m),
    ]
