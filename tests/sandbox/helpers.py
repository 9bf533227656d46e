"""Test helpers: a webhook capture server, webhook-schema and OpenAPI validators for sandbox output."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from jsonschema import Draft7Validator  # type: ignore[import-untyped,unused-ignore]
from openapi_core import OpenAPI
from openapi_core.datatypes import RequestParameters
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from werkzeug.datastructures import Headers, ImmutableMultiDict

from bot.sandbox.server import SandboxServer
from tests.e2e.stack import PLAIN

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "github"


def recorded(scenario: str) -> list[dict[str, Any]]:
    """The requests and answers octokit/fixtures recorded against the real api.github.com for `scenario`
    (tests/fixtures/github/octokit-fixtures/, see PROVENANCE.md): each `method`, `path`, `status`, `body`,
    `response`, `headers`."""
    found: list[dict[str, Any]] = json.loads((FIXTURES / "octokit-fixtures" / f"{scenario}.json").read_text())
    return found


# --- webhook receiver ----------------------------------------------------------------------------------


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes

    @property
    def event(self) -> str:
        return self.headers["x-github-event"]

    @property
    def payload(self) -> Any:
        return json.loads(self.body)


@dataclass
class Capture:
    """A webhook receiver. `status` is what it answers; `gate`, when set, holds each answer until released."""

    status: int = 200
    gate: threading.Event | None = None
    received: list[Received] = field(default_factory=list)
    _cond: threading.Condition = field(default_factory=threading.Condition)

    async def _receive(self, request: Request) -> Response:
        body = await request.body()
        with self._cond:
            self.received.append(Received({k.lower(): v for k, v in request.headers.items()}, body))
            self._cond.notify_all()
        if self.gate is not None:
            import asyncio

            await asyncio.to_thread(self.gate.wait, 30)
        return Response(b"ok" if self.status < 300 else b"nope", status_code=self.status)

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/hook", self._receive, methods=["POST"])])

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        """Block until `count` deliveries arrived (condition wait, not sleep)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.received) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"expected {count} deliveries, got {len(self.received)}")
                self._cond.wait(left)
            return list(self.received)

    def events(self) -> list[tuple[str, str | None]]:
        return [(r.event, r.payload.get("action")) for r in self.received]


class CaptureServer(SandboxServer):
    """The capture app served the same way the sandbox is (uvicorn in a thread on a free port)."""

    def __init__(self, capture: Capture) -> None:
        super().__init__(app=capture.app())
        self.capture = capture

    @property
    def hook_url(self) -> str:
        return self.url + "/hook"


# --- webhook schemas -----------------------------------------------------------------------------------


def _schema_registry() -> Registry[Any]:
    resources = []
    for path in (FIXTURES / "webhook-schemas").rglob("*.schema.json"):
        contents = json.loads(path.read_text())
        resources.append((contents["$id"], Resource.from_contents(contents, default_specification=DRAFT7)))
    return Registry().with_resources(resources)


REGISTRY = _schema_registry()


def schema_errors(event: str, action: str | None, payload: Any) -> list[str]:
    """Every violation of the octokit schema for `event`.`action` (or `event` for action-less events)."""
    schema = REGISTRY.contents(f"{event}${action or 'event'}")
    validator = Draft7Validator(schema, registry=REGISTRY)
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}" for e in validator.iter_errors(payload)
    ]


# --- OpenAPI -------------------------------------------------------------------------------------------


@dataclass
class _OARequest:
    method: str
    path: str
    parameters: RequestParameters
    body: bytes | None
    content_type: str
    path_pattern: str
    host_url: str = "https://api.github.com"


@dataclass
class _OAResponse:
    status_code: int
    content_type: str
    headers: Headers
    data: bytes | None


