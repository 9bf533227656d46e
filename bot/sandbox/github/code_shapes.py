"""GitHub's JSON for pull requests, check runs and suites, status events and hook deliveries.

REST answers and webhook payloads share these, as on GitHub; the webhook schemas (octokit) are stricter
than the REST description about extra keys, so each shape carries exactly the keys both name.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bot.sandbox.shared import gitmodel, pulls
from bot.sandbox.shared.hooks import Delivery
from bot.sandbox.shared.state import Annotation, CheckRun, CheckSuite, CommitStatus, Issue, Repo, Review

from .shapes import Shapes, node_id

# The app the sandbox's CI plays (check runs made through the admin API or --ci belong to it).
CI_APP_ID = 1
CI_APP_SLUG = "sandbox-ci"
# Keys of GitHub's full pull request that its list (pull-request-simple) leaves out.
_FULL_ONLY = (
    "merged",
    "mergeable",
    "rebaseable",
    "mergeable_state",
    "merged_by",
    "comments",
    "review_comments",
    "maintainer_can_modify",
    "commits",
    "additions",
    "deletions",
    "changed_files",
)


def app_of_suite(shapes: Shapes, repo: Repo, suite_id: int) -> dict[str, Any]:
    """The App a check suite belongs to: an installed App that made its runs, else the sandbox's CI."""
    suite = next((s for s in repo.check_suites if s.id == suite_id), None)
    app = shapes.forge.apps.get(suite.app_id) if suite is not None and suite.app_id else None
    return shapes.app(app) if app is not None else ci_app(shapes)


def ci_app(shapes: Shapes) -> dict[str, Any]:
    owner = next(iter(shapes.forge.users.values())).login if shapes.forge.users else "sandbox"
    return {
        "id": CI_APP_ID,
        "slug": CI_APP_SLUG,
        "node_id": node_id("App", CI_APP_ID),
        "owner": shapes.user(owner),
        "name": "Sandbox CI",
        "description": "The sandbox's CI (see `steward sandbox --ci` and POST /_sandbox/ci)",
        "external_url": f"{shapes.base}/apps/{CI_APP_SLUG}",
        "html_url": f"{shapes.base}/apps/{CI_APP_SLUG}",
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
        "permissions": {"checks": "write", "statuses": "write", "metadata": "read"},
        "events": [],
    }


def _branch(shapes: Shapes, repo: Repo, ref: str, sha: str) -> dict[str, Any]:
    return {
        "label": f"{repo.owner}:{ref}",
        "ref": ref,
        "sha": sha,
        "user": shapes.user(repo.owner),
        "repo": shapes.repo(repo),
    }


def _head(shapes: Shapes, repo: Repo, issue: Issue) -> dict[str, Any]:
    """A pull request's head: in this repository, or in a fork — `head.repo` null once the fork is deleted
    (REST description: `pull-request.head.repo` is nullable; docs "Get a pull request")."""
    assert issue.pull is not None
    pr = issue.pull
    if pr.head_repo is None:
        return _branch(shapes, repo, pr.head_ref, pr.head_sha)
    fork = None if pr.head_repo_deleted else shapes.forge.repos.get(pr.head_repo)
    owner = pr.head_repo.split("/")[0]
    known = shapes.forge.user(owner)
    login = fork.owner if fork is not None else (known.login if known is not None else owner)
    return {
        "label": f"{login}:{pr.head_ref}",
        "ref": pr.head_ref,
        "sha": pr.head_sha,
        "user": shapes.user(login),
        "repo": shapes.repo(fork) if fork is not None else None,
    }


def link(href: str) -> dict[str, str]:
    return {"href": href}


