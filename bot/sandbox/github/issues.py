"""GitHub issues, comments, labels, milestones and reactions over the sandbox state."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared import issue_ops as ops
from bot.sandbox.shared import label_sets, repo_ops
from bot.sandbox.shared.assignee_ops import set_assignees
from bot.sandbox.shared.plumbing import (
    ApiError,
    body_json,
    body_object,
    json_response,
    no_content,
    paginate,
    validation_failed,
)
from bot.sandbox.shared.state import REACTIONS, Comment, Issue, Label, Milestone, Reaction, Repo, now_iso

from .context import LOCK_REASONS, Ctx

# issues -------------------------------------------------------------------------------------------------


def _issue(ctx: Ctx, repo: Repo) -> Issue:
    return ctx.lookup(repo.issues, ctx.int_param("number"))


def _label_names(raw: Any) -> list[str]:
    """Labels in any form GitHub accepts: ["a"], {"labels": ["a"]}, [{"name": "a"}], ..."""
    if isinstance(raw, dict):
        raw = raw.get("labels", [])
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        raise validation_failed("Label", "labels", "invalid")
    names = []
    for item in raw:
        name = item.get("name") if isinstance(item, dict) else item
        if not isinstance(name, str) or not name.strip():
            raise validation_failed("Label", "name", "invalid")
        names.append(name)
    return names


def _label_ids(ctx: Ctx, repo: Repo, raw: Any) -> list[int]:
    """The ids of the labels `raw` names, making those the repository lacks (like GitHub)."""
    return [(repo.label_named(n) or repo_ops.add_label(ctx, repo, n)).id for n in _label_names(raw)]


@Ctx.on_repo("pull")
async def create_issue(request: Request, ctx: Ctx, repo: Repo) -> Response:
    body = await body_object(request)
    title = body.get("title")
    if not isinstance(title, str | int) or not str(title).strip():
        raise validation_failed("Issue", "title", "missing_field")
    ctx.check_body("Issue", body.get("body"))
    issue = ops.new_issue(ctx, repo, str(title), body.get("body"))
    # like GitHub, labels, milestone and assignees are silently dropped without triage access
    if ctx.allowed(repo, "triage"):
        milestone = body.get("milestone")
        if milestone is not None and milestone not in repo.milestones:
            raise validation_failed("Issue", "milestone", "invalid")
        issue.milestone = milestone
        issue.assignees = [
            str(a) for a in body.get("assignees") or ([body["assignee"]] if body.get("assignee") else [])
        ]
        issue.label_ids = list(dict.fromkeys(_label_ids(ctx, repo, body.get("labels") or [])))
    ops.file_issue(ctx, repo, issue)
    return json_response(request, ctx.shapes.rest_issue(repo, issue), status=201)


@Ctx.on_repo()
async def list_issues(request: Request, ctx: Ctx, repo: Repo) -> Response:
    q = request.query_params
    state = q.get("state", "open")
    issues = [i for i in repo.issues.values() if state == "all" or i.state == state]
    if q.get("labels"):
        wanted = [n.strip().casefold() for n in q["labels"].split(",") if n.strip()]
        issues = [
            i
            for i in issues
            if all(n in {repo.labels[x].name.casefold() for x in i.label_ids} for n in wanted)
        ]
    milestone = q.get("milestone")
    if milestone == "none":
        issues = [i for i in issues if i.milestone is None]
    elif milestone == "*":
        issues = [i for i in issues if i.milestone is not None]
    elif milestone:
        issues = [i for i in issues if str(i.milestone) == milestone]
    if q.get("creator"):
        issues = [i for i in issues if i.user.casefold() == q["creator"].casefold()]
    if q.get("since"):
        issues = [i for i in issues if i.updated_at >= q["since"]]
    key = q.get("sort", "created")
    issues.sort(key=lambda i: (i.updated_at if key == "updated" else i.created_at, i.number))
    if q.get("direction", "desc") == "desc":
        issues.reverse()
    chunk, headers = paginate(request, issues)
    return json_response(request, [ctx.shapes.rest_issue(repo, i) for i in chunk], headers=headers)


@Ctx.on_repo()
async def get_issue(request: Request, ctx: Ctx, repo: Repo) -> Response:
    return json_response(request, ctx.shapes.rest_issue(repo, _issue(ctx, repo)))


# `state_reason` of "Update an issue" (the vendored OpenAPI description's enum; 422 for another).
STATE_REASONS = ("completed", "not_planned", "duplicate", "reopened")


def _check_duplicate_of(ctx: Ctx, issue: Issue, ident: object) -> None:
    """`duplicate_issue_id`: "The ID of the issue to mark as the canonical duplicate when `state_reason` is
    `duplicate`. The issue must exist and be accessible to the authenticated user" (the OpenAPI description;
    the sandbox's answer otherwise is a 422 on that field). Not the issue itself."""
    found = ops.by_id(ctx.forge, ident)
    if found is None or found[1].id == issue.id or not ctx.allowed(found[0], "pull"):
        raise validation_failed("Issue", "duplicate_issue_id", "invalid")


