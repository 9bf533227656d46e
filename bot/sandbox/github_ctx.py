"""Per-request context for the GitHub routes: who is asking, which repo, and emitting webhooks."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from .github_shapes import Shapes, node_id
from .plumbing import ApiError, principal
from .runtime import Principal, Sandbox
from .state import Repo, Role, SandboxState

ROLE_WORDS: dict[Role, str] = {
    "pull": "read",
    "triage": "triage",
    "push": "push",
    "maintain": "maintain",
    "admin": "admin",
}


class Ctx:
    def __init__(self, request: Request) -> None:
        self.request = request
        self.sandbox: Sandbox = request.app.state.sandbox
        self.forge: SandboxState = self.sandbox.forge
        self.base = str(request.base_url).rstrip("/")
        self.shapes = Shapes(self.forge, self.base)
        self.who: Principal = principal(request)

    def param(self, name: str) -> str:
        return str(self.request.path_params[name])

    def int_param(self, name: str) -> int:
        return int(self.request.path_params[name])

    @property
    def login(self) -> str:
        if self.who.login is None:
            raise ApiError(401, self.who.error or "Bad credentials")
        return self.who.login

    @property
    def via_app(self) -> int | None:
        token = self.who.token
        if token is None or token.installation_id is None:
            return None
        inst = self.forge.installations.get(token.installation_id)
        return inst.app_id if inst is not None else None

    def repo(self, needed: Role = "pull") -> Repo:
        """The repo named by the path, if the caller may act on it with `needed`.

        Like GitHub: a repo you cannot read is 404, one you can read but not change is 403."""
        login = self.login
        repo = self.forge.repo(self.param("owner"), self.param("repo"))
        if repo is None or not self.forge.can(repo, login, "pull"):
            raise ApiError(404, "Not Found")
        self.require(repo, needed)
        return repo

    def allowed(self, repo: Repo, needed: Role) -> bool:
        return self.forge.can(repo, self.login, needed)

    def require(self, repo: Repo, needed: Role) -> None:
        if not self.allowed(repo, needed):
            if self.via_app is not None:
                raise ApiError(403, "Resource not accessible by integration")
            raise ApiError(403, f"Must have {ROLE_WORDS[needed]} access to repository.")

    def emit(self, repo: Repo, event: str, action: str | None, **fields: Any) -> None:
        """Deliver `event` to every active hook of `repo` that subscribes to it."""
        if repo.flavor == "gitea":  # webhooks follow the repository's flavour
            from .gitea_webhooks import from_github

            from_github(self.request, self.login, repo, event, action, fields)
            return
        hooks = [h for h in repo.hooks.values() if h.active and (event in h.events or "*" in h.events)]
        if not hooks:
            return
        payload: dict[str, Any] = {} if action is None else {"action": action}
        payload.update(fields)
        payload["repository"] = self.shapes.repo(repo)
        payload["sender"] = self.shapes.user(self.login)
        inst = self.forge.installation_for(repo)
        if inst is not None:
            payload["installation"] = {"id": inst.id, "node_id": node_id("Installation", inst.id)}
        for hook in hooks:
            self.sandbox.deliverer.enqueue(hook, event, action, payload, repo.full_name)
