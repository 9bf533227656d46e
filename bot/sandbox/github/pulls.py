"""GitHub's pull requests over the sandbox state: open, read, list, their commits and files, merge."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared import fork_ops, gitmodel, pull_ops, pulls
from bot.sandbox.shared.plumbing import ApiError, body_object, json_response, paginate, validation_failed
from bot.sandbox.shared.state import Issue, Repo

from .code_shapes import pull, pull_commit
from .context import Ctx

# GitHub caps these lists (REST docs: "list commits on a pull request" 250, "list pull request files" 3000).
MAX_PR_COMMITS = 250
MAX_PR_FILES = 3000


def _custom(message: str) -> ApiError:
    return ApiError(
        422, "Validation Failed", [{"resource": "PullRequest", "code": "custom", "message": message}]
    )


def _branch_name(repo: Repo, given: Any, field: str) -> str:
    """`branch` or `owner:branch` of this repository (forks are not modelled)."""
    if not isinstance(given, str) or not given:
        raise validation_failed("PullRequest", field, "missing_field")
    owner, sep, name = given.rpartition(":")
    if sep and owner.casefold() != repo.owner.casefold():
        raise validation_failed("PullRequest", field, "invalid")
    if pulls.branch_head(repo, name) is None:
        raise validation_failed("PullRequest", field, "invalid")
    return name


def _head(ctx: Ctx, repo: Repo, given: Any) -> tuple[Repo | None, str]:
    """`branch` or `owner:branch`: of this repository, or of `owner`'s fork of it (REST docs "Create a pull
    request": "namespace head with a user like this: username:branch")."""
    if not isinstance(given, str) or not given:
        raise validation_failed("PullRequest", "head", "missing_field")
    try:
        head_repo, branch = fork_ops.head_of(ctx, repo, given)
    except ApiError:
        raise validation_failed("PullRequest", "head", "invalid") from None
    if pulls.branch_head(head_repo or repo, branch) is None:
        raise validation_failed("PullRequest", "head", "invalid")
    return head_repo, branch


def _pull(ctx: Ctx, repo: Repo) -> Issue:
    found = repo.issues.get(ctx.int_param("pull_number"))
    if found is None or found.pull is None:
        raise ctx.not_found()
    return found


@Ctx.on_repo()
async def create_pull(request: Request, ctx: Ctx, repo: Repo) -> Response:
    body = await body_object(request)
    title = body.get("title")
    if not isinstance(title, str) or not title.strip():
        raise validation_failed("PullRequest", "title", "missing_field")
    ctx.check_body("PullRequest", body.get("body"))
    base = _branch_name(repo, body.get("base"), "base")
    head_repo, head = _head(ctx, repo, body.get("head"))
    head_key = fork_ops.key(head_repo) if head_repo is not None else None
    if pulls.open_pull_for(repo, head, base, head_key) is not None:
        # FORGE-FACTS "Writes that fail": 422 "A pull request already exists for owner:branch."
        raise _custom(f"A pull request already exists for {(head_repo or repo).owner}:{head}.")
    head_sha, base_sha = pulls.branch_head(head_repo or repo, head), pulls.branch_head(repo, base)
    if (head_repo is None and head == base) or head_sha == base_sha or head_sha in _ancestors(repo, base_sha):
        raise _custom(f"No commits between {base} and {head}")
    draft = bool(body.get("draft", False))
    if draft and not repo.drafts_allowed:
        # FORGE-FACTS "Draft PRs": drafts only where the plan has them (POST /pulls description).
        raise _custom("Draft pull requests are not supported in this repository.")
    issue = pull_ops.open_pull(
        ctx, repo, title=title, body=body.get("body"), head=head, base=base, draft=draft, head_repo=head_repo
    )
    return json_response(request, pull(ctx.shapes, repo, issue), status=201)


def _ancestors(repo: Repo, sha: str | None) -> list[str]:
    return gitmodel.ancestors(repo, sha) if sha else []


