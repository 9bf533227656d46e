"""The sandbox reproduces ../shared/FORGE-FACTS.md: one test per fact, its docstring naming the fact.

Facts pinned elsewhere (the list in docs/forge-port.md says where): Gitea's permission 403
(test_sandbox_gitea), GitHub's 65,536-character comment and issue bodies and "apply, then 502 / drop"
(test_sandbox_http), Gitea's whole label set in label events (test_sandbox_gitea), GitHub's git data API
(test_sandbox_git), "CI is green must read both" (tests/unit/test_ci_rules.py).
"""

from __future__ import annotations

import base64
import threading
import time

import httpx2
import pytest

from bot.events.gitea import normalise_gitea
from bot.sandbox.server import SandboxServer

from .helpers import CaptureServer, client, collaborate, idle, schema_errors

SECRET = "facts-secret"


@pytest.fixture
def grepo(g: httpx2.Client) -> str:
    assert g.post("/user/repos", json={"name": "gfacts"}).status_code == 201
    return "/repos/alice/gfacts"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _github_branch(alice: httpx2.Client, repo: str, name: str, path: str = "a.txt", text: str = "a") -> str:
    head = alice.get(repo + "/git/ref/heads/main").json()["object"]["sha"]
    alice.post(repo + "/git/refs", json={"ref": f"refs/heads/{name}", "sha": head})
    made = alice.put(
        f"{repo}/contents/{path}", json={"message": f"add {path}", "content": _b64(text), "branch": name}
    )
    assert made.status_code == 201, made.text
    return str(made.json()["commit"]["sha"])


def _gitea_branch(g: httpx2.Client, repo: str, name: str, path: str = "a.txt", text: str = "a") -> str:
    change = {
        "branch": "main",
        "new_branch": name,
        "files": [{"operation": "create", "path": path, "content": _b64(text)}],
    }
    made = g.post(repo + "/contents", json=change)
    assert made.status_code == 201, made.text
    return str(made.json()["commit"]["sha"])


def _github_hook(alice: httpx2.Client, repo: str, capture: CaptureServer, events: list[str]) -> int:
    body = {"config": {"url": capture.hook_url, "content_type": "json", "secret": SECRET}, "events": events}
    return int(alice.post(repo + "/hooks", json=body).json()["id"])


def _gitea_hook(g: httpx2.Client, repo: str, url: str, events: list[str]) -> None:
    body = {
        "type": "gitea",
        "config": {"url": url, "content_type": "json", "secret": SECRET},
        "events": events,
        "active": True,
    }
    assert g.post(repo + "/hooks", json=body).status_code == 201


# --- permissions ---------------------------------------------------------------------------------------


def test_github_permission_needs_push_access_and_answers_role_name(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str
) -> None:
    """FORGE-FACTS "Permissions" (GitHub): reading a collaborator's permission needs push access; the answer
    has `permission` (admin/write/read/none: maintain and triage fold into write and read) and `role_name`
    (the five levels)."""
    for login, role in (("bob", "pull"), ("carol", "triage"), ("dave", "maintain")):
        collaborate(alice, repo, login, role)
    with client(sandbox, "bob-token") as bob:
        assert bob.get(repo + "/collaborators/carol/permission").status_code == 403
    triage = alice.get(repo + "/collaborators/carol/permission").json()
    maintain = alice.get(repo + "/collaborators/dave/permission").json()
    assert (triage["permission"], triage["role_name"]) == ("read", "triage")
    assert (maintain["permission"], maintain["role_name"]) == ("write", "maintain")


# --- sizes and limits ----------------------------------------------------------------------------------


def test_github_refuses_pull_request_bodies_over_65536_characters(alice: httpx2.Client, repo: str) -> None:
    """FORGE-FACTS "Sizes and limits": GitHub issue, comment *and PR* bodies are at most 65,536 characters
    (422 "Body is too long (maximum is 65536 characters)")."""
    _github_branch(alice, repo, "long")
    pull = {"title": "t", "head": "long", "base": "main", "body": "x" * 65_537}
    answer = alice.post(repo + "/pulls", json=pull)
    assert answer.status_code == 422
    assert answer.json()["errors"][0]["message"] == "Body is too long (maximum is 65536 characters)"
    assert alice.post(repo + "/pulls", json={**pull, "body": "x" * 65_536}).status_code == 201


