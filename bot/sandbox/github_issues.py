"""GitHub issues, comments, labels, milestones and reactions over the sandbox state."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from .github_ctx import Ctx
from .plumbing import ApiError, body_json, body_object, json_response, no_content, paginate, validation_failed
from .state import REACTIONS, Comment, Issue, Label, Milestone, Reaction, Repo, now_iso

# issues -------------------------------------------------------------------------------------------------


def _issue(ctx: Ctx, repo: Repo) -> Issue:
    issue = repo.issues.get(ctx.int_param("number"))
    if issue is None:
        raise ApiError(404, "Not Found")
    return issue


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


def _ensure_label(ctx: Ctx, repo: Repo, name: str) -> Label:
    label = repo.label_named(name)
    if label is None:
        label = Label(id=ctx.forge.new_id(), name=name)
        repo.labels[label.id] = label
        ctx.emit(repo, "label", "created", label=ctx.shapes.label(repo, label))
    return label


def _set_labels(ctx: Ctx, repo: Repo, issue: Issue, wanted: list[int]) -> None:
    """Make the issue's labels exactly `wanted`, announcing each removal and addition."""
    removed = [i for i in issue.label_ids if i not in wanted]
    added = [i for i in dict.fromkeys(wanted) if i not in issue.label_ids]
    if not removed and not added:
        return
    issue.updated_at = now_iso()
    for label_id in removed:
        issue.label_ids.remove(label_id)
        label = repo.labels[label_id]
        ctx.emit(
            repo,
            "issues",
            "unlabeled",
            issue=ctx.shapes.issue(repo, issue),
            label=ctx.shapes.label(repo, label),
        )
    for label_id in added:
        issue.label_ids.append(label_id)
        label = repo.labels[label_id]
        ctx.emit(
            repo,
            "issues",
            "labeled",
            issue=ctx.shapes.issue(repo, issue),
            label=ctx.shapes.label(repo, label),
        )


def _set_milestone(ctx: Ctx, repo: Repo, issue: Issue, number: Any) -> None:
    if number is not None and (not isinstance(number, int) or number not in repo.milestones):
        raise validation_failed("Issue", "milestone", "invalid")
    old = issue.milestone
    if old == number:
        return
    issue.updated_at = now_iso()
    if old is not None and old in repo.milestones:
        issue.milestone = None
        shape = ctx.shapes.milestone(repo, repo.milestones[old])
        ctx.emit(repo, "issues", "demilestoned", issue=ctx.shapes.issue(repo, issue), milestone=shape)
    if number is not None:
        issue.milestone = number
        shape = ctx.shapes.milestone(repo, repo.milestones[number])
        ctx.emit(repo, "issues", "milestoned", issue=ctx.shapes.issue(repo, issue), milestone=shape)


