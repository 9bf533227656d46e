"""Renaming a repository and moving it to another owner, forge-neutral.

A repository keeps its id; everything that names it by owner/name follows it (forks that name it as their
parent, pull requests whose head lives in it, the App installation that selected it), and its old name is
remembered so both forges answer it with a redirect (``addressing``) until a repository takes that name.
"""

from __future__ import annotations

from .plumbing import ApiError
from .state import Repo, SandboxState, now_iso


def move(forge: SandboxState, repo: Repo, owner: str, name: str) -> str:
    """Give `repo` the name owner/name; returns the lowercased owner/name it had."""
    old_key, old_owner = repo.full_name.casefold(), repo.owner
    taken = forge.repo(owner, name)
    if taken is not None and taken.id != repo.id:
        raise ApiError(422, f"repository {owner}/{name} already exists")
    del forge.repos[old_key]
    repo.owner, repo.name, repo.updated_at = owner, name, now_iso()
    forge.add_repo(repo)
    new_key = repo.full_name.casefold()
    if new_key != old_key:
        forge.redirects[old_key] = repo.id
    for other in forge.repos.values():
        if other.fork_of == old_key:
            other.fork_of = new_key
        for issue in other.issues.values():
            if issue.pull is not None and issue.pull.head_repo == old_key:
                issue.pull.head_repo = new_key
    old_name = old_key.split("/", 1)[1]
    for inst in forge.installations.values():
        if inst.owner.casefold() != old_owner.casefold():
            continue
        kept = [r for r in inst.repos if r.casefold() != old_name]
        if len(kept) != len(inst.repos):
            # A rename keeps the repository selected; a move to another account leaves the installation,
            # which is the old account's (an App is installed per account).
            inst.repos = kept + ([repo.name] if owner.casefold() == old_owner.casefold() else [])
    return old_key