def test_github_secondary_limits_refuse_the_81st_write_of_a_minute(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str
) -> None:
    """FORGE-FACTS "Sizes and limits": at most 80 content-creating requests a minute (and 500 an hour) per
    account; beyond that 403 with Retry-After. Off unless switched on (tests arrange state quickly)."""
    httpx2.put(
        sandbox.url + "/_sandbox/limits", json={"secondary": [[80, 60], [500, 3600]]}
    ).raise_for_status()
    for i in range(80):
        assert alice.post(repo + "/labels", json={"name": f"l{i}"}).status_code == 201
    refused = alice.post(repo + "/labels", json={"name": "one too many"})
    assert refused.status_code == 403 and int(refused.headers["Retry-After"]) > 0
    assert "secondary rate limit" in refused.json()["message"]
    assert alice.get(repo + "/labels").status_code == 200, "reads are not content-creating"


# --- writes that fail ----------------------------------------------------------------------------------


def test_github_refuses_to_create_a_ref_that_exists(alice: httpx2.Client, repo: str) -> None:
    """FORGE-FACTS "Writes that fail": creating a ref that exists answers 422 "Reference already exists"."""
    head = alice.get(repo + "/git/ref/heads/main").json()["object"]["sha"]
    answer = alice.post(repo + "/git/refs", json={"ref": "refs/heads/main", "sha": head})
    assert answer.status_code == 422 and answer.json()["message"] == "Reference already exists"


def test_a_second_pull_request_for_a_head_is_refused(
    alice: httpx2.Client, repo: str, g: httpx2.Client, grepo: str
) -> None:
    """FORGE-FACTS "Writes that fail": GitHub answers a pull request for a head that already has an open one
    with 422 "A pull request already exists for owner:branch."; Gitea with 409 "pull request already exists
    for these targets [...]" (models/issues/pull.go ErrPullRequestAlreadyExists)."""
    _github_branch(alice, repo, "twice")
    pull = {"title": "t", "head": "twice", "base": "main"}
    assert alice.post(repo + "/pulls", json=pull).status_code == 201
    again = alice.post(repo + "/pulls", json=pull)
    assert again.status_code == 422
    assert again.json()["errors"][0]["message"] == "A pull request already exists for alice:twice."
    _gitea_branch(g, grepo, "twice")
    assert g.post(grepo + "/pulls", json=pull).status_code == 201
    refused = g.post(grepo + "/pulls", json=pull)
    assert refused.status_code == 409
    assert refused.json()["message"].startswith("pull request already exists for these targets")


# --- links ---------------------------------------------------------------------------------------------


def test_comment_links_name_issues_and_pull_requests_as_each_forge_does(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, g: httpx2.Client, grepo: str
) -> None:
    """FORGE-FACTS "Links": GitHub …/issues/N#issuecomment-ID and …/pull/N#issuecomment-ID; Gitea
    …/issues/N#issuecomment-ID and …/pulls/N#issuecomment-ID (Issue.HTMLURL())."""
    base = sandbox.url
    n = alice.post(repo + "/issues", json={"title": "i"}).json()["number"]
    c = alice.post(f"{repo}/issues/{n}/comments", json={"body": "x"}).json()
    assert c["html_url"] == f"{base}/alice/demo/issues/{n}#issuecomment-{c['id']}"
    _github_branch(alice, repo, "b")
    p = alice.post(repo + "/pulls", json={"title": "p", "head": "b", "base": "main"}).json()["number"]
    c = alice.post(f"{repo}/issues/{p}/comments", json={"body": "x"}).json()
    assert c["html_url"] == f"{base}/alice/demo/pull/{p}#issuecomment-{c['id']}"
    n = g.post(grepo + "/issues", json={"title": "i"}).json()["number"]
    c = g.post(f"{grepo}/issues/{n}/comments", json={"body": "x"}).json()
    assert c["html_url"] == f"{base}/alice/gfacts/issues/{n}#issuecomment-{c['id']}"
    _gitea_branch(g, grepo, "b")
    p = g.post(grepo + "/pulls", json={"title": "p", "head": "b", "base": "main"}).json()["number"]
    c = g.post(f"{grepo}/issues/{p}/comments", json={"body": "x"}).json()
    assert c["html_url"] == f"{base}/alice/gfacts/pulls/{p}#issuecomment-{c['id']}"


