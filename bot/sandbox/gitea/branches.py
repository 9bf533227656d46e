"""Gitea's branch list and branch protections (protection is arranged through the sandbox's admin API,
``PUT /_sandbox/repos/{o}/{r}/protections/{branch}``; one branch is ``gitea.code.get_branch``)."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared import gitmodel
from bot.sandbox.shared.plumbing import json_response
from bot.sandbox.shared.state import Protection, PushRecord, Repo

from .context import API, GCtx, gitea_page


@GCtx.on_repo()
async def list_branches(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """GET /api/v1/repos/{o}/{r}/branches — routers/api/v1/repo/branch.go ListBranches: every branch,
    paged (`page`/`limit`, X-Total-Count), sorted by name; readers may list them."""
    names = sorted(ref.removeprefix("refs/heads/") for ref in repo.refs if ref.startswith("refs/heads/"))
    chunk, headers = gitea_page(request, names)
    shaped = [ctx.shapes.branch(repo, n, repo.refs[f"refs/heads/{n}"], ctx.login) for n in chunk]
    return json_response(request, shaped, headers=headers)


@GCtx.on_repo()
async def list_refs(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """GET /api/v1/repos/{o}/{r}/git/refs[/{ref}] — routers/api/v1/repo/git_ref.go getGitRefsInternal: the
    refs whose name starts with `refs/` + the path's ref, always a list (not paged); none is a 404. Each
    `Reference` names itself at `…/git/<ref>` and its object at `…/git/commits/<sha>`."""
    prefix = "refs/" + str(request.path_params.get("ref", "")).lstrip("/")
    found = sorted(r for r in repo.refs if r.startswith(prefix))
    if not found:
        raise ctx.not_found()
    api = f"{ctx.shapes.api}/repos/{repo.full_name}/git"
    shaped = [
        {
            "ref": ref,
            "url": f"{api}/{ref}",
            "object": {"type": "commit", "sha": repo.refs[ref], "url": f"{api}/commits/{repo.refs[ref]}"},
        }
        for ref in found
    ]
    return json_response(request, shaped)


def protection_shape(repo: Repo, name: str, rule: Protection) -> dict[str, Any]:
    """A `BranchProtection` (services/convert/convert.go ToBranchProtection), push and merge closed to all."""
    return {
        "branch_name": name,
        "rule_name": name,
        "priority": 0,
        "enable_push": False,
        "enable_push_whitelist": False,
        "push_whitelist_usernames": [],
        "push_whitelist_teams": [],
        "push_whitelist_deploy_keys": False,
        "enable_force_push": False,
        "enable_force_push_allowlist": False,
        "force_push_allowlist_usernames": [],
        "force_push_allowlist_teams": [],
        "force_push_allowlist_deploy_keys": False,
        "enable_merge_whitelist": False,
        "merge_whitelist_usernames": [],
        "merge_whitelist_teams": [],
        "enable_status_check": bool(rule.required_contexts),
        "status_check_contexts": list(rule.required_contexts),
        "required_approvals": 0,
        "enable_approvals_whitelist": False,
        "approvals_whitelist_username": [],
        "approvals_whitelist_teams": [],
        "block_on_rejected_reviews": False,
        "block_on_official_review_requests": False,
        "block_on_outdated_branch": rule.strict,
        "dismiss_stale_approvals": False,
        "ignore_stale_approvals": False,
        "require_signed_commits": False,
        "protected_file_patterns": "",
        "unprotected_file_patterns": "",
        "block_admin_merge_override": False,
        "created_at": rule.created_at,
        "updated_at": rule.created_at,
    }


@GCtx.on_repo("admin")
async def list_protections(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """GET /api/v1/repos/{o}/{r}/branch_protections — routers/api/v1/api.go mounts it under
    reqRepoAdmin(): anyone below repository admin gets 403."""
    found = [protection_shape(repo, n, rule) for n, rule in sorted(repo.protections.items())]
    return json_response(request, found)


def _push_commits(ctx: GCtx, repo: Repo, push: PushRecord) -> str:
    """An entry's `content`: the JSON of the push's PushCommits (modules/repository/commits.go: `Commits`
    newest first, `HeadCommit`, `CompareURL`, `Len`; each commit `Sha1`, `Message`, `AuthorEmail`,
    `AuthorName`, `CommitterEmail`, `CommitterName`, `Timestamp`)."""
    if push.after is None:
        return ""

    def one(sha: str) -> dict[str, Any]:
        c = repo.commits[sha]
        return {
            "Sha1": sha,
            "Message": c.message,
            "AuthorEmail": c.author.email,
            "AuthorName": c.author.name,
            "CommitterEmail": c.committer.email,
            "CommitterName": c.committer.name,
            "Timestamp": c.committer.date,
        }

    new = [c.sha for c in gitmodel.new_commits(repo, push.before, push.after)]
    compare = f"{repo.full_name}/compare/{push.before}...{push.after}" if push.before else ""
    return json.dumps(
        {
            "Commits": [one(sha) for sha in reversed(new)],
            "HeadCommit": one(push.after),
            "CompareURL": compare,
            "Len": len(new),
        }
    )


@GCtx.on_repo()
async def list_feeds(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """GET /api/v1/repos/{o}/{r}/activities/feeds — swagger `repoListActivityFeeds` (routers/api/v1/repo/
    repo.go ListRepoActivityFeeds), newest first, paged (`page`/`limit`, X-Total-Count); `date` keeps one
    day. Branch moves only (services/feed/notifier.go PushCommits): `op_type` `commit_repo` (a deletion
    `delete_branch`), `act_user` the pusher, `ref_name` the full ref, `content` the PushCommits JSON,
    `created`; services/convert/activity.go ToActivity gives the shape. The actions of people who hide their
    activity (`hide_activity`, KeepActivityPrivate) are left out for anyone but themselves
    (models/activities/action.go ActivityQueryCondition; a site admin would see them — the sandbox has
    none). No cap on the feed's length (GetFeeds pages it; X-Total-Count counts it all)."""
    day = request.query_params.get("date")

    def shown(actor: str) -> bool:
        user = ctx.forge.user(actor)
        return user is None or not user.hide_activity or actor == ctx.login

    found = [
        p
        for p in reversed(repo.pushes)
        if p.ref.startswith("refs/heads/") and (not day or p.at[:10] == day) and shown(p.actor)
    ]
    chunk, headers = gitea_page(request, found)
    shaped = [
        {
            "id": p.id,
            "user_id": 0,
            "op_type": "delete_branch" if p.after is None else "commit_repo",
            "act_user": (actor := ctx.shapes.user(p.actor)),
            "act_user_id": actor["id"],
            "repo_id": repo.id,
            "repo": ctx.shapes.repo(repo),
            "comment_id": 0,
            "ref_name": p.ref,
            "is_private": repo.private,
            "content": _push_commits(ctx, repo, p),
            "created": p.at,
        }
        for p in chunk
    ]
    return json_response(request, shaped, headers=headers)


def routes() -> list[BaseRoute]:
    r = API + "/repos/{owner}/{repo}"
    return [
        Route(r + "/branches", list_branches, methods=["GET"]),
        Route(r + "/git/refs", list_refs, methods=["GET"]),
        Route(r + "/git/refs/{ref:path}", list_refs, methods=["GET"]),
        Route(r + "/branch_protections", list_protections, methods=["GET"]),
        Route(r + "/activities/feeds", list_feeds, methods=["GET"]),
    ]