def pull(shapes: Shapes, repo: Repo, issue: Issue, *, full: bool = True) -> dict[str, Any]:
    """A pull request as GET /pulls/{n} (full) or GET /pulls (not full) answers it."""
    assert issue.pull is not None
    pr = issue.pull
    api = f"{shapes.base}/repos/{repo.full_name}"
    html = f"{shapes.base}/{repo.full_name}/pull/{issue.number}"
    ms = repo.milestones.get(issue.milestone) if issue.milestone is not None else None
    assignees = [shapes.user(a) for a in issue.assignees]
    commits = pulls.commits_of(repo, issue)
    added, removed, modified = pulls.changes_of(repo, issue)
    data: dict[str, Any] = {
        "url": f"{api}/pulls/{issue.number}",
        "id": issue.id,
        "node_id": node_id("PullRequest", issue.id),
        "html_url": html,
        "diff_url": f"{html}.diff",
        "patch_url": f"{html}.patch",
        "issue_url": f"{api}/issues/{issue.number}",
        "number": issue.number,
        "state": issue.state,
        "locked": issue.locked,
        "title": issue.title,
        "user": shapes.user(issue.user),
        "body": issue.body,
        "created_at": issue.created_at,
        "updated_at": issue.updated_at,
        "closed_at": issue.closed_at,
        "merged_at": pr.merged_at,
        "merge_commit_sha": pr.merge_commit_sha,
        "assignee": assignees[0] if assignees else None,
        "assignees": assignees,
        "requested_reviewers": [shapes.user(r) for r in pr.requested_reviewers],
        "requested_teams": [],
        "labels": [shapes.label(repo, repo.labels[i]) for i in issue.label_ids if i in repo.labels],
        "milestone": shapes.milestone(repo, ms) if ms is not None else None,
        "draft": pr.draft,
        "commits_url": f"{api}/pulls/{issue.number}/commits",
        "review_comments_url": f"{api}/pulls/{issue.number}/comments",
        "review_comment_url": f"{api}/pulls/comments{{/number}}",
        "comments_url": f"{api}/issues/{issue.number}/comments",
        "statuses_url": f"{api}/statuses/{pr.head_sha}",
        "head": _head(shapes, repo, issue),
        "base": _branch(shapes, repo, pr.base_ref, repo.refs.get(f"refs/heads/{pr.base_ref}", pr.base_sha)),
        "_links": {
            "self": link(f"{api}/pulls/{issue.number}"),
            "html": link(html),
            "issue": link(f"{api}/issues/{issue.number}"),
            "comments": link(f"{api}/issues/{issue.number}/comments"),
            "review_comments": link(f"{api}/pulls/{issue.number}/comments"),
            "review_comment": link(f"{api}/pulls/comments{{/number}}"),
            "commits": link(f"{api}/pulls/{issue.number}/commits"),
            "statuses": link(f"{api}/statuses/{pr.head_sha}"),
        },
        "author_association": shapes.association(repo, issue.user),
        "auto_merge": None,
        "active_lock_reason": None,
        "merged": pr.merged,
        "mergeable": None if pr.merged or issue.state == "closed" else True,
        "rebaseable": None if pr.merged or issue.state == "closed" else True,
        "mergeable_state": "clean" if issue.state == "open" else "unknown",
        "merged_by": shapes.user(pr.merged_by) if pr.merged_by else None,
        "comments": sum(1 for c in repo.comments.values() if c.issue_number == issue.number),
        "review_comments": 0,
        "maintainer_can_modify": False,
        "commits": len(commits),
        "additions": 0,
        "deletions": 0,
        "changed_files": len(added) + len(removed) + len(modified),
    }
    if not full:
        for key in _FULL_ONLY:
            del data[key]
    return data


def pull_commit(shapes: Shapes, repo: Repo, sha: str) -> dict[str, Any]:
    """A commit as GET /pulls/{n}/commits lists it: the commit shape without its files."""
    data = shapes.commit(repo, repo.commits[sha])
    del data["files"]
    return data


# checks -----------------------------------------------------------------------------------------------


def check_run(shapes: Shapes, repo: Repo, run: CheckRun, *, webhook: bool = False) -> dict[str, Any]:
    """The REST check run names its suite by id; the `check_run` webhook carries the suite itself."""
    api = f"{shapes.base}/repos/{repo.full_name}"
    suite: dict[str, Any] = {"id": run.suite_id}
    if webhook:
        found = next(s for s in repo.check_suites if s.id == run.suite_id)
        whole = check_suite(shapes, repo, found, webhook=True)
        keep = ("id", "node_id", "head_branch", "head_sha", "status", "conclusion", "url", "before", "after")
        suite = {k: whole[k] for k in keep} | {
            "pull_requests": whole["pull_requests"],
            "app": whole["app"],
            "created_at": whole["created_at"],
            "updated_at": whole["updated_at"],
        }
    return {
        "id": run.id,
        "node_id": node_id("CheckRun", run.id),
        "head_sha": run.head_sha,
        "name": run.name,
        "url": f"{api}/check-runs/{run.id}",
        "html_url": f"{shapes.base}/{repo.full_name}/runs/{run.id}",
        "details_url": run.details_url or f"{shapes.base}/{repo.full_name}/runs/{run.id}",
        "external_id": str(run.id),
        "status": run.status,
        "conclusion": run.conclusion,
        "started_at": run.started_at,
        "completed_at": run.completed_at,
        "output": {
            "title": run.title,
            "summary": run.summary,
            "text": run.text,
            "annotations_count": len(run.annotations),
            "annotations_url": f"{api}/check-runs/{run.id}/annotations",
        },
        "check_suite": suite,
        "app": app_of_suite(shapes, repo, run.suite_id),
        "pull_requests": _pull_refs(shapes, repo, run.head_sha),
    }


