"""GitHub's JSON for git objects, contents, commits and commit statuses (``Shapes`` inherits these)."""

from __future__ import annotations

import base64
from typing import Any

from bot.sandbox.shared import gitmodel
from bot.sandbox.shared.state import CommitStatus, GitCommit, Repo, SandboxState, Signature

from .ids import node_id


class GitShapes:
    """Part of ``github.shapes.Shapes``: what it needs of the rest is declared here."""

    forge: SandboxState
    base: str

    def user(self, login: str) -> dict[str, Any]:
        raise NotImplementedError

    def account_of(self, email: str) -> dict[str, Any] | None:
        raise NotImplementedError

    # git ----------------------------------------------------------------------------------------------

    def signature(self, sig: Signature) -> dict[str, Any]:
        return {"name": sig.name, "email": sig.email, "date": sig.date}

    def git_commit(self, repo: Repo, commit: GitCommit) -> dict[str, Any]:
        api = f"{self.base}/repos/{repo.full_name}"
        return {
            "sha": commit.sha,
            "node_id": node_id("Commit", commit.sha),
            "url": f"{api}/git/commits/{commit.sha}",
            "html_url": f"{self.base}/{repo.full_name}/commit/{commit.sha}",
            "author": self.signature(commit.author),
            "committer": self.signature(commit.committer),
            "message": commit.message,
            "tree": {"sha": commit.tree, "url": f"{api}/git/trees/{commit.tree}"},
            "parents": [
                {
                    "sha": p,
                    "url": f"{api}/git/commits/{p}",
                    "html_url": f"{self.base}/{repo.full_name}/commit/{p}",
                }
                for p in commit.parents
            ],
            "verification": {
                "verified": False,
                "reason": "unsigned",
                "signature": None,
                "payload": None,
                "verified_at": None,
            },
        }

    def commit(self, repo: Repo, commit: GitCommit) -> dict[str, Any]:
        """The `commit` shape of GET /repos/{o}/{r}/commits/{ref}."""
        api = f"{self.base}/repos/{repo.full_name}"
        git = self.git_commit(repo, commit)
        return {
            "url": f"{api}/commits/{commit.sha}",
            "sha": commit.sha,
            "node_id": git["node_id"],
            "html_url": git["html_url"],
            "comments_url": f"{api}/commits/{commit.sha}/comments",
            "commit": {
                "url": git["url"],
                "author": git["author"],
                "committer": git["committer"],
                "message": commit.message,
                "comment_count": 0,
                "tree": git["tree"],
                "verification": git["verification"],
            },
            "author": self.account_of(commit.author.email),
            "committer": self.account_of(commit.committer.email),
            "parents": git["parents"],
            "files": self.diff_entries(repo, commit.parents[0] if commit.parents else None, commit.sha),
        }

    def diff_entries(self, repo: Repo, before: str | None, after: str) -> list[dict[str, Any]]:
        """GitHub's `diff-entry` list between two commits (before None: the empty tree)."""
        added, removed, modified = gitmodel.diff(repo, before, after)
        old = gitmodel.flatten(repo, repo.commits[before].tree) if before else {}
        new = gitmodel.flatten(repo, repo.commits[after].tree)
        entries = []
        for path, status in sorted(
            [(p, "added") for p in added]
            + [(p, "removed") for p in removed]
            + [(p, "modified") for p in modified]
        ):
            ref = before if status == "removed" and before else after
            lines_old = len(gitmodel.blob_bytes(repo, old[path][1]).splitlines()) if path in old else 0
            lines_new = len(gitmodel.blob_bytes(repo, new[path][1]).splitlines()) if path in new else 0
            entries.append(
                {
                    "sha": (new.get(path) or old[path])[1],
                    "filename": path,
                    "status": status,
                    "additions": lines_new,
                    "deletions": lines_old,
                    "changes": lines_new + lines_old,
                    "blob_url": f"{self.base}/{repo.full_name}/blob/{ref}/{path}",
                    "raw_url": f"{self.base}/{repo.full_name}/raw/{ref}/{path}",
                    "contents_url": f"{self.base}/repos/{repo.full_name}/contents/{path}?ref={ref}",
                }
            )
        return entries

    def tree(self, repo: Repo, sha: str) -> dict[str, Any]:
        api = f"{self.base}/repos/{repo.full_name}/git"
        entries = []
        for e in repo.trees[sha].entries:
            entry: dict[str, Any] = {"path": e.name, "mode": e.mode, "type": e.type, "sha": e.sha}
            if e.type == "blob":
                entry["size"] = len(gitmodel.blob_bytes(repo, e.sha))
                entry["url"] = f"{api}/blobs/{e.sha}"
            else:
                entry["url"] = f"{api}/trees/{e.sha}"
            entries.append(entry)
        return {"sha": sha, "url": f"{api}/trees/{sha}", "tree": entries, "truncated": False}

    def content(self, repo: Repo, path: str, sha: str, ref: str, with_body: bool = True) -> dict[str, Any]:
        api = f"{self.base}/repos/{repo.full_name}"
        raw = gitmodel.blob_bytes(repo, sha)
        self_url = f"{api}/contents/{path}?ref={ref}"
        html = f"{self.base}/{repo.full_name}/blob/{ref}/{path}"
        git_url = f"{api}/git/blobs/{sha}"
        data: dict[str, Any] = {
            "type": "file",
            "size": len(raw),
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "sha": sha,
            "url": self_url,
            "git_url": git_url,
            "html_url": html,
            "download_url": f"{self.base}/{repo.full_name}/raw/{ref}/{path}",
            "_links": {"self": self_url, "git": git_url, "html": html},
        }
        if with_body:
            encoded = base64.b64encode(raw).decode()
            data["encoding"] = "base64"
            data["content"] = "\n".join(encoded[i : i + 60] for i in range(0, len(encoded), 60)) + "\n"
        return data

    def status(self, repo: Repo, status: CommitStatus) -> dict[str, Any]:
        return {
            "url": f"{self.base}/repos/{repo.full_name}/statuses/{status.sha}",
            "avatar_url": f"{self.base}/avatars/{status.creator}",
            "id": status.id,
            "node_id": node_id("StatusContext", status.id),
            "state": status.state,
            "description": status.description,
            "target_url": status.target_url,
            "context": status.context,
            "created_at": status.created_at,
            "updated_at": status.updated_at,
            "creator": self.user(status.creator),
        }

    def push_commit(self, repo: Repo, commit: GitCommit) -> dict[str, Any]:
        added, removed, modified = gitmodel.changed_paths(repo, commit)
        return {
            "id": commit.sha,
            "tree_id": commit.tree,
            "distinct": True,
            "message": commit.message,
            "timestamp": commit.committer.date,
            "url": f"{self.base}/{repo.full_name}/commit/{commit.sha}",
            "author": {"name": commit.author.name, "email": commit.author.email},
            "committer": {"name": commit.committer.name, "email": commit.committer.email},
            "added": added,
            "removed": removed,
            "modified": modified,
        }
