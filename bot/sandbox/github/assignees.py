"""GitHub's issue assignees: add, remove, and whether someone can be assigned (who may be: FORGE-FACTS
"Assignees", ``bot.sandbox.shared.assignee_ops``). Both writes answer 201 with the issue (REST description:
"Add assignees to an issue", "Remove assignees from an issue")."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared.assignee_ops import MAX_ASSIGNEES, canonical, github_assignable, set_assignees
from bot.sandbox.shared.plumbing import body_object, json_response, no_content
from bot.sandbox.shared.state import Issue, Repo

from .context import Ctx


def _issue(ctx: Ctx, repo: Repo) -> Issue:
    return ctx.lookup(repo.issues, ctx.int_param("number"))


def _logins(raw: object) -> list[str]:
    return [str(a) for a in raw] if isinstance(raw, list) else []


@Ctx.on_repo()
async def add_assignees(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """Those who cannot be assigned are dropped without a word; so is everything from a caller without
    triage access (like the other fields only triage may set)."""
    issue = _issue(ctx, repo)
    wanted = _logins((await body_object(request)).get("assignees"))
    if ctx.allowed(repo, "triage"):
        have = list(issue.assignees)
        for login in wanted:
            if len(have) >= MAX_ASSIGNEES:
                break
            known = {a.casefold() for a in have}
            if login.casefold() not in known and github_assignable(ctx.forge, repo, issue, login):
                have.append(canonical(ctx.forge, login))
        set_assignees(ctx, repo, issue, have)
    return json_response(request, ctx.shapes.rest_issue(repo, issue), status=201)


@Ctx.on_repo()
async def remove_assignees(request: Request, ctx: Ctx, repo: Repo) -> Response:
    issue = _issue(ctx, repo)
    gone = {a.casefold() for a in _logins((await body_object(request)).get("assignees"))}
    if ctx.allowed(repo, "triage"):
        set_assignees(ctx, repo, issue, [a for a in issue.assignees if a.casefold() not in gone])
    return json_response(request, ctx.shapes.rest_issue(repo, issue))


@Ctx.on_repo()
async def check_assignee(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """204 when ``assignee`` can be assigned to the issue, else 404."""
    if not github_assignable(ctx.forge, repo, _issue(ctx, repo), ctx.param("assignee")):
        raise ctx.not_found()
    return no_content()


def routes(r: str) -> list[BaseRoute]:
    i = r + "/issues/{number:int}/assignees"
    return [
        Route(i, add_assignees, methods=["POST"]),
        Route(i, remove_assignees, methods=["DELETE"]),
        Route(i + "/{assignee}", check_assignee, methods=["GET"]),
    ]
