"""GitHub's issue search: `GET /search/issues`.

`q` holds qualifiers and words (``search_ops``: `repo:`, `is:issue`/`is:pr`, `is:open`, `label:`,
`-label:`, `author:`, `updated:<DATE`, `in:title` …), over the repositories the caller may read; the answer
is `{total_count, incomplete_results, items}` (octokit/fixtures `search-issues`), each item an issue with a
`score`. At most the first 1,000 results can be paged to (past them 422 "Only the first 1000 search results
are available", as microsoft/vscode#93983 quotes it); the search API has its own rate limit, 30 a minute
(``ApiMiddleware``); and the index lags (``search_ops``). `advanced_search=true` reads `AND`, `OR` and
parentheses (GitHub's advanced issue search, which replaces the legacy syntax).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared import search_ops
from bot.sandbox.shared.plumbing import ApiError, json_response, paginate
from bot.sandbox.shared.state import Issue, Repo

from .context import Ctx

RESULT_LIMIT = 1000
SORTS = ("comments", "created", "updated", "reactions", "interactions")


def _sort_key(sort: str | None, repo: Repo, issue: Issue) -> Any:
    if sort == "comments":
        return sum(1 for c in repo.comments.values() if c.issue_number == issue.number), issue.id
    if sort == "updated":
        return issue.updated_at, issue.id
    if sort in ("reactions", "interactions"):
        return len(issue.reactions), issue.id
    # created, and "best match": the sandbox ranks by age, newest first
    return issue.created_at, issue.id


async def search_issues(request: Request) -> Response:
    ctx = Ctx(request)
    params = request.query_params
    q = params.get("q")
    if not q:
        raise ApiError(422, "Validation Failed", [{"resource": "Search", "field": "q", "code": "missing"}])
    try:
        query = search_ops.parse(q, advanced=params.get("advanced_search") == "true")
    except search_ops.QueryError:
        raise ApiError(
            422,
            "Validation Failed",
            [
                {
                    "message": "The search query is invalid.",
                    "resource": "Search",
                    "field": "q",
                    "code": "invalid",
                }
            ],
        ) from None
    sort = params.get("sort")
    if sort is not None and sort not in SORTS:
        raise ApiError(422, "Validation Failed", [{"resource": "Search", "field": "sort", "code": "invalid"}])
    try:
        per_page = min(max(int(params.get("per_page", "30")), 1), 100)
        page = max(int(params.get("page", "1")), 1)
    except ValueError:
        per_page, page = 30, 1
    if (page - 1) * per_page >= RESULT_LIMIT:
        raise ApiError(422, "Only the first 1000 search results are available")
    repos = search_ops.readable(ctx.forge, ctx.login)
    search_ops.refresh(ctx.sandbox.search_index, repos, ctx.sandbox.search_lag)
    found = list(search_ops.matches(ctx.sandbox.search_index, ctx.forge, repos, query.test))
    found.sort(key=lambda pair: _sort_key(sort, *pair), reverse=params.get("order", "desc") != "asc")
    # Pages past the first 1,000 results are not offered (the Link's last page stops there).
    reachable = found[:RESULT_LIMIT]
    chunk, headers = paginate(request, reachable)
    # An item's `body` is a string in GitHub's description of a search result (not nullable, unlike an
    # issue's): an issue without one is answered "".
    items = [
        {**ctx.shapes.issue(repo, issue), "body": issue.body or "", "score": 1.0} for repo, issue in chunk
    ]
    # `search_type` (lexical, semantic or hybrid) is required by GitHub's current description.
    answer = {
        "total_count": len(found),
        "incomplete_results": False,
        "items": items,
        "search_type": "lexical",
    }
    return json_response(request, answer, headers=headers)


def routes() -> list[BaseRoute]:
    return [Route("/search/issues", search_issues, methods=["GET"])]
