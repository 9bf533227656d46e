"""GitHub's repository settings, renames and transfers, and organisations' repositories.

A rename or a transfer keeps the repository's id; its old name answers with a redirect to
`/repositories/{id}` (``shared.addressing``) and a `repository` webhook says what happened (octokit/webhooks
`repository/renamed`, `repository/transferred`).
"""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared import rename_ops, repo_ops
from bot.sandbox.shared.plumbing import ApiError, body_object, json_response, paginate, validation_failed
from bot.sandbox.shared.state import Repo

from . import repo_settings
from .context import Ctx

# The characters a repository name may hold (the sandbox refuses others rather than rewrite them).
_NAME = re.compile(r"[A-Za-z0-9._-]+")
# What `repository.edited` reports a change of (octokit/webhooks `repository/edited.schema.json`).
_EDITED = ("description", "homepage", "default_branch")


def _require_admin(ctx: Ctx, repo: Repo) -> None:
    """docs.github.com REST "Update a repository" / "Transfer a repository": repository admins only
    (403 "Must have admin rights to Repository.", as "Delete a repository" words it)."""
    if ctx.via_app is not None and not ctx.allowed(repo, "admin"):
        raise ApiError(403, "Resource not accessible by integration")
    if not ctx.allowed(repo, "admin"):
        raise ApiError(403, "Must have admin rights to Repository.")


def _name_error(ctx: Ctx, owner: str, name: Any, repo: Repo | None) -> dict[str, Any] | None:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        return {"resource": "Repository", "code": "invalid", "field": "name"}
    taken = ctx.forge.repo(owner, name)
    if taken is not None and (repo is None or taken.id != repo.id):
        message = "name already exists on this account"
        return {"resource": "Repository", "code": "custom", "field": "name", "message": message}
    return None