def test_gitea_milestones_do_not_record_who_closed_them_and_githubs_event_does(
    sandbox: SandboxServer,
    alice: httpx2.Client,
    repo: str,
    g: httpx2.Client,
    grepo: str,
    capture: CaptureServer,
) -> None:
    """FORGE-FACTS "Links": Gitea's Milestone has no field for who closed it (and no webhook carries it);
    GitHub's milestone.closed webhook has the sender."""
    ms = g.post(grepo + "/milestones", json={"title": "v1"}).json()
    closed = g.patch(f"{grepo}/milestones/{ms['id']}", json={"state": "closed"}).json()
    assert closed["state"] == "closed" and not {"closed_by", "closer", "creator"} & set(closed)
    _github_hook(alice, repo, capture, ["milestone"])
    number = alice.post(repo + "/milestones", json={"title": "v1"}).json()["number"]
    alice.patch(f"{repo}/milestones/{number}", json={"state": "closed"})
    idle(sandbox)
    [closed_event] = [r for r in capture.capture.received if r.payload.get("action") == "closed"]
    assert closed_event.payload["sender"]["login"] == "alice"


# --- webhooks ------------------------------------------------------------------------------------------


def test_gitea_has_no_milestone_webhook(
    sandbox: SandboxServer, g: httpx2.Client, grepo: str, capture: CaptureServer
) -> None:
    """FORGE-FACTS "Webhooks": Gitea has no milestone webhook; milestone state must be polled."""
    _gitea_hook(g, grepo, capture.hook_url, ["*"])
    ms = g.post(grepo + "/milestones", json={"title": "v1"}).json()
    g.patch(f"{grepo}/milestones/{ms['id']}", json={"title": "v1.0", "state": "closed"})
    g.delete(f"{grepo}/milestones/{ms['id']}")
    idle(sandbox)
    assert capture.capture.received == []


def test_gitea_pull_request_label_events_carry_the_whole_label_set(
    sandbox: SandboxServer, g: httpx2.Client, grepo: str, capture: CaptureServer
) -> None:
    """FORGE-FACTS "Webhooks": Gitea label events carry the issue's whole label set, not the label that
    changed (pull_request_label, label_updated)."""
    _gitea_hook(g, grepo, capture.hook_url, ["pull_request"])
    _gitea_branch(g, grepo, "b")
    n = g.post(grepo + "/pulls", json={"title": "p", "head": "b", "base": "main"}).json()["number"]
    ids = [
        g.post(grepo + "/labels", json={"name": name, "color": "ededed"}).json()["id"] for name in ("a", "b")
    ]
    g.post(f"{grepo}/issues/{n}/labels", json={"labels": ids[:1]})
    g.post(f"{grepo}/issues/{n}/labels", json={"labels": ids[1:]})
    idle(sandbox)
    labelled = [
        r for r in capture.capture.received if r.headers["x-gitea-event-type"] == "pull_request_label"
    ]
    assert [[lb["name"] for lb in r.payload["pull_request"]["labels"]] for r in labelled] == [
        ["a"],
        ["a", "b"],
    ]
    event = normalise_gitea("pull_request", "d", labelled[-1].payload, event_type="pull_request_label")
    assert event.labels_are_full_set and event.label is None and event.issue is not None
    assert event.issue.labels == ("a", "b")


