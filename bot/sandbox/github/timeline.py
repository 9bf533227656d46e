"""GitHub's record of who did what on an issue or pull request: issue events (``labeled``/``unlabeled``
with the ``actor``) and pull request reviews (with their ``pull_request_review`` webhook)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared import pull_ops
from bot.sandbox.shared.plumbing import ApiError, body_object, json_response, paginate
from bot.sandbox.shared.state import Issue, IssueEvent, Repo, Review, ReviewState, now_iso

from .code_shapes import review_shape
from .context import Ctx
from .ids import node_id

# POST /pulls/{n}/reviews `event` → the review's state (REST docs "Create a review for a pull request");
# no event leaves the review PENDING until it is submitted.
REVIEW_STATES: dict[str, ReviewState] = {
    "APPROVE": "APPROVED",
    "REQUEST_CHANGES": "CHANGES_REQUESTED",
    "COMMENT": "COMMENTED",
}


_NODE_TYPES = {
    "labeled": "LabeledEvent",
    "unlabeled": "UnlabeledEvent",
    "milestoned": "MilestonedEvent",
    "demilestoned": "DemilestonedEvent",
}


def _event_base(ctx: Ctx, repo: Repo, ident: int, kind: str, event: IssueEvent) -> dict[str, Any]:
    return {
        "id": ident,
        "node_id": node_id(_NODE_TYPES[kind], ident),
        "url": f"{ctx.base}/repos/{repo.full_name}/issues/events/{ident}",
        "actor": ctx.shapes.user(event.actor),
        "event": kind,
        "commit_id": None,
        "commit_url": None,
        "created_at": event.created_at,
        "performed_via_github_app": ctx.shapes._via_app(event.via_app),
    }


def issue_events(ctx: Ctx, repo: Repo, issue: Issue, event: IssueEvent) -> list[dict[str, Any]]:
    """The REST events of one change ("issue-event-for-issue"): a `labeled-issue-event` /
    `unlabeled-issue-event` (`label: {name, color}`, the name the label had then), or for a milestone change
    a `demilestoned-issue-event` for the milestone left and a `milestoned-issue-event` for the one joined —
    each with `milestone: {title}` only, the title it had then (rest-api-description, components/schemas
    "milestoned-issue-event"; GraphQL's MilestonedEvent likewise has only `milestoneTitle`)."""
    if event.event != "milestone":
        label = {"label": {"name": event.label, "color": event.color}}
        return [{**_event_base(ctx, repo, event.id, event.event, event), **label}]
    out = []
    if event.old_milestone is not None:
        out.append(
            {
                **_event_base(ctx, repo, event.id, "demilestoned", event),
                "milestone": {"title": event.old_title},
            }
        )
    if event.milestone is not None:
        ident = event.pair_id if event.old_milestone is not None else event.id
        out.append(
            {**_event_base(ctx, repo, ident, "milestoned", event), "milestone": {"title": event.title}}
        )
    return out


@Ctx.on_repo()
async def list_issue_events(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """GET /repos/{o}/{r}/issues/{n}/events — docs.github.com "List issue events" (oldest first, paged)."""
    issue = ctx.lookup(repo.issues, ctx.int_param("issue_number"))
    shaped = [one for e in issue.events for one in issue_events(ctx, repo, issue, e)]
    chunk, headers = paginate(request, shaped)
    return json_response(request, chunk, headers=headers)


# reviews ----------------------------------------------------------------------------------------------


def _pull(ctx: Ctx, repo: Repo) -> Issue:
    found = repo.issues.get(ctx.int_param("pull_number"))
    if found is None or found.pull is None:
        raise ctx.not_found()
    return found


def _unprocessable(message: str) -> ApiError:
    # GitHub's wording for a review it refuses: {"message": "Unprocessable Entity", "errors": [text]}.
    return ApiError(422, "Unprocessable Entity", [message])


@Ctx.on_repo()
async def create_review(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """POST /repos/{o}/{r}/pulls/{n}/reviews — docs.github.com "Create a review for a pull request": 200
    with the review; `event` APPROVE / REQUEST_CHANGES / COMMENT (none: PENDING); `body` required for the
    last two; the pull request's author can neither approve nor request changes (422 "Can not approve your
    own pull request"); `commit_id` defaults to the head. Sends `pull_request_review` `submitted`."""
    issue = _pull(ctx, repo)
    assert issue.pull is not None
    if ctx.via_app is not None:
        ctx.require(repo, "push")  # an App needs Pull requests: write
    body = await body_object(request)
    event = body.get("event")
    text = body.get("body") or ""
    if event is not None and event not in REVIEW_STATES:
        raise _unprocessable(f"Invalid value for event: {event}")
    if event in ("REQUEST_CHANGES", "COMMENT") and not text:
        raise _unprocessable(f"Review Can not {event.lower().replace('_', ' ')} without a body")
    if event in ("APPROVE", "REQUEST_CHANGES") and issue.user == ctx.login:
        verb = "approve" if event == "APPROVE" else "request changes on"
        raise _unprocessable(f"Can not {verb} your own pull request")
    commit_id = body.get("commit_id") or issue.pull.head_sha
    if commit_id not in repo.commits:
        raise _unprocessable("Commit is not part of the pull request")
    ctx.check_body("PullRequestReview", text)
    review = Review(
        id=ctx.forge.new_id(),
        user=ctx.login,
        state=REVIEW_STATES[event] if event else "PENDING",
        body=text,
        commit_id=commit_id,
        submitted_at=now_iso() if event else None,
        via_app=ctx.via_app,
    )
    issue.reviews.append(review)
    if event:
        pull_ops.review_submitted(issue, ctx.login)
        ctx.events.review(repo, issue, review)
    return json_response(request, review_shape(ctx.shapes, repo, issue, review))


@Ctx.on_repo()
async def list_reviews(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """GET /repos/{o}/{r}/pulls/{n}/reviews — docs.github.com "List reviews for a pull request",
    chronological; another user's pending review is not listed."""
    issue = _pull(ctx, repo)
    shown = [r for r in issue.reviews if r.state != "PENDING" or r.user == ctx.login]
    chunk, headers = paginate(request, shown)
    return json_response(request, [review_shape(ctx.shapes, repo, issue, r) for r in chunk], headers=headers)


@Ctx.on_repo()
async def dismiss_review(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """PUT /repos/{o}/{r}/pulls/{n}/reviews/{id}/dismissals — docs.github.com "Dismiss a review for a pull
    request": `message` required; 200 with the review, now DISMISSED; sends `pull_request_review`
    `dismissed` (octokit payload-schemas `pull_request_review/dismissed`, the review's state `dismissed`).
    Write access; only an approval or a request for changes is dismissed (422 otherwise: wording not
    checked)."""
    issue = _pull(ctx, repo)
    ctx.require(repo, "push")
    review = next((r for r in issue.reviews if r.id == ctx.int_param("review_id")), None)
    if review is None:
        raise ctx.not_found()
    body = await body_object(request)
    if not isinstance(body.get("message"), str):
        raise ApiError(422, 'Invalid request.\n\n"message" wasn\'t supplied.')
    if review.state not in ("APPROVED", "CHANGES_REQUESTED"):
        raise _unprocessable(f"Can not dismiss a {review.state.lower()} pull request review")
    review.state = "DISMISSED"
    ctx.events.review(repo, issue, review, "dismissed")
    return json_response(request, review_shape(ctx.shapes, repo, issue, review))


def routes(r: str) -> list[BaseRoute]:
    return [
        Route(r + "/issues/{issue_number:int}/events", list_issue_events, methods=["GET"]),
        Route(r + "/pulls/{pull_number:int}/reviews", list_reviews, methods=["GET"]),
        Route(r + "/pulls/{pull_number:int}/reviews", create_review, methods=["POST"]),
        Route(
            r + "/pulls/{pull_number:int}/reviews/{review_id:int}/dismissals", dismiss_review, methods=["PUT"]
        ),
    ]
