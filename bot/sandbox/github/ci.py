"""GitHub's check runs and suites (read; the sandbox's CI makes them, see ``ci_ops``) and webhook deliveries
(repository hooks' and the App's), with their redelivery attempts."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared import ci_ops, gitmodel
from bot.sandbox.shared.hooks import Delivery
from bot.sandbox.shared.plumbing import ApiError, body_object, json_response, paginate, validation_failed
from bot.sandbox.shared.state import CheckRun, Repo

from .apps import app_of
from .code_shapes import annotation, check_run, check_suite, delivery_detail, delivery_item
from .context import Ctx

CONCLUSIONS = frozenset(
    {"action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out"}
)

# checks -------------------------------------------------------------------------------------------------


def _sha(ctx: Ctx, repo: Repo) -> str:
    sha = gitmodel.resolve(repo, ctx.param("ref"))
    if sha is None:
        raise ApiError(422, f"No commit found for SHA: {ctx.param('ref')}")
    return sha


@Ctx.on_repo()
async def runs_for_ref(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """`filter=latest` (the default) keeps the latest run of each name, as GitHub does."""
    sha = _sha(ctx, repo)
    q = request.query_params
    runs = [r for r in repo.check_runs if r.head_sha == sha]
    if q.get("check_name"):
        runs = [r for r in runs if r.name == q["check_name"]]
    if q.get("status"):
        runs = [r for r in runs if r.status == q["status"]]
    if q.get("filter", "latest") == "latest":
        latest: dict[str, CheckRun] = {}
        for run in sorted(runs, key=lambda r: r.id):
            latest[run.name] = run
        runs = list(latest.values())
    runs.sort(key=lambda r: r.id, reverse=True)
    chunk, headers = paginate(request, runs)
    body = {"total_count": len(runs), "check_runs": [check_run(ctx.shapes, repo, r) for r in chunk]}
    return json_response(request, body, headers=headers)


@Ctx.on_repo()
async def suites_for_ref(request: Request, ctx: Ctx, repo: Repo) -> Response:
    sha = _sha(ctx, repo)
    suites = sorted((s for s in repo.check_suites if s.head_sha == sha), key=lambda s: s.id, reverse=True)
    chunk, headers = paginate(request, suites)
    body = {"total_count": len(suites), "check_suites": [check_suite(ctx.shapes, repo, s) for s in chunk]}
    return json_response(request, body, headers=headers)


@Ctx.on_repo()
async def get_run(request: Request, ctx: Ctx, repo: Repo) -> Response:
    run = next((r for r in repo.check_runs if r.id == ctx.int_param("check_run_id")), None)
    if run is None:
        raise ctx.not_found()
    return json_response(request, check_run(ctx.shapes, repo, run))


@Ctx.on_repo()
async def list_annotations(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """GET /repos/{o}/{r}/check-runs/{id}/annotations — docs.github.com REST "List check run annotations"
    (paged; `output.annotations_count` and `output.annotations_url` on the run say how many and where)."""
    run = next((r for r in repo.check_runs if r.id == ctx.int_param("check_run_id")), None)
    if run is None:
        raise ctx.not_found()
    chunk, headers = paginate(request, run.annotations)
    return json_response(request, [annotation(ctx.shapes, repo, run, a) for a in chunk], headers=headers)


@Ctx.on_repo()
async def create_run(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """POST /repos/{o}/{r}/check-runs — docs.github.com REST "Create a check run": only a GitHub App may
    (an installation token with Checks: write → 201; any other token 403 "You must authenticate via a GitHub
    App."). `name`, `head_sha` required; `status` (default queued; `conclusion` completes it), `details_url`,
    `output` {title, summary, text, annotations}. Sends `check_run` created (and completed)."""
    app_id = ctx.via_app
    if app_id is None:
        raise ApiError(403, "You must authenticate via a GitHub App.")
    body = await body_object(request)
    name, sha = body.get("name"), body.get("head_sha")
    if not isinstance(name, str) or not name:
        raise validation_failed("CheckRun", "name", "missing_field")
    if not isinstance(sha, str) or sha not in repo.commits:
        raise validation_failed("CheckRun", "head_sha", "invalid", "No commit found for SHA")
    conclusion = body.get("conclusion")
    if conclusion is not None and conclusion not in CONCLUSIONS:
        raise validation_failed("CheckRun", "conclusion", "invalid")
    output: dict[str, Any] | None = body.get("output") if isinstance(body.get("output"), dict) else None
    events = ctx.events
    run = ci_ops.start_run(events, repo, sha, name, app_id=app_id, details_url=body.get("details_url"))
    if conclusion is not None or body.get("status") == "completed":
        ci_ops.complete_run(events, repo, run, str(conclusion or "neutral"), output)
    else:
        run.status = str(body.get("status") or "queued")
        ci_ops.set_output(run, output)
    return json_response(request, check_run(ctx.shapes, repo, run), status=201)


@Ctx.on_repo()
async def get_suite(request: Request, ctx: Ctx, repo: Repo) -> Response:
    suite = next((s for s in repo.check_suites if s.id == ctx.int_param("check_suite_id")), None)
    if suite is None:
        raise ctx.not_found()
    return json_response(request, check_suite(ctx.shapes, repo, suite))


# deliveries ---------------------------------------------------------------------------------------------


def _page(request: Request, found: list[Delivery]) -> tuple[list[Delivery], dict[str, str]]:
    """GitHub pages deliveries with `per_page` and an opaque `cursor` (REST docs, "List deliveries for a
    repository webhook"), newest first; the sandbox's cursor is the last id of the page before."""
    q = request.query_params
    try:
        per_page = min(max(int(q.get("per_page", "30")), 1), 100)
        cursor = int(q["cursor"]) if q.get("cursor") else None
    except ValueError:
        raise ApiError(400, "Bad request") from None
    if q.get("status") in ("success", "failure"):
        wanted = q["status"] == "success"
        found = [d for d in found if d.delivered == wanted]
    found = sorted(found, key=lambda d: d.id, reverse=True)
    if cursor is not None:
        found = [d for d in found if d.id < cursor]
    chunk = found[:per_page]
    headers = {}
    if len(found) > per_page:
        params = {**dict(q), "per_page": str(per_page), "cursor": str(chunk[-1].id)}
        url = request.url.replace(query="&".join(f"{k}={v}" for k, v in params.items()))
        headers["Link"] = f'<{url}>; rel="next"'
    return chunk, headers


def _repo_hook_deliveries(ctx: Ctx, repo: Repo) -> list[Delivery]:
    hook_id = ctx.int_param("hook_id")
    if hook_id not in repo.hooks:
        raise ctx.not_found()
    return [d for d in ctx.sandbox.deliverer.log if d.hook_id == hook_id and d.app_id is None]


def _one(ctx: Ctx, found: list[Delivery]) -> Delivery:
    delivery = next((d for d in found if d.id == ctx.int_param("delivery_id")), None)
    if delivery is None:
        raise ctx.not_found()
    return delivery


@Ctx.on_repo("admin")
async def list_repo_deliveries(request: Request, ctx: Ctx, repo: Repo) -> Response:
    chunk, headers = _page(request, _repo_hook_deliveries(ctx, repo))
    items = [delivery_item(d, d.repository_id, d.installation_id) for d in chunk]
    return json_response(request, items, headers=headers)


@Ctx.on_repo("admin")
async def get_repo_delivery(request: Request, ctx: Ctx, repo: Repo) -> Response:
    delivery = _one(ctx, _repo_hook_deliveries(ctx, repo))
    return json_response(request, delivery_detail(delivery, delivery.repository_id, delivery.installation_id))


@Ctx.on_repo("admin")
async def redeliver_repo(request: Request, ctx: Ctx, repo: Repo) -> Response:
    ctx.sandbox.deliverer.redeliver_attempt(_one(ctx, _repo_hook_deliveries(ctx, repo)))
    return json_response(request, {}, status=202)


def _app_deliveries(ctx: Ctx) -> list[Delivery]:
    app = app_of(ctx)
    if app.webhook is None:
        return []
    return [d for d in ctx.sandbox.deliverer.log if d.app_id == app.id]


async def list_app_deliveries(request: Request) -> Response:
    ctx = Ctx(request)
    chunk, headers = _page(request, _app_deliveries(ctx))
    items = [delivery_item(d, d.repository_id, d.installation_id) for d in chunk]
    return json_response(request, items, headers=headers)


async def get_app_delivery(request: Request) -> Response:
    ctx = Ctx(request)
    delivery = _one(ctx, _app_deliveries(ctx))
    return json_response(request, delivery_detail(delivery, delivery.repository_id, delivery.installation_id))


async def redeliver_app(request: Request) -> Response:
    ctx = Ctx(request)
    ctx.sandbox.deliverer.redeliver_attempt(_one(ctx, _app_deliveries(ctx)))
    return json_response(request, {}, status=202)


def routes(r: str) -> list[BaseRoute]:
    h = r + "/hooks/{hook_id:int}/deliveries"
    a = "/app/hook/deliveries"
    return [
        Route(r + "/commits/{ref:path}/check-runs", runs_for_ref, methods=["GET"]),
        Route(r + "/commits/{ref:path}/check-suites", suites_for_ref, methods=["GET"]),
        Route(r + "/check-runs", create_run, methods=["POST"]),
        Route(r + "/check-runs/{check_run_id:int}", get_run, methods=["GET"]),
        Route(r + "/check-runs/{check_run_id:int}/annotations", list_annotations, methods=["GET"]),
        Route(r + "/check-suites/{check_suite_id:int}", get_suite, methods=["GET"]),
        Route(h, list_repo_deliveries, methods=["GET"]),
        Route(h + "/{delivery_id:int}", get_repo_delivery, methods=["GET"]),
        Route(h + "/{delivery_id:int}/attempts", redeliver_repo, methods=["POST"]),
        Route(a, list_app_deliveries, methods=["GET"]),
        Route(a + "/{delivery_id:int}", get_app_delivery, methods=["GET"]),
        Route(a + "/{delivery_id:int}/attempts", redeliver_app, methods=["POST"]),
    ]
