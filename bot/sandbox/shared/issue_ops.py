"""Forge-neutral operations on issues, comments, reactions and issue relations.

Each does its change to the state, the permission checks that belong to it and the webhooks it causes,
once for both APIs; the flavours' route handlers parse the request and shape the answer around them.
"""

from __future__ import annotations

from typing import Any

from .caller import Caller
from .plumbing import ApiError, body_object
from .state import BodyEdit, Comment, Issue, IssueEvent, Reaction, Repo, SandboxState, now_iso

# lookups --------------------------------------------------------------------------------------------------


def by_id(forge: SandboxState, ident: object) -> tuple[Repo, Issue] | None:
    """An issue of any repository by its global id."""
    for repo in forge.repos.values():
        for found in repo.issues.values():
            if found.id == ident:
                return repo, found
    return None


def all_by_id(forge: SandboxState, ids: list[int]) -> list[tuple[Repo, Issue]]:
    return [f for f in (by_id(forge, i) for i in ids) if f is not None]


def blocked_by(forge: SandboxState, blocker: Issue) -> list[tuple[Repo, Issue]]:
    """The issues, of any repository, that `blocker` blocks."""
    return [(r, i) for r in forge.repos.values() for i in r.issues.values() if blocker.id in i.blocked_by]


def relate(ids: list[int], issue: Issue, other: int, *, touch: bool = True) -> None:
    """Add `other` to one of `issue`'s relation lists (its blockers, its sub-issues); ``touch``: the issue's
    `updated_at` moves with it."""
    if other not in ids:
        ids.append(other)
        if touch:
            issue.updated_at = now_iso()


# issues ---------------------------------------------------------------------------------------------------


def new_issue(caller: Caller, repo: Repo, title: str, body: Any) -> Issue:
    """A new issue with the repository's next number, by the caller; `file_issue` files it."""
    number = repo.next_number
    repo.next_number += 1
    return Issue(
        id=caller.forge.new_id(),
        number=number,
        title=title,
        body=body,
        user=caller.login,
        via_app=caller.via_app,
    )


def file_issue(caller: Caller, repo: Repo, issue: Issue) -> None:
    repo.issues[issue.number] = issue
    # Gitea's NewIssueWithIndex writes the milestone comment before the labels' (models/issues/
    # issue_update.go); GitHub's events of a new issue are listed in the same order here.
    if issue.milestone is not None:
        record_milestone(caller, repo, issue, None)
    record_labels(caller, repo, issue, issue.label_ids, "labeled")
    caller.events.issue(repo, issue, "opened")
    if caller.GITHUB_EVENTS:
        for label_id in issue.label_ids:
            caller.events.labels(repo, issue, [label_id], [])
        if issue.milestone is not None:
            caller.events.milestone(repo, issue, None)


def check_edit(
    caller: Caller, repo: Repo, issue: Issue, text: dict[str, Any], state: Any, bad_state: ApiError
) -> None:
    """May the caller change `text` (title, body) and the `state` of the issue? Is `state` one?"""
    is_author = issue.user == caller.login
    if text and not is_author:
        caller.require(repo, "push")
    if state not in (None, "open", "closed"):
        raise bad_state
    if state is not None and state != issue.state and not is_author:
        caller.require(repo, "triage")
    if (
        state == "open"
        and issue.state == "closed"
        and caller.AUTHOR_REOPENS_OWN_CLOSE_ONLY
        and not caller.allowed(repo, "triage")
        and (issue.closed_by or "").casefold() != caller.login.casefold()
    ):
        raise ApiError(422, "Validation Failed", [])


def edit_text(caller: Caller, repo: Repo, issue: Issue, text: dict[str, Any]) -> None:
    """Set the issue's fields in `text` (those that change), in one `edited` event."""
    if not text:
        return
    changes = {field: {"from": getattr(issue, field) or ""} for field in text}
    edited = "body" in text and (text["body"] or "") != (issue.body or "")
    for field, value in text.items():
        setattr(issue, field, value)
    issue.updated_at = now_iso()
    if edited:
        if not issue.body_edits:  # the first edit keeps the version it replaces, as written at creation
            issue.body_edits.append(
                BodyEdit(editor=issue.user, at=issue.created_at, body=changes["body"]["from"])
            )
        issue.body_edits.append(BodyEdit(editor=caller.login, at=issue.updated_at, body=issue.body or ""))
    caller.events.issue(repo, issue, "edited", changes)


