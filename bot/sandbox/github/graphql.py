"""GitHub's GraphQL API (``POST /graphql``), as much of it as pinning an issue needs: the ``pinIssue`` and
``unpinIssue`` mutations, and ``repository(owner, name) { issue(number) { id isPinned … } pinnedIssues … }``.

GitHub has no REST endpoint for pinning (its REST issue has no pinned field either), so this is how a client
pins and reads pins. What GitHub does, and where that is from:

- Up to **three** pinned issues per repository ("You can pin up to three important issues above the issues
  list in your repository" — docs.github.com, "Pinning an issue to your repository"); closed ones count.
- A fourth pin is refused with ``{"type": "UNPROCESSABLE", "message": "Maximum 3 pinned issues per
  repository"}`` — seen by API users (``gh issue pin``: "GraphQL: Maximum 3 pinned issues per repository
  (pinIssue)"), and so in a copy of GitHub's own mutation (``Platform::Mutations::PinIssue``) that also shows
  the order of its checks: the limit is checked **before** whether the issue is pinned already, so pinning a
  pinned issue of a full repository is refused with the limit too; otherwise an issue pinned already is
  refused with "The issue is already pinned or could not be pinned at this time". ``unpinIssue`` of an issue
  that is not pinned: "The issue is not pinned or cannot be unpinned at this time" (``…::UnpinIssue``).
- "People with write access to a repository can pin issue in the repository" (the same docs page). Others are
  refused ``FORBIDDEN``: "LOGIN does not have the correct permissions to execute `PinIssue`" (the wording
  GitHub uses for every mutation, e.g. ``MergePullRequest``), and an App's token without the permission
  "Resource not accessible by integration".
- GraphQL answers **200 with an ``errors`` array** for all of these, ``data`` holding ``null`` for the
  refused field; a document that does not validate (an unknown field) gets only ``errors``, with
  ``extensions.code`` ``undefinedField`` and a path that starts with the operation; one that does not parse
  gets "Parse error on …". A request without a token is answered 401 "This endpoint requires you to be
  authenticated.". Node ids are the REST ``node_id`` of the same issue.
- Pinning and unpinning send the ``issues`` webhook with action ``pinned`` / ``unpinned`` (octokit/webhooks
  ``issues.pinned``, ``issues.unpinned``).

And an issue's edit history, which GitHub's REST API does not give: ``issue { includesCreatedEdit
lastEditedAt userContentEdits(first|last) { totalCount nodes { editedAt editor { login } diff } } }``.
Documented (docs.github.com/en/graphql/reference/objects, ``Issue`` and ``UserContentEdit``): the connection
of "edits to this content", each with ``editor`` ("The actor who edited this content"), ``editedAt`` and
``diff`` ("A summary of the changes for this edit", nullable); ``includesCreatedEdit``: "Check if this
comment was edited and includes an edit with the creation data". Observed by API users, not documented: one
node per version of the body, newest first, the creation's version among them once the body was edited, and
``diff`` the whole body of that version. The sandbox answers so; Steward's reader
(``bot/forge/github_edits.py``) sorts by ``editedAt`` itself and treats a null ``diff`` as not knowing.
A title change is no content edit (GitHub records it as a ``renamed`` event), and neither is it here.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.sandbox.shared import issue_ops, pin_ops, pull_ops
from bot.sandbox.shared.plumbing import body_json, dumps
from bot.sandbox.shared.state import Issue, Repo, now_iso

from .context import Ctx
from .graphql_doc import GraphQLSyntaxError, Operation, Selection, parse, substitute
from .ids import node_id

PIN_LIMIT = 3
GRAPHQL_DOCS = "https://docs.github.com/graphql/guides/forming-calls-with-graphql#authenticating-with-graphql"
LEAVES = frozenset({"ID", "String", "Int", "Boolean", "IssueState", "URI", "DateTime"})


@dataclass(frozen=True)
class FieldType:
    name: str
    many: bool = False
    required: tuple[str, ...] = ()
    accepts: tuple[str, ...] = ()


SCHEMA: dict[str, dict[str, FieldType]] = {
    "Query": {"repository": FieldType("Repository", required=("owner", "name"), accepts=("owner", "name"))},
    "Mutation": {
        "pinIssue": FieldType("PinIssuePayload", required=("input",), accepts=("input",)),
        "unpinIssue": FieldType("UnpinIssuePayload", required=("input",), accepts=("input",)),
        "markPullRequestReadyForReview": FieldType(
            "MarkPullRequestReadyForReviewPayload", required=("input",), accepts=("input",)
        ),
    },
    "Repository": {
        "id": FieldType("ID"),
        "name": FieldType("String"),
        "nameWithOwner": FieldType("String"),
        "issue": FieldType("Issue", required=("number",), accepts=("number",)),
        "pinnedIssues": FieldType("PinnedIssueConnection", accepts=("first", "last", "after", "before")),
    },
    "PinnedIssueConnection": {"nodes": FieldType("PinnedIssue", many=True), "totalCount": FieldType("Int")},
    "PinnedIssue": {"id": FieldType("ID"), "issue": FieldType("Issue")},
    "Issue": {
        "id": FieldType("ID"),
        "number": FieldType("Int"),
        "title": FieldType("String"),
        "state": FieldType("IssueState"),
        "isPinned": FieldType("Boolean"),
        "url": FieldType("URI"),
        "includesCreatedEdit": FieldType("Boolean"),
        "lastEditedAt": FieldType("DateTime"),
        "userContentEdits": FieldType(
            "UserContentEditConnection", accepts=("first", "last", "after", "before")
        ),
    },
    "UserContentEditConnection": {
        "nodes": FieldType("UserContentEdit", many=True),
        "totalCount": FieldType("Int"),
    },
    "UserContentEdit": {
        "id": FieldType("ID"),
        "createdAt": FieldType("DateTime"),
        "editedAt": FieldType("DateTime"),
        "diff": FieldType("String"),
        "editor": FieldType("Actor"),
    },
    "Actor": {"login": FieldType("String")},
    "PinIssuePayload": {"issue": FieldType("Issue"), "clientMutationId": FieldType("String")},
    "PullRequest": {"id": FieldType("ID"), "number": FieldType("Int"), "isDraft": FieldType("Boolean")},
    "MarkPullRequestReadyForReviewPayload": {
        "pullRequest": FieldType("PullRequest"),
        "clientMutationId": FieldType("String"),
    },
    "UnpinIssuePayload": {
        "issue": FieldType("Issue"),
        "id": FieldType("ID"),
        "clientMutationId": FieldType("String"),
    },
}


class FieldError(Exception):
    """A field GitHub refuses while executing: its error ``type`` and message; the field becomes null."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def _location(selection: Selection) -> list[dict[str, int]]:
    return [{"line": selection.line, "column": selection.column}]