@Ctx.on_repo()
async def update_issue(request: Request, ctx: Ctx, repo: Repo) -> Response:
    issue = _issue(ctx, repo)
    body = await body_object(request)
    text: dict[str, Any] = {f: body[f] for f in ("title", "body") if f in body}
    text = {f: v for f, v in text.items() if v != getattr(issue, f)}
    ctx.check_body("Issue", text.get("body"))
    state = body.get("state")
    ops.check_edit(ctx, repo, issue, text, state, validation_failed("Issue", "state", "invalid"))
    if body.get("state_reason") is not None and body["state_reason"] not in STATE_REASONS:
        raise validation_failed("Issue", "state_reason", "invalid")
    triage = ctx.allowed(repo, "triage")
    ops.edit_text(ctx, repo, issue, {f: str(v) if f == "title" else v for f, v in text.items()})
    if triage and "labels" in body:
        ops.set_labels(ctx, repo, issue, _label_ids(ctx, repo, body["labels"] or []))
    if triage and "milestone" in body:
        number = body["milestone"]
        if number is not None and (not isinstance(number, int) or number not in repo.milestones):
            raise validation_failed("Issue", "milestone", "invalid")
        ops.set_milestone(ctx, repo, issue, number)
    if triage and "assignees" in body:
        set_assignees(ctx, repo, issue, [str(a) for a in body["assignees"] or []])
    reason = (body.get("state_reason") or "completed") if state == "closed" else "reopened"
    if state == "closed" and issue.state == "open" and reason == "duplicate" and "duplicate_issue_id" in body:
        _check_duplicate_of(ctx, issue, body["duplicate_issue_id"])
    ops.set_state(ctx, repo, issue, state, reason)
    return json_response(request, ctx.shapes.rest_issue(repo, issue))


