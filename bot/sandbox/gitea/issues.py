"""Gitea's issues, comments, reactions, labels, milestones and dependencies, at ``/api/v1/repos/…``."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared import issue_ops as ops
from bot.sandbox.shared import repo_ops
from bot.sandbox.shared.assignee_ops import set_assignees
from bot.sandbox.shared.plumbing import ApiError, body_json, body_object, json_response
from bot.sandbox.shared.state import REACTIONS, Comment, Issue, Label, Milestone, Reaction, Repo, now_iso

from .assignees import check_assignees
from .context import API, GCtx, gitea_page, unprocessable

# issues --------------------------------------------------------------------------------------------------


def _issue(ctx: GCtx, repo: Repo) -> Issue:
    return ctx.lookup(repo.issues, ctx.int_param("index"))


def _milestone_by_id(repo: Repo, ident: Any) -> Milestone | None:
    return next((m for m in repo.milestones.values() if m.id == ident or str(m.id) == str(ident)), None)


def _milestone_number(repo: Repo, ident: Any) -> int | None:
    """The number of the milestone with id `ident` (none for a falsy one)."""
    if not ident:
        return None
    ms = _milestone_by_id(repo, ident)
    if ms is None:
        raise unprocessable("milestone does not exist")
    return ms.number


def _labels_by_ref(repo: Repo, refs: Any) -> list[int]:
    """Label ids for a list of ids or names (Gitea's IssueLabelsOption takes either)."""
    if not isinstance(refs, list):
        raise unprocessable("labels must be a list")
    ids: list[int] = []
    for ref in refs:
        if isinstance(ref, int) and not isinstance(ref, bool):
            label = repo.labels.get(ref)
        elif isinstance(ref, str):
            label = repo.label_named(ref) or (repo.labels.get(int(ref)) if ref.isdigit() else None)
        else:
            label = None
        if label is None:
            raise unprocessable(f"label does not exist [id: {ref}]")
        if label.id not in ids:
            ids.append(label.id)
    return ids


@GCtx.on_repo()
async def list_issues(request: Request, ctx: GCtx, repo: Repo) -> Response:
    q = request.query_params
    state = q.get("state", "open")
    issues = [i for i in repo.issues.values() if state == "all" or i.state == state]
    # `type` issues or pulls; without it Gitea lists both (FORGE-FACTS "Milestones").
    if q.get("type") == "issues":
        issues = [i for i in issues if i.pull is None]
    elif q.get("type") == "pulls":
        issues = [i for i in issues if i.pull is not None]
    if q.get("labels"):
        # "Fetch only issues that have any of these labels" (the description of `labels`).
        wanted = {n.strip().casefold() for n in q["labels"].split(",") if n.strip()}
        issues = [i for i in issues if wanted & {repo.labels[x].name.casefold() for x in i.label_ids}]
    if q.get("milestones"):
        names = {n.strip() for n in q["milestones"].split(",")}
        issues = [
            i
            for i in issues
            if i.milestone is not None
            and (repo.milestones[i.milestone].title in names or str(repo.milestones[i.milestone].id) in names)
        ]
    if q.get("created_by"):
        # getUserIDForFilter (routers/api/v1/repo/issue.go): a login that names nobody is 404.
        if q["created_by"].casefold() not in ctx.forge.users:
            raise ctx.not_found()
        issues = [i for i in issues if i.user.casefold() == q["created_by"].casefold()]
    if q.get("since"):
        issues = [i for i in issues if i.updated_at >= q["since"]]
    issues.sort(key=lambda i: i.number, reverse=True)
    chunk, headers = gitea_page(request, issues)
    return json_response(request, [ctx.shapes.issue(repo, i) for i in chunk], headers=headers)


@GCtx.on_repo("pull")
async def create_issue(request: Request, ctx: GCtx, repo: Repo) -> Response:
    body = await body_object(request)
    title = repo_ops.required_name(ctx, body.get("title"), "Issue", "title")
    issue = ops.new_issue(ctx, repo, title, body.get("body") or "")
    if ctx.allowed(repo, "push"):
        issue.label_ids = _labels_by_ref(repo, body.get("labels") or [])
        issue.milestone = _milestone_number(repo, body.get("milestone"))
        issue.assignees = check_assignees(
            ctx.forge, repo, [str(a) for a in body.get("assignees") or []], status=422
        )
    ops.file_issue(ctx, repo, issue)
    if body.get("closed"):
        issue.state, issue.closed_at = "closed", now_iso()
        ctx.events.issue(repo, issue, "closed")
    return json_response(request, ctx.shapes.issue(repo, issue), status=201)


@GCtx.on_repo()
async def get_issue(request: Request, ctx: GCtx, repo: Repo) -> Response:
    return json_response(request, ctx.shapes.issue(repo, _issue(ctx, repo)))


@GCtx.on_repo()
async def edit_issue(request: Request, ctx: GCtx, repo: Repo) -> Response:
    issue = _issue(ctx, repo)
    body = await body_object(request)
    text: dict[str, Any] = {f: body[f] for f in ("title", "body") if body.get(f) is not None}
    text = {f: str(v) for f, v in text.items() if v != (getattr(issue, f) or "")}
    state = body.get("state")
    ops.check_edit(ctx, repo, issue, text, state, unprocessable("state must be open or closed"))
    ops.edit_text(ctx, repo, issue, text)
    if "milestone" in body and ctx.allowed(repo, "push"):
        ops.set_milestone(ctx, repo, issue, _milestone_number(repo, body["milestone"]))
    if "assignees" in body and ctx.allowed(repo, "push"):
        wanted = check_assignees(ctx.forge, repo, [str(a) for a in body["assignees"] or []])
        set_assignees(ctx, repo, issue, wanted)
    ops.set_state(ctx, repo, issue, state)
    return json_response(request, ctx.shapes.issue(repo, issue), status=201)


# Gitea's `[repository.issue] LOCK_REASONS` default (modules/setting/repository.go); `IsValidReason` takes
# one of them in any case, or none.
LOCK_REASONS = ("too heated", "off-topic", "resolved", "spam")


@GCtx.on_repo()
async def lock_issue(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """PUT /api/v1/repos/{o}/{r}/issues/{index}/lock — routers/api/v1/repo/issue_lock.go LockIssue (go-gitea/
    gitea#34165, 2025): `lock_reason` not one of the configured reasons 400 "reason not valid"; without write
    access to its issues (or pulls) 403 "no permission to lock this issue"; already locked 208; else 204.
    Gitea sends no webhook for it."""
    reason = (await body_object(request)).get("lock_reason") or ""
    if not isinstance(reason, str) or (reason and reason.casefold() not in LOCK_REASONS):
        raise ApiError(400, "reason not valid")
    issue = _issue(ctx, repo)
    if not ctx.allowed(repo, "push"):
        raise ApiError(403, "no permission to lock this issue")
    changed = ops.set_lock(ctx, repo, issue, True, reason or None)
    return Response(status_code=204 if changed else 208)


@GCtx.on_repo()
async def unlock_issue(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """DELETE /api/v1/repos/{o}/{r}/issues/{index}/lock — UnlockIssue: 403 "no permission to unlock this
    issue", 208 when it is not locked, else 204."""
    issue = _issue(ctx, repo)
    if not ctx.allowed(repo, "push"):
        raise ApiError(403, "no permission to unlock this issue")
    return Response(status_code=204 if ops.set_lock(ctx, repo, issue, False) else 208)


# comments and reactions -----------------------------------------------------------------------------------


def _comment(ctx: GCtx, repo: Repo) -> Comment:
    return ctx.lookup(repo.comments, ctx.int_param("id"))


@GCtx.on_repo()
async def list_comments(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """Gitea answers an issue's comments whole: this list takes no page/limit."""
    found = ops.comments_on(repo, _issue(ctx, repo), request.query_params.get("since"))
    return json_response(request, [ctx.shapes.comment(repo, c) for c in found])


@GCtx.on_repo()
async def list_repo_comments(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """`GET /api/v1/repos/{owner}/{repo}/issues/comments?since=&page=&limit=` (Gitea's
    ``ListRepoIssueComments``, routers/api/v1/repo/issue_comment.go: `since` keeps comments updated since
    then; paged by `page`/`limit` like every Gitea list)."""
    found = ops.repo_comments(repo, request.query_params.get("since"))
    chunk, headers = gitea_page(request, found)
    return json_response(request, [ctx.shapes.comment(repo, c) for c in chunk], headers=headers)


@GCtx.on_repo()
async def create_comment(request: Request, ctx: GCtx, repo: Repo) -> Response:
    comment = await ops.add_comment(ctx, repo, _issue(ctx, repo))
    return json_response(request, ctx.shapes.comment(repo, comment), status=201)


@GCtx.on_repo()
async def get_comment(request: Request, ctx: GCtx, repo: Repo) -> Response:
    return json_response(request, ctx.shapes.comment(repo, _comment(ctx, repo)))


@GCtx.on_repo()
async def edit_comment(request: Request, ctx: GCtx, repo: Repo) -> Response:
    comment = _comment(ctx, repo)
    await ops.edit_comment(ctx, repo, comment)
    return json_response(request, ctx.shapes.comment(repo, comment))


@GCtx.on_repo()
async def delete_comment(request: Request, ctx: GCtx, repo: Repo) -> Response:
    ops.delete_comment(ctx, repo, _comment(ctx, repo))
    return Response(status_code=204)


def _reactions(ctx: GCtx, repo: Repo) -> list[Reaction]:
    return ops.reactions(ctx, repo, "id", "index")


def _open_for_reactions(ctx: GCtx, repo: Repo) -> None:
    """routers/api/v1/repo/issue_reaction.go: on a locked issue only those who may write its issues (or pulls)
    change reactions; others get 403 "no permission to change reaction"."""
    if ops.thread(ctx, repo, "id", "index").locked and not ctx.allowed(repo, "push"):
        raise ApiError(403, "no permission to change reaction")


@GCtx.on_repo()
async def list_reactions(request: Request, ctx: GCtx, repo: Repo) -> Response:
    return json_response(request, [ctx.shapes.reaction(r) for r in _reactions(ctx, repo)])


@GCtx.on_repo()
async def add_reaction(request: Request, ctx: GCtx, repo: Repo) -> Response:
    found = _reactions(ctx, repo)
    _open_for_reactions(ctx, repo)
    content = (await body_object(request)).get("content")
    if content not in REACTIONS:
        raise ApiError(403, f"'{content}' is not an allowed reaction")
    reaction, new = ops.react(ctx, found, str(content))
    return json_response(request, ctx.shapes.reaction(reaction), status=201 if new else 200)


@GCtx.on_repo()
async def delete_reaction(request: Request, ctx: GCtx, repo: Repo) -> Response:
    found = _reactions(ctx, repo)
    _open_for_reactions(ctx, repo)
    content = (await body_object(request)).get("content")
    found[:] = [r for r in found if not (r.user == ctx.login and r.content == content)]
    # Gitea's description (routers/api/v1/repo/issue_reaction.go): 204 No Content
    return Response(status_code=204)


# labels ---------------------------------------------------------------------------------------------------


def _label(ctx: GCtx, repo: Repo) -> Label:
    return ctx.lookup(repo.labels, ctx.int_param("id"))


def _color(raw: Any) -> str:
    color = str(raw or "").lstrip("#").lower()
    if len(color) not in (3, 6) or any(ch not in "0123456789abcdef" for ch in color):
        raise unprocessable("Color: invalid")
    return color


@GCtx.on_repo()
async def list_labels(request: Request, ctx: GCtx, repo: Repo) -> Response:
    chunk, headers = gitea_page(request, repo_ops.sorted_labels(repo))
    return json_response(request, [ctx.shapes.label(repo, lb) for lb in chunk], headers=headers)


@GCtx.on_repo("push")
async def create_label(request: Request, ctx: GCtx, repo: Repo) -> Response:
    body = await body_object(request)
    name = repo_ops.required_name(ctx, body.get("name"), "Label", "name")
    if repo.label_named(name) is not None:
        # Gitea itself allows duplicate names; the sandbox refuses them so races are visible.
        raise ApiError(409, "label already exists")
    label = repo_ops.add_label(ctx, repo, name, _color(body.get("color")), body.get("description"))
    return json_response(request, ctx.shapes.label(repo, label), status=201)


@GCtx.on_repo()
async def get_label(request: Request, ctx: GCtx, repo: Repo) -> Response:
    return json_response(request, ctx.shapes.label(repo, _label(ctx, repo)))


@GCtx.on_repo("push")
async def edit_label(request: Request, ctx: GCtx, repo: Repo) -> Response:
    label = _label(ctx, repo)
    body = await body_object(request)
    if isinstance(body.get("name"), str):
        label.name = body["name"]
    if body.get("color") is not None:
        label.color = _color(body["color"])
    if "description" in body:
        label.description = body["description"]
    return json_response(request, ctx.shapes.label(repo, label))


@GCtx.on_repo("push")
async def delete_label(request: Request, ctx: GCtx, repo: Repo) -> Response:
    repo_ops.delete_label(ctx, repo, _label(ctx, repo))
    return Response(status_code=204)


@GCtx.on_repo()
async def issue_labels(request: Request, ctx: GCtx, repo: Repo) -> Response:
    issue = _issue(ctx, repo)
    return json_response(request, [ctx.shapes.label(repo, repo.labels[i]) for i in issue.label_ids])


@GCtx.on_repo("push")
async def change_issue_labels(request: Request, ctx: GCtx, repo: Repo) -> Response:
    """POST adds, PUT replaces; both answer the labels now on the issue."""
    issue = _issue(ctx, repo)
    data = await body_json(request)
    ids = _labels_by_ref(repo, data.get("labels", []) if isinstance(data, dict) else None)
    (ops.set_labels if request.method == "PUT" else ops.add_labels)(ctx, repo, issue, ids)
    return json_response(request, [ctx.shapes.label(repo, repo.labels[i]) for i in issue.label_ids])


@GCtx.on_repo("push")
async def clear_issue_labels(request: Request, ctx: GCtx, repo: Repo) -> Response:
    ops.set_labels(ctx, repo, _issue(ctx, repo), [])
    return Response(status_code=204)


@GCtx.on_repo("push")
async def remove_issue_label(request: Request, ctx: GCtx, repo: Repo) -> Response:
    issue = _issue(ctx, repo)
    label = repo.labels.get(ctx.int_param("id"))
    if label is None:
        raise unprocessable("label does not exist")
    ops.remove_label(ctx, repo, issue, label.id)
    return Response(status_code=204)


# milestones -------------------------------------------------------------------------------------------------


def _milestone(ctx: GCtx, repo: Repo) -> Milestone:
    ident = ctx.param("id")
    ms = _milestone_by_id(repo, ident) or next(
        (m for m in repo.milestones.values() if m.title == ident), None
    )
    if ms is None:
        raise ctx.not_found()
    return ms


@GCtx.on_repo()
async def list_milestones(request: Request, ctx: GCtx, repo: Repo) -> Response:
    chunk, headers = gitea_page(request, repo_ops.milestones(repo, request.query_params.get("state", "open")))
    return json_response(request, [ctx.shapes.milestone(repo, m) for m in chunk], headers=headers)


@GCtx.on_repo("push")
async def create_milestone(request: Request, ctx: GCtx, repo: Repo) -> Response:
    body = await body_object(request)
    ms = repo_ops.add_milestone(
        ctx, repo, repo_ops.required_name(ctx, body.get("title"), "Milestone", "title"), body
    )
    return json_response(request, ctx.shapes.milestone(repo, ms), status=201)


@GCtx.on_repo()
async def get_milestone(request: Request, ctx: GCtx, repo: Repo) -> Response:
    return json_response(request, ctx.shapes.milestone(repo, _milestone(ctx, repo)))


@GCtx.on_repo("push")
async def edit_milestone(request: Request, ctx: GCtx, repo: Repo) -> Response:
    ms = _milestone(ctx, repo)
    body = await body_object(request)
    for field in ("title", "description", "due_on"):
        if field in body and body[field] is not None:
            setattr(ms, field, body[field])
    state = body.get("state")
    if state in ("open", "closed") and state != ms.state:
        ms.state = state
        ms.closed_at = now_iso() if state == "closed" else None
    ms.updated_at = now_iso()
    return json_response(request, ctx.shapes.milestone(repo, ms))


@GCtx.on_repo("push")
async def delete_milestone(request: Request, ctx: GCtx, repo: Repo) -> Response:
    repo_ops.delete_milestone(ctx, repo, _milestone(ctx, repo))
    return Response(status_code=204)


# dependencies ---------------------------------------------------------------------------------------------


def _answer(request: Request, ctx: GCtx, found: list[tuple[Repo, Issue]]) -> Response:
    chunk, headers = gitea_page(request, found)
    return json_response(request, [ctx.shapes.issue(r, i) for r, i in chunk], headers=headers)


# GET /repos/{owner}/{repo}/issues/{index}/dependencies: the issues that block this one, each a whole issue
# with its `repository` (a blocker may live in another repository), paged by `page`/`limit` — Gitea's
# routers/api/v1/repo/issue_dependency.go `GetIssueDependencies` (operation issueListIssueDependencies in
# tests/fixtures/gitea/openapi3.v1.json: 200 IssueList, 404). Real Gitea answers 404 when the
# repository has issue dependencies turned off; the sandbox's repositories always have them on
# (`enable_issue_dependencies` in shapes.py), so Steward's "404 means none" is pinned by
# tests/backlog/test_effects.py. Pinned here by tests/contract/test_forge_contract.py (issue relations).
@GCtx.on_repo()
async def list_dependencies(request: Request, ctx: GCtx, repo: Repo) -> Response:
    return _answer(request, ctx, ops.all_by_id(ctx.forge, _issue(ctx, repo).blocked_by))


@GCtx.on_repo()
async def list_blocks(request: Request, ctx: GCtx, repo: Repo) -> Response:
    return _answer(request, ctx, ops.blocked_by(ctx.forge, _issue(ctx, repo)))


async def _dependency(ctx: GCtx, repo: Repo) -> tuple[Issue, Issue]:
    """The path's issue, and the issue the request's body names (owner, repo, index)."""
    issue = _issue(ctx, repo)
    body = await body_object(ctx.request)
    other = ctx.forge.repo(str(body.get("owner", "")), str(body.get("repo", "")))
    index = body.get("index")
    if other is None or not isinstance(index, int) or index not in other.issues:
        raise ctx.not_found()
    if not ctx.forge.can(other, ctx.login, "pull"):
        raise ctx.not_found()
    return issue, other.issues[index]


@GCtx.on_repo("push")
async def add_dependency(request: Request, ctx: GCtx, repo: Repo) -> Response:
    issue, blocker = await _dependency(ctx, repo)
    if blocker.id == issue.id:
        raise unprocessable("an issue cannot depend on itself")
    ops.relate(issue.blocked_by, issue, blocker.id)
    return json_response(request, ctx.shapes.issue(repo, issue), status=201)


@GCtx.on_repo("push")
async def remove_dependency(request: Request, ctx: GCtx, repo: Repo) -> Response:
    issue, blocker = await _dependency(ctx, repo)
    if blocker.id in issue.blocked_by:
        issue.blocked_by.remove(blocker.id)
    return json_response(request, ctx.shapes.issue(repo, issue))


def routes() -> list[BaseRoute]:
    r = API + "/repos/{owner}/{repo}"
    i = r + "/issues/{index:int}"
    c = r + "/issues/comments/{id:int}"
    return [
        Route(r + "/issues", list_issues, methods=["GET"]),
        Route(r + "/issues", create_issue, methods=["POST"]),
        Route(r + "/issues/comments", list_repo_comments, methods=["GET"]),
        Route(c, get_comment, methods=["GET"]),
        Route(c, edit_comment, methods=["PATCH"]),
        Route(c, delete_comment, methods=["DELETE"]),
        Route(c + "/reactions", list_reactions, methods=["GET"]),
        Route(c + "/reactions", add_reaction, methods=["POST"]),
        Route(c + "/reactions", delete_reaction, methods=["DELETE"]),
        Route(i, get_issue, methods=["GET"]),
        Route(i, edit_issue, methods=["PATCH"]),
        Route(i + "/lock", lock_issue, methods=["PUT"]),
        Route(i + "/lock", unlock_issue, methods=["DELETE"]),
        Route(i + "/comments", list_comments, methods=["GET"]),
        Route(i + "/comments", create_comment, methods=["POST"]),
        Route(i + "/reactions", list_reactions, methods=["GET"]),
        Route(i + "/reactions", add_reaction, methods=["POST"]),
        Route(i + "/reactions", delete_reaction, methods=["DELETE"]),
        Route(i + "/labels", issue_labels, methods=["GET"]),
        Route(i + "/labels", change_issue_labels, methods=["POST", "PUT"]),
        Route(i + "/labels", clear_issue_labels, methods=["DELETE"]),
        Route(i + "/labels/{id:int}", remove_issue_label, methods=["DELETE"]),
        Route(i + "/dependencies", list_dependencies, methods=["GET"]),
        Route(i + "/dependencies", add_dependency, methods=["POST"]),
        Route(i + "/dependencies", remove_dependency, methods=["DELETE"]),
        Route(i + "/blocks", list_blocks, methods=["GET"]),
        Route(r + "/labels", list_labels, methods=["GET"]),
        Route(r + "/labels", create_label, methods=["POST"]),
        Route(r + "/labels/{id:int}", get_label, methods=["GET"]),
        Route(r + "/labels/{id:int}", edit_label, methods=["PATCH"]),
        Route(r + "/labels/{id:int}", delete_label, methods=["DELETE"]),
        Route(r + "/milestones", list_milestones, methods=["GET"]),
        Route(r + "/milestones", create_milestone, methods=["POST"]),
        Route(r + "/milestones/{id}", get_milestone, methods=["GET"]),
        Route(r + "/milestones/{id}", edit_milestone, methods=["PATCH"]),
        Route(r + "/milestones/{id}", delete_milestone, methods=["DELETE"]),
    ]