def test_no_forge_retries_a_failed_delivery_but_github_keeps_it_for_redelivery(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, capture: CaptureServer
) -> None:
    """FORGE-FACTS "Webhooks": neither forge retries a failed delivery; GitHub keeps it for redelivery
    through GET …/hooks/{hook_id}/deliveries and POST …/deliveries/{delivery_id}/attempts."""
    capture.capture.status = 500
    hook_id = _github_hook(alice, repo, capture, ["issues"])
    alice.post(repo + "/issues", json={"title": "lost"})
    idle(sandbox)
    time.sleep(0.2)
    assert len(capture.capture.received) == 2, "the ping and the event, each once"
    deliveries = alice.get(f"{repo}/hooks/{hook_id}/deliveries").json()
    failed = next(d for d in deliveries if d["event"] == "issues")
    assert failed["status_code"] == 500 and failed["status"] != "OK"
    capture.capture.status = 200
    assert alice.post(f"{repo}/hooks/{hook_id}/deliveries/{failed['id']}/attempts").status_code == 202
    idle(sandbox)
    again = alice.get(f"{repo}/hooks/{hook_id}/deliveries").json()[0]
    assert again["guid"] == failed["guid"] and again["redelivery"] and again["status_code"] == 200


def test_githubs_milestone_event_actions(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, capture: CaptureServer
) -> None:
    """FORGE-FACTS "Webhooks": GitHub milestone events: created, opened, closed, edited, deleted."""
    _github_hook(alice, repo, capture, ["milestone"])
    n = alice.post(repo + "/milestones", json={"title": "v1"}).json()["number"]
    alice.patch(f"{repo}/milestones/{n}", json={"title": "v1.0"})
    alice.patch(f"{repo}/milestones/{n}", json={"state": "closed"})
    alice.patch(f"{repo}/milestones/{n}", json={"state": "open"})
    alice.delete(f"{repo}/milestones/{n}")
    idle(sandbox)
    received = [r for r in capture.capture.received if r.event == "milestone"]
    assert [r.payload["action"] for r in received] == ["created", "edited", "closed", "opened", "deleted"]
    for r in received:
        assert schema_errors("milestone", r.payload["action"], r.payload) == []


def test_the_bots_own_writes_come_back_as_webhooks(
    sandbox: SandboxServer,
    g: httpx2.Client,
    grepo: str,
    alice: httpx2.Client,
    repo: str,
    capture: CaptureServer,
) -> None:
    """FORGE-FACTS "Webhooks": the bot's own writes come back as webhooks (sender = the bot), on both."""
    collaborate(alice, repo, "bob", "push")
    g.put(f"{grepo}/collaborators/bob", json={"permission": "write"})
    _github_hook(alice, repo, capture, ["issue_comment"])
    _gitea_hook(g, grepo, capture.hook_url, ["issue_comment"])
    n = alice.post(repo + "/issues", json={"title": "i"}).json()["number"]
    m = g.post(grepo + "/issues", json={"title": "i"}).json()["number"]
    with client(sandbox, "bob-token") as bob:
        bob.post(f"{repo}/issues/{n}/comments", json={"body": "from the bot"})
        bob.post(f"/api/v1{grepo}/issues/{m}/comments", json={"body": "from the bot"})
    idle(sandbox)
    comments = [r for r in capture.capture.received if r.payload.get("comment")]
    assert [r.payload["sender"]["login"] for r in comments] == ["bob", "bob"]


def test_delivery_timeouts_are_five_seconds_on_gitea_and_ten_on_github(
    sandbox: SandboxServer, g: httpx2.Client, grepo: str, capture: CaptureServer
) -> None:
    """FORGE-FACTS "Webhooks": Gitea's DELIVER_TIMEOUT defaults to 5 s; GitHub waits 10 s. (The wait is
    shortened here; what is pinned is that each flavour's deliveries carry its forge's timeout.)"""
    deliverer = sandbox.sandbox.deliverer
    assert (deliverer.gitea_timeout, deliverer.timeout) == (5.0, 10.0)
    deliverer.gitea_timeout = 0.3
    gate = capture.capture.gate = threading.Event()
    try:
        _gitea_hook(g, grepo, capture.hook_url, ["issues"])
        g.post(grepo + "/issues", json={"title": "slow receiver"})
        idle(sandbox)
    finally:
        gate.set()
    [delivery] = [d for d in deliverer.log if d.event == "issues"]
    assert delivery.timeout == 0.3 and delivery.error == "timeout" and not delivery.delivered


