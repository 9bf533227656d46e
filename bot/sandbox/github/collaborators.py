"""GitHub's collaborators and repository invitations.

Adding a collaborator invites them (FORGE-FACTS "Collaborators"): `PUT /collaborators/{u}` answers 201 with
an invitation, and the invitee has no access until they accept it (`PATCH /user/repository_invitations/
{id}`); it answers 204 for an existing collaborator (whose role it changes) and for a member of the
organisation that owns the repository (added at once). Recorded by octokit/fixtures
`add-and-remove-repository-collaborator`. Tests that need a collaborator at once use the admin API
(``PUT /_sandbox/repos/{o}/{r}/collaborators/{login}``).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared.plumbing import (
    ApiError,
    body_object,
    json_response,
    no_content,
    paginate,
    validation_failed,
)
from bot.sandbox.shared.repo_ops import add_at_once
from bot.sandbox.shared.state import ROLE_ORDER, Invitation, Repo, Role

from .context import Ctx
from .shapes import node_id

PERMISSION_OF_ROLE: dict[Role, tuple[str, str]] = {
    "admin": ("admin", "admin"),
    "maintain": ("write", "maintain"),
    "push": ("write", "write"),
    "triage": ("read", "triage"),
    "pull": ("read", "read"),
}
ROLE_ALIASES: dict[str, Role] = {"read": "pull", "write": "push"}
# An invitation's `permissions` word for a role (the `repository-invitation` schema's enum).
INVITED_AS: dict[Role, str] = {
    "pull": "read",
    "triage": "triage",
    "push": "write",
    "maintain": "maintain",
    "admin": "admin",
}


def _role(wanted: Any, default: str = "push") -> Role | None:
    word = str(wanted if wanted is not None else default)
    role = ROLE_ALIASES.get(word, word)
    return role if role in ROLE_ORDER else None


def invitation_shape(ctx: Ctx, invitation: Invitation) -> dict[str, Any]:
    repo = ctx.forge.repo_by_id(invitation.repo_id)
    assert repo is not None
    return {
        "id": invitation.id,
        "node_id": node_id("RepositoryInvitation", invitation.id),
        "repository": ctx.shapes.repo(repo),
        "invitee": ctx.shapes.user(invitation.invitee),
        "inviter": ctx.shapes.user(invitation.inviter),
        "permissions": INVITED_AS[invitation.role],
        "created_at": invitation.created_at,
        "expired": False,
        "url": f"{ctx.base}/user/repository_invitations/{invitation.id}",
        "html_url": f"{ctx.base}/{repo.full_name}/invitations",
    }


@Ctx.on_repo("admin")
async def put_collaborator(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """PUT /repos/{o}/{r}/collaborators/{u} — "Add a repository collaborator": 201 with a new (or the
    pending) invitation and a `Location` naming it; 204 when `u` already collaborates (their role changes:
    "the response will be a 204, with no other indication") or is a member of the owning organisation."""
    body = await body_object(request)
    role = _role(body.get("permission"))
    if role is None:
        raise validation_failed("Repository", "permission", "invalid")
    user = ctx.forge.user(ctx.param("username"))
    if user is None:
        raise ctx.not_found()
    known = any(w.casefold() == user.login.casefold() for w in repo.collaborators)
    if (
        known
        or user.login.casefold() == repo.owner.casefold()
        or ctx.forge.membership(repo.owner, user.login)
    ):
        if user.login.casefold() != repo.owner.casefold():
            add_at_once(repo, user.login, role)
        return no_content()
    pending = next(
        (
            i
            for i in ctx.forge.invitations.values()
            if i.repo_id == repo.id and i.invitee.casefold() == user.login.casefold()
        ),
        None,
    )
    if pending is None:
        pending = Invitation(
            id=ctx.forge.new_id(), repo_id=repo.id, invitee=user.login, inviter=ctx.login, role=role
        )
        ctx.forge.invitations[pending.id] = pending
    pending.role = role
    shaped = invitation_shape(ctx, pending)
    return json_response(request, shaped, status=201, headers={"Location": shaped["url"]})


@Ctx.on_repo("push")
async def check_collaborator(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """GET /repos/{o}/{r}/collaborators/{u} — "Check if a user is a repository collaborator": 204 or 404 (a
    pending invitee is not one yet)."""
    role = ctx.forge.role_of(repo, ctx.param("username"))
    if role is None:
        raise ctx.not_found()
    return no_content()


@Ctx.on_repo("admin")
async def remove_collaborator(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """DELETE /repos/{o}/{r}/collaborators/{u} — 204; a pending invitation of theirs goes too."""
    login = ctx.param("username").casefold()
    for who in [w for w in repo.collaborators if w.casefold() == login]:
        del repo.collaborators[who]
    for ident in [
        i.id for i in ctx.forge.invitations.values() if i.repo_id == repo.id and i.invitee.casefold() == login
    ]:
        del ctx.forge.invitations[ident]
    return no_content()


@Ctx.on_repo("push")
async def collaborator_permission(request: Request, ctx: Ctx, repo: Repo) -> Response:
    user = ctx.forge.user(ctx.param("username"))
    if user is None:
        raise ApiError(404, f"{ctx.param('username')} is not a user")
    role = ctx.forge.role_of(repo, user.login)
    if role is None:
        permission = role_name = "none" if repo.private else "read"
    else:
        permission, role_name = PERMISSION_OF_ROLE[role]
    person = {**ctx.shapes.user(user.login), "role_name": role_name}
    return json_response(request, {"permission": permission, "role_name": role_name, "user": person})


def _people(ctx: Ctx, repo: Repo) -> list[str]:
    """Who "List repository collaborators" names: a user's repository its owner and collaborators; an
    organisation's its collaborators and the organisation's members and owners ("organization members
    with access through default organization permissions, and organization owners")."""
    owner = ctx.forge.user(repo.owner)
    org = owner is not None and owner.type == "Organization"
    people = {*repo.collaborators, *(owner.members if org and owner is not None else {})}
    if not org:
        people.add(repo.owner)
    return sorted(people, key=str.casefold)


@Ctx.on_repo("push")
async def list_collaborators(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """GET /repos/{o}/{r}/collaborators — the caller needs write; `permission` keeps those holding at least
    that role. Each has `permissions` (admin, maintain, push, triage, pull) and `role_name`, as octokit/
    fixtures `add-and-remove-repository-collaborator` reads them."""
    wanted = request.query_params.get("permission")
    need = _role(wanted, "pull")
    if need is None:
        raise validation_failed("Collaborator", "permission", "invalid")
    found = []
    for login in _people(ctx, repo):
        role = ctx.forge.role_of(repo, login)
        if role is None or ROLE_ORDER.index(role) < ROLE_ORDER.index(need):
            continue
        # GitHub lists the flags admin first (octokit/fixtures `add-and-remove-repository-collaborator`).
        permissions = {r: ROLE_ORDER.index(role) >= ROLE_ORDER.index(r) for r in reversed(ROLE_ORDER)}
        found.append(
            {**ctx.shapes.user(login), "permissions": permissions, "role_name": PERMISSION_OF_ROLE[role][1]}
        )
    chunk, headers = paginate(request, found)
    return json_response(request, chunk, headers=headers)


# invitations --------------------------------------------------------------------------------------------


def _repo_invitation(ctx: Ctx, repo: Repo) -> Invitation:
    found = ctx.forge.invitations.get(ctx.int_param("invitation_id"))
    if found is None or found.repo_id != repo.id:
        raise ctx.not_found()
    return found


@Ctx.on_repo("admin")
async def list_invitations(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """GET /repos/{o}/{r}/invitations — "List repository invitations" (admins): the pending ones."""
    found = sorted((i for i in ctx.forge.invitations.values() if i.repo_id == repo.id), key=lambda i: i.id)
    chunk, headers = paginate(request, found)
    return json_response(request, [invitation_shape(ctx, i) for i in chunk], headers=headers)


@Ctx.on_repo("admin")
async def update_invitation(request: Request, ctx: Ctx, repo: Repo) -> Response:
    """PATCH /repos/{o}/{r}/invitations/{id} — `permissions` read, write, maintain, triage or admin; 200."""
    invitation = _repo_invitation(ctx, repo)
    role = _role((await body_object(request)).get("permissions"), INVITED_AS[invitation.role])
    if role is None:
        raise validation_failed("RepositoryInvitation", "permissions", "invalid")
    invitation.role = role
    return json_response(request, invitation_shape(ctx, invitation))


@Ctx.on_repo("admin")
async def delete_invitation(request: Request, ctx: Ctx, repo: Repo) -> Response:
    del ctx.forge.invitations[_repo_invitation(ctx, repo).id]
    return no_content()


def _my_invitation(ctx: Ctx) -> Invitation:
    found = ctx.forge.invitations.get(ctx.int_param("invitation_id"))
    if found is None or found.invitee.casefold() != ctx.login.casefold():
        raise ctx.not_found()
    return found


async def my_invitations(request: Request) -> Response:
    """GET /user/repository_invitations — the caller's pending invitations."""
    ctx = Ctx(request)
    login = ctx.login.casefold()
    found = sorted(
        (i for i in ctx.forge.invitations.values() if i.invitee.casefold() == login), key=lambda i: i.id
    )
    chunk, headers = paginate(request, found)
    return json_response(request, [invitation_shape(ctx, i) for i in chunk], headers=headers)


async def answer_invitation(request: Request) -> Response:
    """PATCH /user/repository_invitations/{id} accepts (the invitee becomes a collaborator with the invited
    role), DELETE declines; both 204, and only for the invitee (others 404)."""
    ctx = Ctx(request)
    invitation = _my_invitation(ctx)
    repo = ctx.forge.repo_by_id(invitation.repo_id)
    if request.method == "PATCH" and repo is not None:
        add_at_once(repo, invitation.invitee, invitation.role)
    del ctx.forge.invitations[invitation.id]
    return no_content()


def routes(r: str) -> list[BaseRoute]:
    c = r + "/collaborators/{username}"
    i = r + "/invitations/{invitation_id:int}"
    return [
        Route(r + "/collaborators", list_collaborators, methods=["GET"]),
        Route(c, put_collaborator, methods=["PUT"]),
        Route(c, check_collaborator, methods=["GET"]),
        Route(c, remove_collaborator, methods=["DELETE"]),
        Route(c + "/permission", collaborator_permission, methods=["GET"]),
        Route(r + "/invitations", list_invitations, methods=["GET"]),
        Route(i, update_invitation, methods=["PATCH"]),
        Route(i, delete_invitation, methods=["DELETE"]),
        Route("/user/repository_invitations", my_invitations, methods=["GET"]),
        Route(
            "/user/repository_invitations/{invitation_id:int}", answer_invitation, methods=["PATCH", "DELETE"]
        ),
    ]
