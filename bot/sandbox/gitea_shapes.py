"""Gitea's JSON shapes for sandbox objects (API v1 responses and webhook payloads share them).

Shapes follow go-gitea/gitea ``modules/structs`` as described by the vendored swagger: field names,
``null`` where Gitea's pointers are nil, milestones addressed by id, colours without ``#``.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from . import gitmodel
from .state import Comment, GitCommit, Hook, Issue, Label, Milestone, Reaction, Repo, Role, SandboxState, User

ZERO_TIME = "0001-01-01T00:00:00Z"
# Gitea's access modes for the sandbox's roles: Gitea has no triage or maintain.
ACCESS_OF_ROLE: dict[Role, str] = {
    "pull": "read",
    "triage": "read",
    "push": "write",
    "maintain": "write",
    "admin": "admin",
}


@dataclass(frozen=True)
class GiteaShapes:
    """Renders state as Gitea JSON, with URLs under the sandbox's own base URL."""

    forge: SandboxState
    base: str

    @property
    def api(self) -> str:
        return f"{self.base}/api/v1"

    # users --------------------------------------------------------------------------------------------

    def user(self, login: str) -> dict[str, Any]:
        user = self.forge.user(login) or User(id=0, login=login)
        return {
            "id": user.id,
            "login": user.login,
            "login_name": "",
            "source_id": 0,
            "full_name": user.name or "",
            "email": user.email or f"{user.login}@noreply.sandbox",
            "avatar_url": f"{self.base}/avatars/{user.login}",
            "html_url": f"{self.base}/{user.login}",
            "language": "",
            "is_admin": False,
            "last_login": ZERO_TIME,
            "created": user.created_at,
            "restricted": False,
            "active": True,
            "prohibit_login": False,
            "location": "",
            "website": "",
            "description": "",
            "visibility": "public",
            "followers_count": 0,
            "following_count": 0,
            "starred_repos_count": 0,
            "username": user.login,
        }

    # repositories -------------------------------------------------------------------------------------

    def repo(self, repo: Repo, viewer: str | None = None) -> dict[str, Any]:
        role = self.forge.role_of(repo, viewer)
        access = ACCESS_OF_ROLE[role] if role else ("read" if not repo.private else "none")
        html = f"{self.base}/{repo.full_name}"
        open_issues = sum(1 for i in repo.issues.values() if i.state == "open")
        return {
            "id": repo.id,
            "owner": self.user(repo.owner),
            "name": repo.name,
            "full_name": repo.full_name,
            "description": repo.description or "",
            "empty": False,
            "private": repo.private,
            "fork": False,
            "template": False,
            "parent": None,
            "mirror": False,
            "size": 0,
            "language": "",
            "languages_url": f"{self.api}/repos/{repo.full_name}/languages",
            "html_url": html,
            "url": f"{self.api}/repos/{repo.full_name}",
            "link": "",
            "ssh_url": f"git@sandbox:{repo.full_name}.git",
            "clone_url": f"{html}.git",
            "original_url": "",
            "website": "",
            "stars_count": 0,
            "forks_count": 0,
            "watchers_count": 0,
            "open_issues_count": open_issues,
            "open_pr_counter": 0,
            "release_counter": 0,
            "default_branch": repo.default_branch,
            "archived": False,
            "created_at": repo.created_at,
            "updated_at": repo.updated_at,
            "archived_at": "1970-01-01T00:00:00Z",
            "permissions": {
                "admin": access in ("admin", "owner"),
                "push": access in ("write", "admin", "owner"),
                "pull": access != "none",
            },
            "has_issues": True,
            "internal_tracker": {
                "enable_time_tracker": False,
                "allow_only_contributors_to_track_time": True,
                "enable_issue_dependencies": True,
            },
            "has_wiki": False,
            "has_pull_requests": True,
            "has_projects": False,
            "has_releases": False,
            "has_packages": False,
            "has_actions": False,
            "ignore_whitespace_conflicts": False,
            "allow_merge_commits": True,
            "allow_rebase": True,
            "allow_rebase_explicit": True,
            "allow_squash_merge": True,
            "allow_fast_forward_only_merge": False,
            "allow_rebase_update": True,
            "default_delete_branch_after_merge": False,
            "default_merge_style": "merge",
            "default_allow_maintainer_edit": False,
            "avatar_url": "",
            "internal": False,
            "mirror_interval": "",
            "object_format_name": "sha1",
            "mirror_updated": ZERO_TIME,
            "repo_transfer": None,
            "topics": [],
            "licenses": [],
        }

    def repo_meta(self, repo: Repo) -> dict[str, Any]:
        return {"id": repo.id, "name": repo.name, "owner": repo.owner, "full_name": repo.full_name}

    def access_of(self, repo: Repo, login: str) -> str:
        if login.casefold() == repo.owner.casefold():
            return "owner"
        role = self.forge.role_of(repo, login)
        if role is None:
            return "none" if repo.private else "read"
        return ACCESS_OF_ROLE[role]

    def permission(self, repo: Repo, login: str) -> dict[str, Any]:
        access = self.access_of(repo, login)
        return {"permission": access, "role_name": access, "user": self.user(login)}

    # issues -------------------------------------------------------------------------------------------

    def label(self, repo: Repo, label: Label) -> dict[str, Any]:
        return {
            "id": label.id,
            "name": label.name,
            "exclusive": False,
            "is_archived": False,
            "color": label.color.lstrip("#"),
            "description": label.description or "",
            "url": f"{self.api}/repos/{repo.full_name}/labels/{label.id}",
        }

    def milestone(self, repo: Repo, ms: Milestone) -> dict[str, Any]:
        open_, closed = repo.milestone_counts(ms.number)
        return {
            "id": ms.id,
            "title": ms.title,
            "description": ms.description or "",
            "state": ms.state,
            "open_issues": open_,
            "closed_issues": closed,
            "created_at": ms.created_at,
            "updated_at": ms.updated_at,
            "closed_at": ms.closed_at,
            "due_on": ms.due_on,
        }

    def issue(self, repo: Repo, issue: Issue) -> dict[str, Any]:
        milestone = repo.milestones.get(issue.milestone) if issue.milestone is not None else None
        assignees = [self.user(a) for a in issue.assignees]
        return {
            "id": issue.id,
            "url": f"{self.api}/repos/{repo.full_name}/issues/{issue.number}",
            "html_url": f"{self.base}/{repo.full_name}/issues/{issue.number}",
            "number": issue.number,
            "user": self.user(issue.user),
            "original_author": "",
            "original_author_id": 0,
            "title": issue.title,
            "body": issue.body or "",
            "ref": "",
            "assets": [],
            "labels": [self.label(repo, repo.labels[i]) for i in issue.label_ids if i in repo.labels],
            "milestone": self.milestone(repo, milestone) if milestone is not None else None,
            "assignee": assignees[0] if assignees else None,
            "assignees": assignees or None,
            "state": issue.state,
            "is_locked": issue.locked,
            "comments": sum(1 for c in repo.comments.values() if c.issue_number == issue.number),
            "created_at": issue.created_at,
            "updated_at": issue.updated_at,
            "closed_at": issue.closed_at,
            "due_date": None,
            "time_estimate": 0,
            "pull_request": None,
            "repository": self.repo_meta(repo),
            "pin_order": 0,
        }

    def comment(self, repo: Repo, comment: Comment) -> dict[str, Any]:
        issue_url = f"{self.base}/{repo.full_name}/issues/{comment.issue_number}"
        return {
            "id": comment.id,
            "html_url": f"{issue_url}#issuecomment-{comment.id}",
            "pull_request_url": "",
            "issue_url": issue_url,
            "user": self.user(comment.user),
            "original_author": "",
            "original_author_id": 0,
            "body": comment.body,
            "assets": [],
            "created_at": comment.created_at,
            "updated_at": comment.updated_at,
        }

    def reaction(self, reaction: Reaction) -> dict[str, Any]:
        return {
            "user": self.user(reaction.user),
            "content": reaction.content,
            "created_at": reaction.created_at,
        }

    # hooks and files ----------------------------------------------------------------------------------

    def hook(self, hook: Hook) -> dict[str, Any]:
        # Like Gitea, the secret is never shown back.
        return {
            "id": hook.id,
            "type": hook.hook_type or "gitea",
            "branch_filter": "",
            "config": {"url": hook.url, "content_type": hook.content_type},
            "events": hook.events,
            "authorization_header": "",
            "active": hook.active,
            "updated_at": hook.updated_at,
            "created_at": hook.created_at,
        }

    def content(self, repo: Repo, path: str, sha: str, ref: str, commit: str) -> dict[str, Any]:
        raw = gitmodel.blob_bytes(repo, sha)
        url = f"{self.api}/repos/{repo.full_name}/contents/{path}?ref={ref}"
        html = f"{self.base}/{repo.full_name}/src/branch/{ref}/{path}"
        git = f"{self.api}/repos/{repo.full_name}/git/blobs/{sha}"
        return {
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "sha": sha,
            "last_commit_sha": commit,
            "type": "file",
            "size": len(raw),
            "encoding": "base64",
            "content": base64.b64encode(raw).decode(),
            "target": None,
            "url": url,
            "html_url": html,
            "git_url": git,
            "download_url": f"{self.base}/{repo.full_name}/raw/branch/{ref}/{path}",
            "submodule_git_url": None,
            "_links": {"self": url, "git": git, "html": html},
        }

    def push_commit(self, repo: Repo, commit: GitCommit) -> dict[str, Any]:
        added, removed, modified = gitmodel.changed_paths(repo, commit)
        return {
            "id": commit.sha,
            "message": commit.message,
            "url": f"{self.base}/{repo.full_name}/commit/{commit.sha}",
            "author": {"name": commit.author.name, "email": commit.author.email, "username": ""},
            "committer": {"name": commit.committer.name, "email": commit.committer.email, "username": ""},
            "verification": None,
            "timestamp": commit.committer.date,
            "added": added,
            "removed": removed,
            "modified": modified,
        }