# --- validation: every field known, selections where they belong, required arguments given ---------------


def _validate(operation: Operation) -> list[dict[str, Any]]:
    errors: list[dict[str, Any]] = []

    def walk(type_name: str, selections: list[Selection], path: list[str]) -> None:
        for sel in selections:
            where = [*path, sel.key]
            if sel.name == "__typename":
                continue
            spec = SCHEMA[type_name].get(sel.name)
            if spec is None:
                errors.append(
                    {
                        "path": where,
                        "extensions": {
                            "code": "undefinedField",
                            "typeName": type_name,
                            "fieldName": sel.name,
                        },
                        "locations": _location(sel),
                        "message": f"Field '{sel.name}' doesn't exist on type '{type_name}'",
                    }
                )
                continue
            for argument in sel.arguments:
                if argument not in spec.accepts:
                    errors.append(
                        {
                            "path": [*where, argument],
                            "extensions": {
                                "code": "argumentNotAccepted",
                                "name": sel.name,
                                "argumentName": argument,
                            },
                            "locations": _location(sel),
                            "message": f"Field '{sel.name}' doesn't accept argument '{argument}'",
                        }
                    )
            missing = [a for a in spec.required if a not in sel.arguments]
            if missing:
                errors.append(
                    {
                        "path": where,
                        "extensions": {"code": "missingRequiredArguments", "name": sel.name},
                        "locations": _location(sel),
                        "message": f"Field '{sel.name}' is missing required arguments: {', '.join(missing)}",
                    }
                )
            if spec.name in LEAVES and sel.selections:
                errors.append(
                    {
                        "path": where,
                        "extensions": {"code": "selectionMismatch", "nodeName": f"field '{sel.name}'"},
                        "locations": _location(sel),
                        "message": f"Selections can't be made on scalars (field '{sel.name}' returns "
                        f"{spec.name} but has selections [{', '.join(s.key for s in sel.selections)}])",
                    }
                )
            elif spec.name not in LEAVES and not sel.selections:
                errors.append(
                    {
                        "path": where,
                        "extensions": {"code": "selectionMismatch", "nodeName": f"field '{sel.name}'"},
                        "locations": _location(sel),
                        "message": f"Field must have selections (field '{sel.name}' returns {spec.name} but "
                        f"has no selections. Did you mean '{sel.name} {{ ... }}'?)",
                    }
                )
            elif spec.name not in LEAVES:
                walk(spec.name, sel.selections, where)

    walk("Mutation" if operation.kind == "mutation" else "Query", operation.selections, [operation.label])
    return errors