def annotation(shapes: Shapes, repo: Repo, run: CheckRun, found: Annotation) -> dict[str, Any]:
    """A `check-annotation` (GET /check-runs/{id}/annotations)."""
    return {
        "path": found.path,
        "blob_href": f"{shapes.base}/{repo.full_name}/blob/{run.head_sha}/{found.path}",
        "start_line": found.start_line,
        "end_line": found.end_line,
        "start_column": None,
        "end_column": None,
        "annotation_level": found.annotation_level,
        "title": found.title,
        "message": found.message,
        "raw_details": found.raw_details,
    }


def _pull_refs(shapes: Shapes, repo: Repo, sha: str) -> list[dict[str, Any]]:
    """The open pull requests whose head is `sha`, as check runs and suites list them."""
    api = f"{shapes.base}/repos/{repo.full_name}"
    found = []
    for issue in pulls.open_pulls(repo):
        assert issue.pull is not None
        if issue.pull.head_sha != sha:
            continue
        base_sha = repo.refs.get(f"refs/heads/{issue.pull.base_ref}", issue.pull.base_sha)
        meta = {"id": repo.id, "url": api, "name": repo.name}
        found.append(
            {
                "id": issue.id,
                "number": issue.number,
                "url": f"{api}/pulls/{issue.number}",
                "head": {"ref": issue.pull.head_ref, "sha": sha, "repo": meta},
                "base": {"ref": issue.pull.base_ref, "sha": base_sha, "repo": meta},
            }
        )
    return found


def check_suite(shapes: Shapes, repo: Repo, suite: CheckSuite, *, webhook: bool = False) -> dict[str, Any]:
    api = f"{shapes.base}/repos/{repo.full_name}"
    commit = repo.commits.get(suite.head_sha)
    runs = [r for r in repo.check_runs if r.suite_id == suite.id]
    data: dict[str, Any] = {
        "id": suite.id,
        "node_id": node_id("CheckSuite", suite.id),
        "head_branch": suite.head_branch,
        "head_sha": suite.head_sha,
        "status": suite.status,
        "conclusion": suite.conclusion,
        "url": f"{api}/check-suites/{suite.id}",
        "before": suite.before,
        "after": suite.head_sha,
        "pull_requests": _pull_refs(shapes, repo, suite.head_sha),
        "app": app_of_suite(shapes, repo, suite.id),
        "created_at": suite.created_at,
        "updated_at": suite.updated_at,
        "latest_check_runs_count": len(runs),
        "check_runs_url": f"{api}/check-suites/{suite.id}/check-runs",
        "head_commit": {
            "id": suite.head_sha,
            "tree_id": commit.tree if commit else "",
            "message": commit.message if commit else "",
            "timestamp": commit.committer.date if commit else suite.created_at,
            "author": {"name": commit.author.name, "email": commit.author.email} if commit else None,
            "committer": {"name": commit.committer.name, "email": commit.committer.email} if commit else None,
        },
        "rerequestable": True,
        "runs_rerequestable": True,
    }
    if not webhook:
        data["repository"] = shapes.repo(repo)
    return data


# status events ----------------------------------------------------------------------------------------