# --- branches, commits, pull requests, statuses --------------------------------------------------------


def test_githubs_ref_update_must_fast_forward_unless_forced(alice: httpx2.Client, repo: str) -> None:
    """FORGE-FACTS: PATCH /git/refs/heads/{branch} with force false fails with 422 when not a fast-forward."""
    tip = _github_branch(alice, repo, "ahead")
    main = alice.get(repo + "/git/ref/heads/main").json()["object"]["sha"]
    refused = alice.patch(repo + "/git/refs/heads/ahead", json={"sha": main, "force": False})
    assert refused.status_code == 422 and refused.json()["message"] == "Update is not a fast forward"
    assert alice.patch(repo + "/git/refs/heads/ahead", json={"sha": main, "force": True}).status_code == 200
    assert alice.patch(repo + "/git/refs/heads/ahead", json={"sha": tip, "force": False}).status_code == 200


def test_gitea_commits_through_the_contents_api_only(g: httpx2.Client, grepo: str) -> None:
    """FORGE-FACTS: Gitea has no git data write API; POST /contents with files [{operation, path, content,
    sha}], message, branch and new_branch makes a branch and its first commit in one call; branches are
    made with new_branch_name and old_ref_name (or the older old_branch_name)."""
    assert g.post(grepo + "/git/commits", json={"message": "x", "tree": "0" * 40}).status_code in (404, 405)
    main = g.get(grepo + "/branches/main").json()["commit"]["id"]
    change = {
        "branch": "main",
        "new_branch": "fix",
        "message": "One commit",
        "files": [
            {"operation": "create", "path": "new.txt", "content": _b64("new")},
            {
                "operation": "update",
                "path": "README.md",
                "content": _b64("# changed\n"),
                "sha": _readme_sha(g, grepo),
            },
        ],
    }
    made = g.post(grepo + "/contents", json=change)
    assert made.status_code == 201
    commit = g.get(f"{grepo}/git/commits/{made.json()['commit']['sha']}").json()
    assert [p["sha"] for p in commit["parents"]] == [main]
    assert sorted((f["filename"], f["status"]) for f in commit["files"]) == [
        ("README.md", "modified"),
        ("new.txt", "added"),
    ]
    assert g.get(grepo + "/branches/main").json()["commit"]["id"] == main, "the base branch is untouched"
    stale = {
        **change,
        "branch": "fix",
        "new_branch": None,
        "files": [{**change["files"][1], "content": _b64("x")}],
    }
    assert g.post(grepo + "/contents", json=stale).status_code == 422, "a stale sha is refused"
    assert g.post(grepo + "/contents", json=change).status_code == 422, "new_branch exists"
    assert (
        g.post(grepo + "/branches", json={"new_branch_name": "b1", "old_ref_name": "main"}).status_code == 201
    )
    assert (
        g.post(grepo + "/branches", json={"new_branch_name": "b2", "old_branch_name": "fix"}).status_code
        == 201
    )
    assert (
        g.post(grepo + "/branches", json={"new_branch_name": "b2", "old_ref_name": "main"}).status_code == 409
    )


def _readme_sha(g: httpx2.Client, grepo: str) -> str:
    return str(g.get(grepo + "/contents/README.md").json()["sha"])


