"""GitHub's git database, contents, commits and commit-status endpoints over the sandbox's git model."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared import ci_ops, gitmodel, pull_ops
from bot.sandbox.shared.gitmodel import GitError
from bot.sandbox.shared.plumbing import (
    ApiError,
    body_object,
    json_response,
    no_content,
    paginate,
    validation_failed,
)
from bot.sandbox.shared.state import CommitStatus, GitCommit, Repo, Signature, now_iso

from .context import Ctx
from .shapes import node_id

ZERO = "0" * 40
STATUS_DESCRIPTION_LIMIT = 140


def emit_push(
    ctx: Ctx, repo: Repo, ref: str, before: str | None, after: str | None, forced: bool = False
) -> None:
    repo.pushed_at = now_iso()
    commits = (
        [ctx.shapes.push_commit(repo, c) for c in gitmodel.new_commits(repo, before, after)] if after else []
    )
    html = f"{ctx.base}/{repo.full_name}"
    if before and after:
        compare = f"{html}/compare/{before[:12]}...{after[:12]}"
    else:
        compare = f"{html}/compare/{ref.removeprefix('refs/heads/')}"
    head = ctx.shapes.push_commit(repo, repo.commits[after]) if after else None
    user = ctx.forge.user(ctx.acting)
    ctx.emit(
        repo,
        "push",
        None,
        ref=ref,
        before=before or ZERO,
        after=after or ZERO,
        created=before is None,
        deleted=after is None,
        forced=forced,
        base_ref=None,
        compare=compare,
        commits=commits,
        head_commit=head,
        pusher={
            "name": ctx.acting,
            "email": (user.email if user else None) or f"{ctx.acting}@users.noreply.sandbox",
        },
    )


def _signature(ctx: Ctx, raw: Any) -> Signature:
    if isinstance(raw, dict) and raw.get("name") and raw.get("email"):
        return Signature(
            name=str(raw["name"]), email=str(raw["email"]), date=str(raw.get("date") or now_iso())
        )
    return Signature(name=ctx.login, email=f"{ctx.login}@users.noreply.sandbox")


# contents ------------------------------------------------------------------------------------------------


def _path(ctx: Ctx) -> str:
    return str(ctx.request.path_params.get("path", "")).strip("/")


@Ctx.on_repo()
async def get_content(request: Request, ctx: Ctx, repo: Repo) -> Response:
    ref = request.query_params.get("ref") or repo.default_branch
    sha = gitmodel.resolve(repo, ref)
    if sha is None:
        raise ApiError(404, f"No commit found for the ref {ref}")
    path = _path(ctx)
    entry = gitmodel.lookup(repo, repo.commits[sha].tree, path)
    if entry is None:
        raise ApiError(404, "Not Found")
    if entry.type == "blob":
        return json_response(request, ctx.shapes.content(repo, path, entry.sha, ref))
    listing: list[dict[str, Any]] = []
    for child in repo.trees[entry.sha].entries:
        child_path = f"{path}/{child.name}" if path else child.name
        if child.type == "blob":
            listing.append(ctx.shapes.content(repo, child_path, child.sha, ref, with_body=False))
        else:
            url = f"{ctx.base}/repos/{repo.full_name}/contents/{child_path}?ref={ref}"
            git_url = f"{ctx.base}/repos/{repo.full_name}/git/trees/{child.sha}"
            html = f"{ctx.base}/{repo.full_name}/tree/{ref}/{child_path}"
            listing.append(
                {
                    "type": "dir",
                    "size": 0,
                    "name": child.name,
                    "path": child_path,
                    "sha": child.sha,
                    "url": url,
                    "git_url": git_url,
                    "html_url": html,
                    "download_url": None,
                    "_links": {"self": url, "git": git_url, "html": html},
                }
            )
    return json_response(request, listing)


def _branch_head(repo: Repo, branch: str) -> str:
    head = repo.refs.get(f"refs/heads/{branch}")
    if head is None:
        raise ApiError(404, f"Branch {branch} not found")
    return head


def _check_sha(path: str, current: str | None, given: Any) -> None:
    if current is not None and not given:
        raise ApiError(422, 'Invalid request.\n\n"sha" wasn\'t supplied.')
    if current is not None and given != current:
        raise ApiError(409, f"{path} does not match {given}")


@Ctx.on_repo("push")
async def put_content(request: Request, ctx: Ctx, repo: Repo) -> Response:
    body = await body_object(request)
    path = _path(ctx)
    if not isinstance(body.get("message"), str) or not isinstance(body.get("content"), str):
        raise ApiError(422, 'Invalid request.\n\n"message" and "content" are required.')
    try:
        data = base64.b64decode(body["content"], validate=False)
    except (binascii.Error, ValueError):
        raise ApiError(422, "content is not valid Base64") from None
    branch = str(body.get("branch") or repo.default_branch)
    head = _branch_head(repo, branch)
    files = gitmodel.flatten(repo, repo.commits[head].tree)
    current = files.get(path)
    _check_sha(path, current[1] if current else None, body.get("sha"))
    blob = gitmodel.put_blob(repo, data)
    files[path] = (current[0] if current else "100644", blob)
    commit = _commit_files(ctx, repo, body, files, head)
    repo.refs[f"refs/heads/{branch}"] = commit.sha
    pull_ops.pushed(ctx, repo, f"refs/heads/{branch}", head, commit.sha)
    out = {
        "content": ctx.shapes.content(repo, path, blob, branch, with_body=False),
        "commit": ctx.shapes.git_commit(repo, commit),
    }
    return json_response(request, out, status=200 if current else 201)


@Ctx.on_repo("push")
async def delete_content(request: Request, ctx: Ctx, repo: Repo) -> Response:
    body = await body_object(request)
    path = _path(ctx)
    branch = str(body.get("branch") or repo.default_branch)
    head = _branch_head(repo, branch)
    files = gitmodel.flatten(repo, repo.commits[head].tree)
    current = files.get(path)
    if current is None:
        raise ApiError(404, "Not Found")
    _check_sha(path, current[1], body.get("sha"))
    del files[path]
    commit = _commit_files(ctx, repo, body, files, head)
    repo.refs[f"refs/heads/{branch}"] = commit.sha
    pull_ops.pushed(ctx, repo, f"refs/heads/{branch}", head, commit.sha)
    return json_response(request, {"content": None, "commit": ctx.shapes.git_commit(repo, commit)})


def _commit_files(
    ctx: Ctx, repo: Repo, body: dict[str, Any], files: dict[str, tuple[str, str]], parent: str
) -> GitCommit:
    tree = gitmodel.write_tree(repo, files)
    author = _signature(ctx, body.get("author") or body.get("committer"))
    committer = _signature(ctx, body.get("committer") or body.get("author"))
    return gitmodel.make_commit(repo, tree, [parent], str(body.get("message", "")), author, committer)


# refs ----------------------------------------------------------------------------------------------------


def _ref_shape(ctx: Ctx, repo: Repo, ref: str) -> dict[str, Any]:
    api = f"{ctx.base}/repos/{repo.full_name}/git"
    sha = repo.refs[ref]
    return {
        "ref": ref,
        "node_id": node_id("Ref", f"{repo.id}:{ref}"),
        "url": f"{api}/{ref}",
        "object": {"type": "commit", "sha": sha, "url": f"{api}/commits/{sha}"},
    }


@Ctx.on_repo()
async def get_ref(request: Request, ctx: Ctx, repo: Repo) -> Response:
    ref = gitmodel.full_ref(ctx.param("ref"))
    if ref not in repo.refs:
        raise ApiError(404, "Not Found")
    return json_response(request, _ref_shape(ctx, repo, ref))


@Ctx.on_repo()
async def list_refs(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """GET /repos/{o}/{r}/git/refs (and `/git/refs/`): every ref, by name — GitHub's older "List
    references", which the current description no longer lists but GitHub still answers (recorded by
    octokit/fixtures `git-refs`, tests/fixtures/github/octokit-fixtures/git-refs.json). Paged."""
    chunk, headers = paginate(request, sorted(repo.refs))
    return json_response(request, [_ref_shape(ctx, repo, r) for r in chunk], headers=headers)


@Ctx.on_repo()
async def matching_refs(request: Request, ctx: Ctx, repo: Repo) -> Response:
    prefix = gitmodel.full_ref(ctx.param("ref"))
    found = sorted(r for r in repo.refs if r.startswith(prefix))
    chunk, headers = paginate(request, found)
    return json_response(request, [_ref_shape(ctx, repo, r) for r in chunk], headers=headers)


@Ctx.on_repo("push")
async def create_ref(request: Request, ctx: Ctx, repo: Repo) -> Response:
    body = await body_object(request)
    ref, sha = body.get("ref"), body.get("sha")
    if not isinstance(ref, str) or not ref.startswith("refs/") or ref.count("/") < 2:
        raise ApiError(422, "Reference name must start with 'refs/' and have at least two slashes.")
    if not isinstance(sha, str) or sha not in repo.commits:
        raise ApiError(422, "Object does not exist")
    if ref in repo.refs:
        raise ApiError(422, "Reference already exists")
    repo.refs[ref] = sha
    pull_ops.pushed(ctx, repo, ref, None, sha)
    shaped = _ref_shape(ctx, repo, ref)
    # GitHub names the new ref in a Location header (octokit/fixtures `git-refs`).
    return json_response(request, shaped, status=201, headers={"Location": shaped["url"]})


@Ctx.on_repo("push")
async def update_ref(request: Request, ctx: Ctx, repo: Repo) -> Response:
    ref = gitmodel.full_ref(ctx.param("ref"))
    body = await body_object(request)
    sha = body.get("sha")
    if ref not in repo.refs:
        raise ApiError(422, "Reference does not exist")
    if not isinstance(sha, str) or sha not in repo.commits:
        raise ApiError(422, "Object does not exist")
    before = repo.refs[ref]
    fast_forward = before in gitmodel.ancestors(repo, sha)
    if not fast_forward and not body.get("force"):
        raise ApiError(422, "Update is not a fast forward")
    repo.refs[ref] = sha
    if sha != before:
        pull_ops.pushed(ctx, repo, ref, before, sha, forced=not fast_forward)
    return json_response(request, _ref_shape(ctx, repo, ref))


@Ctx.on_repo("push")
async def delete_ref(request: Request, ctx: Ctx, repo: Repo) -> Response:
    ref = gitmodel.full_ref(ctx.param("ref"))
    if ref not in repo.refs:
        raise ApiError(422, "Reference does not exist")
    before = repo.refs.pop(ref)
    pull_ops.pushed(ctx, repo, ref, before, None)
    return no_content()


# git objects ---------------------------------------------------------------------------------------------


@Ctx.on_repo("push")
async def create_blob(request: Request, ctx: Ctx, repo: Repo) -> Response:
    body = await body_object(request)
    content = body.get("content")
    if not isinstance(content, str):
        raise validation_failed("Blob", "content", "missing_field")
    try:
        data = base64.b64decode(content) if body.get("encoding") == "base64" else content.encode()
    except (binascii.Error, ValueError):
        raise ApiError(422, "content is not valid Base64") from None
    sha = gitmodel.put_blob(repo, data)
    url = f"{ctx.base}/repos/{repo.full_name}/git/blobs/{sha}"
    return json_response(request, {"url": url, "sha": sha}, status=201)


@Ctx.on_repo()
async def get_blob(request: Request, ctx: Ctx, repo: Repo) -> Response:
    sha = ctx.param("sha")
    if sha not in repo.blobs:
        raise ApiError(404, "Not Found")
    raw = gitmodel.blob_bytes(repo, sha)
    return json_response(
        request,
        {
            "sha": sha,
            "node_id": node_id("Blob", sha),
            "size": len(raw),
            "url": f"{ctx.base}/repos/{repo.full_name}/git/blobs/{sha}",
            "content": base64.b64encode(raw).decode(),
            "encoding": "base64",
        },
    )


@Ctx.on_repo("push")
async def create_tree(request: Request, ctx: Ctx, repo: Repo) -> Response:
    body = await body_object(request)
    entries = body.get("tree")
    if not isinstance(entries, list):
        raise validation_failed("Tree", "tree", "missing_field")
    try:
        files = gitmodel.flatten(repo, str(body["base_tree"])) if body.get("base_tree") else {}
        for entry in entries:
            path = str(entry.get("path", "")).strip("/")
            mode, kind = str(entry.get("mode", "100644")), entry.get("type", "blob")
            if "content" in entry and entry["content"] is not None:
                files[path] = (mode, gitmodel.put_blob(repo, str(entry["content"]).encode()))
                continue
            sha = entry.get("sha")
            for existing in [p for p in files if p == path or p.startswith(path + "/")]:
                del files[existing]
            if sha is None:
                continue
            if kind == "tree":
                files.update({f"{path}/{p}": v for p, v in gitmodel.flatten(repo, str(sha)).items()})
            elif sha in repo.blobs:
                files[path] = (mode, str(sha))
            else:
                raise GitError(f"no blob {sha}")
        tree = gitmodel.write_tree(repo, files)
    except (GitError, AttributeError) as exc:
        raise ApiError(422, f"tree.sha {exc} is not a valid object") from None
    return json_response(request, ctx.shapes.tree(repo, tree), status=201)


@Ctx.on_repo()
async def get_tree(request: Request, ctx: Ctx, repo: Repo) -> Response:
    sha = ctx.param("sha")
    resolved = sha if sha in repo.trees else gitmodel.resolve(repo, sha)
    if resolved in repo.commits:
        resolved = repo.commits[resolved].tree
    if resolved is None or resolved not in repo.trees:
        raise ApiError(404, "Not Found")
    shape = ctx.shapes.tree(repo, resolved)
    if request.query_params.get("recursive"):
        shape["tree"] = [
            {
                "path": p,
                "mode": m,
                "type": "blob",
                "sha": s,
                "url": f"{ctx.base}/repos/{repo.full_name}/git/blobs/{s}",
            }
            for p, (m, s) in sorted(gitmodel.flatten(repo, resolved).items())
        ]
    return json_response(request, shape)


@Ctx.on_repo("push")
async def create_commit(request: Request, ctx: Ctx, repo: Repo) -> Response:
    body = await body_object(request)
    if not isinstance(body.get("message"), str) or not isinstance(body.get("tree"), str):
        raise validation_failed("Commit", "message", "missing_field")
    author = _signature(ctx, body.get("author"))
    committer = _signature(ctx, body.get("committer") or body.get("author"))
    parents = [str(p) for p in body.get("parents") or []]
    try:
        commit = gitmodel.make_commit(repo, body["tree"], parents, body["message"], author, committer)
    except GitError as exc:
        raise ApiError(422, str(exc)) from None
    return json_response(request, ctx.shapes.git_commit(repo, commit), status=201)


def _commit_for(ctx: Ctx, repo: Repo) -> GitCommit:
    sha = gitmodel.resolve(repo, ctx.param("ref"))
    if sha is None:
        raise ApiError(422, f"No commit found for SHA: {ctx.param('ref')}")
    return repo.commits[sha]


@Ctx.on_repo()
async def get_git_commit(request: Request, ctx: Ctx, repo: Repo) -> Response:
    commit = repo.commits.get(ctx.param("sha"))
    if commit is None:
        raise ApiError(404, "Not Found")
    return json_response(request, ctx.shapes.git_commit(repo, commit))


@Ctx.on_repo()
async def get_commit(request: Request, ctx: Ctx, repo: Repo) -> Response:
    return json_response(request, ctx.shapes.commit(repo, _commit_for(ctx, repo)))


# statuses ------------------------------------------------------------------------------------------------


@Ctx.on_repo("push")
async def create_status(request: Request, ctx: Ctx, repo: Repo) -> Response:
    sha = ctx.param("sha")
    if sha not in repo.commits:
        raise ApiError(422, f"No commit found for SHA: {sha}")
    body = await body_object(request)
    if body.get("state") not in ("error", "failure", "pending", "success"):
        raise validation_failed("Status", "state", "custom", "state is not included in the list")
    description = body.get("description")
    if isinstance(description, str) and len(description) > STATUS_DESCRIPTION_LIMIT:
        # FORGE-FACTS "Branches, commits, pull requests, statuses": a description is at most 140 characters.
        raise validation_failed(
            "Status", "description", "custom", "description is too long (maximum is 140 characters)"
        )
    status = ci_ops.set_status(
        ctx.events,
        repo,
        sha,
        state=body["state"],
        context=str(body.get("context") or "default"),
        description=description,
        target_url=body.get("target_url"),
        creator=ctx.login,
    )
    return json_response(request, ctx.shapes.status(repo, status), status=201)


@Ctx.on_repo()
async def list_statuses(request: Request, ctx: Ctx, repo: Repo) -> Response:
    commit = _commit_for(ctx, repo)
    found = [s for s in reversed(repo.statuses) if s.sha == commit.sha]
    chunk, headers = paginate(request, found)
    return json_response(request, [ctx.shapes.status(repo, s) for s in chunk], headers=headers)


@Ctx.on_repo()
async def combined_status(request: Request, ctx: Ctx, repo: Repo) -> Response:
    commit = _commit_for(ctx, repo)
    latest: dict[str, CommitStatus] = {}
    for status in repo.statuses:
        if status.sha == commit.sha:
            latest[status.context] = status
    states = {s.state for s in latest.values()}
    if not latest or "pending" in states:
        state = "pending"
    elif states & {"error", "failure"}:
        state = "failure"
    else:
        state = "success"
    api = f"{ctx.base}/repos/{repo.full_name}"
    return json_response(
        request,
        {
            "state": state,
            "statuses": [ctx.shapes.status(repo, s) for s in latest.values()],
            "sha": commit.sha,
            "total_count": len(latest),
            "repository": ctx.shapes.repo(repo),
            "commit_url": f"{api}/commits/{commit.sha}",
            "url": f"{api}/commits/{commit.sha}/status",
        },
    )


def routes(r: str) -> list[BaseRoute]:
    g = r + "/git"
    return [
        Route(r + "/contents/{path:path}", get_content, methods=["GET"]),
        Route(r + "/contents/{path:path}", put_content, methods=["PUT"]),
        Route(r + "/contents/{path:path}", delete_content, methods=["DELETE"]),
        Route(g + "/ref/{ref:path}", get_ref, methods=["GET"]),
        Route(g + "/matching-refs/{ref:path}", matching_refs, methods=["GET"]),
        Route(g + "/refs", list_refs, methods=["GET"]),
        Route(g + "/refs/", list_refs, methods=["GET"]),
        Route(g + "/refs", create_ref, methods=["POST"]),
        Route(g + "/refs/{ref:path}", update_ref, methods=["PATCH"]),
        Route(g + "/refs/{ref:path}", delete_ref, methods=["DELETE"]),
        Route(g + "/blobs", create_blob, methods=["POST"]),
        Route(g + "/blobs/{sha}", get_blob, methods=["GET"]),
        Route(g + "/trees", create_tree, methods=["POST"]),
        Route(g + "/trees/{sha}", get_tree, methods=["GET"]),
        Route(g + "/commits", create_commit, methods=["POST"]),
        Route(g + "/commits/{sha}", get_git_commit, methods=["GET"]),
        Route(r + "/commits/{ref:path}/statuses", list_statuses, methods=["GET"]),
        Route(r + "/commits/{ref:path}/status", combined_status, methods=["GET"]),
        Route(r + "/commits/{ref:path}", get_commit, methods=["GET"]),
        Route(r + "/statuses/{sha}", create_status, methods=["POST"]),
    ]
