"""GitHub App endpoints: the app itself (JWT), its installations, and installation access tokens."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared.hooks import github_headers
from bot.sandbox.shared.plumbing import ApiError, json_response, paginate
from bot.sandbox.shared.runtime import Sandbox
from bot.sandbox.shared.state import App, Installation, Repo

from .context import Ctx
from .shapes import APP_EVENTS, APP_PERMISSIONS, Shapes, node_id


def app_of(ctx: Ctx) -> App:
    """The App a request authenticates as with its JWT (401 for anything else)."""
    return _app(ctx)


def _app(ctx: Ctx) -> App:
    if ctx.who.app is None:
        raise ApiError(401, ctx.who.error or "A JSON web token could not be decoded")
    return ctx.who.app


def installation_shape(shapes: Shapes, inst: Installation) -> dict[str, Any]:
    app = shapes.forge.apps[inst.app_id]
    owner = shapes.forge.user(inst.owner)
    api = f"{shapes.base}/app/installations/{inst.id}"
    return {
        "id": inst.id,
        "account": shapes.user(inst.owner),
        "repository_selection": "selected",
        "access_tokens_url": f"{api}/access_tokens",
        "repositories_url": f"{shapes.base}/installation/repositories",
        "html_url": f"{shapes.base}/settings/installations/{inst.id}",
        "app_id": app.id,
        "app_slug": app.slug,
        "target_id": owner.id if owner else 0,
        "target_type": "User",
        "permissions": APP_PERMISSIONS,
        "events": list(APP_EVENTS),
        "created_at": inst.created_at,
        "updated_at": inst.created_at,
        "single_file_name": None,
        "suspended_by": None,
        "suspended_at": None,
    }


def _listed(repo: Repo) -> dict[str, Any]:
    # How installation payloads list a repository (octokit/webhooks payload-examples
    # installation/created.payload.json: id, node_id, name, full_name, private).
    return {
        "id": repo.id,
        "node_id": node_id("Repository", repo.id),
        "name": repo.name,
        "full_name": repo.full_name,
        "private": repo.private,
    }


def emit_installation(
    sandbox: Sandbox, base: str, inst: Installation, action: str, repos: list[Repo], sender: str
) -> None:
    """GitHub delivers installation events to the App's own webhook only (no repository hook hears them):
    ``installation.created`` lists every repository the App was installed on, and
    ``installation_repositories.added`` the ones added later (octokit/webhooks payload-examples
    ``installation/created`` and ``installation_repositories/added``; GitHub docs "Webhook events and
    payloads": installation, installation_repositories)."""
    app = sandbox.forge.apps.get(inst.app_id)
    hook = app.webhook if app is not None else None
    if app is None or hook is None or not hook.active:
        return
    shapes = Shapes(sandbox.forge, base)
    listed = [_listed(r) for r in repos]
    payload: dict[str, Any] = {"action": action, "installation": installation_shape(shapes, inst)}
    if action == "created":
        event = "installation"
        payload["repositories"] = listed
    else:
        event = "installation_repositories"
        payload |= {
            "repository_selection": "selected",
            "repositories_added": listed,
            "repositories_removed": [],
        }
        # octokit's example names the requester (a user); `installation.created` leaves it out.
        payload["requester"] = shapes.user(sender)
    payload["sender"] = shapes.user(sender)
    target = ("integration", app.id)
    sandbox.deliverer.enqueue(
        hook,
        event,
        action,
        payload,
        None,
        lambda h, guid, body: github_headers(h, event, guid, body, target=target),
        app_id=app.id,
        installation_id=inst.id,
    )


async def get_app(request: Request) -> Response:
    ctx = Ctx(request)
    app = _app(ctx)
    installs = sum(1 for i in ctx.forge.installations.values() if i.app_id == app.id)
    return json_response(request, {**ctx.shapes.app(app), "installations_count": installs})


async def list_installations(request: Request) -> Response:
    """GET /app/installations (the App's JWT) — the installations of the authenticated App, paged by
    ``page``/``per_page`` (docs.github.com/en/rest/apps/apps#list-installations-for-the-authenticated-app)."""
    ctx = Ctx(request)
    app = _app(ctx)
    mine = sorted((i for i in ctx.forge.installations.values() if i.app_id == app.id), key=lambda i: i.id)
    chunk, headers = paginate(request, mine)
    return json_response(request, [installation_shape(ctx.shapes, i) for i in chunk], headers=headers)


def _installation(ctx: Ctx, app: App) -> Installation:
    inst = ctx.forge.installations.get(ctx.int_param("installation_id"))
    if inst is None or inst.app_id != app.id:
        raise ApiError(404, "Not Found")
    return inst


async def get_installation(request: Request) -> Response:
    ctx = Ctx(request)
    return json_response(request, installation_shape(ctx.shapes, _installation(ctx, _app(ctx))))


async def repo_installation(request: Request) -> Response:
    ctx = Ctx(request)
    app = _app(ctx)
    repo = ctx.forge.repo(ctx.param("owner"), ctx.param("repo"))
    inst = ctx.forge.installation_for(repo) if repo is not None else None
    if inst is None or inst.app_id != app.id:
        raise ApiError(404, "Not Found")
    return json_response(request, installation_shape(ctx.shapes, inst))


async def create_access_token(request: Request) -> Response:
    ctx = Ctx(request)
    inst = _installation(ctx, _app(ctx))
    expires = (datetime.now(UTC) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    token = ctx.forge.issue_installation_token(inst, expires)
    body = {
        "token": token.token,
        "expires_at": expires,
        "permissions": APP_PERMISSIONS,
        "repository_selection": "selected",
    }
    return json_response(request, body, status=201)


async def installation_repositories(request: Request) -> Response:
    ctx = Ctx(request)
    _ = ctx.login
    token = ctx.who.token
    inst = ctx.forge.installations.get(token.installation_id) if token and token.installation_id else None
    if inst is None:
        raise ApiError(403, "This endpoint requires an installation access token")
    repos = [r for name in inst.repos if (r := ctx.forge.repo(inst.owner, name)) is not None]
    chunk, headers = paginate(request, repos)
    body = {"total_count": len(repos), "repositories": [ctx.shapes.repo(r, ctx.login) for r in chunk]}
    return json_response(request, body, headers=headers)


def routes(r: str) -> list[BaseRoute]:
    return [
        Route("/app", get_app, methods=["GET"]),
        Route("/app/installations", list_installations, methods=["GET"]),
        Route("/app/installations/{installation_id:int}", get_installation, methods=["GET"]),
        Route(
            "/app/installations/{installation_id:int}/access_tokens", create_access_token, methods=["POST"]
        ),
        Route("/installation/repositories", installation_repositories, methods=["GET"]),
        Route(r + "/installation", repo_installation, methods=["GET"]),
    ]