@Ctx.on_repo()
async def update_repo(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """PATCH /repos/{o}/{r} — docs.github.com REST "Update a repository": the body's `name`, `description`,
    `private`/`visibility`, `default_branch` and settings (``repo_settings``); 200 with the repository as
    it is now. A new name renames it (octokit/fixtures `rename-repository`): `repository.renamed` is sent
    and the old name redirects. Other changes send `repository.edited` (description, homepage, default
    branch), `privatized`/`publicized`, `archived`/`unarchived`. A refused field: 422 naming each."""
    _require_admin(ctx, repo)
    body = await body_object(request)
    errors: list[dict[str, Any]] = []
    name = body.get("name")
    if name is not None and name != repo.name:
        found = _name_error(ctx, repo.owner, name, repo)
        if found is not None:
            errors.append(found)
    if "description" in body and body["description"] is not None and not isinstance(body["description"], str):
        errors.append({"resource": "Repository", "code": "invalid", "field": "description"})
    branch = body.get("default_branch")
    if branch is not None and f"refs/heads/{branch}" not in repo.refs:
        errors.append({"resource": "Repository", "code": "invalid", "field": "default_branch"})
    visibility = body.get("visibility")
    if visibility is not None and visibility not in ("public", "private"):
        errors.append({"resource": "Repository", "code": "invalid", "field": "visibility"})
    settings = {k: v for k, v in body.items() if k in repo_settings.DEFAULTS}
    errors += [
        {"resource": "Repository", "code": "invalid", "field": k}
        for k, v in settings.items()
        if repo_settings.invalid(k, v)
    ]
    if errors:
        raise ApiError(422, "Validation Failed", errors)
    before = ctx.shapes.repo(repo)
    was_private, was_archived = repo.private, repo_settings.setting(repo, "archived")
    if "description" in body:
        repo.description = body["description"]
    if branch is not None:
        repo.default_branch = str(branch)
    if "private" in body or visibility is not None:
        repo.private = visibility == "private" if visibility is not None else bool(body["private"])
    repo.settings.update(settings)
    if isinstance(name, str) and name != repo.name:
        old_name = repo.name
        rename_ops.move(ctx.forge, repo, repo.owner, name)
        ctx.emit(repo, "repository", "renamed", changes={"repository": {"name": {"from": old_name}}})
    after = ctx.shapes.repo(repo)
    edited = {k: {"from": before[k]} for k in _EDITED if before[k] != after[k]}
    if edited:
        ctx.emit(repo, "repository", "edited", changes=edited)
    if repo.private != was_private:
        ctx.emit(repo, "repository", "privatized" if repo.private else "publicized")
    archived = repo_settings.setting(repo, "archived")
    if archived != was_archived:
        ctx.emit(repo, "repository", "archived" if archived else "unarchived")
    return json_response(request, ctx.shapes.full_repo(repo, ctx.login))


@Ctx.on_repo()
async def transfer_repo(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """POST /repos/{o}/{r}/transfer — docs.github.com REST "Transfer a repository": 202 with the repository
    as it was ("the response will contain the original owner, and the transfer will continue
    asynchronously"); `new_name` renames it too. To an organisation the caller belongs to it moves at once;
    "a transfer request will need to be accepted by the new owner when transferring a personal repository
    to another user" — the sandbox keeps it waiting until ``POST /_sandbox/repos/{o}/{r}/transfer`` (the
    new owner's acceptance). Once moved, `repository.transferred` is sent and the old name redirects."""
    _require_admin(ctx, repo)
    body = await body_object(request)
    target = ctx.forge.user(str(body.get("new_owner") or ""))
    if target is None or target.type == "Bot":
        raise validation_failed("Repository", "new_owner", "invalid")
    name = body.get("new_name") or repo.name
    found = _name_error(ctx, target.login, name, None)
    if found is not None:
        raise ApiError(422, "Validation Failed", [found])
    shaped = ctx.shapes.repo(repo)
    if target.type == "Organization":
        if ctx.forge.membership(target.login, ctx.login) is None:
            raise validation_failed("Repository", "new_owner", "invalid")
        transfer(ctx, repo, target.login, str(name))
    else:
        repo.transfer_to = f"{target.login}/{name}"
    return json_response(request, shaped, status=202)


def transfer(ctx: Ctx, repo: Repo, owner: str, name: str) -> None:
    """Move `repo` to `owner` (as `name`) and say so: `repository.transferred`, its `changes.owner.from` the
    old owner as a `user` or an `organization` (octokit/webhooks `repository/transferred.schema.json`)."""
    old = ctx.forge.user(repo.owner)
    kind = "organization" if old is not None and old.type == "Organization" else "user"
    was = ctx.shapes.user(repo.owner)
    repo.transfer_to = None
    rename_ops.move(ctx.forge, repo, owner, name)
    ctx.emit(repo, "repository", "transferred", changes={"owner": {"from": {kind: was}}})


async def create_org_repo(request: Request) -> Response:
    """POST /orgs/{org}/repos — docs.github.com REST "Create an organization repository": 201 with the
    repository; the organisation's members may (its default `members_can_create_repositories`); others
    403; an unknown organisation 404; a name in use 422."""
    ctx = Ctx(request)
    org = ctx.forge.user(ctx.param("org"))
    if org is None or org.type != "Organization":
        raise ctx.not_found()
    if ctx.via_app is not None or ctx.forge.membership(org.login, ctx.login) is None:
        raise ApiError(403, "You need admin access to the organization before adding a repository to it.")
    body = await body_object(request)
    found = _name_error(ctx, org.login, body.get("name"), None)
    if found is not None:
        raise ApiError(422, "Repository creation failed.", [found])
    repo = repo_ops.create_repo(
        ctx, str(body["name"]), body, "github", f"{ctx.login}@users.noreply.sandbox", owner=org.login
    )
    return json_response(request, ctx.shapes.full_repo(repo, ctx.login), status=201)


async def team_members(request: Request) -> Response:
    """GET /orgs/{org}/teams/{team_slug}/members — docs.github.com REST "List team members": "the team must
    be visible to the authenticated user"; the sandbox's teams are `closed` (visible to every member of the
    organisation), so a caller outside it, an unknown team or organisation, all answer 404. Paginated."""
    ctx = Ctx(request)
    org = ctx.forge.user(ctx.param("org"))
    if org is None or org.type != "Organization" or ctx.forge.membership(org.login, ctx.login) is None:
        raise ctx.not_found()
    team = org.teams.get(ctx.param("team_slug").casefold())
    if team is None:
        raise ctx.not_found()
    chunk, headers = paginate(request, [ctx.shapes.user(login) for login in team[2]])
    return json_response(request, chunk, headers=headers)


def routes(r: str) -> list[BaseRoute]:
    return [
        Route(r, update_repo, methods=["PATCH"]),
        Route(r + "/transfer", transfer_repo, methods=["POST"]),
        Route("/orgs/{org}/repos", create_org_repo, methods=["POST"]),
        Route("/orgs/{org}/teams/{team_slug}/members", team_members, methods=["GET"]),
    ]
