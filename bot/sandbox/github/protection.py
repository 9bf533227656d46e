"""GitHub's classic branch protection, read and written by repository admins.

`PUT /repos/{o}/{r}/branches/{b}/protection` takes GitHub's body (its four required keys
`required_status_checks`, `enforce_admins`, `required_pull_request_reviews`, `restrictions`, each may be
null) and answers the protection as `GET` does; `DELETE` lifts it. Recorded by octokit/fixtures
`branch-protection` (tests/fixtures/github/octokit-fixtures/branch-protection.json). Who may not: a user
token without admin gets 404, as for the `GET` (FORGE-FACTS "Branch protection a bot can read"), an App
without the Administration permission (no sandbox App has it) 403.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared.plumbing import ApiError, body_object, json_response, no_content
from bot.sandbox.shared.state import Protection, Repo

from .context import Ctx

NOT_PROTECTED = "Branch not protected"
REQUIRED = ("required_status_checks", "enforce_admins", "required_pull_request_reviews", "restrictions")
SWITCHES = (
    "required_linear_history",
    "allow_force_pushes",
    "allow_deletions",
    "block_creations",
    "required_conversation_resolution",
    "lock_branch",
    "allow_fork_syncing",
)


def classic(repo: Repo, name: str) -> Protection | None:
    found = repo.protections.get(name)
    return found if found is not None and not found.ruleset else None


def _admin_branch(ctx: Ctx, repo: Repo) -> str:
    """The path's branch, if the caller may administer its protection (see the module's docstring)."""
    if ctx.via_app is not None:
        raise ApiError(403, "Resource not accessible by integration")
    if not ctx.allowed(repo, "admin"):
        raise ctx.not_found()
    name = ctx.param("branch")
    if f"refs/heads/{name}" not in repo.refs:
        raise ApiError(404, "Branch not found")
    return name


def status_checks(ctx: Ctx, repo: Repo, name: str, rule: Protection) -> dict[str, Any]:
    url = f"{ctx.base}/repos/{repo.full_name}/branches/{name}/protection/required_status_checks"
    return {
        "url": url,
        "enforcement_level": "non_admins",
        "contexts": list(rule.required_contexts),
        "contexts_url": f"{url}/contexts",
        "checks": [{"context": c, "app_id": None} for c in rule.required_contexts],
        "strict": rule.strict,
    }


def _shape(ctx: Ctx, repo: Repo, name: str, rule: Protection) -> dict[str, Any]:
    url = f"{ctx.base}/repos/{repo.full_name}/branches/{name}/protection"
    answer: dict[str, Any] = {"url": url}
    if rule.status_checks:
        answer["required_status_checks"] = status_checks(ctx, repo, name, rule)
    if rule.push_users is not None:
        answer["restrictions"] = {
            "url": f"{url}/restrictions",
            "users_url": f"{url}/restrictions/users",
            "teams_url": f"{url}/restrictions/teams",
            "apps_url": f"{url}/restrictions/apps",
            "users": [ctx.shapes.user(u) for u in rule.push_users],
            "teams": [],
            "apps": [],
        }
    if rule.reviews is not None:
        reviews: dict[str, Any] = {"url": f"{url}/required_pull_request_reviews", **rule.reviews}
        if rule.dismissal_users:
            reviews["dismissal_restrictions"] = {
                "url": f"{url}/dismissal_restrictions",
                "users_url": f"{url}/dismissal_restrictions/users",
                "teams_url": f"{url}/dismissal_restrictions/teams",
                "users": [ctx.shapes.user(u) for u in rule.dismissal_users],
                "teams": [],
                "apps": [],
            }
        answer["required_pull_request_reviews"] = reviews
    answer["required_signatures"] = {"url": f"{url}/required_signatures", "enabled": False}
    answer["enforce_admins"] = {"url": f"{url}/enforce_admins", "enabled": rule.enforce_admins}
    for switch in SWITCHES:
        answer[switch] = {"enabled": rule.switches.get(switch, False)}
    return answer


@Ctx.on_repo()
async def get_protection(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """GET …/branches/{b}/protection — "Get branch protection": 404 "Branch not protected" for a branch
    without it (octokit/fixtures `branch-protection`)."""
    name = _admin_branch(ctx, repo)
    rule = classic(repo, name)
    if rule is None:
        raise ApiError(404, NOT_PROTECTED)
    return json_response(request, _shape(ctx, repo, name, rule))


def _invalid(field: str, why: str) -> ApiError:
    """This endpoint's 422 is GitHub's `validation-error-simple` (its description): `errors` are strings
    (the sandbox's wording)."""
    return ApiError(422, "Validation Failed", [f"{field} {why}"])


def _users(ctx: Ctx, raw: Any, field: str) -> list[str]:
    if not isinstance(raw, dict):
        raise _invalid(field, "is not an object")
    if raw.get("teams") or raw.get("apps"):
        # The sandbox has no teams and no Apps that could be named here.
        raise _invalid(field, "names teams or apps the sandbox does not have")
    logins = []
    for login in raw.get("users") or []:
        user = ctx.forge.user(str(login))
        if user is None:
            raise _invalid(field, f"names {login}, who is not a user")
        logins.append(user.login)
    return logins


def _rule(ctx: Ctx, repo: Repo, body: dict[str, Any]) -> Protection:
    missing = [key for key in REQUIRED if key not in body]
    if missing:
        listed = ", ".join(f'"{key}"' for key in sorted(missing))
        verb = "wasn't" if len(missing) == 1 else "weren't"
        raise ApiError(422, f"Invalid request.\n\n{listed} {verb} supplied.")
    rule = Protection(status_checks=body["required_status_checks"] is not None)
    checks = body["required_status_checks"]
    if checks is not None:
        contexts = checks.get("contexts") if isinstance(checks, dict) else None
        named = [c.get("context") for c in checks.get("checks") or []] if isinstance(checks, dict) else []
        every = [*(contexts or []), *named]
        if not isinstance(checks, dict) or not all(isinstance(c, str) for c in every):
            raise _invalid("required_status_checks", "is not a list of status check contexts")
        rule.required_contexts, rule.strict = list(dict.fromkeys(every)), bool(checks.get("strict"))
    rule.enforce_admins = bool(body["enforce_admins"])
    reviews = body["required_pull_request_reviews"]
    if reviews is not None:
        if not isinstance(reviews, dict):
            raise _invalid("required_pull_request_reviews", "is not an object")
        count = reviews.get("required_approving_review_count", 1)
        if not isinstance(count, int) or not 0 <= count <= 6:
            raise _invalid("required_approving_review_count", "is not a number from 0 to 6")
        rule.reviews = {
            "dismiss_stale_reviews": bool(reviews.get("dismiss_stale_reviews", False)),
            "require_code_owner_reviews": bool(reviews.get("require_code_owner_reviews", False)),
            "required_approving_review_count": count,
            "require_last_push_approval": bool(reviews.get("require_last_push_approval", False)),
        }
        if reviews.get("dismissal_restrictions"):
            rule.dismissal_users = _users(ctx, reviews["dismissal_restrictions"], "dismissal_restrictions")
    if body["restrictions"] is not None:
        owner = ctx.forge.user(repo.owner)
        if owner is None or owner.type != "Organization":
            raise ApiError(422, "Only organization repositories can have users and team restrictions")
        rule.push_users = _users(ctx, body["restrictions"], "restrictions")
    rule.switches = {s: bool(body[s]) for s in SWITCHES if body.get(s) is not None}
    return rule


@Ctx.on_repo()
async def put_protection(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """PUT …/branches/{b}/protection — "Update branch protection": replaces the protection with the body's;
    200 with it, shaped as `GET` answers."""
    name = _admin_branch(ctx, repo)
    repo.protections[name] = _rule(ctx, repo, await body_object(request))
    return json_response(request, _shape(ctx, repo, name, repo.protections[name]))


@Ctx.on_repo()
async def delete_protection(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """DELETE …/branches/{b}/protection — "Delete branch protection": 204; 404 "Branch not protected"."""
    name = _admin_branch(ctx, repo)
    if classic(repo, name) is None:
        raise ApiError(404, NOT_PROTECTED)
    del repo.protections[name]
    return no_content()


def routes(b: str) -> list[BaseRoute]:
    return [
        Route(b + "/protection", get_protection, methods=["GET"]),
        Route(b + "/protection", put_protection, methods=["PUT"]),
        Route(b + "/protection", delete_protection, methods=["DELETE"]),
    ]
