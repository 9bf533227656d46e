"""GitHub's REST API over the sandbox state: users, repos, collaborators, hooks, and the route table."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.github import (
    apps,
    assignees,
    branches,
    ci,
    collaborators,
    git,
    graphql,
    issues,
    pulls,
    relations,
    repos,
    review_requests,
    search,
    timeline,
)
from bot.sandbox.shared import fork_ops, repo_ops
from bot.sandbox.shared.plumbing import (
    ApiError,
    body_object,
    json_response,
    no_content,
    paginate,
    validation_failed,
)
from bot.sandbox.shared.state import Flavor, Hook, Repo

from .context import Ctx


async def get_authenticated_user(request: Request) -> Response:
    ctx = Ctx(request)
    if ctx.via_app is not None:
        raise ApiError(403, "Resource not accessible by integration")
    return json_response(request, ctx.shapes.public_user(ctx.login))


async def list_my_repos(request: Request) -> Response:
    """GET /user/repos — "Lists repositories that the authenticated user has explicit permission (:read,
    :write, or :admin) to access": the ones they own, collaborate on or reach through an organisation
    (docs.github.com/en/rest/repos/repos#list-repositories-for-the-authenticated-user); each with
    ``permissions`` for the caller, sorted by ``full_name`` (the default ``sort``), paged by
    ``page``/``per_page``. An installation token is refused (403 "Resource not accessible by integration"):
    an App lists its repositories with ``GET /installation/repositories``."""
    ctx = Ctx(request)
    if ctx.via_app is not None:
        raise ApiError(403, "Resource not accessible by integration")
    login = ctx.login
    mine = sorted(
        (
            r
            for r in ctx.forge.repos.values()
            if r.flavor == "github" and ctx.forge.role_of(r, login) is not None
        ),
        key=lambda r: r.full_name.casefold(),
    )
    chunk, headers = paginate(request, mine)
    return json_response(request, [ctx.shapes.repo(r, login) for r in chunk], headers=headers)


async def get_user(request: Request) -> Response:
    ctx = Ctx(request)
    _ = ctx.login
    user = ctx.forge.user(ctx.param("login"))
    if user is None:
        raise ctx.not_found()
    return json_response(request, ctx.shapes.public_user(user.login))


async def create_repo(request: Request) -> Response:
    ctx = Ctx(request)
    owner = ctx.login
    if ctx.via_app is not None:
        raise ApiError(403, "Resource not accessible by integration")
    body = await body_object(request)
    name = repo_ops.required_name(ctx, body.get("name"), "Repository", "name")
    if ctx.forge.repo(owner, name) is not None:
        raise validation_failed("Repository", "name", "custom", "name already exists on this account")
    flavor: Flavor = "gitea" if body.get("sandbox_flavor") == "gitea" else "github"
    repo = repo_ops.create_repo(ctx, name, body, flavor, f"{owner}@users.noreply.sandbox")
    return json_response(request, ctx.shapes.full_repo(repo, owner), status=201)


@Ctx.on_repo()
async def get_repo(request: Request, ctx: Ctx, repo: Repo) -> Response:
    return json_response(request, ctx.shapes.full_repo(repo, ctx.login))


@Ctx.on_repo()
async def create_fork(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """POST /repos/{o}/{r}/forks — docs.github.com REST "Create a fork": 202 with the fork (`fork: true`,
    `parent`, `source`), owned by the caller (`name` renames it; an existing fork is answered again).
    Apps cannot fork into a user account (403)."""
    if ctx.via_app is not None:
        raise ApiError(403, "Resource not accessible by integration")
    body = await body_object(request)
    made = fork_ops.fork(ctx, repo, str(body["name"]) if body.get("name") else None)
    return json_response(request, ctx.shapes.full_repo(made, ctx.login), status=202)


@Ctx.on_repo()
async def delete_repo(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """DELETE /repos/{o}/{r} — docs.github.com REST "Delete a repository": 204 for admins, 403 "Must have
    admin rights to Repository." otherwise. Pull requests from it (a fork) then answer `head.repo` null."""
    if not ctx.allowed(repo, "admin"):
        raise ApiError(403, "Must have admin rights to Repository.")
    fork_ops.delete_repo(ctx, repo)
    return no_content()


def _hook_from(body: dict[str, Any], hook: Hook) -> Hook:
    config = body.get("config", {})
    repo_ops.configure_hook(hook, body, config, lambda field: validation_failed("Hook", field, "invalid"))
    if "insecure_ssl" in config:
        hook.insecure_ssl = str(config["insecure_ssl"])
    return hook


@Ctx.on_repo("admin")
async def create_hook(request: Request, ctx: Ctx, repo: Repo) -> Response:
    body = await body_object(request)
    if not isinstance(body.get("config"), dict) or not body["config"].get("url"):
        raise validation_failed("Hook", "url", "missing_field")
    hook = _hook_from(body, Hook(id=ctx.forge.new_id(), url=""))
    repo.hooks[hook.id] = hook
    shape = ctx.shapes.hook(repo, hook)
    ping = {
        "zen": "Keep it logically awesome.",
        "hook_id": hook.id,
        "hook": shape,
        "repository": ctx.shapes.repo(repo),
        "sender": ctx.shapes.user(ctx.login),
    }
    ctx.sandbox.deliverer.enqueue(hook, "ping", None, ping, repo.full_name)
    return json_response(request, shape, status=201)


@Ctx.on_repo("admin")
async def list_hooks(request: Request, ctx: Ctx, repo: Repo) -> Response:
    chunk, headers = paginate(request, list(repo.hooks.values()))
    return json_response(request, [ctx.shapes.hook(repo, h) for h in chunk], headers=headers)


def _hook(ctx: Ctx, repo: Repo) -> Hook:
    return ctx.lookup(repo.hooks, ctx.int_param("hook_id"))


@Ctx.on_repo("admin")
async def get_hook(request: Request, ctx: Ctx, repo: Repo) -> Response:
    return json_response(request, ctx.shapes.hook(repo, _hook(ctx, repo)))


@Ctx.on_repo("admin")
async def update_hook(request: Request, ctx: Ctx, repo: Repo) -> Response:
    hook = _hook_from(await body_object(request), _hook(ctx, repo))
    return json_response(request, ctx.shapes.hook(repo, hook))


@Ctx.on_repo("admin")
async def delete_hook(request: Request, ctx: Ctx, repo: Repo) -> Response:
    repo_ops.delete_hook(ctx, repo, _hook(ctx, repo))
    return no_content()


R = "/repos/{owner}/{repo}"


def routes() -> list[BaseRoute]:
    return [
        Route("/user", get_authenticated_user, methods=["GET"]),
        Route("/user/repos", create_repo, methods=["POST"]),
        Route("/user/repos", list_my_repos, methods=["GET"]),
        Route("/users/{login}", get_user, methods=["GET"]),
        Route(R, get_repo, methods=["GET"]),
        Route(R, delete_repo, methods=["DELETE"]),
        Route(R + "/forks", create_fork, methods=["POST"]),
        *collaborators.routes(R),
        *repos.routes(R),
        Route(R + "/hooks", list_hooks, methods=["GET"]),
        Route(R + "/hooks", create_hook, methods=["POST"]),
        Route(R + "/hooks/{hook_id:int}", get_hook, methods=["GET"]),
        Route(R + "/hooks/{hook_id:int}", update_hook, methods=["PATCH"]),
        Route(R + "/hooks/{hook_id:int}", delete_hook, methods=["DELETE"]),
        *issues.routes(R),
        *assignees.routes(R),
        *relations.routes(R),
        *pulls.routes(R),
        *timeline.routes(R),
        *review_requests.routes(R),
        *branches.routes(R),
        # before git's /commits/{ref:path}, which would take /commits/{ref}/check-runs
        *ci.routes(R),
        *git.routes(R),
        *apps.routes(R),
        *graphql.routes(),
        *search.routes(),
    ]
