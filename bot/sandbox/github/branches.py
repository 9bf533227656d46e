"""GitHub's branches as a bot reads them: the list, one branch with its protection summary, and the rules of
the rulesets that apply to a branch.

Classic protection is written by a repository admin (``protection``: `PUT …/branches/{b}/protection`) or
through the admin API (``PUT /_sandbox/repos/{o}/{r}/protections/{branch}``, which can also make it a
ruleset's rule).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared.plumbing import ApiError, json_response, paginate
from bot.sandbox.shared.state import PushRecord, Repo

from . import protection
from .context import Ctx
from .protection import classic, status_checks
from .shapes import node_id


def _head(ctx: Ctx, repo: Repo, name: str) -> str:
    sha = repo.refs.get(f"refs/heads/{name}")
    if sha is None:
        raise ApiError(404, "Branch not found")
    return sha


def branch_shape(ctx: Ctx, repo: Repo, name: str, *, short: bool = False) -> dict[str, Any]:
    """`short-branch` (lists) or `branch-with-protection` (one branch): `protected` and, in the latter, a
    `protection` summary with the required status checks, readable with read access ("Get a branch")."""
    sha = _head(ctx, repo, name)
    rule = classic(repo, name)
    api = f"{ctx.base}/repos/{repo.full_name}/branches/{name}"
    if short:
        return {
            "name": name,
            "commit": {"sha": sha, "url": f"{ctx.base}/repos/{repo.full_name}/commits/{sha}"},
            "protected": rule is not None,
            "protection_url": f"{api}/protection",
        }
    summary: dict[str, Any] = {
        "enabled": False,
        "required_status_checks": {"enforcement_level": "off", "contexts": [], "checks": []},
    }
    if rule is not None and rule.status_checks:
        summary = {"enabled": True, "required_status_checks": status_checks(ctx, repo, name, rule)}
    elif rule is not None:
        summary = {**summary, "enabled": True}
    return {
        "name": name,
        "commit": ctx.shapes.commit(repo, repo.commits[sha]),
        "_links": {"self": api, "html": f"{ctx.base}/{repo.full_name}/tree/{name}"},
        "protected": rule is not None,
        "protection": summary,
        "protection_url": f"{api}/protection",
    }


@Ctx.on_repo()
async def list_branches(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """GET /repos/{o}/{r}/branches — docs.github.com REST "List branches" (`protected` filter, paged)."""
    names = sorted(ref.removeprefix("refs/heads/") for ref in repo.refs if ref.startswith("refs/heads/"))
    wanted = request.query_params.get("protected")
    if wanted in ("true", "false"):
        names = [n for n in names if (classic(repo, n) is not None) == (wanted == "true")]
    chunk, headers = paginate(request, names)
    return json_response(request, [branch_shape(ctx, repo, n, short=True) for n in chunk], headers=headers)


@Ctx.on_repo()
async def get_branch(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """GET /repos/{o}/{r}/branches/{branch} — docs.github.com REST "Get a branch": 200 with the branch,
    its commit and `protected`; 404 "Branch not found"."""
    return json_response(request, branch_shape(ctx, repo, ctx.param("branch")))


@Ctx.on_repo()
async def branch_rules(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """GET /repos/{o}/{r}/rules/branches/{branch} — docs.github.com REST "Get rules for a branch": the
    active rules of every ruleset that applies, readable with read access (an empty list when none do; the
    branch need not exist). Each rule names its ruleset (`ruleset_source_type`, `ruleset_source`,
    `ruleset_id`); a required-status-checks rule has `parameters.required_status_checks[].context`."""
    rule = repo.protections.get(ctx.param("branch"))
    rules: list[dict[str, Any]] = []
    if rule is not None and rule.ruleset:
        rules.append(
            {
                "type": "required_status_checks",
                "ruleset_source_type": "Repository",
                "ruleset_source": repo.full_name,
                "ruleset_id": rule.ruleset_id,
                "parameters": {
                    "strict_required_status_checks_policy": rule.strict,
                    "do_not_enforce_on_create": False,
                    "required_status_checks": [{"context": c} for c in rule.required_contexts],
                },
            }
        )
    chunk, headers = paginate(request, rules)
    return json_response(request, chunk, headers=headers)


def _activity_type(push: PushRecord) -> str:
    if push.after is None:
        return "branch_deletion"
    if push.before is None:
        return "branch_creation"
    if push.merge:
        return "pr_merge"
    return "force_push" if push.forced else "push"


@Ctx.on_repo()
async def list_activity(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """GET /repos/{o}/{r}/activity — "List repository activities" (REST repos, API 2022-11-28; octokit's
    `repos/list-activities`): the `activity` objects `id`, `node_id`, `before`, `after`, `ref`,
    `timestamp`, `activity_type` (push, force_push, branch_creation, branch_deletion, pr_merge,
    merge_queue_merge) and `actor` (a nullable simple user), newest first (`direction=asc` for oldest
    first). Filters `ref` (`refs/heads/<b>` or the bare name), `actor` and `activity_type`. GitHub pages by
    cursor through the Link header; the sandbox's Link pages by number (clients follow the Link either
    way)."""
    params = request.query_params
    ref = params.get("ref")
    wanted = {ref, f"refs/heads/{ref}"} if ref and not ref.startswith("refs/") else {ref}
    found = [
        p
        for p in repo.pushes
        if p.ref.startswith("refs/heads/")
        and (not ref or p.ref in wanted)
        and (not params.get("actor") or p.actor == params["actor"])
        and (not params.get("activity_type") or _activity_type(p) == params["activity_type"])
    ]
    if params.get("direction", "desc") != "asc":
        found.reverse()
    chunk, headers = paginate(request, found)
    zero = "0" * 40
    shaped = [
        {
            "id": p.id,
            "node_id": node_id("RepositoryActivity", p.id),
            "before": p.before or zero,
            "after": p.after or zero,
            "ref": p.ref,
            "timestamp": p.at,
            "activity_type": _activity_type(p),
            "actor": ctx.shapes.user(p.actor) if p.actor else None,
        }
        for p in chunk
    ]
    return json_response(request, shaped, headers=headers)


def routes(r: str) -> list[BaseRoute]:
    # Branch names may hold slashes (`steward/configure`): the protection route comes first.
    b = r + "/branches/{branch:path}"
    return [
        Route(r + "/branches", list_branches, methods=["GET"]),
        *protection.routes(b),
        Route(b, get_branch, methods=["GET"]),
        Route(r + "/rules/branches/{branch:path}", branch_rules, methods=["GET"]),
        Route(r + "/activity", list_activity, methods=["GET"]),
    ]
