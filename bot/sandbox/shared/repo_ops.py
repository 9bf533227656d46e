"""Forge-neutral operations on repositories and what they hold: labels, milestones, hooks.

Like `issue_ops`, each does its change, its checks and its webhooks once for both APIs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.sandbox.shared import gitmodel, label_sets

from .caller import Caller
from .plumbing import ApiError
from .state import Flavor, Hook, Label, Milestone, Repo, Role, Signature, now_iso


def required_name(caller: Caller, value: Any, resource: str, field: str) -> str:
    """`value`, if it is a string with more than white space in it."""
    if not isinstance(value, str) or not value.strip():
        raise caller.missing(resource, field)
    return value


# repositories and hooks -----------------------------------------------------------------------------------


def create_repo(
    caller: Caller, name: str, body: dict[str, Any], flavor: Flavor, email: str, owner: str | None = None
) -> Repo:
    """A new repository of the caller's (or of organisation `owner`) with one empty commit and the labels
    the forge gives a new repository (``label_sets``); `email` is its author's address."""
    labels = _initial_labels(caller, flavor, body.get("issue_labels"))
    owner = owner or caller.login
    repo = Repo(
        id=caller.forge.new_id(),
        owner=caller.forge.ensure_user(owner).login,
        name=name,
        flavor=flavor,
        description=body.get("description"),
        private=bool(body.get("private", False)),
        default_branch=str(body.get("default_branch") or "main"),
    )
    gitmodel.init_repo(repo, Signature(name=caller.login, email=email))
    repo.pushed_at = now_iso()
    for label in labels:
        repo.labels[label.id] = label
    caller.forge.add_repo(repo)
    return repo


def _initial_labels(caller: Caller, flavor: Flavor, label_set: Any) -> list[Label]:
    """GitHub's nine default labels; on Gitea none, or the labels of the set named at creation (an unknown
    set is refused with 422, as Gitea's CreateRepository does: ``label.IsErrTemplateLoad``)."""
    if flavor == "github":
        return [
            Label(id=caller.forge.new_id(), name=n, color=c, description=d, default=True)
            for n, c, d in label_sets.GITHUB_DEFAULTS
        ]
    if not label_set:
        return []
    found = label_sets.GITEA_SETS.get(str(label_set))
    if found is None:
        raise ApiError(
            422, f'failed to load label template file "{label_set}": label template does not exist'
        )
    return [
        Label(id=caller.forge.new_id(), name=n, color=c, description=d, exclusive=x) for n, c, d, x in found
    ]


def add_at_once(repo: Repo, login: str, role: Role) -> None:
    """Make `login` a collaborator with `role` now: Gitea's way, GitHub's for an organisation's member or an
    accepted invitation, and the admin API's shortcut."""
    for who in [w for w in repo.collaborators if w.casefold() == login.casefold()]:
        del repo.collaborators[who]
    repo.collaborators[login] = role


def configure_hook(hook: Hook, body: dict[str, Any], config: Any, invalid: Callable[[str], ApiError]) -> Hook:
    """Set what `body` and its `config` say of the hook; `invalid(field)` is the flavour's refusal."""
    if not isinstance(config, dict):
        raise invalid("config")
    if "url" in config:
        hook.url = str(config["url"])
    if "content_type" in config:
        if config["content_type"] not in ("json", "form"):
            raise invalid("content_type")
        hook.content_type = config["content_type"]
    if "secret" in config:
        hook.secret = str(config["secret"]) or None
    if "events" in body:
        hook.events = [str(e) for e in body["events"] or []]
    if "active" in body:
        hook.active = bool(body["active"])
    hook.updated_at = now_iso()
    return hook


def delete_hook(caller: Caller, repo: Repo, hook: Hook) -> None:
    del repo.hooks[hook.id]
    caller.sandbox.deliverer.forget_hook(hook.id)


# labels -------------------------------------------------------------------------------------------------


def sorted_labels(repo: Repo) -> list[Label]:
    return sorted(repo.labels.values(), key=lambda lb: lb.name.casefold())


def add_label(caller: Caller, repo: Repo, name: str, color: str = "ededed", description: Any = None) -> Label:
    label = Label(id=caller.forge.new_id(), name=name, color=color, description=description)
    repo.labels[label.id] = label
    if caller.GITHUB_EVENTS:
        caller.events.repo_event(repo, label, "created")
    return label


def delete_label(caller: Caller, repo: Repo, label: Label) -> None:
    if caller.GITHUB_EVENTS:
        caller.events.repo_event(repo, label, "deleted")
    for issue in repo.issues.values():
        if label.id in issue.label_ids:
            issue.label_ids.remove(label.id)
    del repo.labels[label.id]


# milestones -------------------------------------------------------------------------------------------------


def milestones(repo: Repo, state: str) -> list[Milestone]:
    """The repository's milestones in `state` ("open", "closed", "all"), by number."""
    found = (m for m in repo.milestones.values() if state == "all" or m.state == state)
    return sorted(found, key=lambda m: m.number)


def add_milestone(caller: Caller, repo: Repo, title: str, body: dict[str, Any]) -> Milestone:
    ms = Milestone(
        id=caller.forge.new_id(),
        number=repo.next_milestone,
        title=title,
        description=body.get("description"),
        due_on=body.get("due_on"),
        creator=caller.login,
    )
    if body.get("state") == "closed":
        ms.state, ms.closed_at = "closed", ms.created_at
    repo.next_milestone += 1
    repo.milestones[ms.number] = ms
    if caller.GITHUB_EVENTS:
        caller.events.repo_event(repo, ms, "created")
    return ms


def delete_milestone(caller: Caller, repo: Repo, ms: Milestone) -> None:
    if caller.GITHUB_EVENTS:
        caller.events.repo_event(repo, ms, "deleted")
    for issue in repo.issues.values():
        if issue.milestone == ms.number:
            issue.milestone = None
    del repo.milestones[ms.number]
