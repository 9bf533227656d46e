"""Forks, forge-neutral: fork a repository, open pull requests from a fork's branch, keep them in step with
pushes to the fork, and delete a repository (a pull request whose fork is gone keeps its commits; both forges
then answer its ``head.repo`` null).

A pull request's commits are copied into the base repository when it is opened and when its head moves, as
both forges keep them under ``refs/pull/N/head``; so lists, diffs and merges read the base repository only.
"""

from __future__ import annotations

from .caller import Caller
from .plumbing import ApiError
from .state import Issue, Repo, now_iso


def key(repo: Repo) -> str:
    return repo.full_name.casefold()


def fork(caller: Caller, parent: Repo, name: str | None) -> Repo:
    """A fork of `parent` owned by the caller (its git objects and branches, no issues): GitHub "Create a
    fork" and Gitea's CreateFork. An existing fork of the caller's is answered again (GitHub does; Gitea
    refuses a name in use with 409)."""
    owner = caller.login
    wanted = name or parent.name
    existing = caller.forge.repo(owner, wanted)
    if existing is not None:
        if existing.fork_of == key(parent):
            return existing
        raise ApiError(
            409 if parent.flavor == "gitea" else 422, f"repository {owner}/{wanted} already exists"
        )
    made = Repo(
        id=caller.forge.new_id(),
        owner=owner,
        name=wanted,
        flavor=parent.flavor,
        description=parent.description,
        private=parent.private,
        default_branch=parent.default_branch,
        fork_of=key(parent),
        pushed_at=parent.pushed_at or now_iso(),
        blobs=dict(parent.blobs),
        trees={k: v.model_copy() for k, v in parent.trees.items()},
        commits={k: v.model_copy() for k, v in parent.commits.items()},
        refs={r: sha for r, sha in parent.refs.items() if r.startswith("refs/heads/")},
    )
    caller.forge.ensure_user(owner)
    caller.forge.add_repo(made)
    return made


def copy_objects(source: Repo, target: Repo) -> None:
    """Everything `source` holds that `target` lacks (git objects are content-addressed: nothing clashes)."""
    for sha, blob in source.blobs.items():
        target.blobs.setdefault(sha, blob)
    for sha, tree in source.trees.items():
        target.trees.setdefault(sha, tree.model_copy())
    for sha, commit in source.commits.items():
        target.commits.setdefault(sha, commit.model_copy())


def head_of(caller: Caller, base: Repo, given: str) -> tuple[Repo | None, str]:
    """The repository and branch of a pull request's `head`: `branch` (this repository: None) or
    `owner:branch` — the base's own owner, or the owner of a fork of the base."""
    owner, sep, branch = given.rpartition(":")
    if not sep or owner.casefold() == base.owner.casefold():
        return None, branch
    found = caller.forge.repo(owner, base.name)
    if found is None:
        found = next(
            (
                r
                for r in caller.forge.repos.values()
                if r.fork_of == key(base) and r.owner.casefold() == owner.casefold()
            ),
            None,
        )
    if found is None or found.fork_of != key(base):
        raise ApiError(422, f"{owner} has no fork of {base.full_name}")
    return found, branch


def pulls_from(caller: Caller, fork_repo: Repo) -> list[tuple[Repo, Issue]]:
    """The open pull requests, in any repository, whose head branch lives in `fork_repo`."""
    wanted = key(fork_repo)
    return [
        (repo, issue)
        for repo in caller.forge.repos.values()
        for issue in repo.issues.values()
        if issue.pull is not None and issue.pull.head_repo == wanted and issue.state == "open"
    ]


def fork_pushed(caller: Caller, fork_repo: Repo, branch: str, after: str) -> None:
    """A fork's branch moved: its pull requests follow (GitHub `synchronize`, Gitea `synchronized`)."""
    for base, issue in pulls_from(caller, fork_repo):
        assert issue.pull is not None
        if issue.pull.head_ref == branch and issue.pull.head_sha != after:
            copy_objects(fork_repo, base)
            old, issue.pull.head_sha = issue.pull.head_sha, after
            issue.updated_at = now_iso()
            caller.events.pull_synchronized(base, issue, old, after)


def delete_repo(caller: Caller, repo: Repo) -> None:
    """Delete a repository; pull requests from it (it was a fork) lose their head repository."""
    gone = key(repo)
    for other in caller.forge.repos.values():
        for issue in other.issues.values():
            if issue.pull is not None and issue.pull.head_repo == gone:
                issue.pull.head_repo_deleted = True
    del caller.forge.repos[gone]
