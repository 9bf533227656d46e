"""The sandbox's own admin API under `/_sandbox/` (no auth): deliveries, faults, request log, apps, state."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.github.apps import emit_installation
from bot.sandbox.github.context import Ctx
from bot.sandbox.github.repos import transfer
from bot.sandbox.shared.plumbing import ApiError, body_object
from bot.sandbox.shared.repo_ops import add_at_once
from bot.sandbox.shared.runtime import RATE_LIMIT_KINDS, Fault, Sandbox
from bot.sandbox.shared.state import ROLE_ORDER, App, Hook, Installation, Protection, Repo

from .shared import ci_ops, gitmodel

CHECK_CONCLUSIONS = frozenset(
    {"success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required", "in_progress"}
)
STATUS_STATES = {
    "github": frozenset({"pending", "success", "failure", "error"}),
    "gitea": frozenset({"pending", "success", "failure", "error", "warning", "skipped"}),
}


def _sandbox(request: Request) -> Sandbox:
    sandbox: Sandbox = request.app.state.sandbox
    return sandbox


def _json(data: Any, status: int = 200) -> Response:
    return JSONResponse(data, status_code=status)


async def list_deliveries(request: Request) -> Response:
    q = request.query_params
    found = [
        d.summary()
        for d in _sandbox(request).deliverer.log
        if ("hook_id" not in q or str(d.hook_id) == q["hook_id"])
        and ("event" not in q or d.event == q["event"])
    ]
    return _json(found)


async def clear_deliveries(request: Request) -> Response:
    _sandbox(request).deliverer.log.clear()
    return Response(status_code=204)


async def deliveries_idle(request: Request) -> Response:
    try:
        timeout = float(request.query_params.get("timeout", "10"))
    except ValueError:
        timeout = 10.0
    deliverer = _sandbox(request).deliverer
    idle = await deliverer.wait_idle(min(max(timeout, 0.0), 120.0))
    return _json({"idle": idle, "pending": deliverer.pending})


async def get_delivery(request: Request) -> Response:
    guid = request.path_params["guid"]
    attempts = [d for d in _sandbox(request).deliverer.log if d.guid == guid]
    if not attempts:
        return _json({"message": "Not Found"}, 404)
    return _json({**attempts[-1].detail(), "attempts": len(attempts)})


async def redeliver(request: Request) -> Response:
    again = _sandbox(request).deliverer.redeliver(request.path_params["guid"])
    if again is None:
        return _json({"message": "Not Found"}, 404)
    return _json(again.summary(), 202)


async def add_fault(request: Request) -> Response:
    body = await body_object(request)
    if not isinstance(body.get("path"), str):
        raise ApiError(422, "path (a regex) is required")
    fault = Fault(
        method=str(body.get("method", "*")).upper(),
        path=body["path"],
        status=int(body.get("status", 500)),
        times=int(body.get("times", 1)),
        headers={str(k): str(v) for k, v in (body.get("headers") or {}).items()},
        body=body.get("body"),
        hang=bool(body.get("hang", False)),
        hang_seconds=float(body.get("hang_seconds", 3600.0)),
        login=str(body["login"]) if body.get("login") else None,
        apply=bool(body.get("apply", False)),
        drop=bool(body.get("drop", False)),
        skip=int(body.get("skip", 0)),
        reset=bool(body.get("reset", False)),
        probability=float(body.get("probability", 1.0)),
        seed=int(body["seed"]) if body.get("seed") is not None else None,
        delay=float(body.get("delay", 0.0)),
        delay_max=float(body["delay_max"]) if body.get("delay_max") is not None else None,
        passthrough=bool(body.get("passthrough", False)),
        seconds=float(body["seconds"]) if body.get("seconds") is not None else None,
        rate_limit=str(body["rate_limit"]) if body.get("rate_limit") else None,
    )
    if fault.rate_limit is not None and fault.rate_limit not in RATE_LIMIT_KINDS:
        raise ApiError(422, f"rate_limit is one of {', '.join(RATE_LIMIT_KINDS)}")
    if not 0.0 <= fault.probability <= 1.0:
        raise ApiError(422, "probability is between 0 and 1")
    _sandbox(request).faults.append(fault)
    return _json(fault.public(), 201)


async def list_faults(request: Request) -> Response:
    return _json([f.public() for f in _sandbox(request).faults])


async def clear_faults(request: Request) -> Response:
    _sandbox(request).faults.clear()
    return Response(status_code=204)


async def list_requests(request: Request) -> Response:
    return _json(_sandbox(request).requests)


async def clear_requests(request: Request) -> Response:
    _sandbox(request).requests.clear()
    return Response(status_code=204)


async def dump_state(request: Request) -> Response:
    return _json(_sandbox(request).forge.model_dump(mode="json"))


async def add_user(request: Request) -> Response:
    sandbox = _sandbox(request)
    body = await body_object(request)
    login, token = body.get("login"), body.get("token")
    if not isinstance(login, str) or not login:
        raise ApiError(422, "login is required")
    user = sandbox.forge.ensure_user(login)
    if isinstance(token, str) and token:
        sandbox.forge.add_token(login, token)
    sandbox.save()
    return _json(user.model_dump(mode="json"), 201)


async def register_app(request: Request) -> Response:
    sandbox = _sandbox(request)
    body = await body_object(request)
    try:
        app = App(
            id=int(body["app_id"]),
            slug=str(body["slug"]),
            name=str(body.get("name") or body["slug"]),
            public_key_pem=str(body["public_key_pem"]),
            owner=body.get("owner"),
        )
    except (KeyError, ValueError, TypeError):
        raise ApiError(422, "app_id, slug and public_key_pem are required") from None
    if body.get("webhook_url"):
        # The App's own webhook: every event of its installations' repositories goes there too.
        app.webhook = Hook(
            id=sandbox.forge.new_id(),
            url=str(body["webhook_url"]),
            secret=str(body["webhook_secret"]) if body.get("webhook_secret") else None,
            events=["*"],
        )
    sandbox.forge.apps[app.id] = app
    sandbox.forge.ensure_user(app.bot_login, kind="Bot")
    sandbox.save()
    return _json({"id": app.id, "slug": app.slug, "bot_login": app.bot_login}, 201)


async def add_installation(request: Request) -> Response:
    sandbox = _sandbox(request)
    app = sandbox.forge.apps.get(int(request.path_params["app_id"]))
    if app is None:
        return _json({"message": "Not Found"}, 404)
    body = await body_object(request)
    owner, repos = body.get("owner"), body.get("repos", [])
    if not isinstance(owner, str) or not isinstance(repos, list):
        raise ApiError(422, "owner (a login) and repos (a list of names) are required")
    inst = Installation(id=sandbox.forge.new_id(), app_id=app.id, owner=owner, repos=[str(r) for r in repos])
    sandbox.forge.installations[inst.id] = inst
    sandbox.save()
    # As on GitHub, the App hears that it was installed (on its own webhook, when it has one).
    sender = str(body.get("sender") or owner)
    emit_installation(sandbox, _base(request), inst, "created", _repos_of(sandbox, inst, inst.repos), sender)
    return _json({"id": inst.id, "app_id": app.id, "owner": owner, "repos": inst.repos}, 201)


def _base(request: Request) -> str:
    return str(request.base_url).rstrip("/")


def _repos_of(sandbox: Sandbox, inst: Installation, names: list[str]) -> list[Repo]:
    return [r for name in names if (r := sandbox.forge.repo(inst.owner, name)) is not None]


async def add_installation_repos(request: Request) -> Response:
    """Select more repositories for an installation: {repos: [names], sender}. The App hears
    ``installation_repositories.added`` naming the ones that were not selected before."""
    sandbox = _sandbox(request)
    inst = sandbox.forge.installations.get(int(request.path_params["installation_id"]))
    if inst is None:
        return _json({"message": "Not Found"}, 404)
    body = await body_object(request)
    repos = body.get("repos")
    if not isinstance(repos, list):
        raise ApiError(422, "repos (a list of names) is required")
    added = [str(r) for r in repos if str(r) not in inst.repos]
    inst.repos.extend(added)
    sandbox.save()
    sender = str(body.get("sender") or inst.owner)
    emit_installation(sandbox, _base(request), inst, "added", _repos_of(sandbox, inst, added), sender)
    return _json({"id": inst.id, "repos": inst.repos, "added": added})


def _admin_repo(request: Request) -> Repo:
    sandbox = _sandbox(request)
    name = request.path_params.get("owner"), request.path_params.get("repo")
    repo = sandbox.forge.repo(str(name[0]), str(name[1]))
    if repo is None:
        raise ApiError(404, "Not Found")
    return repo


async def update_repo(request: Request) -> Response:
    """Repository settings a real forge keeps elsewhere: `drafts` (true, false, or null to follow GitHub's
    plans: public repositories have draft pull requests, private ones on GitHub Free not)."""
    repo = _admin_repo(request)
    body = await body_object(request)
    if "drafts" in body:
        if body["drafts"] is not None and not isinstance(body["drafts"], bool):
            raise ApiError(422, "drafts is true, false or null")
        repo.drafts = body["drafts"]
    _sandbox(request).save()
    return _json({"full_name": repo.full_name, "drafts": repo.drafts, "drafts_allowed": repo.drafts_allowed})


async def protect_branch(request: Request) -> Response:
    """Protect a branch (PUT; body `{required_contexts: [...], strict, ruleset}` — `ruleset: true` makes it a
    GitHub repository ruleset's rule rather than classic branch protection) or lift it (DELETE). A real
    forge takes this through its admin settings; the sandbox keeps the status checks a merge requires."""
    repo = _admin_repo(request)
    branch = str(request.path_params["branch"])
    if request.method == "DELETE":
        repo.protections.pop(branch, None)
    else:
        body = await body_object(request)
        contexts = body.get("required_contexts", [])
        if not isinstance(contexts, list) or not all(isinstance(c, str) for c in contexts):
            raise ApiError(422, "required_contexts is a list of context names")
        ruleset = bool(body.get("ruleset", False))
        repo.protections[branch] = Protection(
            required_contexts=contexts,
            strict=bool(body.get("strict", False)),
            ruleset=ruleset,
            ruleset_id=_sandbox(request).forge.new_id() if ruleset else 0,
        )
    _sandbox(request).save()
    return _json({name: rule.model_dump() for name, rule in repo.protections.items()})


async def add_org(request: Request) -> Response:
    """An organisation (what GitHub and Gitea make through their web pages): {login, members: {login:
    "admin" | "member"}, teams: {name: [login, …]}}; again with the same login, its members and teams are
    replaced (a team's people are made members of the organisation too). Its repositories are made with
    `POST /orgs/{org}/repos` (GitHub) or `POST /api/v1/orgs/{org}/repos` (Gitea)."""
    sandbox = _sandbox(request)
    body = await body_object(request)
    login, members, teams = body.get("login"), body.get("members") or {}, body.get("teams") or {}
    if (
        not isinstance(login, str)
        or not login
        or not isinstance(members, dict)
        or not isinstance(teams, dict)
    ):
        raise ApiError(422, "login (a name) and members ({login: admin|member}) are required")
    if any(role not in ("admin", "member") for role in members.values()):
        raise ApiError(422, "a member's role is admin or member")
    org = sandbox.forge.ensure_user(login, kind="Organization")
    if org.type != "Organization":
        raise ApiError(422, f"{login} is a user")
    org.members = {sandbox.forge.ensure_user(str(m)).login: r for m, r in members.items()}
    org.teams = {}
    for name, people in teams.items():
        logins = [sandbox.forge.ensure_user(str(p)).login for p in people or ()]
        org.teams[str(name).casefold().replace(" ", "-")] = (sandbox.forge.new_id(), str(name), logins)
        for person in logins:
            org.members.setdefault(person, "member")
    sandbox.save()
    return _json(org.model_dump(mode="json"), 201)


async def add_collaborator(request: Request) -> Response:
    """Make a user a collaborator at once, without the invitation GitHub's API sends ({permission}: pull,
    triage, push, maintain, admin, or read/write): the shortcut that keeps tests short. Both flavours."""
    repo = _admin_repo(request)
    sandbox = _sandbox(request)
    body = await body_object(request)
    wanted = str(body.get("permission") or "push")
    role = {"read": "pull", "write": "push"}.get(wanted, wanted)
    if role not in ROLE_ORDER:
        raise ApiError(422, f"permission is one of {', '.join(ROLE_ORDER)} (or read, write)")
    user = sandbox.forge.ensure_user(str(request.path_params["login"]))
    add_at_once(repo, user.login, role)
    sandbox.save()
    return _json({"repo": repo.full_name, "login": user.login, "role": role})


async def accept_transfer(request: Request) -> Response:
    """Accept a GitHub transfer to another user (what the new owner does from GitHub's e-mail): the repository
    moves and `repository.transferred` is sent."""
    repo = _admin_repo(request)
    if repo.transfer_to is None:
        raise ApiError(404, "no transfer is waiting for this repository")
    owner, _, name = repo.transfer_to.partition("/")
    transfer(Ctx(request, sender=owner), repo, owner, name)
    _sandbox(request).save()
    return _json({"full_name": repo.full_name, "id": repo.id})


async def play_ci(request: Request) -> Response:
    """Play CI on a commit: {repo, sha (or a ref), kind: status|check_run, context, state (a status) or
    conclusion (a check run; "in_progress" leaves it running), delay_seconds, description, target_url, and for
    a check run its output: title, summary, text, annotations [{path, start_line, end_line, annotation_level,
    message, title}]}.
    The report and its webhooks come now, or after the delay (a check run shows in progress meanwhile)."""
    sandbox = _sandbox(request)
    body = await body_object(request)
    owner, _, name = str(body.get("repo", "")).partition("/")
    repo = sandbox.forge.repo(owner, name)
    if repo is None:
        raise ApiError(404, "repo (owner/name) not found")
    sha = gitmodel.resolve(repo, str(body.get("sha") or body.get("ref") or ""))
    if sha is None:
        raise ApiError(422, "sha (or ref) names no commit")
    kind = body.get("kind", "check_run" if repo.flavor == "github" else "status")
    if kind not in ("status", "check_run"):
        raise ApiError(422, "kind is status or check_run")
    if kind == "check_run" and repo.flavor != "github":
        raise ApiError(422, "Gitea has no check runs: use kind status")
    outcome = body.get("conclusion") if kind == "check_run" else body.get("state")
    allowed = CHECK_CONCLUSIONS if kind == "check_run" else STATUS_STATES[repo.flavor]
    if outcome not in allowed:
        raise ApiError(422, f"{'conclusion' if kind == 'check_run' else 'state'} is one of {sorted(allowed)}")
    try:
        delay = float(body.get("delay_seconds", 0))
    except (TypeError, ValueError):
        raise ApiError(422, "delay_seconds is a number") from None
    ci_ops.play(
        request,
        repo,
        sha,
        kind=kind,
        context=str(body.get("context") or ci_ops.AUTO_CONTEXT),
        outcome=str(outcome),
        delay=delay,
        description=body.get("description"),
        target_url=body.get("target_url"),
        output=_output(body),
    )
    sandbox.save()
    return _json({"repo": repo.full_name, "sha": sha, "kind": kind, "outcome": outcome, "delay": delay}, 202)


def _output(body: dict[str, Any]) -> dict[str, Any] | None:
    """A check run's `output` from `title`, `summary`, `text` and `annotations` (GitHub's shape)."""
    found = {k: body[k] for k in ("title", "summary", "text", "annotations") if body.get(k) is not None}
    if "annotations" in found and not isinstance(found["annotations"], list):
        raise ApiError(422, "annotations is a list")
    return found or None


async def auto_ci(request: Request) -> Response:
    """Switch `steward sandbox --ci` on or off: {enabled, delay_seconds}."""
    sandbox = _sandbox(request)
    if request.method == "PUT":
        body = await body_object(request)
        sandbox.auto_ci = bool(body.get("enabled", True))
        sandbox.ci_delay = float(body.get("delay_seconds", sandbox.ci_delay))
    return _json({"enabled": sandbox.auto_ci, "delay_seconds": sandbox.ci_delay})


async def limits(request: Request) -> Response:
    """GitHub's secondary rate limits, off by default: {"secondary": [[80, 60], [500, 3600]]} (count, seconds)
    turns them on; {"secondary": []} off. {"gitea_max_pinned": n}: Gitea's `[repository.issue] MAX_PINNED`
    (default 3; 0 switches pinning off). {"search_lag_seconds": s}: how long an issue must stay unchanged
    before search finds it as it is (``search_ops``; default 2). A key left out keeps its value."""
    sandbox = _sandbox(request)
    if request.method == "PUT":
        body = await body_object(request)
        if "secondary" in body:
            try:
                sandbox.secondary_limits = [(int(c), float(w)) for c, w in body.get("secondary") or []]
            except (TypeError, ValueError):
                raise ApiError(422, "secondary is a list of [count, seconds]") from None
        if "gitea_max_pinned" in body:
            pins = body["gitea_max_pinned"]
            if not isinstance(pins, int) or isinstance(pins, bool) or pins < 0:
                raise ApiError(422, "gitea_max_pinned is a whole number, 0 or more")
            sandbox.gitea_max_pinned = pins
        if "search_lag_seconds" in body:
            lag = body["search_lag_seconds"]
            if not isinstance(lag, int | float) or isinstance(lag, bool) or lag < 0:
                raise ApiError(422, "search_lag_seconds is a number of seconds, 0 or more")
            sandbox.search_lag = float(lag)
    return _json(
        {
            "secondary": sandbox.secondary_limits,
            "gitea_max_pinned": sandbox.gitea_max_pinned,
            "search_lag_seconds": sandbox.search_lag,
        }
    )


async def age_issue(request: Request) -> Response:
    """Let time pass for one issue's thread (body `{days}`): its creation and update times and those of its
    comments move `days` into the past. No forge lets a client set these times; this is the sandbox's own
    control (like `/_sandbox/ci`) for tests of what waiting does — a stale bot's reminder after N days — so
    that they need not wait. What the forge then answers (`since` filters, `updated_at`) follows from the
    moved times as usual."""
    repo = _admin_repo(request)
    number = int(request.path_params["number"])
    issue = repo.issues.get(number)
    if issue is None:
        raise ApiError(404, "Not Found")
    body = await body_object(request)
    days = body.get("days")
    if not isinstance(days, int | float) or isinstance(days, bool) or days <= 0:
        raise ApiError(422, "days is a positive number")
    shift = timedelta(days=float(days))

    def back(stamp: str) -> str:
        when = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) - shift
        return when.strftime("%Y-%m-%dT%H:%M:%SZ")

    issue.created_at, issue.updated_at = back(issue.created_at), back(issue.updated_at)
    for comment in repo.comments.values():
        if comment.issue_number == number:
            comment.created_at, comment.updated_at = back(comment.created_at), back(comment.updated_at)
    _sandbox(request).save()
    return _json({"number": number, "created_at": issue.created_at, "updated_at": issue.updated_at})


def routes() -> list[BaseRoute]:
    s = "/_sandbox"
    return [
        Route(s + "/deliveries", list_deliveries, methods=["GET"]),
        Route(s + "/deliveries", clear_deliveries, methods=["DELETE"]),
        Route(s + "/deliveries/idle", deliveries_idle, methods=["GET"]),
        Route(s + "/deliveries/{guid}", get_delivery, methods=["GET"]),
        Route(s + "/deliveries/{guid}/redeliver", redeliver, methods=["POST"]),
        Route(s + "/faults", list_faults, methods=["GET"]),
        Route(s + "/faults", add_fault, methods=["POST"]),
        Route(s + "/faults", clear_faults, methods=["DELETE"]),
        Route(s + "/requests", list_requests, methods=["GET"]),
        Route(s + "/requests", clear_requests, methods=["DELETE"]),
        Route(s + "/state", dump_state, methods=["GET"]),
        Route(s + "/users", add_user, methods=["POST"]),
        Route(s + "/apps", register_app, methods=["POST"]),
        Route(s + "/apps/{app_id:int}/installations", add_installation, methods=["POST"]),
        Route(
            s + "/installations/{installation_id:int}/repositories", add_installation_repos, methods=["POST"]
        ),
        Route(s + "/repos/{owner}/{repo}", update_repo, methods=["PATCH"]),
        Route(
            s + "/repos/{owner}/{repo}/protections/{branch:path}", protect_branch, methods=["PUT", "DELETE"]
        ),
        Route(s + "/orgs", add_org, methods=["POST"]),
        Route(s + "/repos/{owner}/{repo}/collaborators/{login}", add_collaborator, methods=["PUT"]),
        Route(s + "/repos/{owner}/{repo}/transfer", accept_transfer, methods=["POST"]),
        Route(s + "/repos/{owner}/{repo}/issues/{number:int}/age", age_issue, methods=["POST"]),
        Route(s + "/ci", play_ci, methods=["POST"]),
        Route(s + "/ci/auto", auto_ci, methods=["GET", "PUT"]),
        Route(s + "/limits", limits, methods=["GET", "PUT"]),
    ]
