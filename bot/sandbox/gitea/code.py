"""Gitea's branches, multi-file commits, commits, pull requests and commit statuses, at ``/api/v1/repos/…``.

Gitea has no git data write API (FORGE-FACTS "Branches, commits, pull requests, statuses"): a commit, and
with ``new_branch`` the branch it starts, is made through ``POST /repos/{owner}/{repo}/contents``.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared import ci_ops, fork_ops, gitmodel, pull_ops, pulls
from bot.sandbox.shared.plumbing import ApiError, body_object, json_response
from bot.sandbox.shared.state import CommitStatus, Issue, Repo, Signature

from .context import API, GCtx, gitea_page, unprocessable

# branches -------------------------------------------------------------------------------------------------


@GCtx.on_repo()
async def get_branch(request: Request, ctx: GCtx, repo: Repo) -> Response:
    name = ctx.param("branch")
    sha = pulls.branch_head(repo, name)
    if sha is None:
        raise ApiError(404, f"branch does not exist [name: {name}]")
    return json_response(request, ctx.shapes.branch(repo, name, sha, ctx.login))


@GCtx.on_repo("push")
async def create_branch(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """`new_branch_name` from `old_ref_name` (or the older `old_branch_name`; FORGE-FACTS)."""
    body = await body_object(request)
    name = body.get("new_branch_name")
    if not isinstance(name, str) or not name:
        raise unprocessable("[BranchName]: Required")
    old = str(body.get("old_ref_name") or body.get("old_branch_name") or repo.default_branch)
    sha = gitmodel.resolve(repo, old)
    if sha is None:
        raise ApiError(404, f"the old branch does not exist [name: {old}]")
    if pulls.branch_head(repo, name) is not None:
        raise ApiError(409, "The branch already exists.")
    repo.refs[f"refs/heads/{name}"] = sha
    pull_ops.pushed(ctx, repo, f"refs/heads/{name}", None, sha)
    return json_response(request, ctx.shapes.branch(repo, name, sha, ctx.login), status=201)


# commits ---------------------------------------------------------------------------------------------------


def signatures(ctx: GCtx, body: dict[str, Any]) -> tuple[Signature, Signature]:
    """A contents commit's author and committer: the `author` and `committer` Identity of FileOptions
    (swagger), as services/repository/files GetAuthorAndCommitterUsers takes them — if only one of the two
    is given both are it, if neither both are the doer."""

    def identity(raw: Any) -> Signature | None:
        if isinstance(raw, dict) and raw.get("email"):
            return Signature(name=str(raw.get("name") or raw["email"]), email=str(raw["email"]))
        return None

    author, committer = identity(body.get("author")), identity(body.get("committer"))
    me = Signature(name=ctx.login, email=f"{ctx.login}@noreply.sandbox")
    return (author or committer or me), (committer or author or me)


@GCtx.on_repo("push")
async def change_files(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """routers/api/v1/repo/file.go ChangeFiles: one commit of every file operation, on `branch` or on a new
    branch `new_branch` made from it; errors as handleChangeRepoFilesError words them."""
    body = await body_object(request)
    operations = body.get("files")
    if not isinstance(operations, list) or not operations:
        raise unprocessable("[Files]: Required")
    branch = str(body.get("branch") or repo.default_branch)
    head = pulls.branch_head(repo, branch)
    if head is None:
        raise ApiError(404, f"branch does not exist [name: {branch}]")
    new_branch = body.get("new_branch") or None
    if new_branch is not None and pulls.branch_head(repo, str(new_branch)) is not None:
        raise unprocessable(f"branch already exists [name: {new_branch}]")
    files = gitmodel.flatten(repo, repo.commits[head].tree)
    for op in operations:
        _apply(repo, files, op)
    author, committer = signatures(ctx, body)
    message = str(body.get("message") or "Update files")
    tree = gitmodel.write_tree(repo, files)
    commit = gitmodel.make_commit(repo, tree, [head], message, author, committer)
    target = str(new_branch or branch)
    before = None if new_branch else head
    repo.refs[f"refs/heads/{target}"] = commit.sha
    pull_ops.pushed(ctx, repo, f"refs/heads/{target}", before, commit.sha)
    answered: list[dict[str, Any] | None] = []
    for op in operations:
        path = str(op["path"]).strip("/")
        entry = files.get(path)
        answered.append(ctx.shapes.content(repo, path, entry[1], target, commit.sha) if entry else None)
    out = {"files": answered, "commit": file_commit(ctx, repo, commit.sha), "verification": None}
    return json_response(request, out, status=201)


def _apply(repo: Repo, files: dict[str, tuple[str, str]], op: Any) -> None:
    if not isinstance(op, dict) or not isinstance(op.get("path"), str) or not op["path"].strip("/"):
        raise unprocessable("[Path]: Required")
    path, kind = op["path"].strip("/"), op.get("operation")
    current = files.get(path)
    if kind not in ("create", "update", "upload", "delete"):
        raise unprocessable(f"invalid operation: {kind}")
    if kind == "create" and current is not None:
        raise unprocessable(f"repository file already exists [path: {path}]")
    if kind in ("update", "delete"):
        if current is None:
            raise ApiError(404, f"repository file does not exist [path: {path}]")
        if not op.get("sha"):
            raise unprocessable("a SHA or commit ID must be provided when updating a file")
        if op["sha"] != current[1]:
            raise unprocessable(f"sha does not match [given: {op['sha']}, expected: {current[1]}]")
    if kind == "delete":
        del files[path]
        return
    try:
        data = base64.b64decode(str(op.get("content", "")), validate=True)
    except (binascii.Error, ValueError):
        raise unprocessable("content must be base64") from None
    files[path] = (current[0] if current else "100644", gitmodel.put_blob(repo, data))


def file_commit(ctx: GCtx, repo: Repo, sha: str) -> dict[str, Any]:
    shaped = ctx.shapes.commit(repo, sha, files=False)
    inner = shaped["commit"]
    return {
        "url": shaped["url"],
        "sha": sha,
        "created": shaped["created"],
        "html_url": shaped["html_url"],
        "author": inner["author"],
        "committer": inner["committer"],
        "parents": shaped["parents"],
        "message": inner["message"],
        "tree": {
            "url": f"{ctx.shapes.api}/repos/{repo.full_name}/git/trees/{repo.commits[sha].tree}",
            "sha": repo.commits[sha].tree,
        },
    }


@GCtx.on_repo()
async def get_commit(request: Request, ctx: GCtx, repo: Repo) -> Response:
    sha = gitmodel.resolve(repo, ctx.param("sha"))
    if sha is None:
        raise ApiError(404, f"object does not exist [id: {ctx.param('sha')}, rel_path: ]")
    with_files = request.query_params.get("files", "true") != "false"
    return json_response(request, ctx.shapes.commit(repo, sha, files=with_files))


# routers/api/v1/repo/tree.go GetTree → services/repository/files/tree.go GetTreeBySHA: a commit sha, a tree
# sha or a ref name; any error is a 400 (not a 404). `recursive` lists every entry below (trees and blobs, by
# full path); `per_page` is capped at [api] DEFAULT_GIT_TREES_PER_PAGE (1,000, also its default), `page`
# starts at 1, and `truncated` says more entries follow this page.
GIT_TREES_PER_PAGE = 1000


def _tree_entries(repo: Repo, tree_sha: str, prefix: str, recursive: bool) -> list[tuple[str, str, str, str]]:
    out: list[tuple[str, str, str, str]] = []
    for entry in repo.trees[tree_sha].entries:
        path = prefix + entry.name
        out.append((path, entry.mode, entry.type, entry.sha))
        if recursive and entry.type == "tree":
            out += _tree_entries(repo, entry.sha, path + "/", recursive)
    return out


@GCtx.on_repo()
async def get_tree(request: Request, ctx: GCtx, repo: Repo) -> Response:
    wanted = ctx.param("sha")
    sha = wanted if wanted in repo.trees else gitmodel.resolve(repo, wanted)
    if sha in repo.commits:
        sha = repo.commits[sha].tree
    if sha is None or sha not in repo.trees:
        raise ApiError(400, f"object does not exist [id: {wanted}, rel_path: ]")
    recursive = request.query_params.get("recursive", "").lower() in ("1", "true", "t")
    try:
        page = int(request.query_params.get("page") or 1)
        per_page = int(request.query_params.get("per_page") or 0)
    except ValueError:
        raise ApiError(422, "page and per_page must be numbers") from None
    per_page = per_page if 0 < per_page <= GIT_TREES_PER_PAGE else GIT_TREES_PER_PAGE
    page = max(page, 1)
    entries = _tree_entries(repo, sha, "", recursive)
    start = per_page * (page - 1)
    shown = entries[start : start + per_page]
    api = f"{ctx.shapes.api}/repos/{repo.full_name}/git"
    tree = [
        {
            "path": path,
            "mode": mode,
            "type": kind,
            "size": len(gitmodel.blob_bytes(repo, entry_sha)) if kind == "blob" else 0,
            "sha": entry_sha,
            "url": f"{api}/{'blobs' if kind == 'blob' else 'trees'}/{entry_sha}",
        }
        for path, mode, kind, entry_sha in shown
    ]
    shape = {
        "sha": sha,
        "url": f"{api}/trees/{sha}",
        "tree": tree,
        "truncated": start + per_page < len(entries),
        "page": page,
        "total_count": len(entries),
    }
    return json_response(request, shape, headers={"X-Total-Count": str(len(entries))})


# pull requests ---------------------------------------------------------------------------------------------


def _pull(ctx: GCtx, repo: Repo) -> Issue:
    found = repo.issues.get(ctx.int_param("index"))
    if found is None or found.pull is None:
        raise ApiError(404, "pull request does not exist")
    return found


@GCtx.on_repo()
async def create_pull(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """routers/api/v1/repo/pull.go CreatePullRequest; a draft is a title with a WIP prefix (no field)."""
    body = await body_object(request)
    title = body.get("title")
    if not isinstance(title, str) or not title.strip():
        raise unprocessable("[Title]: Required")
    try:
        head_repo, head = fork_ops.head_of(ctx, repo, str(body.get("head") or ""))
    except ApiError:
        raise ApiError(404, "The target couldn't be found.") from None
    base = str(body.get("base") or "")
    if pulls.branch_head(repo, base) is None or pulls.branch_head(head_repo or repo, head) is None:
        raise ApiError(404, "The target couldn't be found.")
    existing = pulls.open_pull_for(repo, head, base, fork_ops.key(head_repo) if head_repo else None)
    if existing is not None:
        # models/issues/pull.go ErrPullRequestAlreadyExists, answered 409.
        raise ApiError(
            409,
            f"pull request already exists for these targets [id: {existing.id}, issue_id: {existing.number}, "
            f"head_repo_id: {(head_repo or repo).id}, base_repo_id: {repo.id}, head_branch: {head}, "
            f"base_branch: {base}]",
        )
    head_sha, base_sha = pulls.branch_head(head_repo or repo, head), pulls.branch_head(repo, base)
    if (
        (head_repo is None and head == base)
        or head_sha == base_sha
        or (base_sha and head_sha in gitmodel.ancestors(repo, base_sha))
    ):
        raise unprocessable("There are no changes between the head and the base")
    issue = pull_ops.open_pull(
        ctx,
        repo,
        title=title,
        body=str(body.get("body") or ""),
        head=head,
        base=base,
        draft=False,
        head_repo=head_repo,
    )
    return json_response(request, ctx.shapes.pull(repo, issue), status=201)


@GCtx.on_repo()
async def list_pulls(request: Request, ctx: GCtx, repo: Repo) -> Response:
    q = request.query_params
    state = q.get("state", "open")
    found = [i for i in pulls.pulls(repo) if state == "all" or i.state == state]
    if q.get("base_branch"):
        found = [i for i in found if i.pull is not None and i.pull.base_ref == q["base_branch"]]
    found.sort(key=lambda i: i.number, reverse=q.get("sort") != "oldest")
    chunk, headers = gitea_page(request, found)
    return json_response(request, [ctx.shapes.pull(repo, i) for i in chunk], headers=headers)


@GCtx.on_repo()
async def get_pull(request: Request, ctx: GCtx, repo: Repo) -> Response:
    return json_response(request, ctx.shapes.pull(repo, _pull(ctx, repo)))


@GCtx.on_repo()
async def edit_pull(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """PATCH /api/v1/repos/{o}/{r}/pulls/{index} — routers/api/v1/repo/pull.go EditPullRequest: 201 with
    the pull request; `title`, `body`, `state`, `base` (a missing branch 404). Gitea has no draft field: a
    pull request is ready once its title loses the WIP prefix (models/issues/pull.go
    HasWorkInProgressPrefix)."""
    issue = _pull(ctx, repo)
    body = await body_object(request)
    if body.get("base") is not None and pulls.branch_head(repo, str(body["base"])) is None:
        raise ApiError(404, f"branch {body['base']} does not exist")
    pull_ops.edit_pull(ctx, repo, issue, body, unprocessable("[State]: invalid state"))
    return json_response(request, ctx.shapes.pull(repo, issue), status=201)


@GCtx.on_repo()
async def pull_commits(request: Request, ctx: GCtx, repo: Repo) -> Response:
    commits = pulls.commits_of(repo, _pull(ctx, repo))
    chunk, headers = gitea_page(request, commits)
    with_files = request.query_params.get("files", "true") != "false"
    return json_response(
        request, [ctx.shapes.commit(repo, c.sha, files=with_files) for c in chunk], headers=headers
    )


@GCtx.on_repo()
async def pull_files(request: Request, ctx: GCtx, repo: Repo) -> Response:
    issue = _pull(ctx, repo)
    assert issue.pull is not None
    entries = ctx.shapes.changed_files(repo, pulls.start_of(repo, issue), issue.pull.head_sha)
    chunk, headers = gitea_page(request, entries)
    return json_response(request, chunk, headers=headers)


@GCtx.on_repo("push")
async def merge_pull(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """`Do`: merge, squash, rebase (others as merge); answers 200 with no body, 405 when it cannot."""
    issue = _pull(ctx, repo)
    body = await body_object(request)
    do = str(body.get("Do") or body.get("do") or "")
    if not do:
        raise unprocessable("[Do]: Required")
    pull_ops.merge(
        ctx,
        repo,
        issue,
        method=do if do in ("squash", "rebase") else "merge",
        title=body.get("MergeTitleField") or body.get("merge_title_field"),
        message=body.get("MergeMessageField") or body.get("merge_message_field"),
        expected_head=body.get("head_commit_id"),
        not_mergeable=ApiError(405, "The PR is not mergeable"),
        head_moved=ApiError(409, "head out of date"),
    )
    return Response(status_code=200)


# statuses ---------------------------------------------------------------------------------------------------


@GCtx.on_repo("push")
async def create_status(request: Request, ctx: GCtx, repo: Repo) -> Response:
    sha = ctx.param("sha")
    if sha not in repo.commits:
        raise ApiError(404, f"object does not exist [id: {sha}, rel_path: ]")
    body = await body_object(request)
    # Gitea's CommitStatusState (FORGE-FACTS): six states where GitHub has four.
    if body.get("state") not in ("pending", "success", "error", "failure", "warning", "skipped"):
        raise ApiError(400, "invalid state")
    status = ci_ops.set_status(
        ctx.events,
        repo,
        sha,
        state=str(body["state"]),
        context=str(body.get("context") or "default"),
        description=body.get("description"),
        target_url=body.get("target_url"),
        creator=ctx.login,
    )
    return json_response(request, ctx.shapes.status(repo, status), status=201)


@GCtx.on_repo()
async def list_statuses(request: Request, ctx: GCtx, repo: Repo) -> Response:
    sha = gitmodel.resolve(repo, ctx.param("ref"))
    if sha is None:
        raise ApiError(404, f"object does not exist [id: {ctx.param('ref')}, rel_path: ]")
    found = [s for s in reversed(repo.statuses) if s.sha == sha]
    if request.query_params.get("state"):
        found = [s for s in found if s.state == request.query_params["state"]]
    chunk, headers = gitea_page(request, found)
    return json_response(request, [ctx.shapes.status(repo, s) for s in chunk], headers=headers)


# modules/structs/commit_status.go commitStatusPriorities: the combined state is the worst latest status.
_PRIORITY = ("error", "failure", "warning", "pending", "success", "skipped")


@GCtx.on_repo()
async def combined_status(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """GET /commits/{ref}/status: the latest status of each context, and the worst of them as the state
    (models/git/commit_status.go CalcCommitStatus)."""
    sha = gitmodel.resolve(repo, ctx.param("ref"))
    if sha is None:
        raise ApiError(404, f"object does not exist [id: {ctx.param('ref')}, rel_path: ]")
    latest: dict[str, CommitStatus] = {}
    for status in repo.statuses:
        if status.sha == sha:
            latest[status.context] = status
    states = [s.state for s in latest.values()]
    state = min(states, key=_PRIORITY.index) if states else "pending"
    api = f"{ctx.shapes.api}/repos/{repo.full_name}"
    body = {
        "state": state,
        "sha": sha,
        "total_count": len(latest),
        "statuses": [ctx.shapes.status(repo, s) for s in latest.values()],
        "repository": ctx.shapes.repo(repo, ctx.login),
        "commit_url": f"{api}/commits/{sha}",
        "url": f"{api}/commits/{sha}/status",
    }
    return json_response(request, body)


def routes() -> list[BaseRoute]:
    r = API + "/repos/{owner}/{repo}"
    p = r + "/pulls/{index:int}"
    return [
        Route(r + "/branches", create_branch, methods=["POST"]),
        Route(r + "/branches/{branch:path}", get_branch, methods=["GET"]),
        Route(r + "/contents", change_files, methods=["POST"]),
        Route(r + "/git/commits/{sha}", get_commit, methods=["GET"]),
        Route(r + "/git/trees/{sha}", get_tree, methods=["GET"]),
        Route(r + "/pulls", list_pulls, methods=["GET"]),
        Route(r + "/pulls", create_pull, methods=["POST"]),
        Route(p, get_pull, methods=["GET"]),
        Route(p, edit_pull, methods=["PATCH"]),
        Route(p + "/commits", pull_commits, methods=["GET"]),
        Route(p + "/files", pull_files, methods=["GET"]),
        Route(p + "/merge", merge_pull, methods=["POST"]),
        Route(r + "/statuses/{sha}", create_status, methods=["POST"]),
        Route(r + "/commits/{ref:path}/statuses", list_statuses, methods=["GET"]),
        Route(r + "/commits/{ref:path}/status", combined_status, methods=["GET"]),
    ]