def status_event_fields(shapes: Shapes, repo: Repo, status: CommitStatus) -> dict[str, Any]:
    """The `status` webhook's fields (repository and sender are added by the emitter)."""
    api = f"{shapes.base}/repos/{repo.full_name}"
    commit = repo.commits[status.sha]
    branches = [
        {
            "name": ref.removeprefix("refs/heads/"),
            "commit": {"sha": sha, "url": f"{api}/commits/{sha}"},
            "protected": False,
        }
        for ref, sha in sorted(repo.refs.items())
        if ref.startswith("refs/heads/") and status.sha in gitmodel.ancestors(repo, sha)
    ][:10]
    signature = {
        "name": commit.author.name,
        "email": commit.author.email,
        "date": commit.author.date,
        "username": commit.author.email.split("@", 1)[0],
    }
    committer = {**signature, "name": commit.committer.name, "email": commit.committer.email}
    return {
        "id": status.id,
        "sha": status.sha,
        "name": repo.full_name,
        "avatar_url": f"{shapes.base}/avatars/{status.creator}",
        "target_url": status.target_url,
        "context": status.context,
        "description": status.description,
        "state": status.state,
        "commit": {
            "sha": status.sha,
            "node_id": node_id("Commit", status.sha),
            "commit": {
                "author": signature,
                "committer": committer,
                "message": commit.message,
                "tree": {"sha": commit.tree, "url": f"{api}/git/trees/{commit.tree}"},
                "url": f"{api}/git/commits/{status.sha}",
                "comment_count": 0,
                "verification": {"verified": False, "reason": "unsigned", "signature": None, "payload": None},
            },
            "url": f"{api}/commits/{status.sha}",
            "html_url": f"{shapes.base}/{repo.full_name}/commit/{status.sha}",
            "comments_url": f"{api}/commits/{status.sha}/comments",
            "author": shapes.account_of(commit.author.email),
            "committer": shapes.account_of(commit.committer.email),
            "parents": [
                {
                    "sha": p,
                    "url": f"{api}/commits/{p}",
                    "html_url": f"{shapes.base}/{repo.full_name}/commit/{p}",
                }
                for p in commit.parents
            ],
        },
        "branches": branches,
        "created_at": status.created_at,
        "updated_at": status.updated_at,
    }


# hook deliveries ----------------------------------------------------------------------------------------


def _iso(stamp: float | None) -> str:
    when = datetime.fromtimestamp(stamp, UTC) if stamp is not None else datetime.now(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def delivery_item(
    delivery: Delivery, repository_id: int | None, installation_id: int | None
) -> dict[str, Any]:
    """GitHub's `hook-delivery-item`."""
    code = delivery.status_code or 0
    if delivery.error is not None:
        status = "timed out" if delivery.error == "timeout" else "failed to connect"
    elif delivery.delivered_at is None:
        status = "pending"
    else:
        status = "OK" if delivery.delivered else f"Invalid HTTP Response: {code}"
    return {
        "id": delivery.id,
        "guid": delivery.guid,
        "delivered_at": _iso(delivery.delivered_at or delivery.queued_at),
        "redelivery": delivery.redelivery,
        "duration": delivery.duration or 0.0,
        "status": status,
        "status_code": code,
        "event": delivery.event,
        "action": delivery.action,
        "installation_id": installation_id,
        "repository_id": repository_id,
        "throttled_at": None,
    }


def delivery_detail(
    delivery: Delivery, repository_id: int | None, installation_id: int | None
) -> dict[str, Any]:
    """GitHub's `hook-delivery`: the item with the request and response."""
    return {
        **delivery_item(delivery, repository_id, installation_id),
        "url": delivery.url,
        "request": {"headers": dict(delivery.headers), "payload": delivery.payload()},
        "response": {"headers": {}, "payload": delivery.response_body},
    }


def review_shape(
    shapes: Shapes, repo: Repo, issue: Issue, review: Review, *, webhook: bool = False
) -> dict[str, Any]:
    """GitHub's `pull-request-review` (REST: state in capitals, APPROVED / CHANGES_REQUESTED / COMMENTED);
    the `pull_request_review` webhook's review names it in lower case (octokit/webhooks
    `common/pull-request-review.schema.json`)."""
    html = f"{shapes.base}/{repo.full_name}/pull/{issue.number}#pullrequestreview-{review.id}"
    api = f"{shapes.base}/repos/{repo.full_name}/pulls/{issue.number}"
    data: dict[str, Any] = {
        "id": review.id,
        "node_id": node_id("PullRequestReview", review.id),
        "user": shapes.user(review.user),
        "body": review.body,
        "state": review.state.lower() if webhook else review.state,
        "html_url": html,
        "pull_request_url": api,
        "_links": {"html": link(html), "pull_request": link(api)},
        "submitted_at": review.submitted_at,
        "commit_id": review.commit_id,
        "author_association": shapes.association(repo, review.user),
    }
    if not webhook and review.submitted_at is None:
        del data["submitted_at"]  # a pending review has not been submitted
    return data
