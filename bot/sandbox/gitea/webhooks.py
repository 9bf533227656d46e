"""Webhooks that follow the repository's flavour.

A Gitea-flavoured repository delivers Gitea-shaped, Gitea-signed webhooks (``X-Gitea-Event`` broad,
``X-Gitea-Event-Type`` specific, ``X-Gitea-Signature`` bare hex, plus the ``X-Gogs-*``/``X-GitHub-*``
copies and ``X-Hub-Signature(-256)`` that Gitea also sends) whichever API changed it; a GitHub-flavoured
one delivers GitHub's. Both APIs announce issue, comment, label and milestone changes through
``Emitter`` (``Caller.events``) with state objects; the GitHub API's own events (``Ctx.emit``) on
Gitea-flavoured repositories are handed to ``from_github``.

Subscriptions follow Gitea's hook API: an event type is delivered when the hook lists it, or lists its
family (``issues`` covers issue_assign/issue_label/issue_milestone/issue_comment; ``pull_request`` covers
the pull_request_* types), or ``*``.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from typing import Any

from starlette.requests import Request

from bot.sandbox.shared import gitmodel
from bot.sandbox.shared.events_port import EventsFactory
from bot.sandbox.shared.runtime import Sandbox
from bot.sandbox.shared.state import (
    CheckRun,
    CheckSuite,
    Comment,
    CommitStatus,
    Hook,
    Issue,
    Label,
    Milestone,
    Repo,
    Review,
)

from .shapes import GiteaShapes

ZERO = "0" * 40
ISSUE_TYPES = frozenset({"issues", "issue_assign", "issue_label", "issue_milestone", "issue_comment"})
PULL_TYPES = frozenset(
    {
        "pull_request",
        "pull_request_assign",
        "pull_request_label",
        "pull_request_milestone",
        "pull_request_comment",
        "pull_request_review",
        "pull_request_review_approved",
        "pull_request_review_rejected",
        "pull_request_review_comment",
        "pull_request_sync",
        "pull_request_review_request",
    }
)


def gitea_headers(event: str, event_type: str) -> Callable[[Hook, str, bytes], dict[str, str]]:
    """The headers go-gitea/gitea's deliverer sets (see tests/fixtures/gitea/webhooks/headers.json)."""

    def make(hook: Hook, guid: str, body: bytes) -> dict[str, str]:
        key = (hook.secret or "").encode()
        sha256 = hmac.new(key, body, hashlib.sha256).hexdigest() if hook.secret else ""
        sha1 = hmac.new(key, body, hashlib.sha1).hexdigest() if hook.secret else ""
        headers = {
            "User-Agent": "GiteaServer",
            "Content-Type": "application/json"
            if hook.content_type == "json"
            else "application/x-www-form-urlencoded",
            "X-Gitea-Delivery": guid,
            "X-Gitea-Event": event,
            "X-Gitea-Event-Type": event_type,
            "X-Gitea-Signature": sha256,
            "X-Gitea-Hook-Installation-Target-Type": "repository",
            "X-Gogs-Delivery": guid,
            "X-Gogs-Event": event,
            "X-Gogs-Event-Type": event_type,
            "X-Gogs-Signature": sha256,
            "X-GitHub-Delivery": guid,
            "X-GitHub-Event": event,
            "X-GitHub-Event-Type": event_type,
            "X-GitHub-Hook-Installation-Target-Type": "repository",
        }
        if hook.secret:
            headers["X-Hub-Signature"] = "sha1=" + sha1
            headers["X-Hub-Signature-256"] = "sha256=" + sha256
        return headers

    return make


def subscribed(hook: Hook, event_type: str) -> bool:
    events = {e.lower() for e in hook.events}
    return (
        "*" in events
        or event_type in events
        or (event_type in ISSUE_TYPES and "issues" in events)
        or (event_type in PULL_TYPES and "pull_request" in events)
        or (event_type.startswith("pull_request_review_") and "pull_request_review" in events)
    )


