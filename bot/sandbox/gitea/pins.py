"""Gitea's pinned issues (Gitea 1.21 and later), at ``/api/v1/repos/…``, as current Gitea answers them.

Sources: go-gitea/gitea ``routers/api/v1/repo/issue_pin.go`` (the handlers), ``routers/api/v1/api.go`` (the
routes: pinning and unpinning need ``reqToken(), reqAdmin()``), ``models/issues/issue_pin.go`` (the model,
a table of its own since 2025), ``modules/setting/repository.go`` (``[repository.issue] MAX_PINNED``, default
3, "Set to 0 to disable pinning Issues" — app.example.ini, go-gitea/gitea#24406).

- Pinning and unpinning need **repository admin**: anyone else gets 403 "user should be an owner or a
  collaborator with admin write of a repository" (``reqAdmin``).
- **The limit answers 500**: ``PinIssue`` returns ``ErrIssueMaxPinReached`` when the kind's pins number
  ``MAX_PINNED`` or more, and the API handler answers every error of ``PinIssue`` with
  ``APIErrorInternal`` (its ``IsErrIssueMaxPinReached`` check sits on the wrong error, that of
  ``GetIssueByIndex``). A production Gitea hides a 500's message from non-site-admins: ``{"message": ""}``.
- **Pinning a pinned issue answers 500 too** on current Gitea: ``PinIssue`` counts first (the limit, when
  the pins are full) and then inserts a second ``IssuePin`` row, which ``UNIQUE(repo_id, issue_id)`` refuses.
  (Gitea 1.21–1.23 kept ``pin_order`` on the issue and answered 204 there.) So a client reads first.
- Unpinning an issue that is not pinned answers 204 (``UnpinIssue`` deletes nothing and returns nil).
- ``GET /issues/pinned`` lists the pinned issues in pin order (not paginated); ``GET /new_pin_allowed``
  answers ``{"issues": bool, "pull_requests": bool}`` (fewer pins than ``MAX_PINNED``).
- Gitea sends no webhook for a pin (``modules/structs/hook.go`` ``HookIssueAction`` has no such action).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared import pin_ops
from bot.sandbox.shared.plumbing import ApiError, json_response
from bot.sandbox.shared.state import Issue, Repo

from .context import API, GCtx

ADMIN_ONLY = "user should be an owner or a collaborator with admin write of a repository"


def _issue(ctx: GCtx, repo: Repo) -> Issue:
    return ctx.lookup(repo.issues, ctx.int_param("index"))


def _require_admin(ctx: GCtx, repo: Repo) -> None:
    if not ctx.allowed(repo, "admin"):
        raise ApiError(403, ADMIN_ONLY)


def _internal() -> ApiError:
    # APIErrorInternal: the error's text only in development or for site admins (the sandbox has none).
    return ApiError(500, "")


@GCtx.on_repo()
async def pin_issue(request: Request, ctx: GCtx, repo: Repo) -> Response:
    _require_admin(ctx, repo)
    issue = _issue(ctx, repo)
    kind = pin_ops.pinned(repo, pulls=issue.pull is not None)
    if len(kind) >= ctx.sandbox.gitea_max_pinned:
        raise _internal()  # ErrIssueMaxPinReached, answered as an internal error
    if pin_ops.is_pinned(repo, issue):
        raise _internal()  # a second IssuePin row: UNIQUE(repo_id, issue_id)
    pin_ops.pin(ctx, repo, issue)
    return Response(status_code=204)


@GCtx.on_repo()
async def unpin_issue(request: Request, ctx: GCtx, repo: Repo) -> Response:
    _require_admin(ctx, repo)
    pin_ops.unpin(ctx, repo, _issue(ctx, repo))
    return Response(status_code=204)


@GCtx.on_repo()
async def list_pinned_issues(request: Request, ctx: GCtx, repo: Repo) -> Response:
    return json_response(request, [ctx.shapes.issue(repo, i) for i in pin_ops.pinned(repo)])


@GCtx.on_repo()
async def new_pin_allowed(request: Request, ctx: GCtx, repo: Repo) -> Response:
    limit = ctx.sandbox.gitea_max_pinned
    return json_response(
        request,
        {
            "issues": len(pin_ops.pinned(repo)) < limit,
            "pull_requests": len(pin_ops.pinned(repo, pulls=True)) < limit,
        },
    )


def routes() -> list[BaseRoute]:
    r = API + "/repos/{owner}/{repo}"
    return [
        Route(r + "/issues/pinned", list_pinned_issues, methods=["GET"]),
        Route(r + "/issues/{index:int}/pin", pin_issue, methods=["POST"]),
        Route(r + "/issues/{index:int}/pin", unpin_issue, methods=["DELETE"]),
        Route(r + "/new_pin_allowed", new_pin_allowed, methods=["GET"]),
    ]
