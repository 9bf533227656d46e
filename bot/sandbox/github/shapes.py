"""GitHub's JSON shapes for sandbox objects (REST responses and webhook payloads share them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.sandbox.shared.state import (
    REACTIONS,
    App,
    Comment,
    Hook,
    Issue,
    Label,
    Milestone,
    Reaction,
    Repo,
    SandboxState,
    User,
)

from .git_shapes import GitShapes
from .ids import node_id as node_id
from .repo_settings import setting

# What every sandbox GitHub App may do and hears of.
APP_PERMISSIONS = {
    "issues": "write",
    "contents": "write",
    "metadata": "read",
    "pull_requests": "write",
    "statuses": "write",
    "checks": "write",
}
APP_EVENTS = ("issues", "issue_comment", "label", "milestone", "push", "pull_request")


# The REST API versions the sandbox answers (`X-GitHub-Api-Version`; none: the first), newest last —
# docs.github.com "API Versions": unversioned requests get 2022-11-28; 2026-03-10 from GitHub's changelog
# (2026-03-12). 2026-03-10's Label has `archived_at` and `archived_by` (null when not archived).
API_VERSIONS = ("2022-11-28", "2026-03-10")


@dataclass(frozen=True)
class Shapes(GitShapes):
    """Renders state as GitHub JSON, with URLs under the sandbox's own base URL, in REST API version
    `api_version` (webhook payloads are not versioned: they use the default)."""

    forge: SandboxState
    base: str
    api_version: str = API_VERSIONS[0]

    # users --------------------------------------------------------------------------------------------

    def user(self, login: str) -> dict[str, Any]:
        user = self.forge.user(login) or User(id=0, login=login)
        u = f"{self.base}/users/{user.login}"
        return {
            "login": user.login,
            "id": user.id,
            "node_id": node_id("User" if user.type != "Bot" else "Bot", user.id),
            "avatar_url": f"{self.base}/avatars/{user.login}",
            "gravatar_id": "",
            "url": u,
            "html_url": f"{self.base}/{user.login}",
            "followers_url": f"{u}/followers",
            "following_url": f"{u}/following{{/other_user}}",
            "gists_url": f"{u}/gists{{/gist_id}}",
            "starred_url": f"{u}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{u}/subscriptions",
            "organizations_url": f"{u}/orgs",
            "repos_url": f"{u}/repos",
            "events_url": f"{u}/events{{/privacy}}",
            "received_events_url": f"{u}/received_events",
            "type": user.type,
            "site_admin": False,
        }

    def public_user(self, login: str) -> dict[str, Any]:
        user = self.forge.user(login) or User(id=0, login=login)
        return {
            **self.user(login),
            "name": user.name,
            "email": user.email,
            "company": None,
            "blog": "",
            "location": None,
            "hireable": None,
            "bio": None,
            "twitter_username": None,
            "public_repos": sum(1 for r in self.forge.repos.values() if r.owner == user.login),
            "public_gists": 0,
            "followers": 0,
            "following": 0,
            "created_at": user.created_at,
            "updated_at": user.created_at,
            # the public view of a user (GitHub's discriminator between public-user and private-user)
            "user_view_type": "public",
        }

    def account_of(self, email: str) -> dict[str, Any] | None:
        """The user a commit's e-mail address belongs to (GitHub links commits to accounts by e-mail):
        the sandbox writes `login@users.noreply.sandbox` for its users."""
        login = email.split("@", 1)[0] if email.endswith("@users.noreply.sandbox") else None
        found = self.forge.user(login) if login else None
        if found is None:
            found = next((u for u in self.forge.users.values() if u.email and u.email == email), None)
        return self.user(found.login) if found is not None else None

    # repositories -------------------------------------------------------------------------------------

    def repo(self, repo: Repo, viewer: str | None = None) -> dict[str, Any]:
        api = f"{self.base}/repos/{repo.full_name}"
        html = f"{self.base}/{repo.full_name}"
        open_count = sum(1 for i in repo.issues.values() if i.state == "open")
        data: dict[str, Any] = {
            "id": repo.id,
            "node_id": node_id("Repository", repo.id),
            "name": repo.name,
            "full_name": repo.full_name,
            "private": repo.private,
            "owner": self.user(repo.owner),
            "html_url": html,
            "description": repo.description,
            "fork": repo.fork_of is not None,
            "url": api,
            "forks_url": f"{api}/forks",
            "keys_url": f"{api}/keys{{/key_id}}",
            "collaborators_url": f"{api}/collaborators{{/collaborator}}",
            "teams_url": f"{api}/teams",
            "hooks_url": f"{api}/hooks",
            "issue_events_url": f"{api}/issues/events{{/number}}",
            "events_url": f"{api}/events",
            "assignees_url": f"{api}/assignees{{/user}}",
            "branches_url": f"{api}/branches{{/branch}}",
            "tags_url": f"{api}/tags",
            "blobs_url": f"{api}/git/blobs{{/sha}}",
            "git_tags_url": f"{api}/git/tags{{/sha}}",
            "git_refs_url": f"{api}/git/refs{{/sha}}",
            "trees_url": f"{api}/git/trees{{/sha}}",
            "statuses_url": f"{api}/statuses/{{sha}}",
            "languages_url": f"{api}/languages",
            "stargazers_url": f"{api}/stargazers",
            "contributors_url": f"{api}/contributors",
            "subscribers_url": f"{api}/subscribers",
            "subscription_url": f"{api}/subscription",
            "commits_url": f"{api}/commits{{/sha}}",
            "git_commits_url": f"{api}/git/commits{{/sha}}",
            "comments_url": f"{api}/comments{{/number}}",
            "issue_comment_url": f"{api}/issues/comments{{/number}}",
            "contents_url": f"{api}/contents/{{+path}}",
            "compare_url": f"{api}/compare/{{base}}...{{head}}",
            "merges_url": f"{api}/merges",
            "archive_url": f"{api}/{{archive_format}}{{/ref}}",
            "downloads_url": f"{api}/downloads",
            "issues_url": f"{api}/issues{{/number}}",
            "pulls_url": f"{api}/pulls{{/number}}",
            "milestones_url": f"{api}/milestones{{/number}}",
            "notifications_url": f"{api}/notifications{{?since,all,participating}}",
            "labels_url": f"{api}/labels{{/name}}",
            "releases_url": f"{api}/releases{{/id}}",
            "deployments_url": f"{api}/deployments",
            "created_at": repo.created_at,
            "updated_at": repo.updated_at,
            "pushed_at": repo.pushed_at,
            "git_url": f"{html}.git".replace("http://", "git://").replace("https://", "git://"),
            "ssh_url": f"git@sandbox:{repo.full_name}.git",
            "clone_url": f"{html}.git",
            "svn_url": html,
            "homepage": setting(repo, "homepage"),
            "size": 0,
            "stargazers_count": 0,
            "watchers_count": 0,
            "language": None,
            "has_issues": setting(repo, "has_issues"),
            "has_projects": setting(repo, "has_projects"),
            "has_downloads": True,
            "has_wiki": setting(repo, "has_wiki"),
            "has_discussions": setting(repo, "has_discussions"),
            "has_pages": False,
            "forks_count": 0,
            "mirror_url": None,
            "archived": setting(repo, "archived"),
            "disabled": False,
            "open_issues_count": open_count,
            "license": None,
            "forks": 0,
            "open_issues": open_count,
            "watchers": 0,
            "default_branch": repo.default_branch,
            "is_template": setting(repo, "is_template"),
            "web_commit_signoff_required": setting(repo, "web_commit_signoff_required"),
            "topics": [],
            "visibility": "private" if repo.private else "public",
            "custom_properties": {},
        }
        if viewer is not None:
            data["permissions"] = {
                "admin": self.forge.can(repo, viewer, "admin"),
                "maintain": self.forge.can(repo, viewer, "maintain"),
                "push": self.forge.can(repo, viewer, "push"),
                "triage": self.forge.can(repo, viewer, "triage"),
                "pull": self.forge.can(repo, viewer, "pull"),
            }
        return data

    def full_repo(self, repo: Repo, viewer: str | None) -> dict[str, Any]:
        parent = self.forge.repos.get(repo.fork_of) if repo.fork_of else None
        # A fork names the repository it was made from (`parent`) and the root of its network (`source`).
        family = {"parent": self.repo(parent), "source": self.repo(parent)} if parent is not None else {}
        owner = self.forge.user(repo.owner)
        # An organisation's repository names it (a simple user of type Organization).
        org = (
            {"organization": self.user(repo.owner)}
            if owner is not None and owner.type == "Organization"
            else {}
        )
        # `GET /repos/{o}/{r}`: every key of GitHub's current `full-repository` (the merge options and
        # `allow_update_branch`, `use_squash_pr_title_as_default` …: ``repo_settings``).
        merging = {
            key: setting(repo, key)
            for key in (
                "allow_squash_merge",
                "allow_merge_commit",
                "allow_rebase_merge",
                "allow_auto_merge",
                "delete_branch_on_merge",
                "allow_update_branch",
                "use_squash_pr_title_as_default",
                "squash_merge_commit_title",
                "squash_merge_commit_message",
                "merge_commit_title",
                "merge_commit_message",
                "allow_forking",
                "has_pull_requests",
                "pull_request_creation_policy",
            )
        }
        return {
            **self.repo(repo, viewer),
            **family,
            **org,
            "network_count": 0,
            "subscribers_count": 0,
            "temp_clone_token": "",
            **merging,
        }

    # issues and friends -------------------------------------------------------------------------------

    def association(self, repo: Repo, login: str) -> str:
        if login.casefold() == repo.owner.casefold():
            return "OWNER"
        if self.forge.role_of(repo, login) is not None:
            return "COLLABORATOR"
        return "NONE"

    def reactions(self, url: str, reactions: list[Reaction]) -> dict[str, Any]:
        rollup: dict[str, Any] = {"url": url, "total_count": len(reactions)}
        for content in REACTIONS:
            rollup[content] = sum(1 for r in reactions if r.content == content)
        return rollup

    def reaction(self, reaction: Reaction) -> dict[str, Any]:
        return {
            "id": reaction.id,
            "node_id": node_id("Reaction", reaction.id),
            "user": self.user(reaction.user),
            "content": reaction.content,
            "created_at": reaction.created_at,
        }

    def label(self, repo: Repo, label: Label) -> dict[str, Any]:
        return {
            "id": label.id,
            "node_id": node_id("Label", label.id),
            "url": f"{self.base}/repos/{repo.full_name}/labels/{label.name.replace(' ', '%20')}",
            "name": label.name,
            "color": label.color,
            "default": label.default,
            "description": label.description,
        }

    def rest_label(self, repo: Repo, label: Label) -> dict[str, Any]:
        """A `label` as the REST API answers it in this request's version: 2026-03-10 adds `archived_at`
        and `archived_by` (the sandbox archives no label: both null)."""
        shaped = self.label(repo, label)
        if self.api_version >= "2026-03-10":
            shaped.update(archived_at=None, archived_by=None)
        return shaped

    def milestone(self, repo: Repo, ms: Milestone) -> dict[str, Any]:
        api = f"{self.base}/repos/{repo.full_name}/milestones/{ms.number}"
        open_, closed = repo.milestone_counts(ms.number)
        return {
            "url": api,
            "html_url": f"{self.base}/{repo.full_name}/milestone/{ms.number}",
            "labels_url": f"{api}/labels",
            "id": ms.id,
            "node_id": node_id("Milestone", ms.id),
            "number": ms.number,
            "title": ms.title,
            "description": ms.description,
            "creator": self.user(ms.creator),
            "open_issues": open_,
            "closed_issues": closed,
            "state": ms.state,
            "created_at": ms.created_at,
            "updated_at": ms.updated_at,
            "due_on": ms.due_on,
            "closed_at": ms.closed_at,
        }

    def app(self, app: App) -> dict[str, Any]:
        owner = app.owner or next(iter(self.forge.users.values())).login
        return {
            "id": app.id,
            "slug": app.slug,
            "node_id": node_id("App", app.id),
            "owner": self.user(owner),
            "name": app.name,
            "description": None,
            "external_url": f"{self.base}/apps/{app.slug}",
            "html_url": f"{self.base}/apps/{app.slug}",
            "created_at": app.created_at,
            "updated_at": app.created_at,
            "permissions": dict(APP_PERMISSIONS),
            "events": list(APP_EVENTS),
        }

    def _via_app(self, app_id: int | None) -> dict[str, Any] | None:
        app = self.forge.apps.get(app_id) if app_id is not None else None
        return self.app(app) if app is not None else None

    def issue(self, repo: Repo, issue: Issue) -> dict[str, Any]:
        api = f"{self.base}/repos/{repo.full_name}/issues/{issue.number}"
        ms = repo.milestones.get(issue.milestone) if issue.milestone is not None else None
        assignees = [self.user(a) for a in issue.assignees]
        data = {
            "url": api,
            "repository_url": f"{self.base}/repos/{repo.full_name}",
            "labels_url": f"{api}/labels{{/name}}",
            "comments_url": f"{api}/comments",
            "events_url": f"{api}/events",
            "html_url": self.issue_html(repo, issue.number),
            "id": issue.id,
            "node_id": node_id("Issue", issue.id),
            "number": issue.number,
            "title": issue.title,
            "user": self.user(issue.user),
            "labels": [self.label(repo, repo.labels[i]) for i in issue.label_ids if i in repo.labels],
            "state": issue.state,
            "locked": issue.locked,
            "assignee": assignees[0] if assignees else None,
            "assignees": assignees,
            "milestone": self.milestone(repo, ms) if ms is not None else None,
            "comments": sum(1 for c in repo.comments.values() if c.issue_number == issue.number),
            "created_at": issue.created_at,
            "updated_at": issue.updated_at,
            "closed_at": issue.closed_at,
            "author_association": self.association(repo, issue.user),
            "active_lock_reason": issue.lock_reason if issue.locked else None,
            "body": issue.body,
            "reactions": self.reactions(f"{api}/reactions", issue.reactions),
            "timeline_url": f"{api}/timeline",
            "performed_via_github_app": self._via_app(issue.via_app),
            "state_reason": issue.state_reason,
        }
        if issue.pull is not None:
            # A pull request's issue object says whether it is a draft: the `draft` property of the `issue`
            # schema in GitHub's REST description (tests/fixtures/github/openapi-2026-subset.json), set on
            # pull requests only.
            data["draft"] = issue.pull.draft
            # GitHub lists pull requests among issues, with this key (FORGE-FACTS "Milestones")
            html = self.issue_html(repo, issue.number)
            data["pull_request"] = {
                "url": f"{self.base}/repos/{repo.full_name}/pulls/{issue.number}",
                "html_url": html,
                "diff_url": f"{html}.diff",
                "patch_url": f"{html}.patch",
                "merged_at": issue.pull.merged_at,
            }
        return data

    def issue_html(self, repo: Repo, number: int) -> str:
        """An issue's page, or a pull request's: `/issues/N` or `/pull/N` (FORGE-FACTS "Links")."""
        found = repo.issues.get(number)
        kind = "pull" if found is not None and found.pull is not None else "issues"
        return f"{self.base}/{repo.full_name}/{kind}/{number}"

    def rest_issue(self, repo: Repo, issue: Issue) -> dict[str, Any]:
        closed_by = self.user(issue.closed_by) if issue.closed_by else None
        return {**self.issue(repo, issue), "closed_by": closed_by}

    def comment(self, repo: Repo, comment: Comment) -> dict[str, Any]:
        api = f"{self.base}/repos/{repo.full_name}/issues/comments/{comment.id}"
        html = self.issue_html(repo, comment.issue_number)
        return {
            "url": api,
            "html_url": f"{html}#issuecomment-{comment.id}",
            "issue_url": f"{self.base}/repos/{repo.full_name}/issues/{comment.issue_number}",
            "id": comment.id,
            "node_id": node_id("IssueComment", comment.id),
            "user": self.user(comment.user),
            "created_at": comment.created_at,
            "updated_at": comment.updated_at,
            "author_association": self.association(repo, comment.user),
            "body": comment.body,
            "reactions": self.reactions(f"{api}/reactions", comment.reactions),
            "performed_via_github_app": self._via_app(comment.via_app),
        }

    def hook(self, repo: Repo, hook: Hook) -> dict[str, Any]:
        api = f"{self.base}/repos/{repo.full_name}/hooks/{hook.id}"
        config: dict[str, Any] = {
            "content_type": hook.content_type,
            "insecure_ssl": hook.insecure_ssl,
            "url": hook.url,
        }
        if hook.secret:
            config["secret"] = "********"
        return {
            "type": "Repository",
            "id": hook.id,
            "name": "web",
            "active": hook.active,
            "events": hook.events,
            "config": config,
            "updated_at": hook.updated_at,
            "created_at": hook.created_at,
            "url": api,
            "test_url": f"{api}/test",
            "ping_url": f"{api}/pings",
            "deliveries_url": f"{api}/deliveries",
            "last_response": {"code": None, "status": "unused", "message": None},
        }
