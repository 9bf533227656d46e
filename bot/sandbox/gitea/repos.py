"""Gitea's repository edits and renames, repositories by id, organisations' repositories, and branch
protections written through the API.

A renamed repository's old path answers 307 to the new one (``shared.addressing``: Gitea's
`RedirectToRepo`); Gitea sends no webhook for a rename (modules/structs/hook.go: `HookRepoAction` is only
created and deleted).
"""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared import rename_ops, repo_ops
from bot.sandbox.shared.plumbing import ApiError, body_object, json_response
from bot.sandbox.shared.state import Protection, Repo

from .branches import protection_shape
from .context import API, GCtx, gitea_page, unprocessable

# modules/structs EditRepoOption `Name` is bound `AlphaDashDot`.
_NAME = re.compile(r"[A-Za-z0-9._-]+")
# What the sandbox keeps of EditRepoOption besides name, description, private and default_branch.
SETTINGS = ("website", "has_issues", "has_wiki", "has_pull_requests", "has_projects", "archived", "template")


@GCtx.on_repo("admin")
async def edit_repo(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """PATCH /api/v1/repos/{o}/{r} — routers/api/v1/repo/repo.go Edit (reqAdmin): `name` renames it
    (updateBasicProperties → ChangeRepositoryName: a name in use is 422), then `description`, `private`,
    `default_branch` and the unit settings; 200 with the repository. Its old name then redirects."""
    body = await body_object(request)
    name = body.get("name")
    if name is not None and name != repo.name:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise unprocessable("[Name]: Must be valid alpha or numeric or dash(-_) or dot characters")
        if ctx.forge.repo(repo.owner, name) is not None:
            raise unprocessable(f"repository already exists [uname: {repo.owner}, name: {name}]")
    branch = body.get("default_branch")
    if branch and f"refs/heads/{branch}" not in repo.refs:
        raise ApiError(404, f"branch does not exist [name: {branch}]")
    if isinstance(name, str) and name != repo.name:
        rename_ops.move(ctx.forge, repo, repo.owner, name)
    if body.get("description") is not None:
        repo.description = str(body["description"])
    if body.get("private") is not None:
        repo.private = bool(body["private"])
    if branch:
        repo.default_branch = str(branch)
    repo.settings.update({k: body[k] for k in SETTINGS if body.get(k) is not None})
    return json_response(request, ctx.shapes.repo(repo, ctx.login))


async def repo_by_id(request: Request) -> Response:
    """GET /api/v1/repositories/{id} — routers/api/v1/repo/repo.go GetByID: the repository, or 404 for one
    the caller may not read (Gitea serves only this one route by id)."""
    ctx = GCtx(request)
    repo = ctx.forge.repo_by_id(ctx.int_param("id"))
    if repo is None or not ctx.forge.can(repo, ctx.login, "pull"):
        raise ctx.not_found()
    return json_response(request, ctx.shapes.repo(repo, ctx.login))


async def create_org_repo(request: Request) -> Response:
    """POST /api/v1/orgs/{org}/repos — routers/api/v1/repo/repo.go CreateOrgRepo: the organisation's owners
    (the sandbox has no teams that may create) — others 403; 201 with the repository; a name in use 409."""
    ctx = GCtx(request)
    org = ctx.forge.user(ctx.param("org"))
    if org is None or org.type != "Organization":
        raise ctx.not_found()
    if ctx.forge.membership(org.login, ctx.login) != "admin":
        raise ApiError(403, "Given user is not allowed to create repository in organization.")
    body = await body_object(request)
    name = repo_ops.required_name(ctx, body.get("name"), "Repository", "name")
    if ctx.forge.repo(org.login, name) is not None:
        raise ApiError(409, "The repository with the same name already exists.")
    made = repo_ops.create_repo(ctx, name, body, "gitea", f"{ctx.login}@noreply.sandbox", owner=org.login)
    return json_response(request, ctx.shapes.repo(made, ctx.login), status=201)


# routers/api/v1/api.go mounts `/orgs/{org}/teams/search` under reqOrgMembership() and
# `/teams/{teamid}/members`
# under reqOrgMembership() too: a caller outside the organisation is refused 403 "Must be an organization
# member" (routers/api/v1/api.go reqOrgMembership). SearchTeam (routers/api/v1/org/team.go) answers
# {"ok": true, "data": [Team]}, the teams whose name contains `q` (case-insensitively); GetTeamMembers the
# team's users. An unknown team id is a 404.


def _org_member(ctx: GCtx, org: str) -> None:
    if ctx.forge.membership(org, ctx.login) is None:
        raise ApiError(403, "Must be an organization member")


async def search_teams(request: Request) -> Response:
    ctx = GCtx(request)
    org = ctx.forge.user(ctx.param("org"))
    if org is None or org.type != "Organization":
        raise ctx.not_found()
    _org_member(ctx, org.login)
    q = (request.query_params.get("q") or "").casefold()
    data = [
        {
            "id": team_id,
            "name": name,
            "description": "",
            "organization": ctx.shapes.user(org.login),
            "includes_all_repositories": False,
            "permission": "read",
            "units": ["repo.code"],
            "units_map": {"repo.code": "read"},
            "can_create_org_repo": False,
        }
        for team_id, name, _ in org.teams.values()
        if q in name.casefold()
    ]
    return json_response(request, {"ok": True, "data": data})


async def team_members(request: Request) -> Response:
    ctx = GCtx(request)
    wanted = ctx.int_param("teamid")
    for org in ctx.forge.users.values():
        for team_id, _, members in org.teams.values():
            if team_id == wanted:
                _org_member(ctx, org.login)
                chunk, headers = gitea_page(request, [ctx.shapes.user(login) for login in members])
                return json_response(request, chunk, headers=headers)
    raise ctx.not_found()


# branch protections (repository admins: routers/api/v1/api.go mounts them under reqRepoAdmin) -------------


def _protection(body: dict[str, Any], rule: Protection | None = None) -> Protection:
    contexts = body.get("status_check_contexts")
    if contexts is not None and (
        not isinstance(contexts, list) or not all(isinstance(c, str) for c in contexts)
    ):
        raise unprocessable("[StatusCheckContexts]: must be a list of strings")
    made = rule.model_copy() if rule is not None else Protection()
    if contexts is not None:
        made.required_contexts = list(contexts)
    if body.get("enable_status_check") is False:
        made.required_contexts = []
    if body.get("block_on_outdated_branch") is not None:
        made.strict = bool(body["block_on_outdated_branch"])
    return made


@GCtx.on_repo("admin")
async def create_protection(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """POST /api/v1/repos/{o}/{r}/branch_protections — routers/api/v1/repo/branch.go CreateBranchProtection:
    `rule_name` (or the older `branch_name`) and the rule's options; 201 with the `BranchProtection`; a rule
    of that name already there 403 "Branch protection already exist". The sandbox keeps the required
    status checks (`enable_status_check`, `status_check_contexts`) and `block_on_outdated_branch`."""
    body = await body_object(request)
    name = body.get("rule_name") or body.get("branch_name")
    if not isinstance(name, str) or not name:
        raise unprocessable("[RuleName]: Required")
    if name in repo.protections:
        raise ApiError(403, "Branch protection already exist")
    repo.protections[name] = _protection(body)
    return json_response(request, protection_shape(repo, name, repo.protections[name]), status=201)


def _rule(ctx: GCtx, repo: Repo) -> tuple[str, Protection]:
    name = ctx.param("name")
    rule = repo.protections.get(name)
    if rule is None or rule.ruleset:
        raise ctx.not_found()
    return name, rule


@GCtx.on_repo("admin")
async def get_protection(request: Request, ctx: GCtx, repo: Repo) -> Response:
    name, rule = _rule(ctx, repo)
    return json_response(request, protection_shape(repo, name, rule))


@GCtx.on_repo("admin")
async def edit_protection(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """PATCH …/branch_protections/{name} — EditBranchProtection: the options given change; 200."""
    name, rule = _rule(ctx, repo)
    repo.protections[name] = _protection(await body_object(request), rule)
    return json_response(request, protection_shape(repo, name, repo.protections[name]))


@GCtx.on_repo("admin")
async def delete_protection(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """DELETE …/branch_protections/{name} — DeleteBranchProtection: 204, or 404 for no such rule."""
    name, _ = _rule(ctx, repo)
    del repo.protections[name]
    return Response(status_code=204)


def routes() -> list[BaseRoute]:
    r = API + "/repos/{owner}/{repo}"
    p = r + "/branch_protections/{name:path}"
    return [
        Route(r, edit_repo, methods=["PATCH"]),
        Route(API + "/repositories/{id:int}", repo_by_id, methods=["GET"]),
        Route(API + "/orgs/{org}/repos", create_org_repo, methods=["POST"]),
        Route(API + "/orgs/{org}/teams/search", search_teams, methods=["GET"]),
        Route(API + "/teams/{teamid}/members", team_members, methods=["GET"]),
        Route(r + "/branch_protections", create_protection, methods=["POST"]),
        Route(p, get_protection, methods=["GET"]),
        Route(p, edit_protection, methods=["PATCH"]),
        Route(p, delete_protection, methods=["DELETE"]),
    ]
