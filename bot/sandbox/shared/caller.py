"""Who is asking, of which repository, and what they may do: the start of every forge API's request handler.

`Caller` holds what the GitHub and Gitea APIs share; each flavour's subclass (``github.context.Ctx``,
``gitea.context.GCtx``) words its own errors and brings its own shapes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from functools import cached_property, wraps
from typing import ClassVar, Self

from starlette.requests import Request
from starlette.responses import Response

from .events_port import Events, EventsFactory
from .plumbing import ApiError, principal
from .runtime import Principal, Sandbox
from .state import Repo, Role, SandboxState

type Endpoint = Callable[[Request], Awaitable[Response]]
type RepoHandler[C] = Callable[[Request, C, Repo], Awaitable[Response]]


class Caller(ABC):
    """One request to a forge API, and the flavour's wording of its refusals."""

    # The flavour's "not found" message.
    NOT_FOUND: ClassVar[str]
    # Whether this API announces changes as GitHub does: each label and milestone change of an issue on
    # its own (Gitea's API announces them together), and the labels' and milestones' own events.
    GITHUB_EVENTS: ClassVar[bool]
    # Whether editing and deleting comments on a locked conversation is kept to those who may comment
    # there (``require_unlocked``), as on GitHub; Gitea lets a comment's poster edit it whatever the lock.
    LOCKED_EDITS: ClassVar[bool]
    # Whether an issue's author without triage access may reopen it only when they closed it themselves, as
    # on GitHub (docs/forge-port.md "Closing, reopening, duplicates"); Gitea lets its poster reopen it
    # whoever closed it.
    AUTHOR_REOPENS_OWN_CLOSE_ONLY: ClassVar[bool]

    def __init__(self, request: Request) -> None:
        self.request = request
        self.sandbox: Sandbox = request.app.state.sandbox
        self.forge: SandboxState = self.sandbox.forge
        self.base = str(request.base_url).rstrip("/")
        self.who: Principal = principal(request)

    def param(self, name: str) -> str:
        return str(self.request.path_params[name])

    def int_param(self, name: str) -> int:
        return int(self.request.path_params[name])

    @property
    def login(self) -> str:
        if self.who.login is None:
            raise self.unauthenticated()
        return self.who.login

    @property
    def via_app(self) -> int | None:
        """The GitHub App whose installation token makes the request, if any."""
        token = self.who.token
        if token is None or token.installation_id is None:
            return None
        inst = self.forge.installations.get(token.installation_id)
        return inst.app_id if inst is not None else None

    @cached_property
    def events(self) -> Events:
        """The webhooks of this request's changes, in each repository's flavour."""
        return self.emitter(self.login)

    def emitter(self, sender: str) -> Events:
        """The webhooks of changes `sender` makes (the app's factory: ``gitea.webhooks.Emitter``)."""
        factory: EventsFactory = self.request.app.state.emitter
        return factory(self.request, sender)

    def not_found(self) -> ApiError:
        return ApiError(404, self.NOT_FOUND)

    def lookup[K, V](self, items: Mapping[K, V], key: K) -> V:
        """`items[key]`, or the flavour's 404."""
        found = items.get(key)
        if found is None:
            raise self.not_found()
        return found

    def repo(self, needed: Role = "pull") -> Repo:
        """The repo named by the path, if the caller may act on it with `needed`.

        A repo you cannot read is 404, one you can read but not change is 403."""
        login = self.login
        repo = self.forge.repo(self.param("owner"), self.param("repo"))
        if repo is None or not self.forge.can(repo, login, "pull"):
            raise self.not_found()
        self.require(repo, needed)
        return repo

    @classmethod
    def on_repo(cls, needed: Role = "pull") -> Callable[[RepoHandler[Self]], Endpoint]:
        """Make a route endpoint of a handler of the path's repository, which the caller may act on
        with `needed`: the handler gets the request, its caller and the repository."""

        def wrap(handler: RepoHandler[Self]) -> Endpoint:
            @wraps(handler)
            async def endpoint(request: Request) -> Response:
                caller = cls(request)
                return await handler(request, caller, caller.repo(needed))

            return endpoint

        return wrap

    def allowed(self, repo: Repo, needed: Role) -> bool:
        return self.forge.can(repo, self.login, needed)

    def require(self, repo: Repo, needed: Role) -> None:
        if not self.allowed(repo, needed):
            raise self.denied(needed)

    def require_author(self, repo: Repo, author: str) -> None:
        """Only its author, or someone with push access, may change a thing."""
        if author != self.login:
            self.require(repo, "push")

    @abstractmethod
    def require_unlocked(self, repo: Repo) -> None:
        """Refuse a comment on a locked conversation from a caller the flavour keeps out of it."""

    @abstractmethod
    def check_body(self, resource: str, text: object) -> None:
        """Refuse a body the forge would refuse (GitHub: more than 65,536 characters)."""

    @abstractmethod
    def unauthenticated(self) -> ApiError: ...

    @abstractmethod
    def denied(self, needed: Role) -> ApiError: ...

    @abstractmethod
    def missing(self, resource: str, field: str) -> ApiError:
        """The error for a required field of `resource` that the request leaves out or empty."""