class Emitter:
    """Emits the webhooks for one request's changes, in the repository's flavour."""

    def __init__(self, request: Request, sender: str) -> None:
        self.request = request
        self.sandbox: Sandbox = request.app.state.sandbox
        self.base = str(request.base_url).rstrip("/")
        self.shapes = GiteaShapes(self.sandbox.forge, self.base)
        self.sender = sender

    def _github(self) -> Any:
        from bot.sandbox.github.context import Ctx

        return Ctx(self.request, self.sender)

    def _deliver(
        self, repo: Repo, event: str, event_type: str, action: str | None, fields: dict[str, Any]
    ) -> None:
        hooks = [h for h in repo.hooks.values() if h.active and subscribed(h, event_type)]
        if not hooks:
            return
        payload: dict[str, Any] = {} if action is None else {"action": action}
        payload.update(fields)
        payload["repository"] = self.shapes.repo(repo)
        payload["sender"] = self.shapes.user(self.sender)
        make = gitea_headers(event, event_type)
        for hook in hooks:
            self.sandbox.deliverer.enqueue(
                hook,
                event,
                action,
                payload,
                repo.full_name,
                headers=make,
                timeout=self.sandbox.deliverer.gitea_timeout,
            )

    # the domain's events ------------------------------------------------------------------------------

    def issue(self, repo: Repo, issue: Issue, action: str, changes: dict[str, Any] | None = None) -> None:
        """opened, edited, closed, reopened (of a pull request: its `pull_request` event)."""
        if issue.pull is not None:
            self.pull(repo, issue, action, "pull_request", {"changes": changes} if changes else {})
            return
        if repo.flavor == "github":
            gh = self._github()
            extra = {"changes": changes} if changes else {}
            gh.emit(repo, "issues", action, issue=gh.shapes.issue(repo, issue), **extra)
            return
        fields: dict[str, Any] = {"number": issue.number, "issue": self.shapes.issue(repo, issue)}
        if changes:
            fields["changes"] = changes
        fields["commit_id"] = ""
        self._deliver(repo, "issues", "issues", action, fields)

    def pin(self, repo: Repo, issue: Issue, action: str) -> None:
        """pinned, unpinned: GitHub's `issues` event (octokit/webhooks `issues.pinned`, `issues.unpinned`).
        Gitea sends no webhook for a pin: its HookIssueAction (modules/structs/hook.go) has no such action."""
        if repo.flavor != "github" or issue.pull is not None:
            return
        gh = self._github()
        gh.emit(repo, "issues", action, issue=gh.shapes.issue(repo, issue))

    def labels(self, repo: Repo, issue: Issue, added: list[int], removed: list[int]) -> None:
        if not added and not removed:
            return
        if repo.flavor == "github":
            gh = self._github()
            for label_id, action in [(i, "unlabeled") for i in removed] + [(i, "labeled") for i in added]:
                label = gh.shapes.label(repo, repo.labels[label_id])
                if issue.pull is not None:
                    self.pull(repo, issue, action, "pull_request", {"label": label})
                else:
                    gh.emit(repo, "issues", action, issue=gh.shapes.issue(repo, issue), label=label)
            return
        action = "label_cleared" if not issue.label_ids else "label_updated"
        if issue.pull is not None:
            self.pull(repo, issue, action, "pull_request_label", {})
            return
        fields = {"number": issue.number, "issue": self.shapes.issue(repo, issue), "commit_id": ""}
        self._deliver(repo, "issues", "issue_label", action, fields)

    def milestone(self, repo: Repo, issue: Issue, old: int | None) -> None:
        if repo.flavor == "github":
            gh = self._github()
            changes: list[tuple[str, int]] = []
            if old is not None and old in repo.milestones:
                changes.append(("demilestoned", old))
            if issue.milestone is not None:
                changes.append(("milestoned", issue.milestone))
            for action, number in changes:
                shape = gh.shapes.milestone(repo, repo.milestones[number])
                if issue.pull is not None:
                    self.pull(repo, issue, action, "pull_request", {"milestone": shape})
                else:
                    gh.emit(repo, "issues", action, issue=gh.shapes.issue(repo, issue), milestone=shape)
            return
        action = "milestoned" if issue.milestone is not None else "demilestoned"
        if issue.pull is not None:
            self.pull(repo, issue, action, "pull_request_milestone", {})
            return
        fields = {"number": issue.number, "issue": self.shapes.issue(repo, issue), "commit_id": ""}
        self._deliver(repo, "issues", "issue_milestone", action, fields)

    def repo_event(
        self, repo: Repo, item: Label | Milestone, action: str, changes: dict[str, Any] | None = None
    ) -> None:
        """A label or milestone created, edited, closed, opened or deleted: GitHub's `label` and
        `milestone` events (Gitea has no such webhooks)."""
        if repo.flavor != "github":
            return
        gh = self._github()
        extra = {"changes": changes} if changes else {}
        if isinstance(item, Label):
            gh.emit(repo, "label", action, label=gh.shapes.label(repo, item), **extra)
        else:
            gh.emit(repo, "milestone", action, milestone=gh.shapes.milestone(repo, item), **extra)

    def comment(
        self, repo: Repo, comment: Comment, action: str, changes: dict[str, Any] | None = None
    ) -> None:
        """created, edited, deleted (called before a deleted comment leaves the state)."""
        issue = repo.issues[comment.issue_number]
        if repo.flavor == "github":
            gh = self._github()
            extra = {"changes": changes} if changes else {}
            gh.emit(
                repo,
                "issue_comment",
                action,
                **extra,
                issue=gh.shapes.issue(repo, issue),
                comment=gh.shapes.comment(repo, comment),
            )
            return
        fields: dict[str, Any] = {
            "issue": self.shapes.issue(repo, issue),
            "pull_request": self.shapes.pull(repo, issue) if issue.pull is not None else None,
            "comment": self.shapes.comment(repo, comment),
        }
        if changes:
            fields["changes"] = changes
        fields["is_pull"] = issue.pull is not None
        # A comment on a pull request is X-Gitea-Event issue_comment, X-Gitea-Event-Type pull_request_comment.
        kind = "pull_request_comment" if issue.pull is not None else "issue_comment"
        self._deliver(repo, "issue_comment", kind, action, fields)

    def pull(self, repo: Repo, issue: Issue, action: str, gitea_type: str, extra: dict[str, Any]) -> None:
        """A pull request's event: GitHub's `pull_request` (action opened, closed, reopened, edited,
        synchronize, labeled, milestoned, …), Gitea's `pull_request` with X-Gitea-Event-Type `gitea_type`
        (pull_request, pull_request_sync, pull_request_label, pull_request_milestone)."""
        if repo.flavor == "github":
            from bot.sandbox.github.code_shapes import pull

            gh = self._github()
            gh.emit(
                repo,
                "pull_request",
                action,
                number=issue.number,
                pull_request=pull(gh.shapes, repo, issue),
                **extra,
            )
            return
        fields: dict[str, Any] = {
            "number": issue.number,
            "pull_request": self.shapes.pull(repo, issue),
            **extra,
            "requested_reviewer": None,
            "commit_id": "",
            "review": None,
        }
        self._deliver(repo, "pull_request", gitea_type, action, fields)

    def review(self, repo: Repo, issue: Issue, review: Review, action: str = "submitted") -> None:
        """A review submitted (or, GitHub only, `dismissed`: Gitea's webhook notifier has no
        PullReviewDismiss, so a dismissal sends nothing there). GitHub: `pull_request_review` `action` (its
        review's state in lower case, with `commit_id`). Gitea (services/webhook/notifier.go
        `PullRequestReview`): X-Gitea-Event
        `pull_request_approved` / `pull_request_rejected` / `pull_request_comment`, X-Gitea-Event-Type
        `pull_request_review_approved` / `…_rejected` / `…_comment` (modules/webhook/type.go `Event`), action
        `reviewed`, and a `review` of only `type` and `content` (modules/structs/hook.go `ReviewPayload`)."""
        if repo.flavor == "github":
            from bot.sandbox.github.code_shapes import pull, review_shape

            gh = self._github()
            gh.emit(
                repo,
                "pull_request_review",
                action,
                review=review_shape(gh.shapes, repo, issue, review, webhook=True),
                pull_request=pull(gh.shapes, repo, issue, full=False),
            )
            return
        if action != "submitted":
            return
        kind = {"APPROVED": "approved", "CHANGES_REQUESTED": "rejected"}.get(review.state, "comment")
        fields: dict[str, Any] = {
            "number": issue.number,
            "pull_request": self.shapes.pull(repo, issue),
            "requested_reviewer": None,
            "commit_id": "",
            "review": {"type": f"pull_request_review_{kind}", "content": review.body},
        }
        self._deliver(repo, f"pull_request_{kind}", f"pull_request_review_{kind}", "reviewed", fields)

    def assignment(self, repo: Repo, issue: Issue, login: str, action: str) -> None:
        """Someone assigned (`assigned`) or no longer assigned (`unassigned`), one webhook per person.
        GitHub: `issues` with `assignee` (octokit webhook schemas issues/assigned, unassigned), of a pull
        request `pull_request` with `assignee`. Gitea (services/webhook/notifier.go IssueChangeAssignee,
        modules/webhook/type.go): X-Gitea-Event `issues`, type `issue_assign`, an IssuePayload without the
        assignee (tests/fixtures/gitea/webhooks/go-playground/issue-assign-event.json); of a pull request
        X-Gitea-Event `pull_request`, type `pull_request_assign`."""
        if repo.flavor == "github":
            gh = self._github()
            user = gh.shapes.user(login)
            if issue.pull is not None:
                self.pull(repo, issue, action, "pull_request", {"assignee": user})
            else:
                gh.emit(repo, "issues", action, issue=gh.shapes.issue(repo, issue), assignee=user)
            return
        if issue.pull is not None:
            self.pull(repo, issue, action, "pull_request_assign", {})
            return
        fields = {"number": issue.number, "issue": self.shapes.issue(repo, issue), "commit_id": ""}
        self._deliver(repo, "issues", "issue_assign", action, fields)

    def review_request(self, repo: Repo, issue: Issue, reviewer: str, action: str) -> None:
        """A review requested (`review_requested`) or withdrawn (`review_request_removed`), one webhook per
        reviewer. GitHub: `pull_request` with `requested_reviewer` (octokit webhook schemas
        pull_request/review_requested, review_request_removed; the team form is not modelled). Gitea
        (services/webhook/notifier.go PullRequestReviewRequest): X-Gitea-Event `pull_request`,
        X-Gitea-Event-Type `pull_request_review_request` (modules/webhook/type.go), a PullRequestPayload
        with `requested_reviewer` (the keys of the recorded HookPullRequestAddReviewRequest fixture)."""
        if repo.flavor == "github":
            self.pull(
                repo,
                issue,
                action,
                "pull_request",
                {"requested_reviewer": self._github().shapes.user(reviewer)},
            )
            return
        fields: dict[str, Any] = {
            "number": issue.number,
            "pull_request": self.shapes.pull(repo, issue),
            "requested_reviewer": self.shapes.user(reviewer),
            "review": None,
        }  # no commit_id: as tests/fixtures/gitea/webhooks/woodpecker/HookPullRequestAddReviewRequest.json
        self._deliver(repo, "pull_request", "pull_request_review_request", action, fields)

    def from_github(self, repo: Repo, event: str, action: str | None, fields: dict[str, Any]) -> None:
        """A GitHub-API change on a Gitea-flavoured repository, delivered the way Gitea would."""
        _from_github(self, repo, event, action, fields)

    def pull_synchronized(self, repo: Repo, issue: Issue, before: str, after: str) -> None:
        """New commits on a pull request's head branch: GitHub `synchronize` (with before/after), Gitea
        `synchronized` (X-Gitea-Event-Type pull_request_sync, services/webhook/notifier.go)."""
        if repo.flavor == "github":
            self.pull(repo, issue, "synchronize", "pull_request", {"before": before, "after": after})
        else:
            self.pull(repo, issue, "synchronized", "pull_request_sync", {})

    def status(self, repo: Repo, status: CommitStatus) -> None:
        """A commit status was set: GitHub's `status` event; current Gitea sends `status` too
        (services/webhook/notifier.go CreateCommitStatus; payload: modules/structs/hook.go
        CommitStatusPayload, no action)."""
        if repo.flavor == "github":
            from bot.sandbox.github.code_shapes import status_event_fields

            gh = self._github()
            gh.emit(repo, "status", None, **status_event_fields(gh.shapes, repo, status))
            return
        fields = {
            "commit": self.shapes.push_commit(repo, repo.commits[status.sha]),
            "context": status.context,
            "created_at": status.created_at,
            "description": status.description or "",
            "id": status.id,
            "sha": status.sha,
            "state": status.state,
            "target_url": status.target_url or "",
            "updated_at": status.updated_at,
        }
        self._deliver(repo, "status", "status", None, fields)

    def check_run(self, repo: Repo, run: CheckRun, action: str) -> None:
        """GitHub's `check_run` (created, completed); Gitea has no check runs."""
        if repo.flavor != "github":
            return
        from bot.sandbox.github.code_shapes import check_run

        gh = self._github()
        gh.emit(repo, "check_run", action, check_run=check_run(gh.shapes, repo, run, webhook=True))

    def check_suite(self, repo: Repo, suite: CheckSuite, action: str) -> None:
        """GitHub's `check_suite` (completed); Gitea has no check suites."""
        if repo.flavor != "github":
            return
        from bot.sandbox.github.code_shapes import check_suite

        gh = self._github()
        gh.emit(repo, "check_suite", action, check_suite=check_suite(gh.shapes, repo, suite, webhook=True))

    def push(self, repo: Repo, ref: str, before: str | None, after: str | None, forced: bool = False) -> None:
        if repo.flavor == "github":
            from bot.sandbox.github.git import emit_push

            emit_push(self._github(), repo, ref, before, after, forced)
            return
        commits = (
            [self.shapes.push_commit(repo, c) for c in gitmodel.new_commits(repo, before, after)]
            if after
            else []
        )
        old, new = before or ZERO, after or ZERO
        fields = {
            "ref": ref,
            "before": old,
            "after": new,
            "compare_url": f"{self.base}/{repo.full_name}/compare/{old[:10]}...{new[:10]}",
            "commits": commits,
            "total_commits": len(commits),
            "head_commit": commits[-1] if commits else None,
            "pusher": self.shapes.user(self.sender),
        }
        self._deliver(repo, "push", "push", None, fields)