def set_state(caller: Caller, repo: Repo, issue: Issue, wanted: Any, reason: str | None = None) -> None:
    """Close or reopen the issue; `reason`, when given, becomes its state reason."""
    if wanted == "closed" and issue.state == "open":
        issue.state, issue.closed_at, issue.closed_by = "closed", now_iso(), caller.login
        issue.updated_at = issue.closed_at
    elif wanted == "open" and issue.state == "closed":
        issue.state, issue.closed_at, issue.closed_by = "open", None, None
        issue.updated_at = now_iso()
    else:
        return
    if reason is not None:
        issue.state_reason = reason
    caller.events.issue(repo, issue, "closed" if wanted == "closed" else "reopened")


def set_labels(caller: Caller, repo: Repo, issue: Issue, wanted: list[int]) -> None:
    """Make the issue's labels exactly `wanted`, announcing what was removed and added."""
    removed = [i for i in issue.label_ids if i not in wanted]
    added = [i for i in dict.fromkeys(wanted) if i not in issue.label_ids]
    if not removed and not added:
        return
    issue.updated_at = now_iso()
    record_labels(caller, repo, issue, removed, "unlabeled")
    record_labels(caller, repo, issue, added, "labeled")
    if not caller.GITHUB_EVENTS:
        issue.label_ids = [i for i in issue.label_ids if i in wanted] + added
        caller.events.labels(repo, issue, added, removed)
        return
    for label_id in removed:
        issue.label_ids.remove(label_id)
        caller.events.labels(repo, issue, [], [label_id])
    for label_id in added:
        issue.label_ids.append(label_id)
        caller.events.labels(repo, issue, [label_id], [])


def record_labels(caller: Caller, repo: Repo, issue: Issue, label_ids: list[int], event: str) -> None:
    """Remember who put on or took off each label: GitHub's issue events, Gitea's timeline."""
    for label_id in label_ids:
        label = repo.labels.get(label_id)
        issue.events.append(
            IssueEvent(
                id=caller.forge.new_id(),
                event="labeled" if event == "labeled" else "unlabeled",
                actor=caller.login,
                label=label.name if label is not None else "",
                color=label.color if label is not None else "ededed",
                label_id=label_id,
                created_at=issue.updated_at,
                via_app=caller.via_app,
            )
        )


def record_milestone(caller: Caller, repo: Repo, issue: Issue, old: int | None) -> None:
    """Remember who moved the issue from milestone `old` to its milestone now: GitHub's issue events
    `demilestoned`/`milestoned`, Gitea's timeline comment of type "milestone" (services/issue/milestone.go
    changeMilestoneAssign: OldMilestoneID, MilestoneID)."""
    left = repo.milestones.get(old) if old is not None else None
    joined = repo.milestones.get(issue.milestone) if issue.milestone is not None else None
    if left is None and joined is None:
        return
    issue.events.append(
        IssueEvent(
            id=caller.forge.new_id(),
            event="milestone",
            actor=caller.login,
            created_at=issue.updated_at,
            via_app=caller.via_app,
            old_milestone=left.number if left is not None else None,
            milestone=joined.number if joined is not None else None,
            old_title=left.title if left is not None else "",
            title=joined.title if joined is not None else "",
            pair_id=caller.forge.new_id(),
        )
    )


def add_labels(caller: Caller, repo: Repo, issue: Issue, ids: list[int]) -> None:
    set_labels(caller, repo, issue, issue.label_ids + [i for i in ids if i not in issue.label_ids])


def remove_label(caller: Caller, repo: Repo, issue: Issue, label_id: int) -> None:
    set_labels(caller, repo, issue, [i for i in issue.label_ids if i != label_id])


def set_milestone(caller: Caller, repo: Repo, issue: Issue, number: int | None) -> None:
    """Put the issue in milestone `number` (None: in none), announcing what it left and joined."""
    old = issue.milestone
    if old == number:
        return
    issue.updated_at = now_iso()
    issue.milestone = number
    record_milestone(caller, repo, issue, old)
    if not caller.GITHUB_EVENTS:
        issue.milestone = number
        caller.events.milestone(repo, issue, old)
        return
    if old is not None and old in repo.milestones:
        issue.milestone = None
        caller.events.milestone(repo, issue, old)
    if number is not None:
        issue.milestone = number
        caller.events.milestone(repo, issue, None)


