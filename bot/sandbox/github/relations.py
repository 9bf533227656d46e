"""GitHub's sub-issues and issue dependencies (blocked-by/blocking) over the sandbox state.

Relations are stored by global issue id, as GitHub's API takes them: ``sub_issue_id`` and ``issue_id``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared import issue_ops as ops
from bot.sandbox.shared.plumbing import body_object, json_response, not_found, paginate, validation_failed
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
        ids: list[int] = getattr(issue, relation)
        new = other[1].id not in ids
        # A parent's `updated_at` stays as it was when a sub-issue is attached (observed on github.com:
        # neomjs/neo#7947, "adding a sub-issue on GitHub does not update the parent issue's updatedAt"), so
        # a catch-up that lists the issues updated since its window does not find the parent by it.
        ops.relate(ids, issue, other[1].id, touch=relation != "sub_issues")
        if relation == "sub_issues" and new:
            _announce_sub_issue(ctx, (repo, issue), other)
        answered = (repo, issue) if relation == "sub_issues" else other
        return json_response(request, ctx.shapes.rest_issue(*answered), status=201)

    return handle


@Ctx.on_repo("triage")
async def remove_sub_issue(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """DELETE …/issues/{number}/sub_issue with `sub_issue_id`: the sub-issue leaves the path's issue, which is
    answered (200, the parent issue: `issues/remove-sub-issue` in tests/fixtures/github/openapi-2026-
    subset.json); an issue that is not one of its sub-issues is 404 (a documented answer of the operation).
    The parent's `updated_at` stays, as when one is attached."""
    issue = ctx.lookup(repo.issues, ctx.int_param("number"))
    other = ops.by_id(ctx.forge, (await body_object(request)).get("sub_issue_id"))
    if other is None or other[1].id not in issue.sub_issues:
        raise not_found()
    issue.sub_issues.remove(other[1].id)
    _announce_sub_issue(ctx, (repo, issue), other, added=False)
    return json_response(request, ctx.shapes.rest_issue(repo, issue))


def _announce_sub_issue(
    ctx: Ctx, parent: tuple[Repo, Issue], child: tuple[Repo, Issue], *, added: bool = True
) -> None:
    """GitHub's `sub_issues` webhook (docs.github.com/en/webhooks/webhook-events-and-payloads#sub_issues:
    "This event occurs when there is activity relating to sub-issues"), which describes the link from each
    side: `sub_issue_added` ("A sub-issue was added to an issue") to the parent's repository, with
    `sub_issue_repo`, and `parent_issue_added` ("A parent issue was added to an issue") to the sub-issue's,
    with `parent_issue_repo` — the schemas `webhook-sub-issues-sub-issue-added` and
    `webhook-sub-issues-parent-issue-added` of GitHub's REST description (octokit/openapi-webhooks
    `packages/openapi-webhooks-types/types.d.ts`); issues and repositories in their REST shapes
    (tests/fixtures/github/webhooks/sub_issues/). A Gitea-flavoured repository sends nothing: Gitea has no
    sub-issues. ``added``: False for the same pair when the link is removed (`sub_issue_removed`,
    `parent_issue_removed`: the schemas `webhook-sub-issues-sub-issue-removed` and
    `webhook-sub-issues-parent-issue-removed`, the same fields)."""
    (parent_repo, parent_issue), (child_repo, child_issue) = parent, child
    how = "added" if added else "removed"
    link: dict[str, Any] = {
        "sub_issue_id": child_issue.id,
        "sub_issue": ctx.shapes.rest_issue(child_repo, child_issue),
        "parent_issue_id": parent_issue.id,
        "parent_issue": ctx.shapes.rest_issue(parent_repo, parent_issue),
    }
    parent_side, child_side = ctx.shapes.repo(parent_repo), ctx.shapes.repo(child_repo)
    ctx.emit(parent_repo, "sub_issues", f"sub_issue_{how}", **link, sub_issue_repo=child_side)
    ctx.emit(child_repo, "sub_issues", f"parent_issue_{how}", **link, parent_issue_repo=parent_side)


@Ctx.on_repo()
async def list_blocking(request: Request, ctx: Ctx, repo: Repo) -> Response:
    issue = ctx.lookup(repo.issues, ctx.int_param("number"))
    return _answer(request, ctx, ops.blocked_by(ctx.forge, issue))


def routes(r: str) -> list[BaseRoute]:
    i = r + "/issues/{number:int}"
    return [
        Route(i + "/sub_issues", _lister("sub_issues"), methods=["GET"]),
        Route(i + "/sub_issues", _adder("sub_issues", "sub_issue_id"), methods=["POST"]),
        Route(i + "/sub_issue", remove_sub_issue, methods=["DELETE"]),
        Route(i + "/dependencies/blocked_by", _lister("blocked_by"), methods=["GET"]),
        Route(i + "/dependencies/blocked_by", _adder("blocked_by", "issue_id"), methods=["POST"]),
        Route(i + "/dependencies/blocking", list_blocking, methods=["GET"]),
    ]
