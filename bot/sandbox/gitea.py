"""Gitea's API v1 over the sandbox state, at ``/api/v1/…``: what py-gitea and Steward's Gitea adapter use.

The state is the same as the GitHub API's; a repository made here (``POST /api/v1/user/repos``) is
Gitea-flavoured, so its webhooks are Gitea's. Auth is ``Authorization: token X`` (or ``Bearer``);
pagination is Gitea's ``page``/``limit`` (default 30, at most 50) with ``Link`` and ``X-Total-Count``;
errors are ``{"message", "url"}``. Permissions follow Gitea's access modes (read, write, admin, owner:
no triage, no maintain).
"""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from . import gitmodel
from .gitea_shapes import GiteaShapes
from .gitea_webhooks import Emitter
from .plumbing import ApiError, body_json, body_object, json_response, principal
from .runtime import Sandbox
from .state import (
    REACTIONS,
    ROLE_ORDER,
    Comment,
    Hook,
    Issue,
    Label,
    Milestone,
    Reaction,
    Repo,
    Role,
    SandboxState,
    Signature,
    now_iso,
)

API = "/api/v1"
DEFAULT_LIMIT = 30
MAX_LIMIT = 50
HOOK_TYPES = frozenset({"gitea", "forgejo", "gogs"})
ROLE_OF_ACCESS: dict[str, Role] = {"read": "pull", "write": "push", "admin": "admin"}


class GCtx:
    """Per-request context: who asks, which repository, the shapes and the webhook emitter."""

    def __init__(self, request: Request) -> None:
        self.request = request
        self.sandbox: Sandbox = request.app.state.sandbox
        self.forge: SandboxState = self.sandbox.forge
        self.base = str(request.base_url).rstrip("/")
        self.shapes = GiteaShapes(self.forge, self.base)

    @property
    def login(self) -> str:
        who = principal(self.request)
        if who.login is None:
            raise ApiError(
                401, "token is required" if who.error == "Requires authentication" else "user does not exist"
            )
        return who.login

    @property
    def emit(self) -> Emitter:
        return Emitter(self.request, self.login)

    def param(self, name: str) -> str:
        return str(self.request.path_params[name])

    def int_param(self, name: str) -> int:
        return int(self.request.path_params[name])

    def repo(self, needed: Role = "pull") -> Repo:
        login = self.login
        repo = self.forge.repo(self.param("owner"), self.param("repo"))
        if repo is None or not self.forge.can(repo, login, "pull"):
            raise ApiError(404, "The target couldn't be found.")
        self.require(repo, needed)
        return repo

    def allowed(self, repo: Repo, needed: Role) -> bool:
        # Gitea has no triage: reading is all a triage collaborator gets.
        if needed == "triage":
            needed = "push"
        return self.forge.can(repo, self.login, needed)

    def require(self, repo: Repo, needed: Role) -> None:
        if not self.allowed(repo, needed):
            raise ApiError(403, "user should have specific permission or be a site admin")


def gitea_page[T](request: Request, items: list[T]) -> tuple[list[T], dict[str, str]]:
    """Gitea's `page`/`limit` with `X-Total-Count` and a `Link` header."""
    try:
        limit = int(request.query_params.get("limit", DEFAULT_LIMIT))
        page = int(request.query_params.get("page", "1"))
    except ValueError:
        limit, page = DEFAULT_LIMIT, 1
    limit = DEFAULT_LIMIT if limit <= 0 else min(limit, MAX_LIMIT)
    page = max(page, 1)
    last = max(math.ceil(len(items) / limit), 1)
    chunk = items[(page - 1) * limit : page * limit]

    def url(n: int) -> str:
        params = {**dict(request.query_params), "page": str(n), "limit": str(limit)}
        return str(request.url.replace(query="&".join(f"{k}={v}" for k, v in params.items())))

    links = []
    if page < last:
        links += [f'<{url(page + 1)}>; rel="next"', f'<{url(last)}>; rel="last"']
    if page > 1:
        links += [f'<{url(1)}>; rel="first"', f'<{url(min(page - 1, last))}>; rel="prev"']
    headers = {"X-Total-Count": str(len(items)), "Access-Control-Expose-Headers": "X-Total-Count, Link"}
    if links:
        headers["Link"] = ",".join(links)
    return chunk, headers