@Ctx.on_repo("push")
async def lock_issue(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """PUT /repos/{o}/{r}/issues/{n}/lock — docs.github.com REST "Lock an issue": 204 for those with push
    access (octokit/fixtures `lock-issue`); `lock_reason` one of off-topic, too heated, resolved, spam
    (another: 422 — the sandbox's wording of that refusal). The issue then shows `locked` and
    `active_lock_reason`; `issues.locked` is sent (FORGE-FACTS "Locks")."""
    issue = _issue(ctx, repo)
    reason = (await body_object(request)).get("lock_reason")
    if reason is not None and reason not in LOCK_REASONS:
        raise validation_failed("Issue", "lock_reason", "invalid")
    ops.set_lock(ctx, repo, issue, True, reason)
    return no_content()


@Ctx.on_repo("push")
async def unlock_issue(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """DELETE /repos/{o}/{r}/issues/{n}/lock — "Unlock an issue": 204; `issues.unlocked` is sent."""
    ops.set_lock(ctx, repo, _issue(ctx, repo), False)
    return no_content()


# comments -----------------------------------------------------------------------------------------------


def _comment(ctx: Ctx, repo: Repo) -> Comment:
    return ctx.lookup(repo.comments, ctx.int_param("comment_id"))


@Ctx.on_repo()
async def list_comments(request: Request, ctx: Ctx, repo: Repo) -> Response:
    found = ops.comments_on(repo, _issue(ctx, repo), request.query_params.get("since"))
    chunk, headers = paginate(request, found)
    return json_response(request, [ctx.shapes.comment(repo, c) for c in chunk], headers=headers)


@Ctx.on_repo()
async def list_repo_comments(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """`GET /repos/{owner}/{repo}/issues/comments?since=&per_page=&page=` (GitHub REST, "List issue comments
    for a repository": `since` keeps comments updated at or after it; paged, at most 100 a page)."""
    found = ops.repo_comments(repo, request.query_params.get("since"))
    chunk, headers = paginate(request, found)
    return json_response(request, [ctx.shapes.comment(repo, c) for c in chunk], headers=headers)


@Ctx.on_repo()
async def create_comment(request: Request, ctx: Ctx, repo: Repo) -> Response:
    comment = await ops.add_comment(ctx, repo, _issue(ctx, repo))
    return json_response(request, ctx.shapes.comment(repo, comment), status=201)


@Ctx.on_repo()
async def get_comment(request: Request, ctx: Ctx, repo: Repo) -> Response:
    return json_response(request, ctx.shapes.comment(repo, _comment(ctx, repo)))


@Ctx.on_repo()
async def update_comment(request: Request, ctx: Ctx, repo: Repo) -> Response:
    comment = _comment(ctx, repo)
    await ops.edit_comment(ctx, repo, comment)
    return json_response(request, ctx.shapes.comment(repo, comment))


@Ctx.on_repo()
async def delete_comment(request: Request, ctx: Ctx, repo: Repo) -> Response:
    ops.delete_comment(ctx, repo, _comment(ctx, repo))
    return no_content()


# labels -------------------------------------------------------------------------------------------------


def _repo_label(ctx: Ctx, repo: Repo) -> Label:
    label = repo.label_named(ctx.param("name"))
    if label is None:
        raise ctx.not_found()
    return label


def _checked_label(
    repo: Repo, body: dict[str, Any], name: Any, label: Label | None = None
) -> tuple[str | None, str | None]:
    """The name and colour `body` gives a label (None: unchanged), or GitHub's 422 naming every field it
    refuses (``label_sets``: name, colour and description limits; a name in use: `already_exists`)."""
    errors: list[dict[str, Any]] = []
    if name is not None:
        if not isinstance(name, str) or not name.strip():
            errors.append({"resource": "Label", "code": "missing_field", "field": "name"})
        elif len(name) > label_sets.GITHUB_NAME_LIMIT:
            errors.append({"value": name, "resource": "Label", "field": "name", "code": "invalid"})
        else:
            clash = repo.label_named(name)
            if clash is not None and (label is None or clash.id != label.id):
                errors.append({"resource": "Label", "code": "already_exists", "field": "name"})
    color = None
    if body.get("color") is not None:
        color = label_sets.github_color(body["color"])
        if color is None:
            errors.append({"resource": "Label", "code": "invalid", "field": "color"})
    description = body.get("description")
    if description is not None and (
        not isinstance(description, str) or len(description) > label_sets.GITHUB_DESCRIPTION_LIMIT
    ):
        limit = label_sets.GITHUB_DESCRIPTION_LIMIT
        errors.append(
            {
                "resource": "Label",
                "code": "custom",
                "field": "description",
                "message": f"description is too long (maximum is {limit} characters)",
            }
        )
    if errors:
        raise ApiError(422, "Validation Failed", errors)
    return name, color


@Ctx.on_repo()
async def list_labels(request: Request, ctx: Ctx, repo: Repo) -> Response:
    chunk, headers = paginate(request, repo_ops.sorted_labels(repo))
    return json_response(request, [ctx.shapes.rest_label(repo, lb) for lb in chunk], headers=headers)


@Ctx.on_repo("push")
async def create_label(request: Request, ctx: Ctx, repo: Repo) -> Response:
    body = await body_object(request)
    given = body.get("name")
    name, color = _checked_label(repo, body, "" if given is None else given)
    assert name is not None
    label = repo_ops.add_label(ctx, repo, name, color or "ededed", body.get("description"))
    url = f"{ctx.base}/repos/{repo.full_name}/labels/{quote(label.name)}"
    return json_response(request, ctx.shapes.rest_label(repo, label), status=201, headers={"Location": url})


@Ctx.on_repo()
async def get_label(request: Request, ctx: Ctx, repo: Repo) -> Response:
    return json_response(request, ctx.shapes.rest_label(repo, _repo_label(ctx, repo)))


@Ctx.on_repo("push")
async def update_label(request: Request, ctx: Ctx, repo: Repo) -> Response:
    label = _repo_label(ctx, repo)
    body = await body_object(request)
    changes: dict[str, Any] = {}
    new_name, color = _checked_label(repo, body, body.get("new_name", body.get("name")), label)
    if new_name is not None and new_name != label.name:
        changes["name"], label.name = {"from": label.name}, new_name
    if color is not None and color != label.color:
        changes["color"], label.color = {"from": label.color}, color
    if "description" in body and body["description"] != label.description:
        changes["description"], label.description = {"from": label.description or ""}, body["description"]
    if changes:
        ctx.events.repo_event(repo, label, "edited", changes)
    return json_response(request, ctx.shapes.rest_label(repo, label))


@Ctx.on_repo("push")
async def delete_label(request: Request, ctx: Ctx, repo: Repo) -> Response:
    repo_ops.delete_label(ctx, repo, _repo_label(ctx, repo))
    return no_content()


def _issue_labels(ctx: Ctx, repo: Repo, issue: Issue) -> list[dict[str, Any]]:
    return [ctx.shapes.rest_label(repo, repo.labels[i]) for i in issue.label_ids]


@Ctx.on_repo()
async def list_issue_labels(request: Request, ctx: Ctx, repo: Repo) -> Response:
    chunk, headers = paginate(request, _issue_labels(ctx, repo, _issue(ctx, repo)))
    return json_response(request, chunk, headers=headers)


@Ctx.on_repo("triage")
async def change_issue_labels(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """POST adds, PUT replaces; both answer the labels now on the issue."""
    issue = _issue(ctx, repo)
    ids = _label_ids(ctx, repo, await body_json(request))
    (ops.set_labels if request.method == "PUT" else ops.add_labels)(ctx, repo, issue, ids)
    return json_response(request, _issue_labels(ctx, repo, issue))


@Ctx.on_repo("triage")
async def clear_issue_labels(request: Request, ctx: Ctx, repo: Repo) -> Response:
    ops.set_labels(ctx, repo, _issue(ctx, repo), [])
    return no_content()


@Ctx.on_repo("triage")
async def remove_issue_label(request: Request, ctx: Ctx, repo: Repo) -> Response:
    issue = _issue(ctx, repo)
    label = repo.label_named(ctx.param("name"))
    if label is None or label.id not in issue.label_ids:
        raise ApiError(404, "Label does not exist")
    ops.remove_label(ctx, repo, issue, label.id)
    return json_response(request, _issue_labels(ctx, repo, issue))


# milestones ---------------------------------------------------------------------------------------------


def _milestone(ctx: Ctx, repo: Repo) -> Milestone:
    return ctx.lookup(repo.milestones, ctx.int_param("number"))


@Ctx.on_repo()
async def list_milestones(request: Request, ctx: Ctx, repo: Repo) -> Response:
    found = repo_ops.milestones(repo, request.query_params.get("state", "open"))
    if request.query_params.get("direction") == "desc":
        found.reverse()
    chunk, headers = paginate(request, found)
    return json_response(request, [ctx.shapes.milestone(repo, m) for m in chunk], headers=headers)


@Ctx.on_repo("push")
async def create_milestone(request: Request, ctx: Ctx, repo: Repo) -> Response:
    body = await body_object(request)
    title = repo_ops.required_name(ctx, body.get("title"), "Milestone", "title")
    if any(m.title == title for m in repo.milestones.values()):
        raise validation_failed("Milestone", "title", "already_exists")
    ms = repo_ops.add_milestone(ctx, repo, title, body)
    return json_response(request, ctx.shapes.milestone(repo, ms), status=201)


@Ctx.on_repo()
async def get_milestone(request: Request, ctx: Ctx, repo: Repo) -> Response:
    return json_response(request, ctx.shapes.milestone(repo, _milestone(ctx, repo)))


@Ctx.on_repo("push")
async def update_milestone(request: Request, ctx: Ctx, repo: Repo) -> Response:
    ms = _milestone(ctx, repo)
    body = await body_object(request)
    changes: dict[str, Any] = {}
    for field in ("title", "description", "due_on"):
        if field in body and body[field] != getattr(ms, field):
            changes[field] = {"from": getattr(ms, field) or ""}
            setattr(ms, field, body[field])
    if changes:
        ms.updated_at = now_iso()
        ctx.events.repo_event(repo, ms, "edited", changes)
    state = body.get("state")
    if state not in (None, "open", "closed"):
        raise validation_failed("Milestone", "state", "invalid")
    if state is not None and state != ms.state:
        ms.state, ms.updated_at = state, now_iso()
        ms.closed_at = ms.updated_at if state == "closed" else None
        ctx.events.repo_event(repo, ms, "closed" if state == "closed" else "opened")
    return json_response(request, ctx.shapes.milestone(repo, ms))


@Ctx.on_repo("push")
async def delete_milestone(request: Request, ctx: Ctx, repo: Repo) -> Response:
    repo_ops.delete_milestone(ctx, repo, _milestone(ctx, repo))
    return no_content()


# reactions ----------------------------------------------------------------------------------------------


def _reactions(ctx: Ctx, repo: Repo) -> list[Reaction]:
    return ops.reactions(ctx, repo, "comment_id", "number")


def _open_for_reactions(ctx: Ctx, repo: Repo) -> None:
    """docs.github.com "Locking conversations": "Reactions and votes in a locked conversation are disabled
    for all users" — with write access too (GitHawkApp/GitHawk#385, #2297). The REST answer's wording is
    the sandbox's: no report quotes it."""
    if ops.thread(ctx, repo, "comment_id", "number").locked:
        raise ApiError(403, "Unable to react because issue is locked.")


@Ctx.on_repo()
async def list_reactions(request: Request, ctx: Ctx, repo: Repo) -> Response:
    found = _reactions(ctx, repo)
    content = request.query_params.get("content")
    chunk, headers = paginate(request, [r for r in found if content is None or r.content == content])
    return json_response(request, [ctx.shapes.reaction(r) for r in chunk], headers=headers)


@Ctx.on_repo()
async def create_reaction(request: Request, ctx: Ctx, repo: Repo) -> Response:
    found = _reactions(ctx, repo)
    _open_for_reactions(ctx, repo)
    content = (await body_object(request)).get("content")
    if content not in REACTIONS:
        raise validation_failed("Reaction", "content", "invalid")
    reaction, new = ops.react(ctx, found, str(content))
    return json_response(request, ctx.shapes.reaction(reaction), status=201 if new else 200)


@Ctx.on_repo()
async def delete_reaction(request: Request, ctx: Ctx, repo: Repo) -> Response:
    found = _reactions(ctx, repo)
    _open_for_reactions(ctx, repo)
    reaction = next((r for r in found if r.id == ctx.int_param("reaction_id")), None)
    if reaction is None:
        raise ctx.not_found()
    ctx.require_author(repo, reaction.user)
    found.remove(reaction)
    return no_content()


def routes(r: str) -> list[BaseRoute]:
    i = r + "/issues/{number:int}"
    c = r + "/issues/comments/{comment_id:int}"
    return [
        Route(r + "/issues", list_issues, methods=["GET"]),
        Route(r + "/issues", create_issue, methods=["POST"]),
        Route(r + "/issues/comments", list_repo_comments, methods=["GET"]),
        Route(c, get_comment, methods=["GET"]),
        Route(c, update_comment, methods=["PATCH"]),
        Route(c, delete_comment, methods=["DELETE"]),
        Route(c + "/reactions", list_reactions, methods=["GET"]),
        Route(c + "/reactions", create_reaction, methods=["POST"]),
        Route(c + "/reactions/{reaction_id:int}", delete_reaction, methods=["DELETE"]),
        Route(i, get_issue, methods=["GET"]),
        Route(i, update_issue, methods=["PATCH"]),
        Route(i + "/lock", lock_issue, methods=["PUT"]),
        Route(i + "/lock", unlock_issue, methods=["DELETE"]),
        Route(i + "/comments", list_comments, methods=["GET"]),
        Route(i + "/comments", create_comment, methods=["POST"]),
        Route(i + "/labels", list_issue_labels, methods=["GET"]),
        Route(i + "/labels", change_issue_labels, methods=["POST"]),
        Route(i + "/labels", change_issue_labels, methods=["PUT"]),
        Route(i + "/labels", clear_issue_labels, methods=["DELETE"]),
        Route(i + "/labels/{name:path}", remove_issue_label, methods=["DELETE"]),
        Route(i + "/reactions", list_reactions, methods=["GET"]),
        Route(i + "/reactions", create_reaction, methods=["POST"]),
        Route(i + "/reactions/{reaction_id:int}", delete_reaction, methods=["DELETE"]),
        Route(r + "/labels", list_labels, methods=["GET"]),
        Route(r + "/labels", create_label, methods=["POST"]),
        Route(r + "/labels/{name:path}", get_label, methods=["GET"]),
        Route(r + "/labels/{name:path}", update_label, methods=["PATCH"]),
        Route(r + "/labels/{name:path}", delete_label, methods=["DELETE"]),
        Route(r + "/milestones", list_milestones, methods=["GET"]),
        Route(r + "/milestones", create_milestone, methods=["POST"]),
        Route(r + "/milestones/{number:int}", get_milestone, methods=["GET"]),
        Route(r + "/milestones/{number:int}", update_milestone, methods=["PATCH"]),
        Route(r + "/milestones/{number:int}", delete_milestone, methods=["DELETE"]),
    ]
