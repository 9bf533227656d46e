"""GitHub's review requests on a pull request: request, list and withdraw them (REST "Review requests").

docs.github.com REST "Request reviewers for a pull request"
(`POST /repos/{o}/{r}/pulls/{n}/requested_reviewers`): 201 with the pull request (`pull-request-simple`);
422 "Review cannot be requested from pull request author."; 422 "Reviews may only be requested from
collaborators. One or more of the users or teams you specified is not a collaborator of the {owner}/{repo}
repository." (api.github.com's words, as quoted in peter-evans/create-pull-request#4138);
the caller needs triage access (an App: Pull requests write). "List
requested reviewers" answers `{"users": [...], "teams": [...]}`, "Remove requested reviewers" (`DELETE`)
200 with the pull request. A submitted review takes its reviewer off (``pull_ops.review_submitted``). Each
reviewer added or taken off sends `pull_request` `review_requested` / `review_request_removed` with
`requested_reviewer` (octokit webhook schemas; ``pull_ops.request_reviews``).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared import pull_ops
from bot.sandbox.shared.plumbing import ApiError, body_object, json_response
from bot.sandbox.shared.state import Issue, Repo

from .code_shapes import pull
from .context import Ctx


def _pull(ctx: Ctx, repo: Repo) -> Issue:
    found = repo.issues.get(ctx.int_param("pull_number"))
    if found is None or found.pull is None:
        raise ctx.not_found()
    return found


def _logins(body: dict[str, Any]) -> list[str]:
    given = body.get("reviewers")
    if not isinstance(given, list) or not all(isinstance(g, str) for g in given):
        raise ApiError(422, "Invalid request.\n\nFor 'properties/reviewers', is not an array of strings.")
    return [str(g) for g in given]


@Ctx.on_repo()
async def request_reviewers(request: Request, ctx: Ctx, repo: Repo) -> Response:
    issue = _pull(ctx, repo)
    ctx.require(repo, "triage")
    logins = _logins(await body_object(request))
    chosen: list[str] = []
    for login in logins:
        if login.casefold() == issue.user.casefold():
            raise ApiError(422, "Review cannot be requested from pull request author.")
        known = ctx.forge.user(login)
        if known is None or ctx.forge.role_of(repo, known.login) is None:
            raise ApiError(
                422,
                "Reviews may only be requested from collaborators. One or more of the users or teams you "
                f"specified is not a collaborator of the {repo.full_name} repository.",
            )
        chosen.append(known.login)
    pull_ops.request_reviews(ctx, repo, issue, chosen, add=True)
    return json_response(request, pull(ctx.shapes, repo, issue, full=False), status=201)


@Ctx.on_repo()
async def list_requested(request: Request, ctx: Ctx, repo: Repo) -> Response:
    issue = _pull(ctx, repo)
    assert issue.pull is not None
    users = [ctx.shapes.user(r) for r in issue.pull.requested_reviewers]
    return json_response(request, {"users": users, "teams": []})


@Ctx.on_repo()
async def remove_requested(request: Request, ctx: Ctx, repo: Repo) -> Response:
    issue = _pull(ctx, repo)
    ctx.require(repo, "triage")
    pull_ops.request_reviews(ctx, repo, issue, _logins(await body_object(request)), add=False)
    return json_response(request, pull(ctx.shapes, repo, issue, full=False))


def routes(r: str) -> list[BaseRoute]:
    p = r + "/pulls/{pull_number:int}/requested_reviewers"
    return [
        Route(p, request_reviewers, methods=["POST"]),
        Route(p, list_requested, methods=["GET"]),
        Route(p, remove_requested, methods=["DELETE"]),
    ]
