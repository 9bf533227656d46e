"""The sandbox's own admin API under `/_sandbox/` (no auth): deliveries, faults, request log, apps, state."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from .plumbing import ApiError, body_object
from .runtime import Fault, Sandbox
from .state import App, Installation


def _sandbox(request: Request) -> Sandbox:
    sandbox: Sandbox = request.app.state.sandbox
    return sandbox


def _json(data: Any, status: int = 200) -> Response:
    return JSONResponse(data, status_code=status)


async def list_deliveries(request: Request) -> Response:
    q = request.query_params
    found = [
        d.summary()
        for d in _sandbox(request).deliverer.log
        if ("hook_id" not in q or str(d.hook_id) == q["hook_id"])
        and ("event" not in q or d.event == q["event"])
    ]
    return _json(found)


async def clear_deliveries(request: Request) -> Response:
    _sandbox(request).deliverer.log.clear()
    return Response(status_code=204)


async def deliveries_idle(request: Request) -> Response:
    try:
        timeout = float(request.query_params.get("timeout", "10"))
    except ValueError:
        timeout = 10.0
    deliverer = _sandbox(request).deliverer
    idle = await deliverer.wait_idle(min(max(timeout, 0.0), 120.0))
    return _json({"idle": idle, "pending": deliverer.pending})


async def get_delivery(request: Request) -> Response:
    guid = request.path_params["guid"]
    attempts = [d for d in _sandbox(request).deliverer.log if d.guid == guid]
    if not attempts:
        return _json({"message": "Not Found"}, 404)
    return _json({**attempts[-1].detail(), "attempts": len(attempts)})


async def redeliver(request: Request) -> Response:
    again = _sandbox(request).deliverer.redeliver(request.path_params["guid"])
    if again is None:
        return _json({"message": "Not Found"}, 404)
    return _json(again.summary(), 202)


async def add_fault(request: Request) -> Response:
    body = await body_object(request)
    if not isinstance(body.get("path"), str):
        raise ApiError(422, "path (a regex) is required")
    fault = Fault(
        method=str(body.get("method", "*")).upper(),
        path=body["path"],
        status=int(body.get("status", 500)),
        times=int(body.get("times", 1)),
        headers={str(k): str(v) for k, v in (body.get("headers") or {}).items()},
        body=body.get("body"),
        hang=bool(body.get("hang", False)),
        hang_seconds=float(body.get("hang_seconds", 3600.0)),
        login=str(body["login"]) if body.get("login") else None,
        apply=bool(body.get("apply", False)),
        drop=bool(body.get("drop", False)),
    )
    _sandbox(request).faults.append(fault)
    return _json(fault.public(), 201)


async def list_faults(request: Request) -> Response:
    return _json([f.public() for f in _sandbox(request).faults])


async def clear_faults(request: Request) -> Response:
    _sandbox(request).faults.clear()
    return Response(status_code=204)


async def list_requests(request: Request) -> Response:
    return _json(_sandbox(request).requests)


async def clear_requests(request: Request) -> Response:
    _sandbox(request).requests.clear()
    return Response(status_code=204)


async def dump_state(request: Request) -> Response:
    return _json(_sandbox(request).forge.model_dump(mode="json"))


async def add_user(request: Request) -> Response:
    sandbox = _sandbox(request)
    body = await body_object(request)
    login, token = body.get("login"), body.get("token")
    if not isinstance(login, str) or not login:
        raise ApiError(422, "login is required")
    user = sandbox.forge.ensure_user(login)
    if isinstance(token, str) and token:
        sandbox.forge.add_token(login, token)
    sandbox.save()
    return _json(user.model_dump(mode="json"), 201)


async def register_app(request: Request) -> Response:
    sandbox = _sandbox(request)
    body = await body_object(request)
    try:
        app = App(
            id=int(body["app_id"]),
            slug=str(body["slug"]),
            name=str(body.get("name") or body["slug"]),
            public_key_pem=str(body["public_key_pem"]),
            owner=body.get("owner"),
        )
    except (KeyError, ValueError, TypeError):
        raise ApiError(422, "app_id, slug and public_key_pem are required") from None
    sandbox.forge.apps[app.id] = app
    sandbox.forge.ensure_user(app.bot_login, kind="Bot")
    sandbox.save()
    return _json({"id": app.id, "slug": app.slug, "bot_login": app.bot_login}, 201)


async def add_installation(request: Request) -> Response:
    sandbox = _sandbox(request)
    app = sandbox.forge.apps.get(int(request.path_params["app_id"]))
    if app is None:
        return _json({"message": "Not Found"}, 404)
    body = await body_object(request)
    owner, repos = body.get("owner"), body.get("repos", [])
    if not isinstance(owner, str) or not isinstance(repos, list):
        raise ApiError(422, "owner (a login) and repos (a list of names) are required")
    inst = Installation(id=sandbox.forge.new_id(), app_id=app.id, owner=owner, repos=[str(r) for r in repos])
    sandbox.forge.installations[inst.id] = inst
    sandbox.save()
    return _json({"id": inst.id, "app_id": app.id, "owner": owner, "repos": inst.repos}, 201)


def routes() -> list[BaseRoute]:
    s = "/_sandbox"
    return [
        Route(s + "/deliveries", list_deliveries, methods=["GET"]),
        Route(s + "/deliveries", clear_deliveries, methods=["DELETE"]),
        Route(s + "/deliveries/idle", deliveries_idle, methods=["GET"]),
        Route(s + "/deliveries/{guid}", get_delivery, methods=["GET"]),
        Route(s + "/deliveries/{guid}/redeliver", redeliver, methods=["POST"]),
        Route(s + "/faults", list_faults, methods=["GET"]),
        Route(s + "/faults", add_fault, methods=["POST"]),
        Route(s + "/faults", clear_faults, methods=["DELETE"]),
        Route(s + "/requests", list_requests, methods=["GET"]),
        Route(s + "/requests", clear_requests, methods=["DELETE"]),
        Route(s + "/state", dump_state, methods=["GET"]),
        Route(s + "/users", add_user, methods=["POST"]),
        Route(s + "/apps", register_app, methods=["POST"]),
        Route(s + "/apps/{app_id:int}/installations", add_installation, methods=["POST"]),
    ]
