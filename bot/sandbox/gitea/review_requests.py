"""Gitea's review requests on a pull request (routers/api/v1/repo/pull_review.go CreateReviewRequests /
DeleteReviewRequests → apiReviewRequest; services/issue/assignee.go isValidReviewRequest and
CanDoerChangeReviewRequests):

- `POST /api/v1/repos/{o}/{r}/pulls/{index}/requested_reviewers` `{"reviewers": [...]}`: 201 with a list of
  `PullReview`s of state REQUEST_REVIEW; an unknown login 404 "User 'x' not exist"; the poster 422 ("poster
  of pr can't be reviewer"), someone who cannot read pull requests 422 ("Reviewer can't read"); the caller
  must be the poster, the owner or a collaborator (else 422 "Doer can't choose reviewer").
- `DELETE` the same path: 204.
- The pull request's `requested_reviewers` lists them; a submitted review takes its reviewer off.
Each reviewer added or taken off sends X-Gitea-Event `pull_request`, X-Gitea-Event-Type
`pull_request_review_request`, action `review_requested` / `review_request_removed` with
`requested_reviewer` (services/webhook/notifier.go PullRequestReviewRequest; ``pull_ops.request_reviews``).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared import pull_ops
from bot.sandbox.shared.plumbing import ApiError, body_object, json_response
from bot.sandbox.shared.state import Issue, Repo, now_iso

from .context import API, GCtx, unprocessable


def _pull(ctx: GCtx, repo: Repo) -> Issue:
    found = repo.issues.get(ctx.int_param("index"))
    if found is None or found.pull is None:
        raise ctx.not_found()
    return found


def _invalid(reason: str, ctx: GCtx, repo: Repo) -> ApiError:
    # issues_model.ErrNotValidReviewRequest.Error(): "<reason> [user_id: <doer>, repo_id: <repo>]"
    doer = ctx.forge.user(ctx.login)
    return unprocessable(f"{reason} [user_id: {doer.id if doer else 0}, repo_id: {repo.id}]")


def _chosen(ctx: GCtx, repo: Repo, issue: Issue, body: dict[str, Any], *, add: bool) -> list[str]:
    given = body.get("reviewers") or []
    if not isinstance(given, list):
        raise unprocessable("reviewers: must be a list")
    may_change = (
        ctx.login.casefold() == issue.user.casefold() or ctx.forge.role_of(repo, ctx.login) is not None
    )
    chosen: list[str] = []
    for login in given:
        known = ctx.forge.user(str(login))
        if known is None:
            raise ApiError(404, f"User '{login}' not exist")
        if add and not ctx.forge.can(repo, known.login, "pull"):
            raise _invalid("Reviewer can't read", ctx, repo)
        if add and known.login.casefold() == issue.user.casefold():
            raise _invalid("poster of pr can't be reviewer", ctx, repo)
        if not may_change:
            raise _invalid("Doer can't choose reviewer" if add else "Doer can't remove reviewer", ctx, repo)
        chosen.append(known.login)
    return chosen


@GCtx.on_repo()
async def request_reviewers(request: Request, ctx: GCtx, repo: Repo) -> Response:
    issue = _pull(ctx, repo)
    assert issue.pull is not None
    chosen = _chosen(ctx, repo, issue, await body_object(request), add=True)
    pull_ops.request_reviews(ctx, repo, issue, chosen, add=True)
    html = ctx.shapes.issue_html(repo, issue.number)
    stamp = now_iso()
    answer = [
        {
            "id": ctx.forge.new_id(),
            "user": ctx.shapes.user(login),
            "team": None,
            "state": "REQUEST_REVIEW",
            "body": "",
            "commit_id": issue.pull.head_sha,
            "stale": False,
            "official": False,
            "dismissed": False,
            "comments_count": 0,
            "submitted_at": stamp,
            "updated_at": stamp,
            "html_url": html,
            "pull_request_url": html,
        }
        for login in chosen
    ]
    return json_response(request, answer, status=201)


@GCtx.on_repo()
async def remove_requested(request: Request, ctx: GCtx, repo: Repo) -> Response:
    issue = _pull(ctx, repo)
    chosen = _chosen(ctx, repo, issue, await body_object(request), add=False)
    pull_ops.request_reviews(ctx, repo, issue, chosen, add=False)
    return Response(status_code=204)


def routes() -> list[BaseRoute]:
    p = API + "/repos/{owner}/{repo}/pulls/{index:int}/requested_reviewers"
    return [
        Route(p, request_reviewers, methods=["POST"]),
        Route(p, remove_requested, methods=["DELETE"]),
    ]