@Ctx.on_repo()
async def list_pulls(request: Request, ctx: Ctx, repo: Repo) -> Response:
    q = request.query_params
    state = q.get("state", "open")
    found = [i for i in pulls.pulls(repo) if state == "all" or i.state == state]
    if q.get("head"):
        owner, _, branch = q["head"].rpartition(":")
        found = [
            i
            for i in found
            if i.pull is not None
            and i.pull.head_ref == branch
            and (
                not owner or (i.pull.head_repo or repo.full_name).split("/")[0].casefold() == owner.casefold()
            )
        ]
    if q.get("base"):
        found = [i for i in found if i.pull is not None and i.pull.base_ref == q["base"]]
    key = q.get("sort", "created")
    found.sort(key=lambda i: (i.updated_at if key == "updated" else i.created_at, i.number))
    if q.get("direction", "desc") == "desc":
        found.reverse()
    chunk, headers = paginate(request, found)
    return json_response(request, [pull(ctx.shapes, repo, i, full=False) for i in chunk], headers=headers)


@Ctx.on_repo()
async def get_pull(request: Request, ctx: Ctx, repo: Repo) -> Response:
    return json_response(request, pull(ctx.shapes, repo, _pull(ctx, repo)))


@Ctx.on_repo()
async def update_pull(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """PATCH /repos/{o}/{r}/pulls/{n} — docs.github.com REST "Update a pull request": 200 with the pull
    request; `title`, `body`, `state` (open/closed), `base` (an existing branch, else 422); its author or
    someone with push access. Sends `pull_request` edited (with `changes`) and closed/reopened."""
    issue = _pull(ctx, repo)
    body = await body_object(request)
    ctx.check_body("PullRequest", body.get("body"))
    field = "base" if "base" in body else "state"
    pull_ops.edit_pull(ctx, repo, issue, body, validation_failed("PullRequest", field, "invalid"))
    return json_response(request, pull(ctx.shapes, repo, issue))


@Ctx.on_repo()
async def pull_commits(request: Request, ctx: Ctx, repo: Repo) -> Response:
    commits = pulls.commits_of(repo, _pull(ctx, repo))[:MAX_PR_COMMITS]
    chunk, headers = paginate(request, commits)
    return json_response(request, [pull_commit(ctx.shapes, repo, c.sha) for c in chunk], headers=headers)


@Ctx.on_repo()
async def pull_files(request: Request, ctx: Ctx, repo: Repo) -> Response:
    issue = _pull(ctx, repo)
    assert issue.pull is not None
    entries = ctx.shapes.diff_entries(repo, pulls.start_of(repo, issue), issue.pull.head_sha)[:MAX_PR_FILES]
    chunk, headers = paginate(request, entries)
    return json_response(request, chunk, headers=headers)


@Ctx.on_repo("push")
async def merge_pull(request: Request, ctx: Ctx, repo: Repo) -> Response:
    issue = _pull(ctx, repo)
    body = await body_object(request)
    method = str(body.get("merge_method") or "merge")
    if method not in ("merge", "squash", "rebase"):
        raise validation_failed("PullRequest", "merge_method", "invalid")
    merged = pull_ops.merge(
        ctx,
        repo,
        issue,
        method=method,
        title=body.get("commit_title"),
        message=body.get("commit_message"),
        expected_head=body.get("sha"),
        not_mergeable=ApiError(405, "Pull Request is not mergeable"),
        head_moved=ApiError(409, "Head branch was modified. Review and try the merge again."),
    )
    answer = {"sha": merged.sha, "merged": True, "message": "Pull Request successfully merged"}
    return json_response(request, answer)


def routes(r: str) -> list[BaseRoute]:
    p = r + "/pulls/{pull_number:int}"
    return [
        Route(r + "/pulls", list_pulls, methods=["GET"]),
        Route(r + "/pulls", create_pull, methods=["POST"]),
        Route(p, get_pull, methods=["GET"]),
        Route(p, update_pull, methods=["PATCH"]),
        Route(p + "/commits", pull_commits, methods=["GET"]),
        Route(p + "/files", pull_files, methods=["GET"]),
        Route(p + "/merge", merge_pull, methods=["PUT"]),
    ]
