"""Reading pull requests from the sandbox state (no requests, no webhooks: shapes and operations share it)."""

from __future__ import annotations

from bot.sandbox.shared import gitmodel

from .state import GitCommit, Issue, Repo

# Gitea/Forgejo: `[repository.pull-request] WORK_IN_PROGRESS_PREFIXES` defaults to "WIP:,[WIP]"
# (modules/setting/repository.go) and a title counts as a draft when it starts with one of them,
# compared case-insensitively (models/issues/pull.go HasWorkInProgressPrefix); the API's `draft` is that
# (services/convert/pull.go: `Draft: pr.IsWorkInProgress(ctx)`). Gitea has no other draft flag.
WIP_PREFIXES = ("WIP:", "[WIP]")


def gitea_draft(title: str) -> bool:
    return any(title.upper().startswith(prefix.upper()) for prefix in WIP_PREFIXES)


def is_draft(repo: Repo, issue: Issue) -> bool:
    """A pull request's draft flag as the repository's forge reports it."""
    assert issue.pull is not None
    return gitea_draft(issue.title) if repo.flavor == "gitea" else issue.pull.draft


def pulls(repo: Repo) -> list[Issue]:
    return [i for i in repo.issues.values() if i.pull is not None]


def open_pulls(repo: Repo) -> list[Issue]:
    return [i for i in pulls(repo) if i.state == "open"]


def open_pull_for(
    repo: Repo, head: str, base: str | None = None, head_repo: str | None = None
) -> Issue | None:
    """The open pull request of branch `head` (of fork `head_repo`, by key; None: this repository)."""
    for issue in open_pulls(repo):
        assert issue.pull is not None
        same_head = issue.pull.head_ref == head and issue.pull.head_repo == head_repo
        if same_head and (base is None or issue.pull.base_ref == base):
            return issue
    return None


def start_of(repo: Repo, issue: Issue) -> str:
    """Where the pull request's commits start: the merge base of its head and its base when opened."""
    assert issue.pull is not None
    return gitmodel.merge_base(repo, issue.pull.head_sha, issue.pull.base_sha) or issue.pull.base_sha


def commits_of(repo: Repo, issue: Issue) -> list[GitCommit]:
    """The pull request's commits, oldest first (they stay listed after a merge, as on both forges)."""
    assert issue.pull is not None
    return gitmodel.new_commits(repo, start_of(repo, issue), issue.pull.head_sha)


def changes_of(repo: Repo, issue: Issue) -> tuple[list[str], list[str], list[str]]:
    """(added, removed, modified) paths of the pull request: its head against where it started."""
    assert issue.pull is not None
    return gitmodel.diff(repo, start_of(repo, issue), issue.pull.head_sha)


def branch_head(repo: Repo, ref: str) -> str | None:
    return repo.refs.get(f"refs/heads/{ref}")
