"""Gitea's assignees: `GET /repos/{o}/{r}/assignees` lists those who may be assigned (write access:
routers/api/v1/repo/collaborators.go ``GetAssignees`` → ``repo_model.GetRepoAssignees``), and an issue edit
naming anyone else fails whole (``bot.sandbox.shared.assignee_ops``)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared.assignee_ops import gitea_assignable
from bot.sandbox.shared.plumbing import ApiError, json_response
from bot.sandbox.shared.state import Repo, SandboxState

from .context import API, GCtx


def check_assignees(state: SandboxState, repo: Repo, logins: list[str], *, status: int = 500) -> list[str]:
    """``logins`` as Gitea takes them, or the error it answers: a user who does not exist or may not be
    assigned fails the whole edit with 500 (``EditIssue`` answers every ``UpdateAssignees`` error but a
    blocked user so), a new issue with 422 (``CreateIssue`` checks ``CanBeAssigned`` first)."""
    for login in logins:
        if state.user(login) is None:
            raise ApiError(status, f"Assignee does not exist: [name: {login}]")
        if not gitea_assignable(state, repo, login):
            raise ApiError(status, f"user does not have access to repo [user_id: 0, repo_name: {repo.name}]")
    return [state.user(login).login for login in logins]  # type: ignore[union-attr]


@GCtx.on_repo()
async def list_assignees(request: Request, ctx: GCtx, repo: Repo) -> Response:
    people = [repo.owner, *repo.collaborators]
    found = [ctx.shapes.user(p) for p in dict.fromkeys(people) if gitea_assignable(ctx.forge, repo, p)]
    return json_response(request, found)


def routes() -> list[BaseRoute]:
    return [Route(API + "/repos/{owner}/{repo}/assignees", list_assignees, methods=["GET"])]
