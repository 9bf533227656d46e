"""Assembles the sandbox forge: state, runtime, middleware, the GitHub API and the admin API."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware

from bot.sandbox import admin
from bot.sandbox.gitea.webhooks import Emitter
from bot.sandbox.shared.addressing import Addressing
from bot.sandbox.shared.plumbing import ApiError, ApiMiddleware, api_error_handler, http_error_handler
from bot.sandbox.shared.runtime import Sandbox
from bot.sandbox.shared.state import SandboxState

from .gitea import api as gitea
from .github import api as github


def create_app(
    users: dict[str, str], state_file: Path | None = None, *, auto_ci: bool = False, ci_delay: float = 1.0
) -> Starlette:
    """A sandbox forge where each `users` entry (login -> token) authenticates as that login.

    With `state_file`, state is loaded from it when it exists and saved to it after every change. With
    `auto_ci`, every push to a branch gets a CI report after `ci_delay` seconds (``ci_ops``)."""
    forge = (
        SandboxState.load(state_file) if state_file is not None and state_file.exists() else SandboxState()
    )
    for login, token in users.items():
        forge.add_token(login, token)
    sandbox = Sandbox(forge, state_file, auto_ci=auto_ci, ci_delay=ci_delay)
    sandbox.save()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await sandbox.aclose()

    app = Starlette(
        routes=[*admin.routes(), *gitea.routes(), *github.routes()],
        # ApiMiddleware (auth, faults, the request log) first; then how the path names its repository.
        middleware=[Middleware(ApiMiddleware, sandbox=sandbox), Middleware(Addressing, sandbox=sandbox)],
        exception_handlers={ApiError: api_error_handler, HTTPException: http_error_handler},
        lifespan=lifespan,
    )
    app.state.forge = forge
    # How requests announce their changes (``events_port.Events``): webhooks in each repository's flavour.
    app.state.emitter = Emitter
    app.state.sandbox = sandbox
    return app
