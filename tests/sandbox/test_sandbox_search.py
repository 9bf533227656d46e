"""Issue search on both forges: the qualifiers bots use, the answer's shape, its limits, and an index that
lags behind the issues."""

from __future__ import annotations

import time
from typing import Any

import httpx2
import pytest

from bot.sandbox.server import SandboxServer

from .helpers import OpenApiCheck, client, gitea_client, recorded
from .test_sandbox_gitea import GiteaApiCheck


def _lag(sandbox: SandboxServer, seconds: float) -> None:
    answer = httpx2.put(sandbox.url + "/_sandbox/limits", json={"search_lag_seconds": seconds})
    assert answer.json()["search_lag_seconds"] == seconds


def _found(who: httpx2.Client, q: str, **params: Any) -> list[str]:
    answer = who.get("/search/issues", params={"q": q, "per_page": 100, **params})
    assert answer.status_code == 200, answer.text
    return sorted(item["title"] for item in answer.json()["items"])


def _until(what: str, check: Any, timeout: float = 10.0) -> None:
    """Poll `check` with a deadline, a few times a second: searches count against their 30 a minute."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.3)


@pytest.fixture
def issues(sandbox: SandboxServer, alice: httpx2.Client, repo: str) -> None:
    """Four issues and a pull request in alice/demo, all already indexed."""
    _lag(sandbox, 0)
    alice.post(repo + "/issues", json={"title": "Crash on start", "body": "segfault", "labels": ["bug"]})
    alice.post(repo + "/issues", json={"title": "Docs typo", "labels": ["documentation"]})
    with client(sandbox, "bob-token") as bob:
        bob.post(repo + "/issues", json={"title": "Question about crash", "body": "does it crash?"})
    closed = alice.post(repo + "/issues", json={"title": "Old crash", "labels": ["bug"]}).json()["number"]
    alice.patch(f"{repo}/issues/{closed}", json={"state": "closed"})
    head = alice.get(repo + "/git/ref/heads/main").json()["object"]["sha"]
    alice.post(repo + "/git/refs", json={"ref": "refs/heads/fix", "sha": head})
    alice.put(repo + "/contents/f.txt", json={"message": "f", "content": "Zgo=", "branch": "fix"})
    alice.post(repo + "/pulls", json={"title": "Fix the crash", "head": "fix", "base": "main"})


@pytest.mark.usefixtures("issues")
def test_github_search_qualifiers_bots_use(alice: httpx2.Client, openapi: OpenApiCheck) -> None:
    """FORGE-FACTS "Search": `repo:`, `is:issue`/`is:pr`, `is:open`, `label:`, `-label:`, `author:`,
    `updated:<DATE`, `in:title`; the answer has `total_count`, `incomplete_results` and `items` whose keys
    are those GitHub answered (octokit/fixtures `search-issues`) with a `score`."""
    repo = "repo:alice/demo"
    answer = openapi(alice.get("/search/issues", params={"q": f"{repo} is:issue is:open label:bug"}))
    real = recorded("search-issues")[0]["response"]
    assert set(answer.json()) >= set(real) and answer.json()["incomplete_results"] is False
    assert set(answer.json()["items"][0]) >= set(real["items"][0])
    assert [i["title"] for i in answer.json()["items"]] == ["Crash on start"]
    assert answer.json()["total_count"] == 1
    assert _found(alice, f"{repo} is:pr") == ["Fix the crash"]
    assert _found(alice, f"{repo} is:issue -label:bug") == ["Docs typo", "Question about crash"]
    assert _found(alice, f"{repo} is:issue author:bob") == ["Question about crash"]
    assert _found(alice, f"{repo} is:issue is:closed") == ["Old crash"]
    assert _found(alice, f'{repo} label:"bug"') == ["Crash on start", "Old crash"]
    assert _found(alice, f"{repo} crash in:title is:issue") == [
        "Crash on start",
        "Old crash",
        "Question about crash",
    ]
    assert _found(alice, f"{repo} segfault") == ["Crash on start"], "words are looked for in bodies too"
    assert _found(alice, f"{repo} segfault in:title") == []
    assert _found(alice, f"{repo} updated:<2000-01-01") == []
    assert len(_found(alice, f"{repo} updated:>=2000-01-01")) == 5
    assert _found(alice, "repo:alice/nope") == []


@pytest.mark.usefixtures("issues")
def test_github_advanced_search_combines_with_and_or_and_parentheses(alice: httpx2.Client) -> None:
    """GitHub's advanced issue search (`advanced_search=true`, which replaces the legacy syntax) reads `AND`,
    `OR` and parentheses; the legacy syntax takes every term as required, `OR` a word like any other."""
    q = "repo:alice/demo is:issue (label:bug OR label:documentation) AND is:open"
    assert _found(alice, q, advanced_search="true") == ["Crash on start", "Docs typo"]
    assert _found(alice, q) == []
    bad = alice.get("/search/issues", params={"q": "repo:alice/demo (label:bug", "advanced_search": "true"})
    assert bad.status_code == 422


def test_github_search_finds_a_new_issue_only_once_the_index_caught_up(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str
) -> None:
    """The index lags: a new issue is not found at once, nor is a new label on it (the search index "does not
    have the PR that was just merged", behaviorbot/first-pr-merge#11; guettli/agentloop#204)."""
    _lag(sandbox, 1.5)
    alice.post(repo + "/issues", json={"title": "Fresh"})
    assert _found(alice, "repo:alice/demo Fresh") == []
    _until("the new issue in the index", lambda: _found(alice, "repo:alice/demo Fresh") == ["Fresh"])
    alice.post(repo + "/issues/1/labels", json=["bug"])
    assert _found(alice, "repo:alice/demo label:bug") == []
    _until("the label in the index", lambda: _found(alice, "repo:alice/demo label:bug") == ["Fresh"])


def test_github_search_offers_at_most_1000_results_and_has_its_own_rate_limit(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str
) -> None:
    """FORGE-FACTS "Search": at most the first 1,000 results (past them 422 "Only the first 1000 search
    results are available", microsoft/vscode#93983), `total_count` says how many matched; 30 searches a
    minute (docs.github.com REST "Search"), counted apart from the core limit: `X-RateLimit-Resource:
    search` (octokit/fixtures `search-issues`), the 31st refused with 403."""
    _lag(sandbox, 0)
    for i in range(1005):
        assert alice.post(repo + "/issues", json={"title": f"bulk {i}"}).status_code == 201
    first = alice.get("/search/issues", params={"q": "repo:alice/demo bulk", "per_page": 100})
    assert first.json()["total_count"] == 1005 and len(first.json()["items"]) == 100
    assert first.headers["x-ratelimit-resource"] == "search" and first.headers["x-ratelimit-limit"] == "30"
    assert 'page=10>; rel="last"' in first.headers["link"]
    beyond = alice.get("/search/issues", params={"q": "repo:alice/demo bulk", "per_page": 100, "page": 11})
    assert (beyond.status_code, beyond.json()["message"]) == (
        422,
        "Only the first 1000 search results are available",
    )
    for _ in range(28):
        assert alice.get("/search/issues", params={"q": "repo:alice/demo"}).status_code == 200
    limited = alice.get("/search/issues", params={"q": "repo:alice/demo"})
    assert limited.status_code == 403 and limited.headers["x-ratelimit-remaining"] == "0"
    assert limited.json()["message"].startswith("API rate limit exceeded")
    core = alice.get(repo)
    assert core.status_code == 200 and core.headers["x-ratelimit-resource"] == "core"


def test_github_search_sees_only_what_the_caller_may_read(
    sandbox: SandboxServer, alice: httpx2.Client
) -> None:
    _lag(sandbox, 0)
    alice.post("/user/repos", json={"name": "secret", "private": True}).raise_for_status()
    alice.post("/repos/alice/secret/issues", json={"title": "hidden plans"})
    assert _found(alice, "hidden") == ["hidden plans"]
    with client(sandbox, "carol-token") as carol:
        assert _found(carol, "hidden") == []
    assert alice.get("/search/issues").status_code == 422, "q is required"


def test_gitea_searches_issues_across_repositories(sandbox: SandboxServer, g: httpx2.Client) -> None:
    """Gitea — `GET /api/v1/repos/issues/search` (routers/api/v1/repo/issue.go SearchIssues): the readable
    repositories' issues, open by default, filtered by `labels` (any), `type`, `owner`, `created_by`, paged
    with `X-Total-Count`. Keywords (`q`) go through the issue indexer, which lags; without keywords Gitea
    asks its database, which does not (modules/indexer/issues/indexer.go SearchIssues)."""
    check = GiteaApiCheck.load()
    _lag(sandbox, 1.5)
    g.post("/user/repos", json={"name": "gs", "issue_labels": "Default"}).raise_for_status()
    bug = next(lb["id"] for lb in g.get("/repos/alice/gs/labels").json() if lb["name"] == "bug")
    g.post("/repos/alice/gs/issues", json={"title": "Crash in parser", "labels": [bug]})
    g.post("/repos/alice/gs/issues", json={"title": "Feature wish"})
    listed = check(g.get("/repos/issues/search", params={"labels": "bug"}))
    assert [i["title"] for i in listed.json()] == ["Crash in parser"] and listed.headers[
        "x-total-count"
    ] == "1"
    assert [i["title"] for i in g.get("/repos/issues/search", params={"owner": "alice"}).json()] == [
        "Feature wish",
        "Crash in parser",
    ]
    assert g.get("/repos/issues/search", params={"q": "parser"}).json() == [], "not indexed yet"
    _until(
        "the keyword search to find the issue",
        lambda: (
            [i["title"] for i in g.get("/repos/issues/search", params={"q": "parser"}).json()]
            == ["Crash in parser"]
        ),
    )
    with gitea_client(sandbox, "bob-token") as gbob:
        gbob.post("/repos/alice/gs/issues", json={"title": "From bob"})
        mine = gbob.get("/repos/issues/search", params={"created": "true"}).json()
        assert [i["title"] for i in mine] == ["From bob"]
    assert g.get("/repos/issues/search", params={"type": "pulls"}).json() == []
    assert g.get("/repos/issues/search", params={"state": "sideways"}).status_code == 422


def github_search_routes(check: OpenApiCheck, alice: httpx2.Client) -> None:
    """This module's GitHub route, for the every-operation test (test_sandbox_openapi.py)."""
    check(alice.get("/search/issues", params={"q": "repo:alice/demo is:issue"}))


def gitea_search_routes(check: GiteaApiCheck, g: httpx2.Client) -> None:
    """This module's Gitea route, for the every-operation test (test_sandbox_gitea.py)."""
    check(g.get("/repos/issues/search", params={"state": "all"}))
