"""A small git object model: blobs, nested trees and commits hashed exactly as git hashes them."""

from __future__ import annotations

import base64
import hashlib
from datetime import datetime

from .state import GitCommit, GitTree, Repo, Signature, TreeEntry


class GitError(ValueError):
    """A git operation that cannot be applied (unknown object, bad path)."""


def _hash(kind: str, payload: bytes) -> str:
    return hashlib.sha1(f"{kind} {len(payload)}\0".encode() + payload, usedforsecurity=False).hexdigest()


def put_blob(repo: Repo, data: bytes) -> str:
    sha = _hash("blob", data)
    repo.blobs[sha] = base64.b64encode(data).decode("ascii")
    return sha


def blob_bytes(repo: Repo, sha: str) -> bytes:
    try:
        return base64.b64decode(repo.blobs[sha])
    except KeyError:
        raise GitError(f"no blob {sha}") from None


def _put_tree(repo: Repo, entries: list[TreeEntry]) -> str:
    # git sorts tree entries by name, with directories compared as if they ended in "/"
    entries = sorted(entries, key=lambda e: e.name + ("/" if e.type == "tree" else ""))
    raw = b"".join(
        f"{e.mode.lstrip('0') if e.type == 'tree' else e.mode} {e.name}\0".encode() + bytes.fromhex(e.sha)
        for e in entries
    )
    sha = _hash("tree", raw)
    repo.trees[sha] = GitTree(sha=sha, entries=entries)
    return sha


def write_tree(repo: Repo, files: dict[str, tuple[str, str]]) -> str:
    """Write nested trees for a flat map path -> (mode, blob sha) and return the root tree's sha."""
    direct: list[TreeEntry] = []
    subdirs: dict[str, dict[str, tuple[str, str]]] = {}
    for path, (mode, sha) in files.items():
        head, sep, rest = path.partition("/")
        if not head:
            raise GitError(f"invalid path {path!r}")
        if sep:
            subdirs.setdefault(head, {})[rest] = (mode, sha)
        else:
            direct.append(TreeEntry(name=head, mode=mode, type="blob", sha=sha))
    for name, sub in subdirs.items():
        direct.append(TreeEntry(name=name, mode="040000", type="tree", sha=write_tree(repo, sub)))
    return _put_tree(repo, direct)


def flatten(repo: Repo, tree_sha: str, prefix: str = "") -> dict[str, tuple[str, str]]:
    """The flat map path -> (mode, blob sha) of every file below `tree_sha`."""
    tree = repo.trees.get(tree_sha)
    if tree is None:
        raise GitError(f"no tree {tree_sha}")
    out: dict[str, tuple[str, str]] = {}
    for entry in tree.entries:
        path = prefix + entry.name
        if entry.type == "tree":
            out.update(flatten(repo, entry.sha, path + "/"))
        else:
            out[path] = (entry.mode, entry.sha)
    return out


def lookup(repo: Repo, tree_sha: str, path: str) -> TreeEntry | None:
    """The entry at `path` below a tree, or None. The empty path is the tree itself."""
    entry = TreeEntry(name="", mode="040000", type="tree", sha=tree_sha)
    for part in [p for p in path.split("/") if p]:
        tree = repo.trees.get(entry.sha) if entry.type == "tree" else None
        if tree is None:
            return None
        found = next((e for e in tree.entries if e.name == part), None)
        if found is None:
            return None
        entry = found
    return entry


def _git_time(iso: str) -> str:
    stamp = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return f"{int(stamp.timestamp())} +0000"


def make_commit(
    repo: Repo, tree: str, parents: list[str], message: str, author: Signature, committer: Signature
) -> GitCommit:
    if tree not in repo.trees:
        raise GitError(f"no tree {tree}")
    for parent in parents:
        if parent not in repo.commits:
            raise GitError(f"no commit {parent}")
    lines = [f"tree {tree}", *(f"parent {p}" for p in parents)]
    lines.append(f"author {author.name} <{author.email}> {_git_time(author.date)}")
    lines.append(f"committer {committer.name} <{committer.email}> {_git_time(committer.date)}")
    raw = ("\n".join(lines) + "\n\n" + message).encode()
    sha = _hash("commit", raw)
    commit = GitCommit(
        sha=sha, tree=tree, parents=parents, message=message, author=author, committer=committer
    )
    repo.commits[sha] = commit
    return commit


