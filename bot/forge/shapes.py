"""JSON → port types for the fields GitHub's and Gitea's REST APIs share (issues, comments,
labels), and the budget key of a token. The adapters differ only where the forges do."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from bot.forge import (
    ChangedFile,
    Comment,
    Commit,
    CommitStatus,
    FileStatus,
    Issue,
    Label,
    Milestone,
    PullRequest,
)


def issue_from_json(raw: Mapping[str, Any], *, milestone_key: str = "number") -> Issue:
    """``milestone_key``: GitHub names a milestone by ``number``, Gitea by ``id``. A pull request's draft
    flag: GitHub's issue object carries ``draft`` (its REST description's `issue` schema), Gitea's
    ``pull_request.draft`` (``PullRequestMeta``, the WIP prefix)."""
    milestone = raw.get("milestone")
    pull = raw.get("pull_request")
    return Issue(
        number=int(raw["number"]),
        title=raw.get("title") or "",
        body=raw.get("body") or "",
        state="closed" if raw.get("state") == "closed" else "open",
        author=(raw.get("user") or {}).get("login") or "",
        labels=tuple(label["name"] for label in raw.get("labels") or ()),
        milestone=milestone.get(milestone_key) if isinstance(milestone, Mapping) else None,
        is_pull_request=isinstance(pull, Mapping),
        html_url=raw.get("html_url") or "",
        id=int(raw.get("id") or 0),
        updated_at=raw.get("updated_at") or "",
        created_at=raw.get("created_at") or "",
        # GitHub says `locked`, Gitea `is_locked`.
        locked=bool(raw.get("locked") or raw.get("is_locked")),
        assignees=tuple(
            str(a["login"]) for a in raw.get("assignees") or () if isinstance(a, Mapping) and a.get("login")
        ),
        draft=isinstance(pull, Mapping) and bool(raw.get("draft") or pull.get("draft")),
        state_reason=str(raw.get("state_reason") or ""),
        closed_by=str((raw.get("closed_by") or {}).get("login") or ""),
        closed_at=str(raw.get("closed_at") or ""),
        author_association=str(raw.get("author_association") or ""),
    )


def comment_from_json(raw: Mapping[str, Any]) -> Comment:
    # The issue it is on: GitHub's issue_url is the API's `/issues/N`; Gitea's is the page `/issues/N`, or
    # empty with pull_request_url `/pulls/N` on a pull request.
    where = raw.get("issue_url") or raw.get("pull_request_url") or ""
    found = re.search(r"/(?:issues|pulls|pull)/(\d+)/?$", str(where))
    return Comment(
        id=int(raw["id"]),
        author=(raw.get("user") or {}).get("login") or "",
        body=raw.get("body") or "",
        created_at=raw.get("created_at") or "",
        updated_at=raw.get("updated_at") or "",
        html_url=raw.get("html_url") or "",
        issue_number=int(found.group(1)) if found else 0,
    )


def label_from_json(raw: Mapping[str, Any]) -> Label:
    # Gitea writes colours with a leading '#', GitHub without.
    return Label(
        name=raw["name"],
        color=str(raw.get("color") or "").lstrip("#"),
        description=raw.get("description") or "",
        id=raw["id"] if isinstance(raw.get("id"), int) else 0,
    )


def budget_key(forge: str, token: str) -> str:
    """The write budget is per token; the key is a digest so the token never reaches Redis."""
    return f"{forge}:" + hashlib.sha256(token.encode()).hexdigest()[:16]


def milestone_from_json(raw: Mapping[str, Any], *, key: str, html_url: str = "") -> Milestone:
    """``key``: GitHub names a milestone by ``number``, Gitea by ``id``; Gitea's JSON has no page link,
    so the adapter gives one."""
    return Milestone(
        key=int(raw[key]),
        title=raw.get("title") or "",
        state="closed" if raw.get("state") == "closed" else "open",
        description=raw.get("description") or "",
        open_issues=int(raw.get("open_issues") or 0),
        closed_issues=int(raw.get("closed_issues") or 0),
        closed_at=raw.get("closed_at") or None,
        due_on=raw.get("due_on") or None,
        html_url=raw.get("html_url") or html_url,
    )


def pull_from_json(raw: Mapping[str, Any], *, milestone_key: str) -> PullRequest:
    """A pull request from either forge. GitHub's lists leave ``merged`` out (``merged_at`` says it);
    Gitea's ``draft`` is its title's WIP prefix, GitHub's a flag of its own."""
    head = raw.get("head") or {}
    base = raw.get("base") or {}
    milestone = raw.get("milestone")
    return PullRequest(
        number=int(raw["number"]),
        title=raw.get("title") or "",
        body=raw.get("body") or "",
        state="closed" if raw.get("state") == "closed" else "open",
        draft=bool(raw.get("draft")),
        merged=bool(raw.get("merged")) or bool(raw.get("merged_at")),
        head_ref=str(head.get("ref") or ""),
        head_sha=str(head.get("sha") or ""),
        base_ref=str(base.get("ref") or ""),
        author=(raw.get("user") or {}).get("login") or "",
        html_url=raw.get("html_url") or "",
        labels=tuple(label["name"] for label in raw.get("labels") or ()),
        milestone=milestone.get(milestone_key) if isinstance(milestone, Mapping) else None,
        id=int(raw.get("id") or 0),
        assignees=tuple(
            str(a["login"]) for a in raw.get("assignees") or () if isinstance(a, Mapping) and a.get("login")
        ),
        head_repo_id=_branch_repo_id(head),
        base_repo_id=_branch_repo_id(base) or 0,
        requested_reviewers=tuple(
            str(u["login"])
            for u in raw.get("requested_reviewers") or ()
            if isinstance(u, Mapping) and u.get("login")
        ),
        created_at=str(raw.get("created_at") or ""),
    )