def _null_in_nullable_enums(node: Any) -> Any:
    """GitHub's description marks enums such as an issue's ``state_reason`` ``nullable`` and GitHub answers
    ``null`` there, but OpenAPI 3.0.3 reads ``nullable`` as not extending ``enum``: add ``None`` to them."""
    if isinstance(node, dict):
        if node.get("nullable") is True and isinstance(node.get("enum"), list) and None not in node["enum"]:
            node["enum"] = [*node["enum"], None]
        for value in node.values():
            _null_in_nullable_enums(value)
    elif isinstance(node, list):
        for value in node:
            _null_in_nullable_enums(value)
    return node


def _deleted_forks(spec: dict[str, Any]) -> None:
    """A pull request whose head repository (a fork) was deleted has `head.repo` null on GitHub — octokit's
    webhook schema says so (`common/pull-request.schema.json`: `oneOf [repository, null]`) — but the REST
    description does not mark it nullable: it is made nullable here, for both pull request shapes."""
    for name in ("pull-request", "pull-request-simple"):
        head = spec["components"]["schemas"][name]["properties"]["head"]["properties"]
        head["repo"] = {**spec["components"]["schemas"]["repository"], "nullable": True}


def _installation_accounts(spec: dict[str, Any]) -> None:
    """`GET /app/installations` answers the installations `GET /app/installations/{id}` answers one of, whose
    `account` the `installation` schema gives as `anyOf [simple-user, enterprise]`; the subset inlines the
    list's items with `allOf` of the two (no account has both a user's and an enterprise's required fields):
    the list's items take the `installation` schema here."""
    listed = spec["paths"]["/app/installations"]["get"]["responses"]["200"]["content"]["application/json"]
    listed["schema"]["items"] = {"$ref": "#/components/schemas/installation"}


@dataclass
class OpenApiCheck:
    """Validates sandbox responses against the vendored GitHub OpenAPI subset and records what it checked."""

    spec: dict[str, Any]
    openapi: OpenAPI
    checked: set[str] = field(default_factory=set)

    @classmethod
    def load(cls) -> OpenApiCheck:
        spec = _null_in_nullable_enums(json.loads((FIXTURES / "openapi-2026-subset.json").read_text()))
        _deleted_forks(spec)
        _installation_accounts(spec)
        return cls(spec, OpenAPI.from_dict(spec))

    def operations(self) -> Iterator[tuple[str, str, str]]:
        for template, item in self.spec["paths"].items():
            for method, op in item.items():
                if isinstance(op, dict) and "operationId" in op:
                    yield method.upper(), template, op["operationId"]

    def operation_for(self, method: str, path: str) -> tuple[str, str, dict[str, str]] | None:
        """(operationId, path template, path parameters) of the operation serving `method path`."""
        best: tuple[str, str, dict[str, str]] | None = None
        for op_method, template, op_id in self.operations():
            # git refs and file paths contain slashes, as they do on GitHub
            pattern = re.sub(r"\{(ref|path)\}", r"(?P<\1>.+)", template)
            pattern = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", pattern)
            found = re.match("^" + pattern + "$", path)
            # a literal segment beats a parameter: /commits/{ref}/status is not /commits/{ref}
            if op_method == method and found and (best is None or _literal(template) > _literal(best[1])):
                best = op_id, template, found.groupdict()
        return best

    def __call__(self, response: httpx2.Response) -> httpx2.Response:
        request = response.request
        path = request.url.path
        found = self.operation_for(request.method, path)
        assert found is not None, f"{request.method} {path} is not in the OpenAPI subset"
        op_id, template, path_params = found
        query = ImmutableMultiDict(list(request.url.params.multi_items()))
        oa_request = _OARequest(
            method=request.method.lower(),
            path=path,
            parameters=RequestParameters(
                query=query, header=Headers(list(request.headers.items())), cookie={}, path=path_params
            ),
            path_pattern=template,
            body=request.content or None,
            content_type=request.headers.get("content-type", "application/json"),
        )
        oa_response = _OAResponse(
            status_code=response.status_code,
            content_type=response.headers.get("content-type", "application/json").split(";")[0],
            headers=Headers(list(response.headers.items())),
            data=response.content or None,
        )
        try:
            self.openapi.validate_response(oa_request, oa_response)
        except Exception as exc:
            errors = getattr(exc.__cause__, "schema_errors", None) or [exc]
            found = "; ".join(
                f"{'/'.join(map(str, getattr(e, 'absolute_path', [])))}: "
                f"{str(getattr(e, 'message', e))[:300]}"
                for e in errors
            )
            raise AssertionError(
                f"{request.method} {path} ({op_id}) {response.status_code}: {found}"
            ) from None
        self.checked.add(op_id)
        return response


