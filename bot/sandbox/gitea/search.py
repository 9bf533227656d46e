"""Gitea's issue search across repositories: `GET /api/v1/repos/issues/search`.

routers/api/v1/repo/issue.go SearchIssues: the issues (and pull requests) of the repositories the caller
may read, newest first, filtered by `state` (default open), `labels` and `milestones` (any of the names),
`q` (keywords, through the issue indexer: they find an issue only once it is indexed, ``search_ops``),
`type`, `since`/`before` (updated), `owner`, `created_by`, and `created`/`assigned`/`mentioned`/`reviewed`
(about the caller); paged by `page`/`limit` with `X-Total-Count`.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared import search_ops
from bot.sandbox.shared.plumbing import ApiError, json_response
from bot.sandbox.shared.state import Issue, Repo

from .context import API, GCtx, gitea_page


def _names(raw: str | None) -> set[str]:
    return {n.strip().casefold() for n in (raw or "").split(",") if n.strip()}


def _keep(ctx: GCtx, request: Request, repo: Repo, issue: Issue) -> bool:
    q = request.query_params
    me = ctx.login.casefold()
    state = q.get("state", "open")
    if state != "all" and issue.state != state:
        return False
    if q.get("type") in ("issues", "pulls") and (issue.pull is not None) != (q["type"] == "pulls"):
        return False
    labels = _names(q.get("labels"))
    if labels and not labels & {repo.labels[i].name.casefold() for i in issue.label_ids if i in repo.labels}:
        return False
    milestones = _names(q.get("milestones"))
    milestone = repo.milestones.get(issue.milestone) if issue.milestone is not None else None
    if milestones and (milestone is None or milestone.title.casefold() not in milestones):
        return False
    if q.get("since") and issue.updated_at < q["since"]:
        return False
    if q.get("before") and issue.updated_at > q["before"]:
        return False
    if q.get("created_by") and issue.user.casefold() != q["created_by"].casefold():
        return False
    flags = {
        "created": issue.user.casefold() == me,
        "assigned": me in {a.casefold() for a in issue.assignees},
        "mentioned": f"@{me}" in (issue.body or "").casefold(),
        "reviewed": any(r.user.casefold() == me for r in issue.reviews),
        "review_requested": False,
    }
    return all(flags[flag] for flag in flags if q.get(flag) == "true")


async def search_issues(request: Request) -> Response:
    ctx = GCtx(request)
    q = request.query_params
    if q.get("state", "open") not in ("open", "closed", "all"):
        raise ApiError(422, "invalid state")
    repos = search_ops.readable(ctx.forge, ctx.login)
    if q.get("owner"):
        repos = [r for r in repos if r.owner.casefold() == q["owner"].casefold()]
    if q.get("q"):
        search_ops.refresh(ctx.sandbox.search_index, repos, ctx.sandbox.search_lag)
        test = search_ops.keyword_test(q["q"])
        found = list(search_ops.matches(ctx.sandbox.search_index, ctx.forge, repos, test))
    else:
        # No keywords: Gitea asks its database, which is never behind (``search_ops``).
        found = [(r, i) for r in repos for i in r.issues.values()]
    found = [(r, i) for r, i in found if _keep(ctx, request, r, i)]
    found.sort(key=lambda pair: (pair[1].created_at, pair[1].id), reverse=True)
    chunk, headers = gitea_page(request, found)
    return json_response(request, [ctx.shapes.issue(r, i) for r, i in chunk], headers=headers)


def routes() -> list[BaseRoute]:
    # Before `/repos/{owner}/{repo}`, which would read `issues/search` as a repository.
    return [Route(API + "/repos/issues/search", search_issues, methods=["GET"])]
