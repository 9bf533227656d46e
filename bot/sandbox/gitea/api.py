"""Gitea's API v1 over the sandbox state, at ``/api/v1/…``: what py-gitea and Steward's Gitea adapter use.

The state is the same as the GitHub API's; a repository made here (``POST /api/v1/user/repos``) is
Gitea-flavoured, so its webhooks are Gitea's. Auth is ``Authorization: token X`` (or ``Bearer``);
pagination is Gitea's ``page``/``limit`` (default 30, at most 50) with ``Link`` and ``X-Total-Count``;
errors are ``{"message", "url"}``. Permissions follow Gitea's access modes (read, write, admin, owner:
no triage, no maintain).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.gitea import (
    assignees,
    branches,
    code,
    issues,
    pins,
    repos,
    review_requests,
    search,
    timeline,
)
from bot.sandbox.shared import fork_ops, gitmodel, pull_ops, repo_ops
from bot.sandbox.shared.plumbing import ApiError, body_object, json_response
from bot.sandbox.shared.state import ROLE_ORDER, Hook, Repo, Role

from .context import API, GCtx, gitea_page, unprocessable

HOOK_TYPES = frozenset({"gitea", "forgejo", "gogs"})
ROLE_OF_ACCESS: dict[str, Role] = {"read": "pull", "write": "push", "admin": "admin"}


# users and repositories ---------------------------------------------------------------------------------


async def get_me(request: Request) -> Response:
    ctx = GCtx(request)
    return json_response(request, ctx.shapes.user(ctx.login))


async def update_settings(request: Request) -> Response:
    """PATCH /api/v1/user/settings — swagger `updateUserSettings` (routers/api/v1/user/settings.go
    UpdateUserSettings): `hide_activity` sets the caller's KeepActivityPrivate; answers the caller's
    `UserSettings` as one object (convert.User2UserSettings; the swagger's response says an array)."""
    ctx = GCtx(request)
    user = ctx.forge.user(ctx.login)
    if user is None:
        raise ApiError(404, "user does not exist")
    body = await body_object(request)
    if isinstance(body.get("hide_activity"), bool):
        user.hide_activity = body["hide_activity"]
    settings = {
        "full_name": user.name or "",
        "website": "",
        "description": "",
        "location": "",
        "language": "",
        "theme": "gitea-auto",
        "diff_view_style": "",
        "hide_email": False,
        "hide_activity": user.hide_activity,
    }
    return json_response(request, settings)


async def get_user(request: Request) -> Response:
    ctx = GCtx(request)
    _ = ctx.login
    user = ctx.forge.user(ctx.param("login"))
    if user is None:
        raise ApiError(404, "user redirect does not exist")
    return json_response(request, ctx.shapes.user(user.login))


async def list_my_repos(request: Request) -> Response:
    """GET /api/v1/user/repos — routers/api/v1/user/repo.go ``ListMyRepos`` ("list the repositories you own
    or have access to"): ``SearchRepository`` with the caller as ``OwnerID`` and ``Actor``, which takes the
    caller's own repositories and those they collaborate on; each with ``permissions`` (admin, push, pull)
    for the caller, ordered by name, paged by ``page``/``limit`` with ``X-Total-Count``."""
    ctx = GCtx(request)
    login = ctx.login
    mine = sorted(
        (
            r
            for r in ctx.forge.repos.values()
            if r.flavor == "gitea" and ctx.forge.role_of(r, login) is not None
        ),
        key=lambda r: r.name.casefold(),
    )
    chunk, headers = gitea_page(request, mine)
    return json_response(request, [ctx.shapes.repo(r, login) for r in chunk], headers=headers)


async def create_repo(request: Request) -> Response:
    ctx = GCtx(request)
    owner = ctx.login
    body = await body_object(request)
    name = repo_ops.required_name(ctx, body.get("name"), "Repository", "name")
    if ctx.forge.repo(owner, name) is not None:
        raise ApiError(409, "The repository with the same name already exists.")
    repo = repo_ops.create_repo(ctx, name, body, "gitea", f"{owner}@noreply.sandbox")
    return json_response(request, ctx.shapes.repo(repo, owner), status=201)


@GCtx.on_repo()
async def get_repo(request: Request, ctx: GCtx, repo: Repo) -> Response:
    return json_response(request, ctx.shapes.repo(repo, ctx.login))


@GCtx.on_repo()
async def create_fork(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """POST /api/v1/repos/{o}/{r}/forks — routers/api/v1/repo/fork.go CreateFork: 202 with the fork
    (`fork: true`, `parent`), owned by the caller; `name` renames it; a name in use 409."""
    body = await body_object(request)
    made = fork_ops.fork(ctx, repo, str(body["name"]) if body.get("name") else None)
    return json_response(request, ctx.shapes.repo(made, ctx.login), status=202)


@GCtx.on_repo("admin")
async def delete_repo(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """DELETE /api/v1/repos/{o}/{r} — routers/api/v1/repo/repo.go Delete (reqOwner: 403 below): 204. Pull
    requests from it (a fork) then answer `head.repo_id` -1, `head.repo` null (services/convert/pull.go)."""
    fork_ops.delete_repo(ctx, repo)
    return Response(status_code=204)


@GCtx.on_repo("admin")
async def put_collaborator(request: Request, ctx: GCtx, repo: Repo) -> Response:
    body = await body_object(request)
    role = ROLE_OF_ACCESS.get(str(body.get("permission", "write")))
    if role is None or role not in ROLE_ORDER:
        raise unprocessable("permission must be read, write or admin")
    user = ctx.forge.user(ctx.param("username"))
    if user is None:
        raise ApiError(422, "user does not exist")
    repo.collaborators[user.login] = role
    return Response(status_code=204)


@GCtx.on_repo()
async def collaborator_permission(request: Request, ctx: GCtx, repo: Repo) -> Response:
    # Gitea `routers/api/v1/repo/collaborators.go` GetRepoPermissions: only a site admin, an admin of the
    # repository or the user asking about themselves may read a permission (FORGE-FACTS, "Permissions").
    # The sandbox has no site admins.
    asked = ctx.param("username")
    if asked.casefold() != ctx.login.casefold() and not ctx.allowed(repo, "admin"):
        raise ApiError(
            403,
            "Only admins can query all permissions, repo admins can query all repo permissions, "
            "collaborators can query only their own",
        )
    user = ctx.forge.user(ctx.param("username"))
    if user is None:
        raise ApiError(404, "user does not exist")
    return json_response(request, ctx.shapes.permission(repo, user.login))


@GCtx.on_repo()
async def list_collaborators(request: Request, ctx: GCtx, repo: Repo) -> Response:
    # Gitea `routers/api/v1/repo/collaborators.go` ListCollaborators (reqAnyRepoReader): the collaborators as
    # users, without their access (the owner is not a collaborator).
    logins = sorted(repo.collaborators, key=str.casefold)
    chunk, headers = gitea_page(request, logins)
    return json_response(request, [ctx.shapes.user(login) for login in chunk], headers=headers)


@GCtx.on_repo()
async def list_teams(request: Request, ctx: GCtx, repo: Repo) -> Response:
    # Gitea `routers/api/v1/repo/teams.go` ListTeams: 405 "repo is not owned by an organization" for a user's
    # repository. The sandbox has no organizations: every repository is a user's.
    raise ApiError(405, "repo is not owned by an organization")


# hooks ---------------------------------------------------------------------------------------------------


HOOK_REFUSALS = {"config": "config must be an object", "content_type": "Invalid content type"}


def _hook_from(body: dict[str, Any], hook: Hook) -> Hook:
    config = body.get("config") or {}
    return repo_ops.configure_hook(hook, body, config, lambda field: unprocessable(HOOK_REFUSALS[field]))


@GCtx.on_repo("admin")
async def create_hook(request: Request, ctx: GCtx, repo: Repo) -> Response:
    body = await body_object(request)
    kind = body.get("type")
    if kind not in HOOK_TYPES:
        raise unprocessable("Invalid hook type")
    config = body.get("config")
    if not isinstance(config, dict) or not config.get("url") or not config.get("content_type"):
        raise unprocessable("Missing config option: url and content_type are required")
    hook = _hook_from(body, Hook(id=ctx.forge.new_id(), url="", hook_type=str(kind), events=["push"]))
    hook.active = bool(body.get("active", False))
    repo.hooks[hook.id] = hook
    return json_response(request, ctx.shapes.hook(hook), status=201)


@GCtx.on_repo("admin")
async def list_hooks(request: Request, ctx: GCtx, repo: Repo) -> Response:
    chunk, headers = gitea_page(request, list(repo.hooks.values()))
    return json_response(request, [ctx.shapes.hook(h) for h in chunk], headers=headers)


def _hook(ctx: GCtx, repo: Repo) -> Hook:
    return ctx.lookup(repo.hooks, ctx.int_param("id"))


@GCtx.on_repo("admin")
async def get_hook(request: Request, ctx: GCtx, repo: Repo) -> Response:
    return json_response(request, ctx.shapes.hook(_hook(ctx, repo)))


@GCtx.on_repo("admin")
async def edit_hook(request: Request, ctx: GCtx, repo: Repo) -> Response:
    hook = _hook_from(await body_object(request), _hook(ctx, repo))
    return json_response(request, ctx.shapes.hook(hook))


@GCtx.on_repo("admin")
async def delete_hook(request: Request, ctx: GCtx, repo: Repo) -> Response:
    repo_ops.delete_hook(ctx, repo, _hook(ctx, repo))
    return Response(status_code=204)


# contents ---------------------------------------------------------------------------------------------------


@GCtx.on_repo()
async def get_contents(request: Request, ctx: GCtx, repo: Repo) -> Response:
    ref = request.query_params.get("ref") or repo.default_branch
    sha = gitmodel.resolve(repo, ref)
    if sha is None:
        raise ApiError(404, f"object does not exist [id: {ref}]")
    path = str(request.path_params.get("path", "")).strip("/")
    entry = gitmodel.lookup(repo, repo.commits[sha].tree, path)
    if entry is None:
        raise ApiError(404, "object does not exist")
    if entry.type == "blob":
        return json_response(request, ctx.shapes.content(repo, path, entry.sha, ref, sha))
    listing = []
    for child in repo.trees[entry.sha].entries:
        child_path = f"{path}/{child.name}" if path else child.name
        if child.type == "blob":
            shape = ctx.shapes.content(repo, child_path, child.sha, ref, sha)
            shape.update(content=None, encoding=None)
        else:
            shape = {"name": child.name, "path": child_path, "sha": child.sha, "type": "dir", "size": 0}
        listing.append(shape)
    return json_response(request, listing)


@GCtx.on_repo("push")
async def write_contents(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """POST creates a file, PUT updates one (with the blob `sha` it replaces); each is a commit and a push —
    onto `new_branch`, made from `branch`, when it is given (an existing one: 422). The answer's `commit` is
    a whole `FileCommitResponse` (services/repository/files/file.go GetFileCommitResponse: `html_url`,
    `author`, `committer`, `tree`, `parents` too)."""
    body = await body_object(request)
    path = str(request.path_params["path"]).strip("/")
    try:
        data = base64.b64decode(str(body.get("content", "")), validate=True)
    except (binascii.Error, ValueError):
        raise unprocessable("content must be base64") from None
    branch = str(body.get("branch") or repo.default_branch)
    head = repo.refs.get(f"refs/heads/{branch}")
    if head is None:
        raise ApiError(404, f"branch does not exist [name: {branch}]")
    new_branch = str(body.get("new_branch") or "")
    if new_branch and f"refs/heads/{new_branch}" in repo.refs:
        # routers/api/v1/repo/file.go handleChangeRepoFilesError: ErrBranchAlreadyExists is a 422
        raise unprocessable(f"branch already exists [name: {new_branch}]")
    files = gitmodel.flatten(repo, repo.commits[head].tree)
    current = files.get(path)
    if request.method == "POST" and current is not None:
        raise unprocessable(f"repository file already exists [path: {path}]")
    if request.method == "PUT":
        if current is None:
            raise ApiError(404, "object does not exist")
        if body.get("sha") != current[1]:
            # routers/api/v1/repo/file.go handleChangeRepoFilesError: ErrSHADoesNotMatch is a 422
            raise unprocessable(f"sha does not match [given: {body.get('sha')}, expected: {current[1]}]")
    blob = gitmodel.put_blob(repo, data)
    files[path] = (current[0] if current else "100644", blob)
    author, committer = code.signatures(ctx, body)
    message = str(body.get("message") or f"{'Add' if current is None else 'Update'} {path}")
    commit = gitmodel.make_commit(repo, gitmodel.write_tree(repo, files), [head], message, author, committer)
    target = new_branch or branch
    repo.refs[f"refs/heads/{target}"] = commit.sha
    pull_ops.pushed(ctx, repo, f"refs/heads/{target}", None if new_branch else head, commit.sha)
    out = {
        "content": ctx.shapes.content(repo, path, blob, target, commit.sha),
        "commit": code.file_commit(ctx, repo, commit.sha),
        "verification": None,
    }
    return json_response(request, out, status=201 if request.method == "POST" else 200)


def routes() -> list[BaseRoute]:
    r = API + "/repos/{owner}/{repo}"
    return [
        *search.routes(),
        Route(API + "/user", get_me, methods=["GET"]),
        Route(API + "/user/settings", update_settings, methods=["PATCH"]),
        Route(API + "/user/repos", create_repo, methods=["POST"]),
        Route(API + "/user/repos", list_my_repos, methods=["GET"]),
        Route(API + "/users/{login}", get_user, methods=["GET"]),
        Route(r, get_repo, methods=["GET"]),
        Route(r, delete_repo, methods=["DELETE"]),
        Route(r + "/forks", create_fork, methods=["POST"]),
        Route(r + "/collaborators", list_collaborators, methods=["GET"]),
        Route(r + "/teams", list_teams, methods=["GET"]),
        Route(r + "/collaborators/{username}", put_collaborator, methods=["PUT"]),
        Route(r + "/collaborators/{username}/permission", collaborator_permission, methods=["GET"]),
        Route(r + "/hooks", list_hooks, methods=["GET"]),
        Route(r + "/hooks", create_hook, methods=["POST"]),
        Route(r + "/hooks/{id:int}", get_hook, methods=["GET"]),
        Route(r + "/hooks/{id:int}", edit_hook, methods=["PATCH"]),
        Route(r + "/hooks/{id:int}", delete_hook, methods=["DELETE"]),
        *repos.routes(),
        *issues.routes(),
        *assignees.routes(),
        *pins.routes(),
        *timeline.routes(),
        *review_requests.routes(),
        *branches.routes(),
        *code.routes(),
        Route(r + "/contents/{path:path}", get_contents, methods=["GET"]),
        Route(r + "/contents/{path:path}", write_contents, methods=["POST", "PUT"]),
        Route(r + "/contents", get_contents, methods=["GET"]),
    ]
