"""GitHub's sub-issues and issue dependencies (blocked-by/blocking) over the sandbox state.

Relations are stored by global issue id, as GitHub's API takes them: ``sub_issue_id`` and ``issue_id``.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from .github_ctx import Ctx
from .plumbing import ApiError, body_object, json_response, paginate, validation_failed
from .state import Issue, Repo, now_iso


def _issue(ctx: Ctx, repo: Repo) -> Issue:
    issue = repo.issues.get(ctx.int_param("number"))
    if issue is None:
        raise ApiError(404, "Not Found")
    return issue


def _by_id(ctx: Ctx, ident: object) -> tuple[Repo, Issue] | None:
    for repo in ctx.forge.repos.values():
        for issue in repo.issues.values():
            if issue.id == ident:
                return repo, issue
    return None


async def list_sub_issues(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo()
    parent = _issue(ctx, repo)
    found = [f for f in (_by_id(ctx, i) for i in parent.sub_issues) if f is not None]
    chunk, headers = paginate(request, found)
    return json_response(request, [ctx.shapes.rest_issue(r, i) for r, i in chunk], headers=headers)


async def add_sub_issue(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo("triage")
    parent = _issue(ctx, repo)
    child = _by_id(ctx, (await body_object(request)).get("sub_issue_id"))
    if child is None or child[1].id == parent.id:
        raise validation_failed("Issue", "sub_issue_id", "invalid")
    if child[1].id not in parent.sub_issues:
        parent.sub_issues.append(child[1].id)
        parent.updated_at = now_iso()
    return json_response(request, ctx.shapes.rest_issue(repo, parent), status=201)


async def list_blocked_by(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo()
    issue = _issue(ctx, repo)
    found = [f for f in (_by_id(ctx, i) for i in issue.blocked_by) if f is not None]
    chunk, headers = paginate(request, found)
    return json_response(request, [ctx.shapes.rest_issue(r, i) for r, i in chunk], headers=headers)


async def add_blocked_by(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo("triage")
    issue = _issue(ctx, repo)
    blocker = _by_id(ctx, (await body_object(request)).get("issue_id"))
    if blocker is None or blocker[1].id == issue.id:
        raise validation_failed("Issue", "issue_id", "invalid")
    if blocker[1].id not in issue.blocked_by:
        issue.blocked_by.append(blocker[1].id)
        issue.updated_at = now_iso()
    return json_response(request, ctx.shapes.rest_issue(*blocker), status=201)


async def list_blocking(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo()
    issue = _issue(ctx, repo)
    found = [(r, i) for r in ctx.forge.repos.values() for i in r.issues.values() if issue.id in i.blocked_by]
    chunk, headers = paginate(request, found)
    return json_response(request, [ctx.shapes.rest_issue(r, i) for r, i in chunk], headers=headers)


def routes(r: str) -> list[BaseRoute]:
    i = r + "/issues/{number:int}"
    return [
        Route(i + "/sub_issues", list_sub_issues, methods=["GET"]),
        Route(i + "/sub_issues", add_sub_issue, methods=["POST"]),
        Route(i + "/dependencies/blocked_by", list_blocked_by, methods=["GET"]),
        Route(i + "/dependencies/blocked_by", add_blocked_by, methods=["POST"]),
        Route(i + "/dependencies/blocking", list_blocking, methods=["GET"]),
    ]
