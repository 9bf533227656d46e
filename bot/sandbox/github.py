"""GitHub's REST API over the sandbox state: users, repos, collaborators, hooks, and the route table."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from . import github_apps, github_git, github_issues, github_relations, gitmodel
from .github_ctx import Ctx
from .plumbing import ApiError, body_object, json_response, no_content, paginate, validation_failed
from .state import ROLE_ORDER, Hook, Repo, Role, Signature, now_iso

PERMISSION_OF_ROLE: dict[Role, tuple[str, str]] = {
    "admin": ("admin", "admin"),
    "maintain": ("write", "maintain"),
    "push": ("write", "write"),
    "triage": ("read", "triage"),
    "pull": ("read", "read"),
}
ROLE_ALIASES: dict[str, Role] = {"read": "pull", "write": "push"}


async def get_authenticated_user(request: Request) -> Response:
    ctx = Ctx(request)
    if ctx.via_app is not None:
        raise ApiError(403, "Resource not accessible by integration")
    return json_response(request, ctx.shapes.public_user(ctx.login))


async def get_user(request: Request) -> Response:
    ctx = Ctx(request)
    _ = ctx.login
    user = ctx.forge.user(ctx.param("login"))
    if user is None:
        raise ApiError(404, "Not Found")
    return json_response(request, ctx.shapes.public_user(user.login))


async def create_repo(request: Request) -> Response:
    ctx = Ctx(request)
    owner = ctx.login
    if ctx.via_app is not None:
        raise ApiError(403, "Resource not accessible by integration")
    body = await body_object(request)
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        raise validation_failed("Repository", "name", "missing_field")
    if ctx.forge.repo(owner, name) is not None:
        raise validation_failed("Repository", "name", "custom", "name already exists on this account")
    flavor = body.get("sandbox_flavor", "github")
    repo = Repo(
        id=ctx.forge.new_id(),
        owner=ctx.forge.ensure_user(owner).login,
        name=name,
        flavor=flavor if flavor in ("github", "gitea") else "github",
        description=body.get("description"),
        private=bool(body.get("private", False)),
        default_branch=str(body.get("default_branch") or "main"),
    )
    author = Signature(name=owner, email=f"{owner}@users.noreply.sandbox")
    gitmodel.init_repo(repo, author)
    repo.pushed_at = now_iso()
    ctx.forge.add_repo(repo)
    return json_response(request, ctx.shapes.full_repo(repo, owner), status=201)


async def get_repo(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo()
    return json_response(request, ctx.shapes.full_repo(repo, ctx.login))


async def put_collaborator(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo("admin")
    body = await body_object(request)
    wanted = str(body.get("permission", "push"))
    role = ROLE_ALIASES.get(wanted, wanted)
    if role not in ROLE_ORDER:
        raise validation_failed("Repository", "permission", "invalid")
    user = ctx.forge.user(ctx.param("username"))
    if user is None:
        raise ApiError(404, "Not Found")
    repo.collaborators[user.login] = role
    return no_content()


async def collaborator_permission(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo("push")
    user = ctx.forge.user(ctx.param("username"))
    if user is None:
        raise ApiError(404, f"{ctx.param('username')} is not a user")
    role = ctx.forge.role_of(repo, user.login)
    if role is None:
        permission = role_name = "none" if repo.private else "read"
    else:
        permission, role_name = PERMISSION_OF_ROLE[role]
    person = {**ctx.shapes.user(user.login), "role_name": role_name}
    return json_response(request, {"permission": permission, "role_name": role_name, "user": person})


def _hook_from(body: dict[str, Any], hook: Hook) -> Hook:
    config = body.get("config", {})
    if not isinstance(config, dict):
        raise validation_failed("Hook", "config", "invalid")
    if "url" in config:
        hook.url = str(config["url"])
    if "content_type" in config:
        if config["content_type"] not in ("json", "form"):
            raise validation_failed("Hook", "content_type", "invalid")
        hook.content_type = config["content_type"]
    if "secret" in config:
        hook.secret = str(config["secret"]) or None
    if "insecure_ssl" in config:
        hook.insecure_ssl = str(config["insecure_ssl"])
    if "events" in body:
        hook.events = [str(e) for e in body["events"]]
    if "active" in body:
        hook.active = bool(body["active"])
    hook.updated_at = now_iso()
    return hook


async def create_hook(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo("admin")
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


async def list_hooks(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo("admin")
    chunk, headers = paginate(request, list(repo.hooks.values()))
    return json_response(request, [ctx.shapes.hook(repo, h) for h in chunk], headers=headers)


def _hook(ctx: Ctx, repo: Repo) -> Hook:
    hook = repo.hooks.get(ctx.int_param("hook_id"))
    if hook is None:
        raise ApiError(404, "Not Found")
    return hook


async def get_hook(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo("admin")
    return json_response(request, ctx.shapes.hook(repo, _hook(ctx, repo)))


async def update_hook(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo("admin")
    hook = _hook_from(await body_object(request), _hook(ctx, repo))
    return json_response(request, ctx.shapes.hook(repo, hook))


async def delete_hook(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo("admin")
    hook = _hook(ctx, repo)
    del repo.hooks[hook.id]
    ctx.sandbox.deliverer.forget_hook(hook.id)
    return no_content()


R = "/repos/{owner}/{repo}"


def routes() -> list[BaseRoute]:
    return [
        Route("/user", get_authenticated_user, methods=["GET"]),
        Route("/user/repos", create_repo, methods=["POST"]),
        Route("/users/{login}", get_user, methods=["GET"]),
        Route(R, get_repo, methods=["GET"]),
        Route(R + "/collaborators/{username}", put_collaborator, methods=["PUT"]),
        Route(R + "/collaborators/{username}/permission", collaborator_permission, methods=["GET"]),
        Route(R + "/hooks", list_hooks, methods=["GET"]),
        Route(R + "/hooks", create_hook, methods=["POST"]),
        Route(R + "/hooks/{hook_id:int}", get_hook, methods=["GET"]),
        Route(R + "/hooks/{hook_id:int}", update_hook, methods=["PATCH"]),
        Route(R + "/hooks/{hook_id:int}", delete_hook, methods=["DELETE"]),
        *github_issues.routes(R),
        *github_relations.routes(R),
        *github_git.routes(R),
        *github_apps.routes(R),
    ]