def from_github(
    request: Request, sender: str, repo: Repo, event: str, action: str | None, fields: dict[str, Any]
) -> None:
    """A GitHub-API change on a Gitea-flavoured repository, delivered the way Gitea would."""
    Emitter(request, sender).from_github(repo, event, action, fields)


def _from_github(
    emitter: Emitter, repo: Repo, event: str, action: str | None, fields: dict[str, Any]
) -> None:
    issue_raw = fields.get("issue")
    issue = repo.issues.get(issue_raw["number"]) if isinstance(issue_raw, dict) else None
    if event == "issues" and issue is not None and action is not None:
        if action in ("opened", "edited", "closed", "reopened"):
            emitter.issue(repo, issue, action, fields.get("changes"))
        elif action in ("labeled", "unlabeled"):
            label_id = int(fields["label"]["id"])
            emitter.labels(
                repo,
                issue,
                [label_id] if action == "labeled" else [],
                [label_id] if action == "unlabeled" else [],
            )
        elif action in ("milestoned", "demilestoned"):
            fields_ms = fields.get("milestone") or {}
            emitter.milestone(repo, issue, fields_ms.get("number") if action == "demilestoned" else None)
    elif event == "issue_comment" and action is not None:
        comment = repo.comments.get(int(fields["comment"]["id"]))
        if comment is not None:
            emitter.comment(repo, comment, action, fields.get("changes"))
    elif event == "push":
        before, after = fields.get("before"), fields.get("after")
        emitter.push(
            repo, str(fields["ref"]), None if before == ZERO else before, None if after == ZERO else after
        )
    # label, milestone, ping, …: Gitea has no such webhooks.


# The app hands this class to the request contexts as their ``events_port.EventsFactory`` (checked here).
_FACTORY: EventsFactory = Emitter
