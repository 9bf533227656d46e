"""The contract suite's fixtures: one sandbox forge, and each adapter (GitHub via gidgethub, Gitea via
py-gitea) talking to it over HTTP, with a real Redis behind the write budget.

``site`` arranges state through the forge's own API as a maintainer would (GitHub's at ``/``, Gitea's at
``/api/v1``), so what an adapter reads was written the way that forge writes it.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import httpx2
import pytest
from redis.asyncio import Redis

from bot.forge import Forge, RepoRef
from bot.forge.gitea import GiteaForge
from bot.forge.github import GitHubForges
from bot.forge.github_transport import SharedSession
from bot.forge.retry import RetryPolicy
from bot.forge.write_budget import WriteBudget
from bot.sandbox.server import SandboxServer
from bot.sandbox.shared.label_sets import GITHUB_DEFAULTS
from tests.e2e.stack import PLAIN

USERS = {"owner": "tok-owner", "steward-bot": "tok-bot", "reader": "tok-reader", "outsider": "tok-outsider"}
FORGES = ["github", "gitea"]
# GitHub roles → Gitea's access modes (Gitea has no triage or maintain).
GITEA_ACCESS = {"pull": "read", "triage": "write", "push": "write", "maintain": "write", "admin": "admin"}


class Site:
    """A maintainer using one forge's API on the sandbox."""

    def __init__(self, kind: str, base_url: str, token: str) -> None:
        self.kind = kind
        self.prefix = "/api/v1" if kind == "gitea" else ""
        self.client = httpx2.Client(
            **PLAIN, base_url=base_url + self.prefix, headers={"Authorization": f"token {token}"}, timeout=10
        )
        self.admin = httpx2.Client(base_url=base_url, timeout=10, **PLAIN)

    def call(self, method: str, path: str, body: Any = None) -> Any:
        response = self.client.request(method, path, json=body)
        assert response.status_code < 300, f"{method} {path}: {response.status_code} {response.text[:300]}"
        return response.json() if response.content else None

    def new_repo(self) -> RepoRef:
        repo = self.call("POST", "/user/repos", {"name": f"c-{uuid.uuid4().hex[:8]}"})
        ref = RepoRef.parse(repo["full_name"])
        self.add_collaborator(ref, "steward-bot", "push")
        self.add_collaborator(ref, "reader", "pull")
        return ref

    def add_collaborator(self, repo: RepoRef, login: str, role: str) -> None:
        if self.kind == "gitea":
            self.call("PUT", f"/repos/{repo}/collaborators/{login}", {"permission": GITEA_ACCESS[role]})
            return
        # GitHub's API invites a collaborator, who must accept; the sandbox's admin API adds one at once.
        added = self.admin.put(f"/_sandbox/repos/{repo}/collaborators/{login}", json={"permission": role})
        assert added.status_code == 200, added.text

    def open_issue(self, repo: RepoRef, title: str, body: str = "") -> int:
        return int(self.call("POST", f"/repos/{repo}/issues", {"title": title, "body": body})["number"])

    def close_issue(self, repo: RepoRef, number: int) -> None:
        self.call("PATCH", f"/repos/{repo}/issues/{number}", {"state": "closed"})

    def comment(self, repo: RepoRef, number: int, body: str) -> int:
        return int(self.call("POST", f"/repos/{repo}/issues/{number}/comments", {"body": body})["id"])

    @property
    def default_labels(self) -> list[str]:
        """The labels a new repository has: GitHub's nine (FORGE-FACTS "Default labels"), none on Gitea."""
        return [name for name, _, _ in GITHUB_DEFAULTS] if self.kind == "github" else []

    def create_label(self, repo: RepoRef, name: str, color: str = "ededed") -> None:
        """A label named `name` exists afterwards (one of GitHub's default labels is there already)."""
        if name not in self.default_labels:
            self.call("POST", f"/repos/{repo}/labels", {"name": name, "color": color})

    def labels_of(self, repo: RepoRef, number: int) -> list[str]:
        return sorted(label["name"] for label in self.call("GET", f"/repos/{repo}/issues/{number}")["labels"])

    def repo_labels(self, repo: RepoRef) -> dict[str, dict[str, Any]]:
        size = "limit" if self.kind == "gitea" else "per_page"
        found: dict[str, dict[str, Any]] = {}
        page = 1
        while batch := self.call("GET", f"/repos/{repo}/labels?{size}=50&page={page}"):
            found.update({label["name"]: label for label in batch})
            page += 1
        return found

    def reactions(self, repo: RepoRef, comment_id: int) -> list[str]:
        return [
            r["content"] for r in self.call("GET", f"/repos/{repo}/issues/comments/{comment_id}/reactions")
        ]

    def issue_id(self, repo: RepoRef, number: int) -> int:
        return int(self.call("GET", f"/repos/{repo}/issues/{number}")["id"])

    # --- pins: GitHub's GraphQL (it has no REST for them), Gitea's pin routes -----------------------------

    def graphql(self, query: str, **variables: Any) -> dict[str, Any]:
        assert self.kind == "github"
        answer: dict[str, Any] = self.call("POST", "/graphql", {"query": query, "variables": variables})
        return answer

    def pin(self, repo: RepoRef, number: int) -> None:
        if self.kind == "gitea":
            self.call("POST", f"/repos/{repo}/issues/{number}/pin")
            return
        node = self.call("GET", f"/repos/{repo}/issues/{number}")["node_id"]
        answer = self.graphql(
            "mutation($id: ID!) { pinIssue(input: {issueId: $id}) { clientMutationId } }", id=node
        )
        assert "errors" not in answer, answer

    def pinned(self, repo: RepoRef) -> list[int]:
        """The pinned issues' numbers, in pin order, as the forge lists them."""
        if self.kind == "gitea":
            return [int(issue["number"]) for issue in self.call("GET", f"/repos/{repo}/issues/pinned")]
        query = """query($owner: String!, $name: String!) {
          repository(owner: $owner, name: $name) { pinnedIssues(first: 3) { nodes { issue { number } } } }
        }"""
        data = self.graphql(query, owner=repo.owner, name=repo.name)["data"]
        return [int(node["issue"]["number"]) for node in data["repository"]["pinnedIssues"]["nodes"]]

    def limits(self, **limits: Any) -> None:
        self.admin.put("/_sandbox/limits", json=limits).raise_for_status()

    def api_path(self, repo: RepoRef, suffix: str) -> str:
        return f"{self.prefix}/repos/{repo}{suffix}"

    # --- phase 2: milestones, branches, pull requests, CI ------------------------------------------------

    def milestone(self, repo: RepoRef, title: str) -> int:
        """A new milestone's key: GitHub's number, Gitea's id."""
        made = self.call("POST", f"/repos/{repo}/milestones", {"title": title})
        return int(made["id"] if self.kind == "gitea" else made["number"])

    def set_milestone(self, repo: RepoRef, number: int, key: int | None) -> None:
        self.call(
            "PATCH",
            f"/repos/{repo}/issues/{number}",
            {"milestone": key or (0 if self.kind == "gitea" else None)},
        )

    def head(self, repo: RepoRef, branch: str) -> str | None:
        path = f"/branches/{branch}" if self.kind == "gitea" else f"/git/ref/heads/{branch}"
        response = self.client.get(f"/repos/{repo}{path}")
        if response.status_code == 404:
            return None
        data = response.json()
        return str(data["commit"]["id"] if self.kind == "gitea" else data["object"]["sha"])

    def branch(self, repo: RepoRef, name: str, files: dict[str, bytes], base: str = "main") -> str:
        """A new branch with one commit per file; answers its head."""
        if self.kind == "gitea":
            self.call("POST", f"/repos/{repo}/branches", {"new_branch_name": name, "old_ref_name": base})
        else:
            self.call(
                "POST", f"/repos/{repo}/git/refs", {"ref": f"refs/heads/{name}", "sha": self.head(repo, base)}
            )
        for path, content in files.items():
            self.put_file(repo, path, content, branch=name)
        head = self.head(repo, name)
        assert head is not None
        return head

    def put_file(self, repo: RepoRef, path: str, content: bytes, branch: str | None = None) -> None:
        body: dict[str, Any] = {"message": f"add {path}", "content": base64.b64encode(content).decode()}
        if branch:
            body["branch"] = branch
        self.call("POST" if self.kind == "gitea" else "PUT", f"/repos/{repo}/contents/{path}", body)

    def pull(self, repo: RepoRef, head: str, title: str = "a change", base: str = "main") -> int:
        made = self.call(
            "POST", f"/repos/{repo}/pulls", {"head": head, "base": base, "title": title, "body": ""}
        )
        return int(made["number"])

    def pulls(self, repo: RepoRef) -> list[dict[str, Any]]:
        size = "limit" if self.kind == "gitea" else "per_page"
        return list(self.call("GET", f"/repos/{repo}/pulls?state=all&{size}=50"))

    def commits_between(self, repo: RepoRef, base_sha: str, head: str) -> list[str]:
        """The commits on `head` after `base_sha`, newest first (first parents)."""
        found: list[str] = []
        sha: str | None = self.head(repo, head)
        while sha and sha != base_sha:
            found.append(sha)
            path = f"/git/commits/{sha}" if self.kind == "gitea" else f"/commits/{sha}"
            parents = self.call("GET", f"/repos/{repo}{path}")["parents"]
            sha = parents[0]["sha"] if parents else None
        return found

    def statuses(self, repo: RepoRef, sha: str) -> list[dict[str, Any]]:
        size = "limit" if self.kind == "gitea" else "per_page"
        return list(self.call("GET", f"/repos/{repo}/commits/{sha}/statuses?{size}=50"))

    def play_ci(self, repo: RepoRef, sha: str, **report: Any) -> None:
        self.admin.post("/_sandbox/ci", json={"repo": str(repo), "sha": sha, **report}).raise_for_status()

    def repo_settings(self, repo: RepoRef, **settings: Any) -> None:
        self.admin.patch(f"/_sandbox/repos/{repo}", json=settings).raise_for_status()

    def web_url(self) -> str:
        return str(self.admin.base_url).rstrip("/")

    def fault(self, **fault: Any) -> None:
        self.admin.post("/_sandbox/faults", json={"login": "steward-bot", **fault}).raise_for_status()

    def requests_to(self, method: str, path: str) -> list[dict[str, Any]]:
        log = self.admin.get("/_sandbox/requests").json()
        return [r for r in log if r["method"] == method and r["path"] == path and r["login"] == "steward-bot"]

    def close(self) -> None:
        self.admin.delete("/_sandbox/faults")
        self.client.close()
        self.admin.close()