def _literal(template: str) -> int:
    return len(re.sub(r"\{\w+\}", "", template))


def gitea_client(server: SandboxServer, token: str | None) -> httpx2.Client:
    """A client of the sandbox's Gitea API (`/api/v1`) as the holder of ``token``."""
    headers = {"Authorization": f"token {token}"} if token else {}
    return httpx2.Client(base_url=server.url + "/api/v1", headers=headers, timeout=10)


def client(server: SandboxServer, token: str | None) -> httpx2.Client:
    headers = {"Accept": "application/vnd.github+json"}
    if token is not None:
        headers["Authorization"] = f"token {token}"
    return httpx2.Client(base_url=server.url, headers=headers, timeout=10, **PLAIN)


def collaborate(via: httpx2.Client, repo: str, login: str, permission: str) -> None:
    """Make `login` a collaborator of `repo` (`/repos/o/r` or `o/r`) at once, through the admin API of the
    sandbox `via` talks to: GitHub's own `PUT /collaborators/{u}` invites them and they must accept
    (``bot.sandbox.github.collaborators``)."""
    name = repo.removeprefix("/repos/")
    origin = f"{via.base_url.scheme}://{via.base_url.netloc.decode()}"
    answer = httpx2.put(
        f"{origin}/_sandbox/repos/{name}/collaborators/{login}", json={"permission": permission}, timeout=10
    )
    assert answer.status_code == 200, answer.text


def idle(server: SandboxServer, timeout: float = 10.0) -> None:
    """Wait until the sandbox has no webhook delivery in flight."""
    answer = httpx2.get(
        f"{server.url}/_sandbox/deliveries/idle", params={"timeout": timeout}, timeout=timeout + 5
    )
    assert answer.json()["idle"], answer.json()


# --- the sandbox's route table against the descriptions --------------------------------------------------


def _shape(template: str) -> str:
    """A path template with its parameters unnamed: `/issues/{number:int}` and `/issues/{issue_number}`
    are the same route."""
    return re.sub(r"\{[^}]+\}", "{}", template)


def served_routes(app: Starlette, flavour: str) -> set[tuple[str, str]]:
    """(method, path template) of every API route the sandbox serves: GitHub's at `/`, Gitea's at
    `/api/v1` (given without that prefix); the admin API is neither."""
    found: set[tuple[str, str]] = set()
    for route in app.routes:
        if not isinstance(route, Route) or route.path.startswith("/_sandbox"):
            continue
        gitea = route.path == "/api/v1" or route.path.startswith("/api/v1/")
        if gitea != (flavour == "gitea"):
            continue
        path = route.path.removeprefix("/api/v1") if gitea else route.path
        found.update((method, path) for method in route.methods or () if method != "HEAD")
    return found


def served_operations(app: Starlette, flavour: str, spec: dict[str, Any]) -> tuple[set[str], set[str]]:
    """The operationIds of the routes the sandbox serves, and the routes the description does not know."""
    operations: dict[tuple[str, str], str] = {}
    for template, item in spec["paths"].items():
        for method, op in item.items():
            if isinstance(op, dict) and "operationId" in op:
                operations[(method.upper(), _shape(template))] = op["operationId"]
    known: set[str] = set()
    unknown: set[str] = set()
    for method, path in served_routes(app, flavour):
        op_id = operations.get((method, _shape(path)))
        if op_id is None:
            unknown.add(f"{method} {path}")
        else:
            known.add(op_id)
    return known, unknown