def full_ref(ref: str) -> str:
    return ref if ref.startswith("refs/") else f"refs/{ref}"


def resolve(repo: Repo, ref: str | None) -> str | None:
    """A commit sha for a branch, tag, full ref or (abbreviated) commit sha; None when unknown."""
    if not ref:
        ref = repo.default_branch
    for candidate in (ref, f"refs/heads/{ref}", f"refs/tags/{ref}"):
        if candidate in repo.refs:
            return repo.refs[candidate]
    if ref in repo.commits:
        return ref
    if len(ref) >= 7:
        matches = [sha for sha in repo.commits if sha.startswith(ref)]
        if len(matches) == 1:
            return matches[0]
    return None


def ancestors(repo: Repo, sha: str) -> list[str]:
    """`sha` and every commit reachable from it, newest first (parents after children)."""
    seen: list[str] = []
    stack = [sha]
    while stack:
        current = stack.pop(0)
        if current in seen or current not in repo.commits:
            continue
        seen.append(current)
        stack.extend(repo.commits[current].parents)
    return seen


def new_commits(repo: Repo, before: str | None, after: str) -> list[GitCommit]:
    """Commits reachable from `after` but not from `before`, oldest first (the commits a push brings)."""
    old = set(ancestors(repo, before)) if before else set()
    return [repo.commits[s] for s in reversed(ancestors(repo, after)) if s not in old]


def changed_paths(repo: Repo, commit: GitCommit) -> tuple[list[str], list[str], list[str]]:
    """(added, removed, modified) paths of a commit against its first parent."""
    return diff(repo, commit.parents[0] if commit.parents else None, commit.sha)


def init_repo(repo: Repo, author: Signature) -> GitCommit:
    """The initial commit every sandbox repository starts with: a README on the default branch."""
    readme = f"# {repo.name}\n" + (f"\n{repo.description}\n" if repo.description else "")
    tree = write_tree(repo, {"README.md": ("100644", put_blob(repo, readme.encode()))})
    commit = make_commit(repo, tree, [], "Initial commit", author, author)
    repo.refs[f"refs/heads/{repo.default_branch}"] = commit.sha
    return commit


def merge_base(repo: Repo, one: str, other: str) -> str | None:
    """The newest commit reachable from both (a merge base), or None."""
    theirs = set(ancestors(repo, other))
    return next((sha for sha in ancestors(repo, one) if sha in theirs), None)


def merged_files(repo: Repo, base: str, ours: str, theirs: str) -> dict[str, tuple[str, str]] | None:
    """The files of `ours` with the changes `theirs` made since their merge base applied, or None when both
    changed a file differently (a conflict, which the sandbox does not resolve)."""
    root = merge_base(repo, ours, theirs) or base
    old = flatten(repo, repo.commits[root].tree)
    mine = flatten(repo, repo.commits[ours].tree)
    new = flatten(repo, repo.commits[theirs].tree)
    out = dict(mine)
    for path in set(old) | set(new):
        if old.get(path) == new.get(path):
            continue
        if old.get(path) != mine.get(path) and mine.get(path) != new.get(path):
            return None
        if path in new:
            out[path] = new[path]
        else:
            out.pop(path, None)
    return out


def diff(repo: Repo, before: str | None, after: str) -> tuple[list[str], list[str], list[str]]:
    """(added, removed, modified) paths between two commits (before None: the empty tree)."""
    old = flatten(repo, repo.commits[before].tree) if before else {}
    new = flatten(repo, repo.commits[after].tree)
    added = sorted(p for p in new if p not in old)
    removed = sorted(p for p in old if p not in new)
    modified = sorted(p for p in new if p in old and new[p] != old[p])
    return added, removed, modified