# --- resolvers ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """An issue and its repository, as a GraphQL object (an Issue or a PinnedIssue)."""

    repo: Repo
    issue: Issue


def _readable(ctx: Ctx, repo: Repo) -> bool:
    return ctx.forge.can(repo, ctx.login, "pull")


def _repository(ctx: Ctx, args: dict[str, Any]) -> Repo:
    owner, name = str(args.get("owner") or ""), str(args.get("name") or "")
    repo = ctx.forge.repo(owner, name)
    if repo is None or not _readable(ctx, repo):
        raise FieldError("NOT_FOUND", f"Could not resolve to a Repository with the name '{owner}/{name}'.")
    return repo


def _issue_of(repo: Repo, args: dict[str, Any]) -> Found:
    number = args.get("number")
    issue = repo.issues.get(number) if isinstance(number, int) else None
    if issue is None or issue.pull is not None:
        raise FieldError("NOT_FOUND", f"Could not resolve to an Issue with the number of {number}.")
    return Found(repo, issue)


def _issue_by_node(ctx: Ctx, ident: Any) -> Found:
    """The issue a node id names (the REST ``node_id``: ``github.ids.node_id("Issue", id)``)."""
    refused = FieldError("NOT_FOUND", f"Could not resolve to a node with the global id of '{ident}'")
    try:
        decoded = base64.b64decode(str(ident), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise refused from None
    match = re.fullmatch(r"0:Issue(\d+)", decoded)
    found = issue_ops.by_id(ctx.forge, int(match.group(1))) if match else None
    if found is None or found[1].pull is not None or not _readable(ctx, found[0]):
        raise refused
    return Found(*found)


def _may_pin(ctx: Ctx, repo: Repo, mutation: str) -> None:
    if ctx.allowed(repo, "push"):
        return
    if ctx.via_app is not None:
        raise FieldError("FORBIDDEN", "Resource not accessible by integration")
    raise FieldError(
        "FORBIDDEN", f"{ctx.login} does not have the correct permissions to execute `{mutation}`"
    )


def _input(args: dict[str, Any]) -> dict[str, Any]:
    given = args.get("input")
    if not isinstance(given, dict) or not given.get("issueId"):
        raise FieldError("INVALID_ARGUMENTS", "Argument 'input' needs an 'issueId' (an ID)")
    return given


def _pin(ctx: Ctx, args: dict[str, Any]) -> dict[str, Any]:
    given = _input(args)
    found = _issue_by_node(ctx, given["issueId"])
    _may_pin(ctx, found.repo, "PinIssue")
    # GitHub checks the limit before whether the issue is pinned already (see the module docstring).
    if len(pin_ops.pinned(found.repo)) >= PIN_LIMIT:
        raise FieldError("UNPROCESSABLE", f"Maximum {PIN_LIMIT} pinned issues per repository")
    if pin_ops.is_pinned(found.repo, found.issue):
        raise FieldError("UNPROCESSABLE", "The issue is already pinned or could not be pinned at this time")
    pin_ops.pin(ctx, found.repo, found.issue)
    return {"issue": found, "clientMutationId": given.get("clientMutationId")}


def _unpin(ctx: Ctx, args: dict[str, Any]) -> dict[str, Any]:
    given = _input(args)
    found = _issue_by_node(ctx, given["issueId"])
    _may_pin(ctx, found.repo, "UnpinIssue")
    if not pin_ops.is_pinned(found.repo, found.issue):
        raise FieldError("UNPROCESSABLE", "The issue is not pinned or cannot be unpinned at this time")
    pin_ops.unpin(ctx, found.repo, found.issue)
    return {
        "issue": found,
        "id": node_id("PinnedIssue", found.issue.id),
        "clientMutationId": given.get("clientMutationId"),
    }


def _pinned_issues(repo: Repo, args: dict[str, Any]) -> list[Found]:
    found = [Found(repo, issue) for issue in pin_ops.pinned(repo)]
    first, last = args.get("first"), args.get("last")
    if isinstance(first, int):
        found = found[:first]
    if isinstance(last, int):
        found = found[-last:] if last else []
    return found


def _edits(found: Found, args: dict[str, Any]) -> list[tuple[Found, int]]:
    """The issue's body versions, newest first (as GitHub answers), cut by ``first`` / ``last``."""
    edits = [(found, i) for i in reversed(range(len(found.issue.body_edits)))]
    first, last = args.get("first"), args.get("last")
    if isinstance(first, int):
        edits = edits[:first]
    if isinstance(last, int):
        edits = edits[-last:] if last else []
    return edits


def _edit(item: tuple[Found, int]) -> Any:
    found, index = item
    return found.issue.body_edits[index]


def _ready_for_review(ctx: Ctx, args: dict[str, Any]) -> dict[str, Any]:
    """``markPullRequestReadyForReview(input: {pullRequestId})`` (docs.github.com GraphQL "Mutations"): the
    draft becomes ready — the only way GitHub offers (REST's "Update a pull request" cannot) — and GitHub
    sends `pull_request` `ready_for_review` (octokit/webhooks schema). Its author or someone with write
    access; a pull request that is not a draft stays as it is."""
    given = args.get("input")
    ident = given.get("pullRequestId") if isinstance(given, dict) else None
    refused = FieldError("NOT_FOUND", f"Could not resolve to a node with the global id of '{ident}'")
    try:
        decoded = base64.b64decode(str(ident), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise refused from None
    match = re.fullmatch(r"0:PullRequest(\d+)", decoded)
    found = issue_ops.by_id(ctx.forge, int(match.group(1))) if match else None
    if found is None or found[1].pull is None or not _readable(ctx, found[0]):
        raise refused
    repo, issue = found
    assert issue.pull is not None
    if issue.user != ctx.login and not ctx.allowed(repo, "push"):
        mutation = "MarkPullRequestReadyForReview"
        raise FieldError(
            "FORBIDDEN", f"{ctx.login} does not have the correct permissions to execute `{mutation}`"
        )
    if issue.pull.draft:
        issue.pull.draft = False
        issue.updated_at = now_iso()
        pull_ops.request_code_owners(ctx, repo, issue)
        ctx.events.issue(repo, issue, "ready_for_review")
    assert isinstance(given, dict)
    return {"pullRequest": Found(repo, issue), "clientMutationId": given.get("clientMutationId")}


Resolver = Callable[[Ctx, Any, dict[str, Any]], Any]

RESOLVERS: dict[tuple[str, str], Resolver] = {
    ("Query", "repository"): lambda ctx, _, args: _repository(ctx, args),
    ("Mutation", "pinIssue"): lambda ctx, _, args: _pin(ctx, args),
    ("Mutation", "unpinIssue"): lambda ctx, _, args: _unpin(ctx, args),
    ("Mutation", "markPullRequestReadyForReview"): lambda ctx, _, args: _ready_for_review(ctx, args),
    ("MarkPullRequestReadyForReviewPayload", "pullRequest"): lambda ctx, payload, _: payload["pullRequest"],
    ("MarkPullRequestReadyForReviewPayload", "clientMutationId"): lambda ctx, p, _: p["clientMutationId"],
    ("PullRequest", "id"): lambda ctx, f, _: node_id("PullRequest", f.issue.id),
    ("PullRequest", "number"): lambda ctx, f, _: f.issue.number,
    ("PullRequest", "isDraft"): lambda ctx, f, _: bool(f.issue.pull and f.issue.pull.draft),
    ("Repository", "id"): lambda ctx, repo, _: node_id("Repository", repo.id),
    ("Repository", "name"): lambda ctx, repo, _: repo.name,
    ("Repository", "nameWithOwner"): lambda ctx, repo, _: repo.full_name,
    ("Repository", "issue"): lambda ctx, repo, args: _issue_of(repo, args),
    ("Repository", "pinnedIssues"): lambda ctx, repo, args: {"repo": repo, "args": args},
    ("PinnedIssueConnection", "nodes"): lambda ctx, conn, _: _pinned_issues(conn["repo"], conn["args"]),
    ("PinnedIssueConnection", "totalCount"): lambda ctx, conn, _: len(pin_ops.pinned(conn["repo"])),
    ("PinnedIssue", "id"): lambda ctx, f, _: node_id("PinnedIssue", f.issue.id),
    ("PinnedIssue", "issue"): lambda ctx, f, _: f,
    ("Issue", "id"): lambda ctx, f, _: node_id("Issue", f.issue.id),
    ("Issue", "number"): lambda ctx, f, _: f.issue.number,
    ("Issue", "title"): lambda ctx, f, _: f.issue.title,
    ("Issue", "state"): lambda ctx, f, _: f.issue.state.upper(),
    ("Issue", "isPinned"): lambda ctx, f, _: pin_ops.is_pinned(f.repo, f.issue),
    ("Issue", "url"): lambda ctx, f, _: ctx.shapes.issue_html(f.repo, f.issue.number),
    ("Issue", "includesCreatedEdit"): lambda ctx, f, _: bool(f.issue.body_edits),
    ("Issue", "lastEditedAt"): lambda ctx, f, _: f.issue.body_edits[-1].at if f.issue.body_edits else None,
    ("Issue", "userContentEdits"): lambda ctx, f, args: {"found": f, "args": args},
    ("UserContentEditConnection", "nodes"): lambda ctx, conn, _: _edits(conn["found"], conn["args"]),
    ("UserContentEditConnection", "totalCount"): lambda ctx, conn, _: len(conn["found"].issue.body_edits),
    ("UserContentEdit", "id"): lambda ctx, e, _: node_id("UserContentEdit", e[0].issue.id * 10_000 + e[1]),
    ("UserContentEdit", "createdAt"): lambda ctx, e, _: _edit(e).at,
    ("UserContentEdit", "editedAt"): lambda ctx, e, _: _edit(e).at,
    ("UserContentEdit", "diff"): lambda ctx, e, _: _edit(e).body,
    ("UserContentEdit", "editor"): lambda ctx, e, _: {"login": _edit(e).editor},
    ("Actor", "login"): lambda ctx, actor, _: actor["login"],
    ("PinIssuePayload", "issue"): lambda ctx, payload, _: payload["issue"],
    ("PinIssuePayload", "clientMutationId"): lambda ctx, payload, _: payload["clientMutationId"],
    ("UnpinIssuePayload", "issue"): lambda ctx, payload, _: payload["issue"],
    ("UnpinIssuePayload", "id"): lambda ctx, payload, _: payload["id"],
    ("UnpinIssuePayload", "clientMutationId"): lambda ctx, payload, _: payload["clientMutationId"],
}


def _complete(
    ctx: Ctx,
    type_name: str,
    value: Any,
    selections: list[Selection],
    variables: dict[str, Any],
    path: list[Any],
    errors: list[dict[str, Any]],
) -> Any:
    """The object `value` of type `type_name`, as the selections ask for it."""
    out: dict[str, Any] = {}
    for sel in selections:
        if sel.name == "__typename":
            out[sel.key] = type_name
            continue
        spec = SCHEMA[type_name][sel.name]
        where = [*path, sel.key]
        try:
            result = RESOLVERS[(type_name, sel.name)](ctx, value, substitute(sel.arguments, variables))
        except FieldError as refused:
            errors.append(
                {"type": refused.kind, "path": where, "locations": _location(sel), "message": refused.message}
            )
            out[sel.key] = None
            continue
        if result is None or spec.name in LEAVES:
            out[sel.key] = result
        elif spec.many:
            out[sel.key] = [
                _complete(ctx, spec.name, item, sel.selections, variables, [*where, i], errors)
                for i, item in enumerate(result)
            ]
        else:
            out[sel.key] = _complete(ctx, spec.name, result, sel.selections, variables, where, errors)
    return out


def _answer(data: dict[str, Any], status: int = 200) -> Response:
    return Response(dumps(data), status_code=status, media_type="application/json; charset=utf-8")


async def graphql(request: Request) -> Response:
    ctx = Ctx(request)
    if ctx.who.login is None:
        if ctx.who.error == "Requires authentication":
            message = "This endpoint requires you to be authenticated."
            return _answer({"message": message, "documentation_url": GRAPHQL_DOCS}, 401)
        return _answer(
            {"message": ctx.who.error or "Bad credentials", "documentation_url": GRAPHQL_DOCS}, 401
        )
    body = await body_json(request)
    query = body.get("query") if isinstance(body, dict) else None
    if not isinstance(query, str):
        return _answer({"errors": [{"message": "A query attribute must be specified and must be a string."}]})
    given = body.get("variables")
    variables: dict[str, Any] = given if isinstance(given, dict) else {}
    try:
        operation = parse(query)
    except GraphQLSyntaxError as exc:
        return _answer(
            {"errors": [{"message": exc.message, "locations": [{"line": exc.line, "column": exc.column}]}]}
        )
    # The request log says what was asked: a query or a mutation, and of which fields.
    logged = getattr(request.state, "log_entry", None)
    if isinstance(logged, dict):
        logged["graphql"] = f"{operation.kind} {' '.join(sel.name for sel in operation.selections)}"
    invalid = _validate(operation)
    if invalid:
        return _answer({"errors": invalid})
    errors: list[dict[str, Any]] = []
    root = "Mutation" if operation.kind == "mutation" else "Query"
    data = _complete(ctx, root, None, operation.selections, {**operation.defaults, **variables}, [], errors)
    return _answer({"data": data, "errors": errors} if errors else {"data": data})


def routes() -> list[BaseRoute]:
    return [Route("/graphql", graphql, methods=["POST"])]