@pytest.fixture(scope="session")
def sandbox() -> Iterator[SandboxServer]:
    with SandboxServer(USERS) as server:
        yield server


@pytest.fixture(params=FORGES)
def site(request: pytest.FixtureRequest, sandbox: SandboxServer) -> Iterator[Site]:
    found = Site(request.param, sandbox.url, USERS["owner"])
    found.admin.delete("/_sandbox/faults")
    # Each test reads the bot's requests from an empty log: what an earlier test on the session's sandbox
    # made (a GraphQL mutation counts on no repository) must not count in this one's.
    found.admin.delete("/_sandbox/requests")
    yield found
    found.close()


MakeForge = Callable[..., Awaitable[Forge]]


@pytest.fixture
async def make_forge(site: Site, sandbox: SandboxServer, redis_url: str) -> AsyncIterator[MakeForge]:
    """Builds the adapter for `site`'s forge: `await make_forge(http_timeout=…, attempts=…, budget=…,
    max_items=…)`."""
    redis = Redis.from_url(redis_url)
    closers: list[Callable[[], Awaitable[None] | None]] = []

    async def make(
        *,
        http_timeout: float = 10.0,
        attempts: int = 3,
        budget: WriteBudget | None = None,
        max_items: int = 1000,
    ) -> Forge:
        budget = budget or WriteBudget(redis, [(10_000, 60.0)])
        policy = RetryPolicy(attempts=attempts, base_delay=0.01, max_delay=2.0)
        if site.kind == "github":
            http = SharedSession(timeout=http_timeout)
            closers.append(http.aclose)
            forges = GitHubForges(
                http, base_url=sandbox.url, policy=policy, budget=budget, token="tok-bot", max_items=max_items
            )
            return await forges.for_event(None, None)
        gitea = GiteaForge(
            sandbox.url,
            "tok-bot",
            policy=policy,
            budget=budget,
            timeout=http_timeout,
            max_threads=4,
            max_items=max_items,
        )
        closers.append(gitea.close)
        return gitea

    yield make
    for close in closers:
        result = close()
        if result is not None:
            await result
    await redis.aclose()


@pytest.fixture
async def forge(make_forge: MakeForge) -> Forge:
    return await make_forge()