def unprocessable(message: str) -> ApiError:
    return ApiError(422, message)


# users and repositories ---------------------------------------------------------------------------------


async def get_me(request: Request) -> Response:
    ctx = GCtx(request)
    return json_response(request, ctx.shapes.user(ctx.login))


async def get_user(request: Request) -> Response:
    ctx = GCtx(request)
    _ = ctx.login
    user = ctx.forge.user(ctx.param("login"))
    if user is None:
        raise ApiError(404, "user redirect does not exist")
    return json_response(request, ctx.shapes.user(user.login))


async def create_repo(request: Request) -> Response:
    ctx = GCtx(request)
    owner = ctx.login
    body = await body_object(request)
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        raise unprocessable("[Name]: Required")
    if ctx.forge.repo(owner, name) is not None:
        raise ApiError(409, "The repository with the same name already exists.")
    repo = Repo(
        id=ctx.forge.new_id(),
        owner=ctx.forge.ensure_user(owner).login,
        name=name,
        flavor="gitea",
        description=body.get("description"),
        private=bool(body.get("private", False)),
        default_branch=str(body.get("default_branch") or "main"),
    )
    gitmodel.init_repo(repo, Signature(name=owner, email=f"{owner}@noreply.sandbox"))
    repo.pushed_at = now_iso()
    ctx.forge.add_repo(repo)
    return json_response(request, ctx.shapes.repo(repo, owner), status=201)


async def get_repo(request: Request) -> Response:
    ctx = GCtx(request)
    return json_response(request, ctx.shapes.repo(ctx.repo(), ctx.login))


