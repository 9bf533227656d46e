"""Gitea's JSON shapes for sandbox objects (API v1 responses and webhook payloads share them).

Shapes follow go-gitea/gitea ``modules/structs`` as described by the vendored swagger: field names,
``null`` where Gitea's pointers are nil, milestones addressed by id, colours without ``#``.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from bot.sandbox.shared import gitmodel, pin_ops, pulls
from bot.sandbox.shared.state import (
    Comment,
    CommitStatus,
    GitCommit,
    Hook,
    Issue,
    Label,
    Milestone,
    Reaction,
    Repo,
    Role,
    SandboxState,
    User,
)

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
            "fork": repo.fork_of is not None,
            "template": bool(repo.settings.get("template", False)),
            "parent": self._parent(repo),
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
            "website": str(repo.settings.get("website") or ""),
            "stars_count": 0,
            "forks_count": 0,
            "watchers_count": 0,
            "open_issues_count": open_issues,
            "open_pr_counter": 0,
            "release_counter": 0,
            "default_branch": repo.default_branch,
            "archived": bool(repo.settings.get("archived", False)),
            "created_at": repo.created_at,
            "updated_at": repo.updated_at,
            "archived_at": "1970-01-01T00:00:00Z",
            "permissions": {
                "admin": access in ("admin", "owner"),
                "push": access in ("write", "admin", "owner"),
                "pull": access != "none",
            },
            "has_issues": bool(repo.settings.get("has_issues", True)),
            "internal_tracker": {
                "enable_time_tracker": False,
                "allow_only_contributors_to_track_time": True,
                "enable_issue_dependencies": True,
            },
            "has_wiki": bool(repo.settings.get("has_wiki", False)),
            "has_pull_requests": bool(repo.settings.get("has_pull_requests", True)),
            "has_projects": bool(repo.settings.get("has_projects", False)),
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

    def _parent(self, repo: Repo) -> dict[str, Any] | None:
        parent = self.forge.repos.get(repo.fork_of) if repo.fork_of else None
        return self.repo(parent) if parent is not None else None

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
            "exclusive": label.exclusive,
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
            "html_url": self.issue_html(repo, issue.number),
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
            "pull_request": self._pull_meta(repo, issue),
            "repository": self.repo_meta(repo),
            "pin_order": pin_ops.pin_order(repo, issue),
        }

    def issue_html(self, repo: Repo, number: int) -> str:
        """Gitea's `Issue.HTMLURL()`: `/issues/N`, or `/pulls/N` for a pull request (FORGE-FACTS "Links")."""
        found = repo.issues.get(number)
        kind = "pulls" if found is not None and found.pull is not None else "issues"
        return f"{self.base}/{repo.full_name}/{kind}/{number}"

    def _pull_meta(self, repo: Repo, issue: Issue) -> dict[str, Any] | None:
        if issue.pull is None:
            return None
        return {
            "merged": issue.pull.merged,
            "merged_at": issue.pull.merged_at,
            "draft": pulls.gitea_draft(issue.title),
            "html_url": self.issue_html(repo, issue.number),
        }

    def comment(self, repo: Repo, comment: Comment) -> dict[str, Any]:
        issue_url = self.issue_html(repo, comment.issue_number)
        found = repo.issues.get(comment.issue_number)
        is_pull = found is not None and found.pull is not None
        return {
            "id": comment.id,
            "html_url": f"{issue_url}#issuecomment-{comment.id}",
            "pull_request_url": issue_url if is_pull else "",
            "issue_url": "" if is_pull else issue_url,
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

    # pull requests, branches, commits, statuses ------------------------------------------------------

    def _pr_branch(self, repo: Repo, ref: str, sha: str) -> dict[str, Any]:
        return {"label": ref, "ref": ref, "sha": sha, "repo_id": repo.id, "repo": self.repo(repo)}

    def _pr_head(self, repo: Repo, issue: Issue) -> dict[str, Any]:
        """services/convert/pull.go ToAPIPullRequest: the head starts as `ref` refs/pull/N/head, `repo_id` -1;
        only while the head repository exists do `repo_id`, `repo` and `ref` (the branch) say it."""
        assert issue.pull is not None
        pr = issue.pull
        if pr.head_repo is None:
            return self._pr_branch(repo, pr.head_ref, pr.head_sha)
        fork = None if pr.head_repo_deleted else self.forge.repos.get(pr.head_repo)
        if fork is None:
            ref = f"refs/pull/{issue.number}/head"
            return {"label": pr.head_ref, "ref": ref, "sha": pr.head_sha, "repo_id": -1, "repo": None}
        return self._pr_branch(fork, pr.head_ref, pr.head_sha)

    def pull(self, repo: Repo, issue: Issue) -> dict[str, Any]:
        """services/convert/pull.go ToAPIPullRequest: `url` is the web page too, `draft` the WIP prefix."""
        assert issue.pull is not None
        pr = issue.pull
        html = self.issue_html(repo, issue.number)
        shaped = self.issue(repo, issue)
        added, removed, modified = pulls.changes_of(repo, issue)
        base_sha = repo.refs.get(f"refs/heads/{pr.base_ref}", pr.base_sha)
        return {
            "id": issue.id,
            "url": html,
            "number": issue.number,
            "user": shaped["user"],
            "title": issue.title,
            "body": issue.body or "",
            "labels": shaped["labels"],
            "milestone": shaped["milestone"],
            "assignee": shaped["assignee"],
            "assignees": shaped["assignees"] or [],
            "requested_reviewers": [self.user(r) for r in pr.requested_reviewers],
            "requested_reviewers_teams": [],
            "state": issue.state,
            "draft": pulls.gitea_draft(issue.title),
            "is_locked": issue.locked,
            "comments": shaped["comments"],
            "review_comments": 0,
            "additions": 0,
            "deletions": 0,
            "changed_files": len(added) + len(removed) + len(modified),
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "mergeable": issue.state == "open",
            "merged": pr.merged,
            "merged_at": pr.merged_at,
            "merge_commit_sha": pr.merge_commit_sha,
            "merged_by": self.user(pr.merged_by) if pr.merged_by else None,
            "allow_maintainer_edit": False,
            "base": self._pr_branch(repo, pr.base_ref, base_sha),
            "head": self._pr_head(repo, issue),
            "merge_base": pr.base_sha,
            "due_date": None,
            "created_at": issue.created_at,
            "updated_at": issue.updated_at,
            "closed_at": issue.closed_at,
            "pin_order": pin_ops.pin_order(repo, issue),
        }

    def branch(self, repo: Repo, name: str, sha: str, viewer: str | None = None) -> dict[str, Any]:
        """A `Branch`: its head as a `PayloadCommit`; a protected branch shows its status checks to anyone
        who can read it (services/convert/convert.go ToBranch)."""
        rule = repo.protections.get(name)
        can_push = viewer is not None and self.forge.can(repo, viewer, "push")
        return {
            "name": name,
            "commit": self.push_commit(repo, repo.commits[sha]),
            "protected": rule is not None,
            "required_approvals": 0,
            "enable_status_check": bool(rule and rule.required_contexts),
            "status_check_contexts": list(rule.required_contexts) if rule else [],
            "user_can_push": can_push and rule is None,
            "user_can_merge": can_push,
            "effective_branch_protection_name": name if rule is not None else "",
        }

    def commit(self, repo: Repo, sha: str, *, files: bool = True) -> dict[str, Any]:
        """services/convert/git_commit.go ToCommit: files with status added/removed/modified (older
        Gitea left the status out); the `tree` it names is the commit itself, as Gitea answers."""
        commit = repo.commits[sha]
        api = f"{self.api}/repos/{repo.full_name}"

        def user(email: str) -> dict[str, Any] | None:
            login = email.split("@", 1)[0] if email.endswith("@noreply.sandbox") else None
            found = self.forge.user(login) if login else None
            return self.user(found.login) if found is not None else None

        data: dict[str, Any] = {
            "url": f"{api}/git/commits/{sha}",
            "sha": sha,
            "created": commit.committer.date,
            "html_url": f"{self.base}/{repo.full_name}/commit/{sha}",
            "commit": {
                "url": f"{api}/git/commits/{sha}",
                "author": {
                    "name": commit.author.name,
                    "email": commit.author.email,
                    "date": commit.author.date,
                },
                "committer": {
                    "name": commit.committer.name,
                    "email": commit.committer.email,
                    "date": commit.committer.date,
                },
                "message": commit.message,
                "tree": {"url": f"{api}/git/trees/{sha}", "sha": sha, "created": commit.committer.date},
                "verification": {
                    "verified": False,
                    "reason": "gpg.error.not_signed_commit",
                    "signature": "",
                    "payload": "",
                },
            },
            "author": user(commit.author.email),
            "committer": user(commit.committer.email),
            "parents": [
                {"url": f"{api}/git/commits/{p}", "sha": p, "created": repo.commits[p].committer.date}
                for p in commit.parents
            ],
            "stats": {"total": 0, "additions": 0, "deletions": 0},
        }
        if files:
            added, removed, modified = gitmodel.changed_paths(repo, commit)
            data["files"] = (
                [{"filename": p, "status": "added"} for p in added]
                + [{"filename": p, "status": "removed"} for p in removed]
                + [{"filename": p, "status": "modified"} for p in modified]
            )
        return data

    def changed_files(self, repo: Repo, before: str, after: str) -> list[dict[str, Any]]:
        """services/convert/pull.go ToChangedFile: status added, deleted or changed."""
        added, removed, modified = gitmodel.diff(repo, before, after)
        found = []
        for path, status in sorted(
            [(p, "added") for p in added]
            + [(p, "deleted") for p in removed]
            + [(p, "changed") for p in modified]
        ):
            ref = before if status == "deleted" else after
            found.append(
                {
                    "filename": path,
                    "status": status,
                    "additions": 0,
                    "deletions": 0,
                    "changes": 0,
                    "html_url": f"{self.base}/{repo.full_name}/src/commit/{ref}/{path}",
                    "contents_url": f"{self.api}/repos/{repo.full_name}/contents/{path}?ref={ref}",
                    "raw_url": f"{self.base}/{repo.full_name}/raw/commit/{ref}/{path}",
                }
            )
        return found

    def status(self, repo: Repo, status: CommitStatus) -> dict[str, Any]:
        """Gitea's CommitStatus names the state `status` (modules/structs/status.go)."""
        return {
            "id": status.id,
            "status": status.state,
            "target_url": status.target_url or "",
            "description": status.description or "",
            "url": f"{self.api}/repos/{repo.full_name}/statuses/{status.sha}",
            "context": status.context,
            "creator": self.user(status.creator),
            "created_at": status.created_at,
            "updated_at": status.updated_at,
        }
