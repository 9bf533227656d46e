"""Writes that must happen once (DESIGN §3.10: a write is never resent blindly): look before writing,
and after a write the forge may have applied without saying so (5xx, a dropped connection) or refused
because another run got there first, look again. Both adapters share these."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from bot.forge import (
    Commit,
    CommitStatus,
    FileChange,
    FileContent,
    ForgeError,
    ForgeUnavailable,
    RepoRef,
    ValidationFailed,
)


async def once[T](
    find: Callable[[], Awaitable[T | None]],
    write: Callable[[], Awaitable[T]],
    *,
    taken: Callable[[ValidationFailed], bool] = lambda exc: False,
) -> T:
    """What `find` finds, else what `write` makes. When the write fails unconfirmed (ForgeUnavailable) or is
    refused as `taken` (made meanwhile by another run), `find` decides: its find is the answer, or the
    failure stands."""
    found = await find()
    if found is not None:
        return found
    failure: ForgeError
    try:
        return await write()
    except ForgeUnavailable as exc:
        failure = exc
    except ValidationFailed as exc:
        if not taken(exc):
            raise
        failure = exc
    found = await find()
    if found is None:
        raise failure
    return found


def same_status(found: CommitStatus | None, state: str, description: str, target_url: str) -> bool:
    """Whether the latest status of a context already says this (then it is not written again)."""
    return found is not None and (found.state, found.description, found.target_url) == (
        state,
        description,
        target_url,
    )


# How far back along a branch an earlier run's commit is looked for.
LOOK_BACK = 10


class CommitReads(Protocol):
    async def get_branch(self, repo: RepoRef, name: str) -> str | None: ...

    async def get_commit(self, repo: RepoRef, sha: str) -> Commit: ...

    async def read_file(self, repo: RepoRef, path: str, ref: str | None = None) -> FileContent | None: ...


def same_message(found: str, wanted: str) -> bool:
    return found.strip() == wanted.strip()


async def has_contents(forge: CommitReads, repo: RepoRef, ref: str, files: Sequence[FileChange]) -> bool:
    """Whether the tree at `ref` already holds every file as wanted (a deleted file: absent)."""
    for change in files:
        current = await forge.read_file(repo, change.path, ref=ref)
        if change.content is None:
            if current is not None:
                return False
        elif current is None or current.content != change.content:
            return False
    return True


async def find_committed(
    forge: CommitReads, repo: RepoRef, branch: str, files: Sequence[FileChange], message: str
) -> Commit | None:
    """The commit that already does what is asked on `branch`, or None when it must still be made:

    - the branch's head already holds the files as wanted (nothing is left to commit): its head commit;
    - a commit on the branch (its head or up to ``LOOK_BACK`` first parents back) has this message and
      changed only these files: that commit, even if later commits touched the files since.
    """
    head = await forge.get_branch(repo, branch)
    if head is None:
        return None
    if await has_contents(forge, repo, head, files):
        return await forge.get_commit(repo, head)
    wanted = {change.path for change in files}
    sha: str | None = head
    for _ in range(LOOK_BACK):
        if sha is None:
            break
        commit = await forge.get_commit(repo, sha)
        changed = {f.path for f in commit.files}
        if same_message(commit.message, message) and changed and changed <= wanted:
            return commit
        sha = commit.parents[0] if commit.parents else None
    return None