async def create_issue(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo("pull")
    body = await body_object(request)
    title = body.get("title")
    if not isinstance(title, str | int) or not str(title).strip():
        raise validation_failed("Issue", "title", "missing_field")
    number = repo.next_number
    repo.next_number += 1
    issue = Issue(
        id=ctx.forge.new_id(),
        number=number,
        title=str(title),
        body=body.get("body"),
        user=ctx.login,
        via_app=ctx.via_app,
    )
    # like GitHub, labels, milestone and assignees are silently dropped without triage access
    if ctx.allowed(repo, "triage"):
        milestone = body.get("milestone")
        if milestone is not None and milestone not in repo.milestones:
            raise validation_failed("Issue", "milestone", "invalid")
        issue.milestone = milestone
        issue.assignees = [
            str(a) for a in body.get("assignees") or ([body["assignee"]] if body.get("assignee") else [])
        ]
        names = _label_names(body.get("labels") or [])
        issue.label_ids = list(dict.fromkeys(_ensure_label(ctx, repo, n).id for n in names))
    repo.issues[number] = issue
    shape = ctx.shapes.issue(repo, issue)
    ctx.emit(repo, "issues", "opened", issue=shape)
    for label_id in issue.label_ids:
        ctx.emit(repo, "issues", "labeled", issue=shape, label=ctx.shapes.label(repo, repo.labels[label_id]))
    if issue.milestone is not None:
        milestone_shape = ctx.shapes.milestone(repo, repo.milestones[issue.milestone])
        ctx.emit(repo, "issues", "milestoned", issue=shape, milestone=milestone_shape)
    return json_response(request, ctx.shapes.rest_issue(repo, issue), status=201)


async def list_issues(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo()
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


async def get_issue(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo()
    return json_response(request, ctx.shapes.rest_issue(repo, _issue(ctx, repo)))


async def update_issue(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo()
    issue = _issue(ctx, repo)
    body = await body_object(request)
    is_author = issue.user == ctx.login
    changes: dict[str, Any] = {}
    for field in ("title", "body"):
        if field in body and body[field] != getattr(issue, field):
            if not is_author:
                ctx.require(repo, "push")
            changes[field] = {"from": getattr(issue, field) or ""}
    wanted_state = body.get("state")
    if wanted_state not in (None, "open", "closed"):
        raise validation_failed("Issue", "state", "invalid")
    if wanted_state is not None and wanted_state != issue.state and not is_author:
        ctx.require(repo, "triage")
    triage = ctx.allowed(repo, "triage")
    if changes:
        if "title" in changes:
            issue.title = str(body["title"])
        if "body" in changes:
            issue.body = body["body"]
        issue.updated_at = now_iso()
        ctx.emit(repo, "issues", "edited", issue=ctx.shapes.issue(repo, issue), changes=changes)
    if triage and "labels" in body:
        _set_labels(
            ctx, repo, issue, [_ensure_label(ctx, repo, n).id for n in _label_names(body["labels"] or [])]
        )
    if triage and "milestone" in body:
        _set_milestone(ctx, repo, issue, body["milestone"])
    if triage and "assignees" in body:
        issue.assignees = [str(a) for a in body["assignees"] or []]
    if wanted_state == "closed" and issue.state == "open":
        issue.state, issue.closed_at, issue.closed_by = "closed", now_iso(), ctx.login
        issue.state_reason = body.get("state_reason") or "completed"
        issue.updated_at = issue.closed_at
        ctx.emit(repo, "issues", "closed", issue=ctx.shapes.issue(repo, issue))
    elif wanted_state == "open" and issue.state == "closed":
        issue.state, issue.closed_at, issue.closed_by, issue.state_reason = "open", None, None, "reopened"
        issue.updated_at = now_iso()
        ctx.emit(repo, "issues", "reopened", issue=ctx.shapes.issue(repo, issue))
    return json_response(request, ctx.shapes.rest_issue(repo, issue))


# comments -----------------------------------------------------------------------------------------------


def _comment(ctx: Ctx, repo: Repo) -> Comment:
    comment = repo.comments.get(ctx.int_param("comment_id"))
    if comment is None:
        raise ApiError(404, "Not Found")
    return comment


def _comment_event(ctx: Ctx, repo: Repo, action: str, comment: Comment, **extra: Any) -> None:
    issue = repo.issues[comment.issue_number]
    shape = ctx.shapes.comment(repo, comment)
    ctx.emit(repo, "issue_comment", action, **extra, issue=ctx.shapes.issue(repo, issue), comment=shape)


async def list_comments(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo()
    issue = _issue(ctx, repo)
    since = request.query_params.get("since")
    found = [
        c
        for c in sorted(repo.comments.values(), key=lambda c: c.id)
        if c.issue_number == issue.number and (since is None or c.updated_at >= since)
    ]
    chunk, headers = paginate(request, found)
    return json_response(request, [ctx.shapes.comment(repo, c) for c in chunk], headers=headers)


async def create_comment(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo()
    issue = _issue(ctx, repo)
    if issue.locked:
        ctx.require(repo, "push")
    body = (await body_object(request)).get("body")
    if not isinstance(body, str) or not body:
        raise validation_failed("IssueComment", "body", "missing_field")
    comment = Comment(
        id=ctx.forge.new_id(), issue_number=issue.number, user=ctx.login, body=body, via_app=ctx.via_app
    )
    repo.comments[comment.id] = comment
    issue.updated_at = comment.created_at
    _comment_event(ctx, repo, "created", comment)
    return json_response(request, ctx.shapes.comment(repo, comment), status=201)


async def get_comment(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo()
    return json_response(request, ctx.shapes.comment(repo, _comment(ctx, repo)))


async def update_comment(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo()
    comment = _comment(ctx, repo)
    if comment.user != ctx.login:
        ctx.require(repo, "push")
    body = (await body_object(request)).get("body")
    if not isinstance(body, str) or not body:
        raise validation_failed("IssueComment", "body", "missing_field")
    if body != comment.body:
        previous, comment.body, comment.updated_at = comment.body, body, now_iso()
        _comment_event(ctx, repo, "edited", comment, changes={"body": {"from": previous}})
    return json_response(request, ctx.shapes.comment(repo, comment))


async def delete_comment(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo()
    comment = _comment(ctx, repo)
    if comment.user != ctx.login:
        ctx.require(repo, "push")
    _comment_event(ctx, repo, "deleted", comment)
    del repo.comments[comment.id]
    return no_content()


# labels -------------------------------------------------------------------------------------------------


def _repo_label(ctx: Ctx, repo: Repo) -> Label:
    label = repo.label_named(ctx.param("name"))
    if label is None:
        raise ApiError(404, "Not Found")
    return label


async def list_labels(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo()
    chunk, headers = paginate(request, sorted(repo.labels.values(), key=lambda lb: lb.name.casefold()))
    return json_response(request, [ctx.shapes.label(repo, lb) for lb in chunk], headers=headers)


async def create_label(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo("push")
    body = await body_object(request)
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        raise validation_failed("Label", "name", "missing_field")
    if repo.label_named(name) is not None:
        raise validation_failed("Label", "name", "already_exists")
    label = Label(
        id=ctx.forge.new_id(),
        name=name,
        color=str(body.get("color") or "ededed").lstrip("#").lower(),
        description=body.get("description"),
    )
    repo.labels[label.id] = label
    ctx.emit(repo, "label", "created", label=ctx.shapes.label(repo, label))
    return json_response(request, ctx.shapes.label(repo, label), status=201)


async def get_label(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo()
    return json_response(request, ctx.shapes.label(repo, _repo_label(ctx, repo)))


async def update_label(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo("push")
    label = _repo_label(ctx, repo)
    body = await body_object(request)
    changes: dict[str, Any] = {}
    new_name = body.get("new_name", body.get("name"))
    if isinstance(new_name, str) and new_name != label.name:
        clash = repo.label_named(new_name)
        if clash is not None and clash.id != label.id:
            raise validation_failed("Label", "name", "already_exists")
        changes["name"], label.name = {"from": label.name}, new_name
    if body.get("color") is not None:
        color = str(body["color"]).lstrip("#").lower()
        if color != label.color:
            changes["color"], label.color = {"from": label.color}, color
    if "description" in body and body["description"] != label.description:
        changes["description"], label.description = {"from": label.description or ""}, body["description"]
    if changes:
        ctx.emit(repo, "label", "edited", label=ctx.shapes.label(repo, label), changes=changes)
    return json_response(request, ctx.shapes.label(repo, label))


async def delete_label(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo("push")
    label = _repo_label(ctx, repo)
    shape = ctx.shapes.label(repo, label)
    for issue in repo.issues.values():
        if label.id in issue.label_ids:
            issue.label_ids.remove(label.id)
    del repo.labels[label.id]
    ctx.emit(repo, "label", "deleted", label=shape)
    return no_content()


def _issue_labels(ctx: Ctx, repo: Repo, issue: Issue) -> list[dict[str, Any]]:
    return [ctx.shapes.label(repo, repo.labels[i]) for i in issue.label_ids]


async def list_issue_labels(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo()
    issue = _issue(ctx, repo)
    chunk, headers = paginate(request, _issue_labels(ctx, repo, issue))
    return json_response(request, chunk, headers=headers)


async def add_issue_labels(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo("triage")
    issue = _issue(ctx, repo)
    names = _label_names(await body_json(request))
    ids = [_ensure_label(ctx, repo, n).id for n in names]
    _set_labels(ctx, repo, issue, issue.label_ids + [i for i in ids if i not in issue.label_ids])
    return json_response(request, _issue_labels(ctx, repo, issue))


async def set_issue_labels(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo("triage")
    issue = _issue(ctx, repo)
    names = _label_names(await body_json(request))
    _set_labels(ctx, repo, issue, [_ensure_label(ctx, repo, n).id for n in names])
    return json_response(request, _issue_labels(ctx, repo, issue))


async def clear_issue_labels(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo("triage")
    _set_labels(ctx, repo, _issue(ctx, repo), [])
    return no_content()


async def remove_issue_label(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo("triage")
    issue = _issue(ctx, repo)
    label = repo.label_named(ctx.param("name"))
    if label is None or label.id not in issue.label_ids:
        raise ApiError(404, "Label does not exist")
    _set_labels(ctx, repo, issue, [i for i in issue.label_ids if i != label.id])
    return json_response(request, _issue_labels(ctx, repo, issue))


# milestones ---------------------------------------------------------------------------------------------


def _milestone(ctx: Ctx, repo: Repo) -> Milestone:
    ms = repo.milestones.get(ctx.int_param("number"))
    if ms is None:
        raise ApiError(404, "Not Found")
    return ms


async def list_milestones(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo()
    state = request.query_params.get("state", "open")
    found = sorted(
        (m for m in repo.milestones.values() if state == "all" or m.state == state), key=lambda m: m.number
    )
    if request.query_params.get("direction") == "desc":
        found.reverse()
    chunk, headers = paginate(request, found)
    return json_response(request, [ctx.shapes.milestone(repo, m) for m in chunk], headers=headers)


async def create_milestone(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo("push")
    body = await body_object(request)
    title = body.get("title")
    if not isinstance(title, str) or not title.strip():
        raise validation_failed("Milestone", "title", "missing_field")
    if any(m.title == title for m in repo.milestones.values()):
        raise validation_failed("Milestone", "title", "already_exists")
    ms = Milestone(
        id=ctx.forge.new_id(),
        number=repo.next_milestone,
        title=title,
        description=body.get("description"),
        due_on=body.get("due_on"),
        creator=ctx.login,
    )
    if body.get("state") == "closed":
        ms.state, ms.closed_at = "closed", ms.created_at
    repo.next_milestone += 1
    repo.milestones[ms.number] = ms
    ctx.emit(repo, "milestone", "created", milestone=ctx.shapes.milestone(repo, ms))
    return json_response(request, ctx.shapes.milestone(repo, ms), status=201)


async def get_milestone(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo()
    return json_response(request, ctx.shapes.milestone(repo, _milestone(ctx, repo)))


async def update_milestone(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo("push")
    ms = _milestone(ctx, repo)
    body = await body_object(request)
    changes: dict[str, Any] = {}
    for field in ("title", "description", "due_on"):
        if field in body and body[field] != getattr(ms, field):
            changes[field] = {"from": getattr(ms, field) or ""}
            setattr(ms, field, body[field])
    if changes:
        ms.updated_at = now_iso()
        ctx.emit(repo, "milestone", "edited", milestone=ctx.shapes.milestone(repo, ms), changes=changes)
    state = body.get("state")
    if state not in (None, "open", "closed"):
        raise validation_failed("Milestone", "state", "invalid")
    if state is not None and state != ms.state:
        ms.state, ms.updated_at = state, now_iso()
        ms.closed_at = ms.updated_at if state == "closed" else None
        action = "closed" if state == "closed" else "opened"
        ctx.emit(repo, "milestone", action, milestone=ctx.shapes.milestone(repo, ms))
    return json_response(request, ctx.shapes.milestone(repo, ms))


async def delete_milestone(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo("push")
    ms = _milestone(ctx, repo)
    shape = ctx.shapes.milestone(repo, ms)
    for issue in repo.issues.values():
        if issue.milestone == ms.number:
            issue.milestone = None
    del repo.milestones[ms.number]
    ctx.emit(repo, "milestone", "deleted", milestone=shape)
    return no_content()


# reactions ----------------------------------------------------------------------------------------------


def _reaction_target(ctx: Ctx, repo: Repo) -> list[Reaction]:
    if "comment_id" in ctx.request.path_params:
        return _comment(ctx, repo).reactions
    return _issue(ctx, repo).reactions


async def list_reactions(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo()
    found = _reaction_target(ctx, repo)
    content = request.query_params.get("content")
    chunk, headers = paginate(request, [r for r in found if content is None or r.content == content])
    return json_response(request, [ctx.shapes.reaction(r) for r in chunk], headers=headers)


async def create_reaction(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo()
    reactions = _reaction_target(ctx, repo)
    content = (await body_object(request)).get("content")
    if content not in REACTIONS:
        raise validation_failed("Reaction", "content", "invalid")
    existing = next((r for r in reactions if r.user == ctx.login and r.content == content), None)
    if existing is not None:
        return json_response(request, ctx.shapes.reaction(existing), status=200)
    reaction = Reaction(id=ctx.forge.new_id(), user=ctx.login, content=str(content))
    reactions.append(reaction)
    return json_response(request, ctx.shapes.reaction(reaction), status=201)


async def delete_reaction(request: Request) -> Response:
    ctx = Ctx(request)
    repo = ctx.repo()
    reactions = _reaction_target(ctx, repo)
    found = next((r for r in reactions if r.id == ctx.int_param("reaction_id")), None)
    if found is None:
        raise ApiError(404, "Not Found")
    if found.user != ctx.login:
        ctx.require(repo, "push")
    reactions.remove(found)
    return no_content()


def routes(r: str) -> list[BaseRoute]:
    i = r + "/issues/{number:int}"
    c = r + "/issues/comments/{comment_id:int}"
    return [
        Route(r + "/issues", list_issues, methods=["GET"]),
        Route(r + "/issues", create_issue, methods=["POST"]),
        Route(c, get_comment, methods=["GET"]),
        Route(c, update_comment, methods=["PATCH"]),
        Route(c, delete_comment, methods=["DELETE"]),
        Route(c + "/reactions", list_reactions, methods=["GET"]),
        Route(c + "/reactions", create_reaction, methods=["POST"]),
        Route(c + "/reactions/{reaction_id:int}", delete_reaction, methods=["DELETE"]),
        Route(i, get_issue, methods=["GET"]),
        Route(i, update_issue, methods=["PATCH"]),
        Route(i + "/comments", list_comments, methods=["GET"]),
        Route(i + "/comments", create_comment, methods=["POST"]),
        Route(i + "/labels", list_issue_labels, methods=["GET"]),
        Route(i + "/labels", add_issue_labels, methods=["POST"]),
        Route(i + "/labels", set_issue_labels, methods=["PUT"]),
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
