"""HTTP behaviour shared by every endpoint: auth, headers, conditional requests, pagination, faults, state."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest

from bot.sandbox.server import SandboxServer

from .helpers import client


def test_unknown_or_missing_credentials_are_401_bad_credentials(sandbox: SandboxServer) -> None:
    for token in ("nope", None):
        with client(sandbox, token) as anonymous:
            answer = anonymous.get("/user")
        assert answer.status_code == 401
        assert answer.json()["message"] in ("Bad credentials", "Requires authentication")
    with client(sandbox, "nope") as stranger:
        assert stranger.get("/user").json()["message"] == "Bad credentials"


def test_token_and_bearer_schemes_authenticate_as_their_login(sandbox: SandboxServer) -> None:
    assert (
        httpx2.get(sandbox.url + "/user", headers={"Authorization": "token bob-token"}).json()["login"]
        == "bob"
    )
    assert (
        httpx2.get(sandbox.url + "/user", headers={"Authorization": "Bearer bob-token"}).json()["login"]
        == "bob"
    )
    assert (
        httpx2.get(sandbox.url + "/users/carol", headers={"Authorization": "token bob-token"}).json()["id"]
        > 0
    )


def test_every_response_carries_rate_limit_and_request_id_headers(
    sandbox: SandboxServer, alice: httpx2.Client
) -> None:
    first, second = alice.get("/user"), alice.get("/users/nobody")
    for answer in (first, second):
        for header in ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Used"):
            assert answer.headers[header].isdigit()
        assert answer.headers["X-RateLimit-Resource"] == "core"
        assert answer.headers["X-GitHub-Request-Id"]
    assert second.status_code == 404
    assert int(second.headers["X-RateLimit-Remaining"]) == int(first.headers["X-RateLimit-Remaining"]) - 1


def test_a_matching_etag_gets_an_empty_304_that_the_request_log_records(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str
) -> None:
    alice.post(repo + "/issues", json={"title": "x"})
    first = alice.get(repo + "/issues/1")
    etag = first.headers["ETag"]
    assert etag.startswith('"') and etag.endswith('"')
    cached = alice.get(repo + "/issues/1", headers={"If-None-Match": etag})
    assert cached.status_code == 304 and cached.content == b""
    alice.patch(repo + "/issues/1", json={"title": "y"})
    changed = alice.get(repo + "/issues/1", headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["ETag"] != etag
    log = httpx2.get(sandbox.url + "/_sandbox/requests").json()
    assert [e["status"] for e in log if e["path"] == "/repos/alice/demo/issues/1"] == [200, 304, 200, 200]
    assert all(e["login"] == "alice" for e in log)
    assert httpx2.delete(sandbox.url + "/_sandbox/requests").status_code == 204
    assert httpx2.get(sandbox.url + "/_sandbox/requests").json() == []


def test_lists_paginate_with_github_link_headers(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str
) -> None:
    """Links name the repository by id, as GitHub's do (octokit/fixtures `paginate-issues`)."""
    for default in alice.get(repo + "/labels", params={"per_page": 100}).json():
        alice.delete(f"{repo}/labels/{default['name']}")
    for i in range(7):
        alice.post(repo + "/labels", json={"name": f"label-{i}"})
    first = alice.get(repo + "/labels", params={"per_page": 3})
    assert [lb["name"] for lb in first.json()] == ["label-0", "label-1", "label-2"]
    base = f"{sandbox.url}/repositories/{alice.get(repo).json()['id']}/labels"
    assert first.headers["Link"] == (
        f'<{base}?per_page=3&page=2>; rel="next", <{base}?per_page=3&page=3>; rel="last"'
    )
    middle = alice.get(repo + "/labels", params={"per_page": 3, "page": 2})
    assert middle.headers["Link"] == (
        f'<{base}?per_page=3&page=1>; rel="prev", <{base}?per_page=3&page=3>; rel="next", '
        f'<{base}?per_page=3&page=3>; rel="last", <{base}?per_page=3&page=1>; rel="first"'
    )
    last = alice.get(repo + "/labels", params={"per_page": 3, "page": 3})
    assert [lb["name"] for lb in last.json()] == ["label-6"]
    assert 'rel="next"' not in last.headers["Link"] and 'rel="prev"' in last.headers["Link"]
    assert "Link" not in alice.get(repo + "/labels").headers
    assert len(alice.get(repo + "/labels", params={"per_page": 1000}).json()) == 7


def test_a_fault_answers_the_next_matching_requests_then_service_resumes(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str
) -> None:
    fault = {"method": "GET", "path": r"^/repos/alice/demo$", "status": 500, "times": 2}
    assert httpx2.post(sandbox.url + "/_sandbox/faults", json=fault).status_code == 201
    assert [alice.get(repo).status_code for _ in range(3)] == [500, 500, 200]
    assert alice.get("/user").status_code == 200
    log = httpx2.get(sandbox.url + "/_sandbox/requests").json()
    assert [e.get("fault", False) for e in log if e["path"] == "/repos/alice/demo"] == [True, True, False]


def test_a_rate_limit_fault_carries_its_headers_and_body(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str
) -> None:
    fault = {
        "method": "POST",
        "path": "/issues$",
        "status": 429,
        "times": 1,
        "headers": {"Retry-After": "1", "X-RateLimit-Remaining": "0"},
        "body": {"message": "You have exceeded a secondary rate limit."},
    }
    httpx2.post(sandbox.url + "/_sandbox/faults", json=fault)
    limited = alice.post(repo + "/issues", json={"title": "x"})
    assert limited.status_code == 429
    assert limited.headers["Retry-After"] == "1" and limited.headers["X-RateLimit-Remaining"] == "0"
    assert limited.json()["message"].startswith("You have exceeded")
    assert alice.get(repo + "/issues").json() == []  # the faulted write was never applied
    assert alice.post(repo + "/issues", json={"title": "x"}).status_code == 201