def test_drafts_githubs_flag_where_the_plan_has_them_and_giteas_wip_prefix(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, g: httpx2.Client, grepo: str
) -> None:
    """FORGE-FACTS "Draft PRs": GitHub takes draft: true where the plan has drafts and answers 422 "Draft
    pull requests are not supported in this repository" elsewhere; Gitea derives draft from a title prefix
    in WORK_IN_PROGRESS_PREFIXES (default WIP:,[WIP], any case) and marking ready removes the prefix."""
    _github_branch(alice, repo, "d1")
    made = alice.post(repo + "/pulls", json={"title": "t", "head": "d1", "base": "main", "draft": True})
    assert made.status_code == 201 and made.json()["draft"] is True
    httpx2.patch(sandbox.url + "/_sandbox/repos/alice/demo", json={"drafts": False}).raise_for_status()
    _github_branch(alice, repo, "d2")
    refused = alice.post(repo + "/pulls", json={"title": "t", "head": "d2", "base": "main", "draft": True})
    assert refused.status_code == 422
    assert (
        refused.json()["errors"][0]["message"] == "Draft pull requests are not supported in this repository."
    )
    for i, (title, draft) in enumerate(
        [("WIP: a", True), ("[wip] b", True), ("wip: c", True), ("WIP d", False)]
    ):
        _gitea_branch(g, grepo, f"w{i}")
        pr = g.post(grepo + "/pulls", json={"title": title, "head": f"w{i}", "base": "main"}).json()
        assert pr["draft"] is draft, title
    ready = g.patch(f"{grepo}/issues/1", json={"title": "a"})
    assert ready.status_code == 201 and g.get(grepo + "/pulls/1").json()["draft"] is False


def test_issue_listings_say_whether_a_pull_request_is_a_draft(
    alice: httpx2.Client, repo: str, g: httpx2.Client, grepo: str
) -> None:
    """The issue objects of pull requests say draft: GitHub's `issue` schema has a `draft` property
    (tests/fixtures/github/openapi-2026-subset.json), Gitea's `pull_request` (PullRequestMeta) a `draft`
    that is the title's WIP prefix (tests/fixtures/gitea/openapi3.v1.json, services/convert/issue.go). The
    overview reads a bugfix's state from the one listing (docs/overview.md)."""
    _github_branch(alice, repo, "od1")
    _github_branch(alice, repo, "od2")
    draft = alice.post(repo + "/pulls", json={"title": "t", "head": "od1", "base": "main", "draft": True})
    ready = alice.post(repo + "/pulls", json={"title": "u", "head": "od2", "base": "main"})
    listed = {i["number"]: i for i in alice.get(repo + "/issues", params={"state": "open"}).json()}
    assert listed[draft.json()["number"]]["draft"] is True
    assert listed[ready.json()["number"]]["draft"] is False
    _gitea_branch(g, grepo, "od1")
    _gitea_branch(g, grepo, "od2")
    gdraft = g.post(grepo + "/pulls", json={"title": "WIP: a", "head": "od1", "base": "main"}).json()
    gready = g.post(grepo + "/pulls", json={"title": "b", "head": "od2", "base": "main"}).json()
    glisted = {i["number"]: i for i in g.get(grepo + "/issues", params={"type": "pulls"}).json()}
    assert glisted[gdraft["number"]]["pull_request"]["draft"] is True
    assert glisted[gready["number"]]["pull_request"]["draft"] is False


def test_commit_status_states_and_description_limit_and_combined_state(
    alice: httpx2.Client, repo: str, g: httpx2.Client, grepo: str
) -> None:
    """FORGE-FACTS "Commit statuses": GitHub takes pending/success/failure/error and a description of at most
    140 characters (422 "description is too long (maximum is 140 characters)"); Gitea also warning and
    skipped; both read back the combined state at GET …/commits/{ref}/status."""
    head = alice.get(repo + "/git/ref/heads/main").json()["object"]["sha"]
    assert alice.post(f"{repo}/statuses/{head}", json={"state": "warning"}).status_code == 422
    long = alice.post(f"{repo}/statuses/{head}", json={"state": "success", "description": "x" * 141})
    assert long.status_code == 422
    assert long.json()["errors"][0]["message"] == "description is too long (maximum is 140 characters)"
    assert (
        alice.post(f"{repo}/statuses/{head}", json={"state": "success", "description": "x" * 140}).status_code
        == 201
    )
    assert alice.get(f"{repo}/commits/{head}/status").json()["state"] == "success"
    ghead = g.get(grepo + "/branches/main").json()["commit"]["id"]
    for context, state in [("a", "warning"), ("b", "skipped"), ("c", "success")]:
        made = g.post(f"{grepo}/statuses/{ghead}", json={"state": state, "context": context})
        assert made.status_code == 201 and made.json()["status"] == state
    assert g.get(f"{grepo}/commits/{ghead}/status").json()["state"] == "warning"


