"""Per-request context for the Gitea routes: Gitea's wording, shapes and pagination."""

from __future__ import annotations

import math

from starlette.requests import Request

from bot.sandbox.shared.caller import Caller
from bot.sandbox.shared.plumbing import ApiError
from bot.sandbox.shared.state import Repo, Role

from .shapes import GiteaShapes

API = "/api/v1"
DEFAULT_LIMIT = 30
MAX_LIMIT = 50


def unprocessable(message: str) -> ApiError:
    return ApiError(422, message)


class GCtx(Caller):
    NOT_FOUND = "The target couldn't be found."
    GITHUB_EVENTS = False
    # routers/api/v1/repo/issue_comment.go editIssueComment checks the poster or write access, not the lock.
    LOCKED_EDITS = False
    # routers/api/v1/repo/issue.go EditIssue: its poster or a writer may edit it, and closeOrReopenIssue
    # then changes the state either way, whoever closed it.
    AUTHOR_REOPENS_OWN_CLOSE_ONLY = False

    def __init__(self, request: Request) -> None:
        super().__init__(request)
        self.shapes = GiteaShapes(self.forge, self.base)

    @property
    def via_app(self) -> int | None:
        return None  # Gitea records no app on what its API makes

    def unauthenticated(self) -> ApiError:
        return ApiError(
            401, "token is required" if self.who.error == "Requires authentication" else "user does not exist"
        )

    def denied(self, needed: Role) -> ApiError:
        return ApiError(403, "user should have specific permission or be a site admin")

    def missing(self, resource: str, field: str) -> ApiError:
        return unprocessable(f"[{field.capitalize()}]: Required")

    def check_body(self, resource: str, text: object) -> None:
        """Gitea sets no length limit on issue and comment bodies."""

    def allowed(self, repo: Repo, needed: Role) -> bool:
        # Gitea has no triage: reading is all a triage collaborator gets.
        return super().allowed(repo, "push" if needed == "triage" else needed)

    def require_unlocked(self, repo: Repo) -> None:
        """routers/api/v1/repo/issue_comment.go CreateIssueComment: a locked issue takes comments from those
        who may write its issues (or pulls) only: 403 with `repo.issues.comment_on_locked` (locale_en-US)."""
        if not self.allowed(repo, "push"):
            raise ApiError(403, "You cannot comment on a locked issue.")


def gitea_page[T](request: Request, items: list[T]) -> tuple[list[T], dict[str, str]]:
    """Gitea's `page`/`limit` with `X-Total-Count` and a `Link` header."""
    try:
        limit = int(request.query_params.get("limit", DEFAULT_LIMIT))
        page = int(request.query_params.get("page", "1"))
    except ValueError:
        limit, page = DEFAULT_LIMIT, 1
    limit = DEFAULT_LIMIT if limit <= 0 else min(limit, MAX_LIMIT)
    page = max(page, 1)
    last = max(math.ceil(len(items) / limit), 1)
    chunk = items[(page - 1) * limit : page * limit]

    def url(n: int) -> str:
        params = {**dict(request.query_params), "page": str(n), "limit": str(limit)}
        return str(request.url.replace(query="&".join(f"{k}={v}" for k, v in params.items())))

    links = []
    if page < last:
        links += [f'<{url(page + 1)}>; rel="next"', f'<{url(last)}>; rel="last"']
    if page > 1:
        links += [f'<{url(1)}>; rel="first"', f'<{url(min(page - 1, last))}>; rel="prev"']
    headers = {"X-Total-Count": str(len(items)), "Access-Control-Expose-Headers": "X-Total-Count, Link"}
    if links:
        headers["Link"] = ",".join(links)
    return chunk, headers
