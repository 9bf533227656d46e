"""GitHub's sub-issues and issue dependencies (blocked-by/blocking) over the sandbox state.

Relations are stored by global issue id, as GitHub's API takes them: ``sub_issue_id`` and ``issue_id``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared import issue_ops as ops
from bot.sandbox.shared.plumbing import body_object, json_response, paginate, validation_failed
from bot.sandbox.shared.state import Issue, Repo

from .context import Ctx

Handler = Callable[[Request], Awaitable[Response]]
# An issue's relation lists: its sub-issues, and the issues it is blocked by.
Relation = Literal["sub_issues", "blocked_by"]


def _answer(request: Request, ctx: Ctx, found: list[tuple[Repo, Issue]]) -> Response:
    chunk, headers = paginate(request, found)
    return json_response(request, [ctx.shapes.rest_issue(r, i) for r, i in chunk], headers=headers)


def _lister(relation: Relation) -> Handler:
    """GET the issues in one of the path's issue's relation lists."""

    @Ctx.on_repo()
    async def handle(request: Request, ctx: Ctx, repo: Repo) -> Response:
        issue = ctx.lookup(repo.issues, ctx.int_param("number"))
        return _answer(request, ctx, ops.all_by_id(ctx.forge, getattr(issue, relation)))

    return handle


def _adder(relation: Relation, field: str) -> Handler:
    """POST the issue whose global id is `field` into one of the path's issue's relation lists.

    A new sub-issue is answered with its parent, a new blocker with itself (as GitHub does)."""

    @Ctx.on_repo("triage")
    async def handle(request: Request, ctx: Ctx, repo: Repo) -> Response:
        issue = ctx.lookup(repo.issues, ctx.int_param("number"))
        other = ops.by_id(ctx.forge, (await body_object(request)).get(field))
        if other is None or other[1].id == issue.id:
            raise validation_failed("Issue", field, "invalid")
        ops.relate(getattr(issue, relation), issue, other[1].id)
        answered = (repo, issue) if relation == "sub_issues" else other
        return json_response(request, ctx.shapes.rest_issue(*answered), status=201)

    return handle


@Ctx.on_repo()
async def list_blocking(request: Request, ctx: Ctx, repo: Repo) -> Response:
    issue = ctx.lookup(repo.issues, ctx.int_param("number"))
    return _answer(request, ctx, ops.blocked_by(ctx.forge, issue))


def routes(r: str) -> list[BaseRoute]:
    i = r + "/issues/{number:int}"
    return [
        Route(i + "/sub_issues", _lister("sub_issues"), methods=["GET"]),
        Route(i + "/sub_issues", _adder("sub_issues", "sub_issue_id"), methods=["POST"]),
        Route(i + "/dependencies/blocked_by", _lister("blocked_by"), methods=["GET"]),
        Route(i + "/dependencies/blocked_by", _adder("blocked_by", "issue_id"), methods=["POST"]),
        Route(i + "/dependencies/blocking", list_blocking, methods=["GET"]),
    ]
