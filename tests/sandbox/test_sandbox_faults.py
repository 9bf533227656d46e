"""The sandbox's fault injection for the fault scenarios (tests/faults): faults that fire with a probability,
latency, connection resets, "apply, then hang", faults that end after some seconds, and rate-limit answers
shaped the way each forge (or the proxy in front of it) answers."""

from __future__ import annotations

import time

import httpx2
import pytest

from bot.sandbox.server import SandboxServer


def _fault(sandbox: SandboxServer, **fault: object) -> None:
    assert httpx2.post(sandbox.url + "/_sandbox/faults", json=fault).status_code == 201


def test_a_fault_with_a_probability_fires_about_that_often_and_a_seed_repeats_it(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str
) -> None:
    _fault(sandbox, method="GET", path="^/repos/alice/demo$", status=503, times=1000, probability=0.3, seed=7)
    first = [alice.get(repo).status_code for _ in range(200)]
    assert 30 <= first.count(503) <= 90 and set(first) == {200, 503}
    httpx2.delete(sandbox.url + "/_sandbox/faults")
    _fault(sandbox, method="GET", path="^/repos/alice/demo$", status=503, times=1000, probability=0.3, seed=7)
    assert [alice.get(repo).status_code for _ in range(200)] == first, "a seed makes the run repeatable"


def test_a_request_a_probability_spares_goes_on_to_the_next_fault(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str
) -> None:
    _fault(sandbox, method="GET", path="^/repos/alice/demo$", status=500, times=100, probability=0.0)
    _fault(sandbox, method="GET", path="^/repos/alice/demo$", status=502, times=1)
    assert [alice.get(repo).status_code for _ in range(2)] == [502, 200]


def test_latency_only_slows_the_answer(sandbox: SandboxServer, alice: httpx2.Client, repo: str) -> None:
    _fault(sandbox, method="GET", path="^/repos/alice/demo$", passthrough=True, delay=0.3, times=1)
    started = time.monotonic()
    assert alice.get(repo).status_code == 200
    assert time.monotonic() - started >= 0.3
    log = httpx2.get(sandbox.url + "/_sandbox/requests").json()
    assert [e["delay"] for e in log if e["path"] == "/repos/alice/demo"] == [0.3]


def test_a_reset_cuts_the_connection_and_applies_nothing(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str
) -> None:
    _fault(sandbox, method="POST", path="/issues$", reset=True)
    with pytest.raises(httpx2.TransportError):
        alice.post(repo + "/issues", json={"title": "never made"})
    assert alice.get(repo + "/issues").json() == []


def test_apply_then_hang_does_the_write_and_never_answers(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str
) -> None:
    _fault(sandbox, method="POST", path="/issues$", apply=True, hang=True, hang_seconds=5)
    with pytest.raises(httpx2.TimeoutException):
        alice.post(repo + "/issues", json={"title": "made, unanswered"}, timeout=0.5)
    assert [i["title"] for i in alice.get(repo + "/issues").json()] == ["made, unanswered"]


def test_write_faults_spare_reads_and_end_after_their_seconds(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str
) -> None:
    _fault(sandbox, method="WRITE", path=".*", status=503, times=1000, seconds=0.5)
    assert alice.get(repo).status_code == 200
    assert alice.post(repo + "/issues", json={"title": "x"}).status_code == 503
    time.sleep(0.6)  # the fault's own clock, not waiting for work
    assert alice.post(repo + "/issues", json={"title": "x"}).status_code == 201


def test_github_primary_rate_limit_answer(sandbox: SandboxServer, alice: httpx2.Client, repo: str) -> None:
    """GitHub docs "Rate limits for the REST API": 403 or 429, x-ratelimit-remaining 0, reset in
    x-ratelimit-reset."""
    _fault(sandbox, method="WRITE", path=".*", rate_limit="github-primary", times=1, seconds=30)
    answer = alice.post(repo + "/issues", json={"title": "x"})
    assert answer.status_code == 403
    assert answer.headers["X-RateLimit-Remaining"] == "0"
    assert 25 <= int(answer.headers["X-RateLimit-Reset"]) - time.time() <= 32
    assert answer.json()["message"].startswith("API rate limit exceeded")
    assert alice.get(repo + "/issues").json() == []


def test_github_secondary_rate_limit_answer(sandbox: SandboxServer, alice: httpx2.Client, repo: str) -> None:
    """GitHub docs: a secondary limit is 403 or 429 with a message saying so and, if present, Retry-After."""
    _fault(sandbox, method="WRITE", path=".*", rate_limit="github-secondary", times=1, seconds=10)
    answer = alice.post(repo + "/issues", json={"title": "x"})
    assert answer.status_code == 403 and 9 <= int(answer.headers["Retry-After"]) <= 10
    assert "secondary rate limit" in answer.json()["message"]


def test_gitea_rate_limit_is_its_proxys_429_without_retry_after(sandbox: SandboxServer) -> None:
    """Gitea has no API rate limiter (go-gitea/gitea#9559); nginx `limit_req` in front answers
    `limit_req_status` (429 where configured) with an HTML page and no Retry-After."""
    with httpx2.Client(
        base_url=sandbox.url + "/api/v1", headers={"Authorization": "token alice-token"}, timeout=10
    ) as g:
        assert g.post("/user/repos", json={"name": "limited"}).status_code == 201
        _fault(sandbox, method="WRITE", path="^/api/v1/", rate_limit="gitea-proxy", times=1, seconds=10)
        answer = g.post("/repos/alice/limited/issues", json={"title": "x"})
        assert answer.status_code == 429 and "Retry-After" not in answer.headers
        assert answer.headers["content-type"].startswith("text/html") and "nginx" in answer.text


def test_an_unknown_rate_limit_kind_is_refused(sandbox: SandboxServer) -> None:
    answer = httpx2.post(sandbox.url + "/_sandbox/faults", json={"path": ".*", "rate_limit": "nope"})
    assert answer.status_code == 422 and "github-primary" in answer.text