def _branch_repo_id(branch: Mapping[str, Any]) -> int | None:
    """The id of a pull request branch's repository: GitHub ``repo.id``, Gitea ``repo_id`` (and ``repo``);
    None when the forge says the repository is gone (GitHub ``repo`` null, Gitea ``repo_id`` -1 or
    ``repo`` null: a deleted fork), 0 when it does not say."""
    repo = branch.get("repo")
    if isinstance(repo, Mapping) and repo.get("id"):
        return int(repo["id"])
    repo_id = branch.get("repo_id")
    if isinstance(repo_id, int) and repo_id > 0:
        return repo_id
    if ("repo" in branch and repo is None) or repo_id == -1:
        return None
    return 0


# How each forge words a file's change (GitHub: commits and pull request files; Gitea: commits say
# added/removed/modified, pull request files added/deleted/changed) in the port's three words. A rename
# or copy is its new path added (GitHub also names the old path, which a rename removes).
_FILE_STATUS: Mapping[str, FileStatus] = {
    "added": "added",
    "copied": "added",
    "renamed": "added",
    "removed": "removed",
    "deleted": "removed",
}


def changed_files(items: Iterable[Mapping[str, Any]]) -> tuple[ChangedFile, ...]:
    found: dict[str, FileStatus] = {}
    for item in items:
        path = str(item.get("filename") or "")
        status = _FILE_STATUS.get(str(item.get("status") or ""), "modified")
        found[path] = status
        previous = item.get("previous_filename")
        if item.get("status") == "renamed" and isinstance(previous, str) and previous:
            found.setdefault(previous, "removed")
    return tuple(ChangedFile(path, status) for path, status in sorted(found.items()))


def commit_from_json(raw: Mapping[str, Any]) -> Commit:
    """GitHub's ``GET /commits/{ref}`` and Gitea's ``GET /git/commits/{sha}`` share this shape."""
    inner = raw.get("commit") or {}
    return Commit(
        sha=str(raw["sha"]),
        parents=tuple(str(p["sha"]) for p in raw.get("parents") or ()),
        message=str(inner.get("message") or ""),
        author_name=str((inner.get("author") or {}).get("name") or ""),
        author_login=(raw.get("author") or {}).get("login") or None,
        committer_login=(raw.get("committer") or {}).get("login") or None,
        files=changed_files(raw.get("files") or ()),
        html_url=raw.get("html_url") or "",
    )


def status_from_json(raw: Mapping[str, Any]) -> CommitStatus:
    """Gitea names the state ``status`` in what it answers (``state`` in what it takes); GitHub ``state``."""
    return CommitStatus(
        context=str(raw.get("context") or "default"),
        state=str(raw.get("state") or raw.get("status") or ""),
        description=raw.get("description") or "",
        target_url=raw.get("target_url") or "",
        creator=(raw.get("creator") or {}).get("login") or "",
        id=int(raw.get("id") or 0),
        updated_at=raw.get("updated_at") or raw.get("created_at") or "",
    )
