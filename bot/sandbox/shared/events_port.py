"""What a request's changes announce, as the forge-neutral operations see it: the ``Events`` protocol.

``gitea.webhooks.Emitter`` implements it (webhooks in each repository's flavour); the app hands the
runtime a factory for it (``Sandbox.emitter``), so the operations and the request contexts depend on this
protocol only, not on the emitter and the GitHub context it uses — no import ring.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from .state import CheckRun, CheckSuite, Comment, CommitStatus, Issue, Label, Milestone, Repo, Review

if TYPE_CHECKING:
    from starlette.requests import Request

    from .runtime import Sandbox


class Events(Protocol):
    """The webhooks of one request's changes (see ``gitea.webhooks.Emitter`` for each one's forms)."""

    sandbox: Sandbox

    def issue(self, repo: Repo, issue: Issue, action: str, changes: dict[str, Any] | None = None) -> None: ...

    def pin(self, repo: Repo, issue: Issue, action: str) -> None: ...

    def labels(self, repo: Repo, issue: Issue, added: list[int], removed: list[int]) -> None: ...

    def milestone(self, repo: Repo, issue: Issue, old: int | None) -> None: ...

    def repo_event(
        self, repo: Repo, item: Label | Milestone, action: str, changes: dict[str, Any] | None = None
    ) -> None: ...

    def comment(
        self, repo: Repo, comment: Comment, action: str, changes: dict[str, Any] | None = None
    ) -> None: ...

    def review(self, repo: Repo, issue: Issue, review: Review, action: str = "submitted") -> None: ...

    def assignment(self, repo: Repo, issue: Issue, login: str, action: str) -> None: ...

    def review_request(self, repo: Repo, issue: Issue, reviewer: str, action: str) -> None: ...

    def pull_synchronized(self, repo: Repo, issue: Issue, before: str, after: str) -> None: ...

    def status(self, repo: Repo, status: CommitStatus) -> None: ...

    def check_run(self, repo: Repo, run: CheckRun, action: str) -> None: ...

    def check_suite(self, repo: Repo, suite: CheckSuite, action: str) -> None: ...

    def push(
        self, repo: Repo, ref: str, before: str | None, after: str | None, forced: bool = False
    ) -> None: ...

    def from_github(self, repo: Repo, event: str, action: str | None, fields: dict[str, Any]) -> None:
        """A GitHub-API change on a Gitea-flavoured repository, delivered the way Gitea would."""
        ...


class EventsFactory(Protocol):
    def __call__(self, request: Request, sender: str) -> Events: ...