def test_check_runs_are_not_statuses(sandbox: SandboxServer, alice: httpx2.Client, repo: str) -> None:
    """FORGE-FACTS: GitHub Actions results are check runs (GET …/commits/{ref}/check-runs), not statuses:
    the combined status does not see them, so "CI is green" must read both."""
    head = alice.get(repo + "/git/ref/heads/main").json()["object"]["sha"]
    play = {
        "repo": "alice/demo",
        "sha": head,
        "kind": "check_run",
        "context": "test",
        "conclusion": "failure",
    }
    httpx2.post(sandbox.url + "/_sandbox/ci", json=play).raise_for_status()
    [run] = alice.get(f"{repo}/commits/{head}/check-runs").json()["check_runs"]
    assert (run["name"], run["status"], run["conclusion"]) == ("test", "completed", "failure")
    combined = alice.get(f"{repo}/commits/{head}/status").json()
    assert combined["total_count"] == 0 and combined["state"] == "pending"


def test_milestones_by_number_or_id_and_their_issues_with_pull_requests(
    alice: httpx2.Client, repo: str, g: httpx2.Client, grepo: str
) -> None:
    """FORGE-FACTS "Milestones": GitHub addresses them by number, Gitea by id; both PATCH {"state"}; issues
    are listed per milestone with ?milestone=<number>&state=all (GitHub: pull requests included, with a
    pull_request key) and ?milestones=<id or title>&state=all&type=issues|pulls (Gitea)."""
    ms = alice.post(repo + "/milestones", json={"title": "v1"}).json()
    assert (
        alice.patch(f"{repo}/milestones/{ms['number']}", json={"state": "closed"}).json()["state"] == "closed"
    )
    alice.patch(f"{repo}/milestones/{ms['number']}", json={"state": "open"})
    issue = alice.post(repo + "/issues", json={"title": "i", "milestone": ms["number"]}).json()
    _github_branch(alice, repo, "m")
    pr = alice.post(repo + "/pulls", json={"title": "p", "head": "m", "base": "main"}).json()
    alice.patch(f"{repo}/issues/{pr['number']}", json={"milestone": ms["number"]})
    listed = alice.get(repo + "/issues", params={"milestone": ms["number"], "state": "all"}).json()
    assert sorted((i["number"], "pull_request" in i) for i in listed) == [
        (issue["number"], False),
        (pr["number"], True),
    ]

    gms = g.post(grepo + "/milestones", json={"title": "v1"}).json()
    assert g.patch(f"{grepo}/milestones/{gms['id']}", json={"state": "closed"}).json()["state"] == "closed"
    gi = g.post(grepo + "/issues", json={"title": "i", "milestone": gms["id"]}).json()
    _gitea_branch(g, grepo, "m")
    gp = g.post(grepo + "/pulls", json={"title": "p", "head": "m", "base": "main"}).json()
    g.patch(f"{grepo}/issues/{gp['number']}", json={"milestone": gms["id"]})
    for key in (str(gms["id"]), "v1"):
        issues = g.get(grepo + "/issues", params={"milestones": key, "state": "all", "type": "issues"}).json()
        pulls = g.get(grepo + "/issues", params={"milestones": key, "state": "all", "type": "pulls"}).json()
        assert [i["number"] for i in issues] == [gi["number"]]
        assert [i["number"] for i in pulls] == [gp["number"]] and pulls[0]["pull_request"] is not None