def set_lock(caller: Caller, repo: Repo, issue: Issue, locked: bool, reason: str | None = None) -> bool:
    """Lock the conversation (with `reason`) or unlock it; True when that changed anything. GitHub
    announces it (`issues` locked/unlocked, a pull request's `pull_request`: octokit/webhooks
    `issues/locked.schema.json`); Gitea sends no webhook for a lock (modules/structs/hook.go
    HookIssueAction has no such action)."""
    if issue.locked == locked:
        return False
    issue.locked, issue.lock_reason = locked, reason if locked else None
    issue.updated_at = now_iso()
    if repo.flavor == "github":
        caller.events.issue(repo, issue, "locked" if locked else "unlocked")
    return True


# comments and reactions ---------------------------------------------------------------------------------


def comments_on(repo: Repo, issue: Issue, since: str | None) -> list[Comment]:
    return [
        c
        for c in sorted(repo.comments.values(), key=lambda c: c.id)
        if c.issue_number == issue.number and (since is None or c.updated_at >= since)
    ]


def repo_comments(repo: Repo, since: str | None) -> list[Comment]:
    """Every comment of the repository (issues and pull requests) updated at or after ``since``, oldest
    first: GitHub's "List issue comments for a repository" (sort=created by default, ascending) and
    Gitea's ``ListRepoIssueComments`` (``since``: "only comments updated since the provided time")."""
    return [
        c
        for c in sorted(repo.comments.values(), key=lambda c: c.id)
        if since is None or c.updated_at >= since
    ]


async def comment_body(caller: Caller) -> str:
    body = (await body_object(caller.request)).get("body")
    if not isinstance(body, str) or not body:
        raise caller.missing("IssueComment", "body")
    caller.check_body("IssueComment", body)
    return body


async def add_comment(caller: Caller, repo: Repo, issue: Issue) -> Comment:
    if issue.locked:
        caller.require_unlocked(repo)
    # One time for both stamps: a comment never edited has ``updated_at == created_at`` on both forges
    # (GitHub's REST comment objects; Gitea's xorm `created`/`updated` columns are filled together on
    # insert and `updated` moves on every edit: models/issues/comment.go), which the catch-up relies on.
    now = now_iso()
    made = Comment(
        id=caller.forge.new_id(),
        issue_number=issue.number,
        user=caller.login,
        body=await comment_body(caller),
        via_app=caller.via_app,
        created_at=now,
        updated_at=now,
    )
    repo.comments[made.id] = made
    issue.updated_at = made.created_at
    caller.events.comment(repo, made, "created")
    return made


def _require_open_thread(caller: Caller, repo: Repo, comment: Comment) -> None:
    """A comment on a locked thread is changed only as the flavour allows (``Caller.LOCKED_EDITS``)."""
    issue = repo.issues.get(comment.issue_number)
    if issue is not None and issue.locked and caller.LOCKED_EDITS:
        caller.require_unlocked(repo)


async def edit_comment(caller: Caller, repo: Repo, comment: Comment) -> None:
    caller.require_author(repo, comment.user)
    _require_open_thread(caller, repo, comment)
    body = await comment_body(caller)
    if body != comment.body:
        previous, comment.body, comment.updated_at = comment.body, body, now_iso()
        caller.events.comment(repo, comment, "edited", {"body": {"from": previous}})


def delete_comment(caller: Caller, repo: Repo, comment: Comment) -> None:
    caller.require_author(repo, comment.user)
    _require_open_thread(caller, repo, comment)
    caller.events.comment(repo, comment, "deleted")
    del repo.comments[comment.id]


def reactions(caller: Caller, repo: Repo, comment_param: str, issue_param: str) -> list[Reaction]:
    """The reactions of the comment the path names, or else of its issue."""
    if comment_param in caller.request.path_params:
        return caller.lookup(repo.comments, caller.int_param(comment_param)).reactions
    return caller.lookup(repo.issues, caller.int_param(issue_param)).reactions


def thread(caller: Caller, repo: Repo, comment_param: str, issue_param: str) -> Issue:
    """The issue (or pull request) whose conversation the path's comment, or issue, belongs to."""
    if comment_param in caller.request.path_params:
        comment = caller.lookup(repo.comments, caller.int_param(comment_param))
        return caller.lookup(repo.issues, comment.issue_number)
    return caller.lookup(repo.issues, caller.int_param(issue_param))


def react(caller: Caller, found: list[Reaction], content: str) -> tuple[Reaction, bool]:
    """The caller's `content` reaction, and whether it is new."""
    existing = next((r for r in found if r.user == caller.login and r.content == content), None)
    if existing is not None:
        return existing, False
    reaction = Reaction(id=caller.forge.new_id(), user=caller.login, content=content)
    found.append(reaction)
    return reaction, True