async def put_collaborator(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo("admin")
    body = await body_object(request)
    role = ROLE_OF_ACCESS.get(str(body.get("permission", "write")))
    if role is None or role not in ROLE_ORDER:
        raise unprocessable("permission must be read, write or admin")
    user = ctx.forge.user(ctx.param("username"))
    if user is None:
        raise ApiError(422, "user does not exist")
    repo.collaborators[user.login] = role
    return Response(status_code=204)


async def collaborator_permission(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo("push")
    user = ctx.forge.user(ctx.param("username"))
    if user is None:
        raise ApiError(404, "user does not exist")
    return json_response(request, ctx.shapes.permission(repo, user.login))


# hooks ---------------------------------------------------------------------------------------------------


def _hook_from(body: dict[str, Any], hook: Hook) -> Hook:
    config = body.get("config") or {}
    if not isinstance(config, dict):
        raise unprocessable("config must be an object")
    if "url" in config:
        hook.url = str(config["url"])
    if "content_type" in config:
        if config["content_type"] not in ("json", "form"):
            raise unprocessable("Invalid content type")
        hook.content_type = config["content_type"]
    if "secret" in config:
        hook.secret = str(config["secret"]) or None
    if "events" in body:
        hook.events = [str(e) for e in body["events"] or []]
    if "active" in body:
        hook.active = bool(body["active"])
    hook.updated_at = now_iso()
    return hook


async def create_hook(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo("admin")
    body = await body_object(request)
    kind = body.get("type")
    if kind not in HOOK_TYPES:
        raise unprocessable("Invalid hook type")
    config = body.get("config")
    if not isinstance(config, dict) or not config.get("url") or not config.get("content_type"):
        raise unprocessable("Missing config option: url and content_type are required")
    hook = _hook_from(body, Hook(id=ctx.forge.new_id(), url="", hook_type=str(kind), events=["push"]))
    hook.active = bool(body.get("active", False))
    repo.hooks[hook.id] = hook
    return json_response(request, ctx.shapes.hook(hook), status=201)


async def list_hooks(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo("admin")
    chunk, headers = gitea_page(request, list(repo.hooks.values()))
    return json_response(request, [ctx.shapes.hook(h) for h in chunk], headers=headers)


def _hook(ctx: GCtx, repo: Repo) -> Hook:
    hook = repo.hooks.get(ctx.int_param("id"))
    if hook is None:
        raise ApiError(404, "The target couldn't be found.")
    return hook


async def get_hook(request: Request) -> Response:
    ctx = GCtx(request)
    return json_response(request, ctx.shapes.hook(_hook(ctx, ctx.repo("admin"))))


async def edit_hook(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo("admin")
    hook = _hook_from(await body_object(request), _hook(ctx, repo))
    return json_response(request, ctx.shapes.hook(hook))


async def delete_hook(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo("admin")
    hook = _hook(ctx, repo)
    del repo.hooks[hook.id]
    ctx.sandbox.deliverer.forget_hook(hook.id)
    return Response(status_code=204)


# issues --------------------------------------------------------------------------------------------------


def _issue(ctx: GCtx, repo: Repo) -> Issue:
    issue = repo.issues.get(ctx.int_param("index"))
    if issue is None:
        raise ApiError(404, "The target couldn't be found.")
    return issue


def _milestone_by_id(repo: Repo, ident: Any) -> Milestone | None:
    return next((m for m in repo.milestones.values() if m.id == ident or str(m.id) == str(ident)), None)


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


def _set_labels(ctx: GCtx, repo: Repo, issue: Issue, wanted: list[int]) -> None:
    removed = [i for i in issue.label_ids if i not in wanted]
    added = [i for i in wanted if i not in issue.label_ids]
    if not removed and not added:
        return
    issue.label_ids = [i for i in issue.label_ids if i in wanted] + added
    issue.updated_at = now_iso()
    ctx.emit.labels(repo, issue, added, removed)


async def list_issues(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo()
    q = request.query_params
    state = q.get("state", "open")
    issues = [i for i in repo.issues.values() if state == "all" or i.state == state]
    if q.get("labels"):
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
        issues = [i for i in issues if i.user.casefold() == q["created_by"].casefold()]
    if q.get("since"):
        issues = [i for i in issues if i.updated_at >= q["since"]]
    issues.sort(key=lambda i: i.number, reverse=True)
    chunk, headers = gitea_page(request, issues)
    return json_response(request, [ctx.shapes.issue(repo, i) for i in chunk], headers=headers)


async def create_issue(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo("pull")
    body = await body_object(request)
    title = body.get("title")
    if not isinstance(title, str) or not title.strip():
        raise unprocessable("[Title]: Required")
    number = repo.next_number
    repo.next_number += 1
    issue = Issue(
        id=ctx.forge.new_id(), number=number, title=title, body=body.get("body") or "", user=ctx.login
    )
    if ctx.allowed(repo, "push"):
        issue.label_ids = _labels_by_ref(repo, body.get("labels") or [])
        if body.get("milestone"):
            ms = _milestone_by_id(repo, body["milestone"])
            if ms is None:
                raise unprocessable("milestone does not exist")
            issue.milestone = ms.number
        issue.assignees = [str(a) for a in body.get("assignees") or []]
    repo.issues[number] = issue
    ctx.emit.issue(repo, issue, "opened")
    if body.get("closed"):
        issue.state, issue.closed_at = "closed", now_iso()
        ctx.emit.issue(repo, issue, "closed")
    return json_response(request, ctx.shapes.issue(repo, issue), status=201)


async def get_issue(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo()
    return json_response(request, ctx.shapes.issue(repo, _issue(ctx, repo)))


async def edit_issue(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo()
    issue = _issue(ctx, repo)
    body = await body_object(request)
    is_author = issue.user == ctx.login
    changes: dict[str, Any] = {}
    for field in ("title", "body"):
        if field in body and body[field] is not None and body[field] != (getattr(issue, field) or ""):
            if not is_author:
                ctx.require(repo, "push")
            changes[field] = {"from": getattr(issue, field) or ""}
    wanted_state = body.get("state")
    if wanted_state not in (None, "open", "closed"):
        raise unprocessable("state must be open or closed")
    if wanted_state is not None and wanted_state != issue.state and not is_author:
        ctx.require(repo, "push")
    if changes:
        if "title" in changes:
            issue.title = str(body["title"])
        if "body" in changes:
            issue.body = str(body["body"])
        issue.updated_at = now_iso()
        ctx.emit.issue(repo, issue, "edited", changes)
    if "milestone" in body and ctx.allowed(repo, "push"):
        ms = _milestone_by_id(repo, body["milestone"]) if body["milestone"] else None
        if body["milestone"] and ms is None:
            raise unprocessable("milestone does not exist")
        new = ms.number if ms is not None else None
        if new != issue.milestone:
            old, issue.milestone = issue.milestone, new
            issue.updated_at = now_iso()
            ctx.emit.milestone(repo, issue, old)
    if "assignees" in body and ctx.allowed(repo, "push"):
        issue.assignees = [str(a) for a in body["assignees"] or []]
    if wanted_state == "closed" and issue.state == "open":
        issue.state, issue.closed_at, issue.closed_by = "closed", now_iso(), ctx.login
        issue.updated_at = issue.closed_at
        ctx.emit.issue(repo, issue, "closed")
    elif wanted_state == "open" and issue.state == "closed":
        issue.state, issue.closed_at, issue.closed_by = "open", None, None
        issue.updated_at = now_iso()
        ctx.emit.issue(repo, issue, "reopened")
    return json_response(request, ctx.shapes.issue(repo, issue), status=201)


# comments and reactions -----------------------------------------------------------------------------------


def _comment(ctx: GCtx, repo: Repo) -> Comment:
    comment = repo.comments.get(ctx.int_param("id"))
    if comment is None:
        raise ApiError(404, "The target couldn't be found.")
    return comment


async def list_comments(request: Request) -> Response:
    """Gitea answers an issue's comments whole: this list takes no page/limit."""
    ctx = GCtx(request)
    repo = ctx.repo()
    issue = _issue(ctx, repo)
    since = request.query_params.get("since")
    found = [
        c
        for c in sorted(repo.comments.values(), key=lambda c: c.id)
        if c.issue_number == issue.number and (since is None or c.updated_at >= since)
    ]
    return json_response(request, [ctx.shapes.comment(repo, c) for c in found])


async def create_comment(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo()
    issue = _issue(ctx, repo)
    if issue.locked and not ctx.allowed(repo, "push"):
        raise ApiError(403, "issue is locked")
    body = (await body_object(request)).get("body")
    if not isinstance(body, str) or not body:
        raise unprocessable("[Body]: Required")
    comment = Comment(id=ctx.forge.new_id(), issue_number=issue.number, user=ctx.login, body=body)
    repo.comments[comment.id] = comment
    issue.updated_at = comment.created_at
    ctx.emit.comment(repo, comment, "created")
    return json_response(request, ctx.shapes.comment(repo, comment), status=201)


async def get_comment(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo()
    return json_response(request, ctx.shapes.comment(repo, _comment(ctx, repo)))


async def edit_comment(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo()
    comment = _comment(ctx, repo)
    if comment.user != ctx.login:
        ctx.require(repo, "push")
    body = (await body_object(request)).get("body")
    if not isinstance(body, str) or not body:
        raise unprocessable("[Body]: Required")
    if body != comment.body:
        previous, comment.body, comment.updated_at = comment.body, body, now_iso()
        ctx.emit.comment(repo, comment, "edited", {"body": {"from": previous}})
    return json_response(request, ctx.shapes.comment(repo, comment))


async def delete_comment(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo()
    comment = _comment(ctx, repo)
    if comment.user != ctx.login:
        ctx.require(repo, "push")
    ctx.emit.comment(repo, comment, "deleted")
    del repo.comments[comment.id]
    return Response(status_code=204)


def _reactions(ctx: GCtx, repo: Repo) -> list[Reaction]:
    if "id" in ctx.request.path_params:
        return _comment(ctx, repo).reactions
    return _issue(ctx, repo).reactions


async def list_reactions(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo()
    return json_response(request, [ctx.shapes.reaction(r) for r in _reactions(ctx, repo)])


async def add_reaction(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo()
    reactions = _reactions(ctx, repo)
    content = (await body_object(request)).get("content")
    if content not in REACTIONS:
        raise ApiError(403, f"'{content}' is not an allowed reaction")
    existing = next((r for r in reactions if r.user == ctx.login and r.content == content), None)
    if existing is not None:
        return json_response(request, ctx.shapes.reaction(existing), status=200)
    reaction = Reaction(id=ctx.forge.new_id(), user=ctx.login, content=str(content))
    reactions.append(reaction)
    return json_response(request, ctx.shapes.reaction(reaction), status=201)


async def delete_reaction(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo()
    reactions = _reactions(ctx, repo)
    content = (await body_object(request)).get("content")
    reactions[:] = [r for r in reactions if not (r.user == ctx.login and r.content == content)]
    return Response(status_code=200)


# labels and milestones ------------------------------------------------------------------------------------


def _label(ctx: GCtx, repo: Repo) -> Label:
    label = repo.labels.get(ctx.int_param("id"))
    if label is None:
        raise ApiError(404, "The target couldn't be found.")
    return label


async def list_labels(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo()
    chunk, headers = gitea_page(request, sorted(repo.labels.values(), key=lambda lb: lb.name.casefold()))
    return json_response(request, [ctx.shapes.label(repo, lb) for lb in chunk], headers=headers)


def _color(raw: Any) -> str:
    color = str(raw or "").lstrip("#").lower()
    if len(color) not in (3, 6) or any(ch not in "0123456789abcdef" for ch in color):
        raise unprocessable("Color: invalid")
    return color


async def create_label(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo("push")
    body = await body_object(request)
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        raise unprocessable("[Name]: Required")
    if repo.label_named(name) is not None:
        # Gitea itself allows duplicate names; the sandbox refuses them so races are visible.
        raise ApiError(409, "label already exists")
    label = Label(
        id=ctx.forge.new_id(), name=name, color=_color(body.get("color")), description=body.get("description")
    )
    repo.labels[label.id] = label
    return json_response(request, ctx.shapes.label(repo, label), status=201)


async def get_label(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo()
    return json_response(request, ctx.shapes.label(repo, _label(ctx, repo)))


async def edit_label(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo("push")
    label = _label(ctx, repo)
    body = await body_object(request)
    if isinstance(body.get("name"), str):
        label.name = body["name"]
    if body.get("color") is not None:
        label.color = _color(body["color"])
    if "description" in body:
        label.description = body["description"]
    return json_response(request, ctx.shapes.label(repo, label))


async def delete_label(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo("push")
    label = _label(ctx, repo)
    for issue in repo.issues.values():
        if label.id in issue.label_ids:
            issue.label_ids.remove(label.id)
    del repo.labels[label.id]
    return Response(status_code=204)


async def issue_labels(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo()
    issue = _issue(ctx, repo)
    return json_response(request, [ctx.shapes.label(repo, repo.labels[i]) for i in issue.label_ids])


async def change_issue_labels(request: Request) -> Response:
    """POST adds, PUT replaces; both answer the labels now on the issue."""
    ctx = GCtx(request)
    repo = ctx.repo("push")
    issue = _issue(ctx, repo)
    data = await body_json(request)
    ids = _labels_by_ref(repo, data.get("labels", []) if isinstance(data, dict) else None)
    wanted = (
        ids if request.method == "PUT" else issue.label_ids + [i for i in ids if i not in issue.label_ids]
    )
    _set_labels(ctx, repo, issue, wanted)
    return json_response(request, [ctx.shapes.label(repo, repo.labels[i]) for i in issue.label_ids])


async def clear_issue_labels(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo("push")
    _set_labels(ctx, repo, _issue(ctx, repo), [])
    return Response(status_code=204)


async def remove_issue_label(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo("push")
    issue = _issue(ctx, repo)
    label = repo.labels.get(ctx.int_param("id"))
    if label is None:
        raise unprocessable("label does not exist")
    _set_labels(ctx, repo, issue, [i for i in issue.label_ids if i != label.id])
    return Response(status_code=204)


def _milestone(ctx: GCtx, repo: Repo) -> Milestone:
    ident = ctx.param("id")
    ms = _milestone_by_id(repo, ident) or next(
        (m for m in repo.milestones.values() if m.title == ident), None
    )
    if ms is None:
        raise ApiError(404, "The target couldn't be found.")
    return ms


async def list_milestones(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo()
    state = request.query_params.get("state", "open")
    found = sorted(
        (m for m in repo.milestones.values() if state == "all" or m.state == state), key=lambda m: m.number
    )
    chunk, headers = gitea_page(request, found)
    return json_response(request, [ctx.shapes.milestone(repo, m) for m in chunk], headers=headers)


async def create_milestone(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo("push")
    body = await body_object(request)
    title = body.get("title")
    if not isinstance(title, str) or not title.strip():
        raise unprocessable("[Title]: Required")
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
    return json_response(request, ctx.shapes.milestone(repo, ms), status=201)


async def get_milestone(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo()
    return json_response(request, ctx.shapes.milestone(repo, _milestone(ctx, repo)))


async def edit_milestone(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo("push")
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


async def delete_milestone(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo("push")
    ms = _milestone(ctx, repo)
    for issue in repo.issues.values():
        if issue.milestone == ms.number:
            issue.milestone = None
    del repo.milestones[ms.number]
    return Response(status_code=204)


# dependencies ---------------------------------------------------------------------------------------------


def _issue_by_id(forge: SandboxState, ident: int) -> tuple[Repo, Issue] | None:
    for repo in forge.repos.values():
        for issue in repo.issues.values():
            if issue.id == ident:
                return repo, issue
    return None


async def list_dependencies(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo()
    issue = _issue(ctx, repo)
    found = [f for f in (_issue_by_id(ctx.forge, i) for i in issue.blocked_by) if f is not None]
    chunk, headers = gitea_page(request, found)
    return json_response(request, [ctx.shapes.issue(r, i) for r, i in chunk], headers=headers)


async def list_blocks(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo()
    issue = _issue(ctx, repo)
    found = [(r, i) for r in ctx.forge.repos.values() for i in r.issues.values() if issue.id in i.blocked_by]
    chunk, headers = gitea_page(request, found)
    return json_response(request, [ctx.shapes.issue(r, i) for r, i in chunk], headers=headers)


async def _dependency_target(ctx: GCtx, body: dict[str, Any]) -> Issue:
    other = ctx.forge.repo(str(body.get("owner", "")), str(body.get("repo", "")))
    index = body.get("index")
    if other is None or not isinstance(index, int) or index not in other.issues:
        raise ApiError(404, "The target couldn't be found.")
    if not ctx.forge.can(other, ctx.login, "pull"):
        raise ApiError(404, "The target couldn't be found.")
    return other.issues[index]


async def add_dependency(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo("push")
    issue = _issue(ctx, repo)
    blocker = await _dependency_target(ctx, await body_object(request))
    if blocker.id == issue.id:
        raise unprocessable("an issue cannot depend on itself")
    if blocker.id not in issue.blocked_by:
        issue.blocked_by.append(blocker.id)
        issue.updated_at = now_iso()
    return json_response(request, ctx.shapes.issue(repo, issue), status=201)


async def remove_dependency(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo("push")
    issue = _issue(ctx, repo)
    blocker = await _dependency_target(ctx, await body_object(request))
    if blocker.id in issue.blocked_by:
        issue.blocked_by.remove(blocker.id)
    return json_response(request, ctx.shapes.issue(repo, issue))


# contents ---------------------------------------------------------------------------------------------------


async def get_contents(request: Request) -> Response:
    ctx = GCtx(request)
    repo = ctx.repo()
    ref = request.query_params.get("ref") or repo.default_branch
    sha = gitmodel.resolve(repo, ref)
    if sha is None:
        raise ApiError(404, f"object does not exist [id: {ref}]")
    path = str(request.path_params.get("path", "")).strip("/")
    entry = gitmodel.lookup(repo, repo.commits[sha].tree, path)
    if entry is None:
        raise ApiError(404, "object does not exist")
    if entry.type == "blob":
        return json_response(request, ctx.shapes.content(repo, path, entry.sha, ref, sha))
    listing = []
    for child in repo.trees[entry.sha].entries:
        child_path = f"{path}/{child.name}" if path else child.name
        if child.type == "blob":
            shape = ctx.shapes.content(repo, child_path, child.sha, ref, sha)
            shape.update(content=None, encoding=None)
        else:
            shape = {"name": child.name, "path": child_path, "sha": child.sha, "type": "dir", "size": 0}
        listing.append(shape)
    return json_response(request, listing)


async def write_contents(request: Request) -> Response:
    """POST creates a file, PUT updates one (with the blob `sha` it replaces); each is a commit and a push."""
    ctx = GCtx(request)
    repo = ctx.repo("push")
    body = await body_object(request)
    path = str(request.path_params["path"]).strip("/")
    try:
        data = base64.b64decode(str(body.get("content", "")), validate=True)
    except (binascii.Error, ValueError):
        raise unprocessable("content must be base64") from None
    branch = str(body.get("branch") or repo.default_branch)
    head = repo.refs.get(f"refs/heads/{branch}")
    if head is None:
        raise ApiError(404, f"branch does not exist [name: {branch}]")
    files = gitmodel.flatten(repo, repo.commits[head].tree)
    current = files.get(path)
    if request.method == "POST" and current is not None:
        raise unprocessable(f"repository file already exists [path: {path}]")
    if request.method == "PUT":
        if current is None:
            raise ApiError(404, "object does not exist")
        if body.get("sha") != current[1]:
            raise ApiError(409, f"sha does not match [given: {body.get('sha')}, expected: {current[1]}]")
    blob = gitmodel.put_blob(repo, data)
    files[path] = (current[0] if current else "100644", blob)
    author = Signature(name=ctx.login, email=f"{ctx.login}@noreply.sandbox")
    message = str(body.get("message") or f"{'Add' if current is None else 'Update'} {path}")
    commit = gitmodel.make_commit(repo, gitmodel.write_tree(repo, files), [head], message, author, author)
    repo.refs[f"refs/heads/{branch}"] = commit.sha
    repo.pushed_at = now_iso()
    ctx.emit.push(repo, f"refs/heads/{branch}", head, commit.sha)
    out = {
        "content": ctx.shapes.content(repo, path, blob, branch, commit.sha),
        "commit": {
            "sha": commit.sha,
            "message": commit.message,
            "url": f"{ctx.shapes.api}/repos/{repo.full_name}/git/commits/{commit.sha}",
        },
        "verification": None,
    }
    return json_response(request, out, status=201 if request.method == "POST" else 200)


def routes() -> list[BaseRoute]:
    r = API + "/repos/{owner}/{repo}"
    i = r + "/issues/{index:int}"
    c = r + "/issues/comments/{id:int}"
    return [
        Route(API + "/user", get_me, methods=["GET"]),
        Route(API + "/user/repos", create_repo, methods=["POST"]),
        Route(API + "/users/{login}", get_user, methods=["GET"]),
        Route(r, get_repo, methods=["GET"]),
        Route(r + "/collaborators/{username}", put_collaborator, methods=["PUT"]),
        Route(r + "/collaborators/{username}/permission", collaborator_permission, methods=["GET"]),
        Route(r + "/hooks", list_hooks, methods=["GET"]),
        Route(r + "/hooks", create_hook, methods=["POST"]),
        Route(r + "/hooks/{id:int}", get_hook, methods=["GET"]),
        Route(r + "/hooks/{id:int}", edit_hook, methods=["PATCH"]),
        Route(r + "/hooks/{id:int}", delete_hook, methods=["DELETE"]),
        Route(r + "/issues", list_issues, methods=["GET"]),
        Route(r + "/issues", create_issue, methods=["POST"]),
        Route(c, get_comment, methods=["GET"]),
        Route(c, edit_comment, methods=["PATCH"]),
        Route(c, delete_comment, methods=["DELETE"]),
        Route(c + "/reactions", list_reactions, methods=["GET"]),
        Route(c + "/reactions", add_reaction, methods=["POST"]),
        Route(c + "/reactions", delete_reaction, methods=["DELETE"]),
        Route(i, get_issue, methods=["GET"]),
        Route(i, edit_issue, methods=["PATCH"]),
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
        Route(r + "/contents/{path:path}", get_contents, methods=["GET"]),
        Route(r + "/contents/{path:path}", write_contents, methods=["POST", "PUT"]),
        Route(r + "/contents", get_contents, methods=["GET"]),
    ]
