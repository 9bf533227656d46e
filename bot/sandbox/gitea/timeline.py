"""Gitea's record of who did what on an issue or pull request: the issue timeline (label changes with the
user who made them, comments) and pull request reviews (with their webhooks)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared import pull_ops
from bot.sandbox.shared.plumbing import body_object, json_response
from bot.sandbox.shared.state import Issue, IssueEvent, Label, Repo, Review, ReviewState, now_iso

from .context import API, GCtx, gitea_page, unprocessable

# Gitea's ReviewStateType (modules/structs/pull_review.go) ↔ the sandbox's (GitHub's) review states.
GITEA_STATE = {
    "APPROVED": "APPROVED",
    "CHANGES_REQUESTED": "REQUEST_CHANGES",
    "COMMENTED": "COMMENT",
    "PENDING": "PENDING",
    "DISMISSED": "APPROVED",
}
FROM_GITEA: dict[str, ReviewState] = {
    "APPROVED": "APPROVED",
    "REQUEST_CHANGES": "CHANGES_REQUESTED",
    "COMMENT": "COMMENTED",
}


def _timeline_base(ctx: GCtx, repo: Repo, issue: Issue, ident: int, kind: str, who: str) -> dict[str, Any]:
    html = ctx.shapes.issue_html(repo, issue.number)
    return {
        "id": ident,
        "type": kind,
        "html_url": f"{html}#issuecomment-{ident}",
        "pull_request_url": html if issue.pull is not None else "",
        "issue_url": "" if issue.pull is not None else html,
        "user": ctx.shapes.user(who),
    }


def label_entry(ctx: GCtx, repo: Repo, issue: Issue, event: IssueEvent) -> dict[str, Any]:
    """A `TimelineComment` of type "label": `body` "1" when the label was added, "" when removed
    (models/issues/issue_label.go newIssueLabel / deleteIssueLabel create a CommentTypeLabel comment with
    Content "1" or ""; services/convert/issue_comment.go ToTimelineComment)."""
    label = repo.labels.get(event.label_id) or Label(id=event.label_id, name=event.label, color=event.color)
    return {
        **_timeline_base(ctx, repo, issue, event.id, "label", event.actor),
        "body": "1" if event.event == "labeled" else "",
        "label": ctx.shapes.label(repo, label),
        "created_at": event.created_at,
        "updated_at": event.created_at,
    }


def milestone_entry(ctx: GCtx, repo: Repo, issue: Issue, event: IssueEvent) -> dict[str, Any]:
    """A `TimelineComment` of type "milestone" (CommentTypeMilestone): `old_milestone` left and `milestone`
    joined, each a `Milestone` loaded by its id as it is now (services/convert/issue_comment.go
    ToTimelineComment: c.LoadMilestone, ToAPIMilestone), null for none or one deleted since."""
    old = repo.milestones.get(event.old_milestone) if event.old_milestone is not None else None
    new = repo.milestones.get(event.milestone) if event.milestone is not None else None
    return {
        **_timeline_base(ctx, repo, issue, event.id, "milestone", event.actor),
        "body": "",
        "old_milestone": ctx.shapes.milestone(repo, old) if old is not None else None,
        "milestone": ctx.shapes.milestone(repo, new) if new is not None else None,
        "created_at": event.created_at,
        "updated_at": event.created_at,
    }


@GCtx.on_repo()
async def timeline(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """GET /api/v1/repos/{o}/{r}/issues/{index}/timeline — routers/api/v1/repo/issue_comment.go
    ListIssueCommentsAndTimeline: every comment of the issue, oldest first, paged (`page`/`limit`)."""
    issue = ctx.lookup(repo.issues, ctx.int_param("index"))
    entries: list[tuple[str, int, dict[str, Any]]] = [
        (
            e.created_at,
            e.id,
            (milestone_entry if e.event == "milestone" else label_entry)(ctx, repo, issue, e),
        )
        for e in issue.events
    ]
    for comment in repo.comments.values():
        if comment.issue_number == issue.number:
            shaped = {
                **_timeline_base(ctx, repo, issue, comment.id, "comment", comment.user),
                "body": comment.body,
                "created_at": comment.created_at,
                "updated_at": comment.updated_at,
            }
            entries.append((comment.created_at, comment.id, shaped))
    entries.sort(key=lambda e: (e[0], e[1]))
    chunk, headers = gitea_page(request, [e[2] for e in entries])
    return json_response(request, chunk, headers=headers)


# reviews ----------------------------------------------------------------------------------------------


def review_shape(ctx: GCtx, repo: Repo, issue: Issue, review: Review) -> dict[str, Any]:
    """A `PullReview` (services/convert/pull_review.go ToPullReview)."""
    html = ctx.shapes.issue_html(repo, issue.number)
    return {
        "id": review.id,
        "user": ctx.shapes.user(review.user),
        "team": None,
        "state": GITEA_STATE[review.state],
        "body": review.body,
        "commit_id": review.commit_id or "",
        "stale": review.commit_id != (issue.pull.head_sha if issue.pull else None),
        "official": review.state in ("APPROVED", "CHANGES_REQUESTED") and ctx.allowed(repo, "push"),
        "dismissed": review.state == "DISMISSED",
        "comments_count": 0,
        "submitted_at": review.submitted_at or issue.updated_at,
        "updated_at": review.submitted_at or issue.updated_at,
        "html_url": f"{html}#issuecomment-{review.id}",
        "pull_request_url": html,
    }


def _pull(ctx: GCtx, repo: Repo) -> Issue:
    found = repo.issues.get(ctx.int_param("index"))
    if found is None or found.pull is None:
        raise ctx.not_found()
    return found


@GCtx.on_repo()
async def list_reviews(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """GET /api/v1/repos/{o}/{r}/pulls/{index}/reviews — routers/api/v1/repo/pull_review.go
    ListPullReviews."""
    issue = _pull(ctx, repo)
    shown = [r for r in issue.reviews if r.state != "PENDING" or r.user == ctx.login]
    chunk, headers = gitea_page(request, shown)
    return json_response(request, [review_shape(ctx, repo, issue, r) for r in chunk], headers=headers)


@GCtx.on_repo()
async def create_review(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """POST /api/v1/repos/{o}/{r}/pulls/{index}/reviews — routers/api/v1/repo/pull_review.go CreatePullReview:
    200 with the `PullReview`; `event` APPROVED / REQUEST_CHANGES / COMMENT (empty: PENDING); `commit_id`
    defaults to the head; the author can neither approve nor reject (services/pull/review.go SubmitReview,
    ErrNotValidReviewRequest → 422 "approve your own pull is not allowed" / "reject your own pull is not
    allowed"); a comment or a rejection needs a body. Sends the review webhook (``Emitter.review``)."""
    issue = _pull(ctx, repo)
    assert issue.pull is not None
    body = await body_object(request)
    event = str(body.get("event") or "").upper()
    text = str(body.get("body") or "")
    if event and event not in (*FROM_GITEA, "PENDING"):
        raise unprocessable(f"unknown review event: {event}")
    if event in ("APPROVED", "REQUEST_CHANGES") and issue.user == ctx.login:
        verb = "approve" if event == "APPROVED" else "reject"
        raise unprocessable(f"{verb} your own pull is not allowed")
    if event in ("COMMENT", "REQUEST_CHANGES") and not text.strip():
        raise unprocessable(f"review event {event} requires a body or comment")
    commit_id = str(body.get("commit_id") or issue.pull.head_sha)
    submitted = event in FROM_GITEA
    review = Review(
        id=ctx.forge.new_id(),
        user=ctx.login,
        state=FROM_GITEA[event] if submitted else "PENDING",
        body=text,
        commit_id=commit_id,
        submitted_at=now_iso() if submitted else None,
    )
    issue.reviews.append(review)
    if submitted:
        pull_ops.review_submitted(issue, ctx.login)
        ctx.events.review(repo, issue, review)
    return json_response(request, review_shape(ctx, repo, issue, review))


def routes() -> list[BaseRoute]:
    r = API + "/repos/{owner}/{repo}"
    return [
        Route(r + "/issues/{index:int}/timeline", timeline, methods=["GET"]),
        Route(r + "/pulls/{index:int}/reviews", list_reviews, methods=["GET"]),
        Route(r + "/pulls/{index:int}/reviews", create_review, methods=["POST"]),
    ]
