"""Per-request context for the GitHub routes: GitHub's wording, shapes, and its webhook emission."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from bot.sandbox.shared.caller import Caller
from bot.sandbox.shared.hooks import github_headers
from bot.sandbox.shared.plumbing import ApiError, validation_failed
from bot.sandbox.shared.state import Repo, Role

from .shapes import Shapes, node_id

BODY_LIMIT = 65_536

ROLE_WORDS: dict[Role, str] = {
    "pull": "read",
    "triage": "triage",
    "push": "push",
    "maintain": "maintain",
    "admin": "admin",
}


# GitHub's refusal of a comment on a locked conversation (403; reported by the stale bot, probot/stale#25,
# and Renovate, renovatebot/renovate#6215).
LOCKED = "Unable to create comment because issue is locked."
LOCK_REASONS = ("off-topic", "too heated", "resolved", "spam")


class Ctx(Caller):
    NOT_FOUND = "Not Found"
    GITHUB_EVENTS = True
    LOCKED_EDITS = True
    # An author reopens only what they closed: isaacs/github#583 (open since 2016), slapperwan/gh4a#467; the
    # REST API answers such a PATCH 422 "Validation Failed" with no errors (GitHawkApp/GitHawk#1992).
    AUTHOR_REOPENS_OWN_CLOSE_ONLY = True

    def __init__(self, request: Request, sender: str | None = None) -> None:
        super().__init__(request)
        self.shapes = Shapes(
            self.forge, self.base, request.scope.get("state", {}).get("api_version", "2022-11-28")
        )
        # Who webhooks name as the sender: the caller, or whom an emitter acts for (the sandbox's CI).
        self._sender = sender

    @property
    def acting(self) -> str:
        return self._sender or self.login

    def unauthenticated(self) -> ApiError:
        return ApiError(401, self.who.error or "Bad credentials")

    def denied(self, needed: Role) -> ApiError:
        if self.via_app is not None:
            return ApiError(403, "Resource not accessible by integration")
        return ApiError(403, f"Must have {ROLE_WORDS[needed]} access to repository.")

    def missing(self, resource: str, field: str) -> ApiError:
        return validation_failed(resource, field, "missing_field")

    def require_unlocked(self, repo: Repo) -> None:
        """docs.github.com "Locking conversations": while a conversation is locked only people with write
        access (and the repository's owners and collaborators) add, hide and delete comments. A GitHub App
        installation token is refused whatever its permission (probot/stale#25, renovatebot/renovate#6215,
        open-telemetry/opentelemetry-dotnet#6554). Editing one's own comment there is refused to the same
        callers: the sandbox's reading where no source says more (GraphQL's `CommentCannotUpdateReason`
        has `LOCKED`)."""
        if self.via_app is not None or not self.allowed(repo, "push"):
            raise ApiError(403, LOCKED)

    def check_body(self, resource: str, text: object) -> None:
        # FORGE-FACTS "Sizes and limits": GitHub refuses issue, comment and PR bodies over 65,536 characters
        # with 422 {"resource": …, "code": "unprocessable", "field": "data", "message": "Body is too long
        # (maximum is 65536 characters)"} (as reported by API users, e.g. telia-oss/github-pr-resource#259).
        if isinstance(text, str) and len(text) > BODY_LIMIT:
            raise validation_failed(
                resource, "data", "unprocessable", f"Body is too long (maximum is {BODY_LIMIT} characters)"
            )

    def emit(self, repo: Repo, event: str, action: str | None, **fields: Any) -> None:
        """Deliver `event` to every active hook of `repo` that subscribes to it."""
        if repo.flavor == "gitea":  # webhooks follow the repository's flavour
            self.emitter(self.acting).from_github(repo, event, action, fields)
            return
        hooks = [h for h in repo.hooks.values() if h.active and (event in h.events or "*" in h.events)]
        inst = self.forge.installation_for(repo)
        app = self.forge.apps.get(inst.app_id) if inst is not None else None
        # An App hears its installations' events on its own webhook (GitHub: "App webhook").
        app_hook = app.webhook if app is not None and app.webhook is not None and app.webhook.active else None
        if not hooks and app_hook is None:
            return
        payload: dict[str, Any] = {} if action is None else {"action": action}
        payload.update(fields)
        payload["repository"] = self.shapes.repo(repo)
        payload["sender"] = self.shapes.user(self.acting)
        if inst is not None:
            payload["installation"] = {"id": inst.id, "node_id": node_id("Installation", inst.id)}
        inst_id = inst.id if inst is not None else None
        for hook in hooks:
            self.sandbox.deliverer.enqueue(
                hook, event, action, payload, repo.full_name, installation_id=inst_id, repository_id=repo.id
            )
        if app is not None and app_hook is not None:
            target = ("integration", app.id)
            self.sandbox.deliverer.enqueue(
                app_hook,
                event,
                action,
                payload,
                repo.full_name,
                lambda hook, guid, body: github_headers(hook, event, guid, body, target=target),
                app_id=app.id,
                installation_id=inst_id,
                repository_id=repo.id,
            )
