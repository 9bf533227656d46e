"""What GitHub's and Gitea's webhook payloads share, read the same way for both: objects, logins, the
repository, issues, pull requests, the previous body of an edit, the handled actions and pushes.

``isinstance(x, (dict, Mapping))``: payloads are dicts (orjson), and a dict is recognised without the
abstract class's slower check; anything else still passes as a Mapping. This runs for every delivery.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from bot.events.event import (
    Event,
    IssueSnapshot,
    MalformedPayload,
    PullSnapshot,
    Unhandled,
)
from bot.forge import RepoRef


def as_object(payload: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = payload.get(key)
    if not isinstance(value, (dict, Mapping)):
        raise MalformedPayload(f"the payload has no {key!r} object")
    return value


def login_of(user: Any) -> str:
    if isinstance(user, (dict, Mapping)) and isinstance(user.get("login"), str):
        return cast(str, user["login"])
    return ""


def repo_of(payload: Mapping[str, Any], login: Callable[[Any], str]) -> RepoRef | None:
    """The payload's repository; ``login`` reads its owner (Gitea may name users ``username``)."""
    repo = payload.get("repository")
    if not isinstance(repo, (dict, Mapping)):
        return None
    # Both forges send the repository's id (a rename keeps it: Steward's state is keyed by it).
    found = repo.get("id")
    ident = found if isinstance(found, int) and not isinstance(found, bool) and found > 0 else 0
    full_name = repo.get("full_name")
    if isinstance(full_name, str) and "/" in full_name:
        parsed = RepoRef.parse(full_name)
        return RepoRef(parsed.owner, parsed.name, ident)
    owner = login(repo.get("owner"))
    name = repo.get("name")
    if owner and isinstance(name, str):
        return RepoRef(owner, name, ident)
    raise MalformedPayload("the repository has no full_name")


def issue_snapshot(
    raw: Mapping[str, Any], number: Any, *, login: Callable[[Any], str], milestone_key: str, is_pr: bool
) -> IssueSnapshot:
    """An issue or pull request from a payload; GitHub names milestones by number, Gitea by id."""
    if not isinstance(number, int):
        raise MalformedPayload("the issue has no number")
    labels = tuple(
        str(label["name"])
        for label in raw.get("labels") or ()
        if isinstance(label, (dict, Mapping)) and "name" in label
    )
    milestone = raw.get("milestone")
    return IssueSnapshot(
        number=number,
        title=str(raw.get("title") or ""),
        body=str(raw.get("body") or ""),
        state="closed" if raw.get("state") == "closed" else "open",
        author=login(raw.get("user")),
        labels=labels,
        milestone=milestone.get(milestone_key) if isinstance(milestone, (dict, Mapping)) else None,
        is_pull_request=is_pr or isinstance(raw.get("pull_request"), Mapping),
        locked=raw.get("locked") is True or raw.get("is_locked") is True,
        author_association=str(raw.get("author_association") or ""),
    )


def pull_snapshot(raw: Mapping[str, Any]) -> PullSnapshot:
    """Branches of a pull request payload (both forges: ``head``/``base`` with ``ref`` and ``sha``)."""
    head = raw.get("head") if isinstance(raw.get("head"), Mapping) else {}
    base = raw.get("base") if isinstance(raw.get("base"), Mapping) else {}
    assert isinstance(head, (dict, Mapping)) and isinstance(base, (dict, Mapping))
    return PullSnapshot(
        head_ref=str(head.get("ref") or ""),
        head_sha=str(head.get("sha") or ""),
        base_ref=str(base.get("ref") or ""),
        merged=raw.get("merged") is True,
        draft=raw.get("draft") is True,
    )


def previous_body(payload: Mapping[str, Any]) -> str | None:
    changes = payload.get("changes")
    if isinstance(changes, (dict, Mapping)):
        body = changes.get("body")
        if isinstance(body, (dict, Mapping)) and isinstance(body.get("from"), str):
            return cast(str, body["from"])
    return None


def handled_action(
    handled: Mapping[str, frozenset[str] | None], name: str, payload: Mapping[str, Any]
) -> Any:
    """The payload's action, or Unhandled when Steward has nothing to do with this event or action."""
    if name not in handled:
        raise Unhandled(f"event {name!r} is not handled")
    action = payload.get("action")
    allowed = handled[name]
    if allowed is not None:
        if not isinstance(action, str):
            raise MalformedPayload(f"a {name} payload must have an action")
        if action not in allowed:
            raise Unhandled(f"action {name}.{action} is not handled")
    return action


MAX_PUSH_PATHS = 1000


def push_event(payload: Mapping[str, Any], common: dict[str, Any]) -> Event:
    """A push on either forge: its ref, its new head, and the paths its commits touched (both forges list
    them per commit as ``added``/``modified``/``removed``)."""
    ref = payload.get("ref")
    if not isinstance(ref, str):
        raise MalformedPayload("a push payload must have a ref")
    after = payload.get("after")
    paths: dict[str, None] = {}
    commits = payload.get("commits")
    for commit in commits if isinstance(commits, list) else ():
        if not isinstance(commit, (dict, Mapping)):
            continue
        for key in ("added", "modified", "removed"):
            changed = commit.get(key)
            for path in changed if isinstance(changed, list) else ():
                if isinstance(path, str) and len(paths) < MAX_PUSH_PATHS:
                    paths[path[:1000]] = None
    return Event(**common, ref=ref, after=after if isinstance(after, str) else None, paths=tuple(paths))