def test_an_apply_then_502_fault_does_the_write_and_still_answers_502(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str
) -> None:
    """FORGE-FACTS: both forges can apply a write and still answer 502/504 (a proxy timing out)."""
    fault = {"method": "POST", "path": "/issues$", "status": 502, "apply": True}
    httpx2.post(sandbox.url + "/_sandbox/faults", json=fault)
    assert alice.post(repo + "/issues", json={"title": "applied"}).status_code == 502
    assert [i["title"] for i in alice.get(repo + "/issues").json()] == ["applied"]


def test_an_apply_then_drop_fault_does_the_write_and_cuts_the_answer(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str
) -> None:
    """FORGE-FACTS: a dropped connection after a write does not mean the write did not happen."""
    fault = {"method": "POST", "path": "/issues$", "drop": True}
    httpx2.post(sandbox.url + "/_sandbox/faults", json=fault)
    with pytest.raises(httpx2.TransportError):
        alice.post(repo + "/issues", json={"title": "applied, then the line went dead"})
    assert [i["title"] for i in alice.get(repo + "/issues").json()] == ["applied, then the line went dead"]
    log = httpx2.get(sandbox.url + "/_sandbox/requests").json()
    posts = [e["status"] for e in log if e["method"] == "POST" and e["path"].endswith("/issues")]
    assert posts == ["dropped"]


def test_a_hanging_fault_never_answers(sandbox: SandboxServer, alice: httpx2.Client, repo: str) -> None:
    httpx2.post(sandbox.url + "/_sandbox/faults", json={"method": "*", "path": "^/user$", "hang": True})
    with pytest.raises(httpx2.TimeoutException):
        alice.get("/user", timeout=0.3)
    assert alice.get("/user").status_code == 200


def test_a_fault_can_target_one_login(sandbox: SandboxServer, alice: httpx2.Client) -> None:
    fault = {"method": "GET", "path": "^/user$", "status": 502, "times": 1, "login": "bob"}
    httpx2.post(sandbox.url + "/_sandbox/faults", json=fault)
    assert alice.get("/user").status_code == 200
    with client(sandbox, "bob-token") as bob:
        assert [bob.get("/user").status_code for _ in range(2)] == [502, 200]


def test_faults_spare_the_admin_api_and_can_be_cleared(sandbox: SandboxServer, alice: httpx2.Client) -> None:
    httpx2.post(
        sandbox.url + "/_sandbox/faults", json={"method": "*", "path": ".*", "status": 503, "times": 99}
    )
    assert httpx2.get(sandbox.url + "/_sandbox/faults").status_code == 200
    assert alice.get("/user").status_code == 503
    assert httpx2.delete(sandbox.url + "/_sandbox/faults").status_code == 204
    assert alice.get("/user").status_code == 200


def test_state_survives_a_restart_through_the_state_file(tmp_path: Path) -> None:
    state_file = tmp_path / "state.json"
    with (
        SandboxServer({"alice": "alice-token"}, state_file=state_file) as first,
        client(first, "alice-token") as c,
    ):
        c.post("/user/repos", json={"name": "kept"})
        c.post("/repos/alice/kept/issues", json={"title": "remember me"})
        assert httpx2.get(first.url + "/_sandbox/state").json()["repos"]["alice/kept"]["issues"]["1"][
            "title"
        ] == ("remember me")
    assert json.loads(state_file.read_text())["repos"]["alice/kept"]["name"] == "kept"
    assert not list(tmp_path.glob("*.tmp"))
    with (
        SandboxServer({"alice": "alice-token"}, state_file=state_file) as second,
        client(second, "alice-token") as c,
    ):
        assert c.get("/repos/alice/kept/issues/1").json()["title"] == "remember me"
        assert c.post("/repos/alice/kept/issues", json={"title": "next"}).json()["number"] == 2


@pytest.mark.parametrize("where", ["issue", "issue edit", "comment", "comment edit"])
def test_github_refuses_bodies_over_65536_characters(alice: httpx2.Client, repo: str, where: str) -> None:
    """FORGE-FACTS: GitHub comment and issue/PR bodies are at most 65,536 characters; past it the API
    answers 422 "Body is too long (maximum is 65536 characters)"."""
    issue = alice.post(repo + "/issues", json={"title": "t", "body": "x" * 65_536}).json()
    comment = alice.post(f"{repo}/issues/{issue['number']}/comments", json={"body": "y" * 65_536}).json()
    too_long = "z" * 65_537
    comment_url = f"{repo}/issues/comments/{comment['id']}"
    answer = {
        "issue": lambda: alice.post(repo + "/issues", json={"title": "t", "body": too_long}),
        "issue edit": lambda: alice.patch(f"{repo}/issues/{issue['number']}", json={"body": too_long}),
        "comment": lambda: alice.post(f"{repo}/issues/{issue['number']}/comments", json={"body": too_long}),
        "comment edit": lambda: alice.patch(comment_url, json={"body": too_long}),
    }[where]()
    assert answer.status_code == 422
    assert answer.json()["errors"][0]["message"] == "Body is too long (maximum is 65536 characters)"
