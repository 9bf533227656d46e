"""The Gitea adapter's git, pull requests and CI: files, branches, commits through the contents API
(Gitea has no git data write API), pull requests (a draft is a ``WIP:`` title) and commit statuses."""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from bot.forge import (
    MAX_TREE_FILES,
    ChangedFile,
    CheckRun,
    CIState,
    Commit,
    CommitStatus,
    FileChange,
    FileContent,
    ForgeError,
    ListState,
    NotFound,
    NotSupported,
    PullRequest,
    RepoRef,
    StatusState,
    ValidationFailed,
)
from bot.forge.ci import ci_state as judge_ci
from bot.forge.ci import latest_statuses
from bot.forge.gitea_transport import GiteaCalls, seg
from bot.forge.shapes import changed_files, commit_from_json, pull_from_json, status_from_json
from bot.forge.write_once import find_committed, once, same_status

STATUS_DESCRIPTION_LIMIT = 140
# Gitea's `[repository.pull-request] WORK_IN_PROGRESS_PREFIXES` default "WIP:,[WIP]", matched without
# regard to case (models/issues/pull.go HasWorkInProgressPrefix); its API has no draft field.
WIP_PREFIXES = ("WIP:", "[WIP]")
DRAFT_TITLE_PREFIX = "WIP: "


def has_wip_prefix(title: str) -> bool:
    return any(title.upper().startswith(prefix.upper()) for prefix in WIP_PREFIXES)


class GiteaCode(GiteaCalls):
    async def read_file(self, repo: RepoRef, path: str, ref: str | None = None) -> FileContent | None:
        url = f"{self._r(repo)}/contents/{quote(path.lstrip('/'))}"
        try:
            raw = await self._get(url, f"file {path} of {repo}", {"ref": ref} if ref else None)
        except NotFound:
            return None
        if not isinstance(raw, Mapping) or raw.get("type", "file") != "file":
            return None
        content = (
            base64.b64decode(raw.get("content") or "") if raw.get("encoding", "base64") == "base64" else b""
        )
        return FileContent(path=raw.get("path") or path, content=content, sha=raw.get("sha") or "")

    async def list_folder(self, repo: RepoRef, path: str, ref: str | None = None) -> list[str] | None:
        url = f"{self._r(repo)}/contents/{quote(path.strip('/'))}"
        try:
            raw = await self._get(url, f"folder {path} of {repo}", {"ref": ref} if ref else None)
        except NotFound:
            return None
        return _files_in(raw)

    async def list_files(self, repo: RepoRef, ref: str) -> list[str] | None:
        paths: list[str] = []
        page = 1
        while len(paths) < MAX_TREE_FILES:
            try:
                raw = await self._get(
                    f"{self._r(repo)}/git/trees/{seg(ref)}",
                    f"files of {repo}",
                    {"recursive": "true", "page": page, "per_page": 1000},
                )
            except ForgeError as exc:
                # An unknown sha is a 400 on Gitea (routers/api/v1/repo/tree.go GetTree: any error of
                # GetTreeBySHA answers StatusBadRequest), not a 404.
                if exc.status in (400, 404):
                    return None
                raise
            entries = raw.get("tree") if isinstance(raw, Mapping) else None
            paths += [
                str(e["path"]) for e in entries or () if isinstance(e, Mapping) and e.get("type") == "blob"
            ]
            if not (isinstance(raw, Mapping) and raw.get("truncated")) or not entries:
                break
            page += 1
        return paths[:MAX_TREE_FILES]

    # --- branches and commits ------------------------------------------------------------------------

    async def get_branch(self, repo: RepoRef, name: str) -> str | None:
        try:
            raw = await self._get(f"{self._r(repo)}/branches/{seg(name)}", f"branch {name} of {repo}")
        except NotFound:
            return None
        return str(raw["commit"]["id"])

    async def get_commit(self, repo: RepoRef, sha: str) -> Commit:
        try:
            raw = await self._get(
                f"{self._r(repo)}/git/commits/{seg(sha)}",
                f"commit {sha} of {repo}",
                {"stat": "false", "verification": "false", "files": "true"},
            )
        except ValidationFailed as exc:  # Gitea answers a malformed sha with 422
            raise NotFound(str(exc), status=exc.status) from None
        return commit_from_json(raw)

    async def commit_files(
        self, repo: RepoRef, *, base: str, branch: str, files: Sequence[FileChange], message: str
    ) -> Commit:
        """One ``POST /repos/{owner}/{repo}/contents`` (ChangeFilesOptions): ``files`` with create, update or
        delete (the blob ``sha`` each replaces), on ``branch``, or on ``new_branch`` made from the branch
        ``base`` (FORGE-FACTS: Gitea has no git data write API). A commit is never sent twice: the branch is
        looked at first, and again when the forge failed to answer."""
        return await once(
            lambda: find_committed(self, repo, branch, files, message),
            lambda: self._commit(repo, base, branch, files, message),
            # 422 "branch already exists": another run may have made it
            taken=lambda exc: True,
        )

    async def _commit(
        self, repo: RepoRef, base: str, branch: str, files: Sequence[FileChange], message: str
    ) -> Commit:
        head = await self.get_branch(repo, branch)
        start = head or await self.get_branch(repo, base)
        if start is None:
            raise NotFound(f"branch {base} of {repo} (Gitea makes a new branch from a branch)")
        operations: list[dict[str, Any]] = []
        for change in files:
            path = change.path.strip("/")
            current = await self.read_file(repo, path, ref=start)
            if change.content is None:
                if current is not None:
                    operations.append({"operation": "delete", "path": path, "sha": current.sha})
                continue
            content = base64.b64encode(change.content).decode()
            if current is None:
                operations.append({"operation": "create", "path": path, "content": content})
            elif current.content != change.content:
                operations.append(
                    {"operation": "update", "path": path, "content": content, "sha": current.sha}
                )
        if not operations:
            raise ValidationFailed(
                f"the files change nothing on {base} of {repo}: there is nothing to commit"
            )
        data: dict[str, Any] = {"message": message, "files": operations, "branch": branch if head else base}
        if head is None:
            data["new_branch"] = branch
        raw = await self._post(f"{self._r(repo)}/contents", f"commit on {branch} of {repo}", data)
        return await self.get_commit(repo, str(raw["commit"]["sha"]))

    # --- pull requests -------------------------------------------------------------------------------

    async def get_pull_request(self, repo: RepoRef, number: int) -> PullRequest:
        raw = await self._get(f"{self._r(repo)}/pulls/{number}", f"pull request {repo}#{number}")
        return pull_from_json(raw, milestone_key="id")

    async def find_pull_request(
        self, repo: RepoRef, head: str, *, state: ListState = "open"
    ) -> PullRequest | None:
        """Gitea lists pull requests without a head filter: those in ``state`` are read (newest first, its
        default order) and matched by branch name and head repository — a fork's branch of the same name,
        or a deleted fork's (``head.repo`` null, ``repo_id`` -1), is not this repository's."""
        items = await self._pages(
            f"{self._r(repo)}/pulls", f"pull requests of {repo}", {"state": state}, limit=self._max_items
        )
        for item in items:
            if (item.get("head") or {}).get("ref") != head:
                continue
            pull = pull_from_json(item, milestone_key="id")
            if not pull.from_fork:
                return pull
        return None

    async def open_pull_request(
        self, repo: RepoRef, *, head: str, base: str, title: str, body: str, draft: bool = False
    ) -> PullRequest:
        """Finds the open pull request of `head` first; a draft is a ``WIP:`` title (FORGE-FACTS). Gitea's 409
        "pull request already exists for these targets" is answered by finding it."""
        if draft and not has_wip_prefix(title):
            title = DRAFT_TITLE_PREFIX + title
        data = {"head": head, "base": base, "title": title, "body": body}

        async def create() -> PullRequest:
            raw = await self._post(f"{self._r(repo)}/pulls", f"pull request of {head}", data)
            return pull_from_json(raw, milestone_key="id")

        return await once(
            lambda: self.find_pull_request(repo, head),
            create,
            taken=lambda exc: exc.status == 409 or "already exists" in str(exc),
        )

    async def list_pr_commits(self, repo: RepoRef, number: int) -> list[Commit]:
        items = await self._pages(
            f"{self._r(repo)}/pulls/{number}/commits",
            f"commits of {repo}#{number}",
            {"files": "false", "verification": "false"},
        )
        return [commit_from_json(item) for item in items]

    async def list_pr_files(self, repo: RepoRef, number: int) -> list[ChangedFile]:
        items = await self._pages(f"{self._r(repo)}/pulls/{number}/files", f"files of {repo}#{number}")
        return list(changed_files(items))

    async def request_reviewers(self, repo: RepoRef, number: int, logins: Sequence[str]) -> tuple[str, ...]:
        """``POST /api/v1/repos/{o}/{r}/pulls/{index}/requested_reviewers`` (routers/api/v1/repo/
        pull_review.go CreateReviewRequests: 201 with the ``PullReview`` requests; 404 "User 'x' not exist",
        422 for the poster or someone who cannot read pull requests, services/issue/assignee.go
        isValidReviewRequest). Those already requested are left out; the pull request is read again after."""
        pull = await self.get_pull_request(repo, number)
        have = {login.casefold() for login in pull.requested_reviewers}
        wanted = [login for login in dict.fromkeys(logins) if login.casefold() not in have]
        if not wanted:
            return pull.requested_reviewers
        url = f"{self._r(repo)}/pulls/{number}/requested_reviewers"
        await self._post(url, f"review request on {repo}#{number}", {"reviewers": wanted})
        return (await self.get_pull_request(repo, number)).requested_reviewers

    # --- CI ------------------------------------------------------------------------------------------

    async def _statuses(self, repo: RepoRef, sha: str) -> list[CommitStatus]:
        items = await self._pages(f"{self._r(repo)}/commits/{seg(sha)}/statuses", f"statuses of {sha}")
        return [status_from_json(item) for item in items]

    async def commit_statuses(self, repo: RepoRef, sha: str) -> list[CommitStatus]:
        return await self._statuses(repo, sha)

    async def set_check_run(
        self,
        repo: RepoRef,
        sha: str,
        name: str,
        state: StatusState,
        description: str = "",
        target_url: str = "",
    ) -> CheckRun:
        """Gitea has commit statuses only: no check runs (its API, swagger v1, has no check-runs route)."""
        raise NotSupported("Gitea has no check runs: Steward's results are commit statuses there")

    async def set_commit_status(
        self,
        repo: RepoRef,
        sha: str,
        context: str,
        state: StatusState,
        description: str = "",
        target_url: str = "",
    ) -> CommitStatus:
        description = description[:STATUS_DESCRIPTION_LIMIT]

        async def find() -> CommitStatus | None:
            latest = latest_statuses(await self._statuses(repo, sha)).get(context)
            return latest if same_status(latest, state, description, target_url) else None

        async def write() -> CommitStatus:
            data: dict[str, Any] = {"state": state, "context": context, "description": description}
            if target_url:
                data["target_url"] = target_url
            url = f"{self._r(repo)}/statuses/{seg(sha)}"
            return status_from_json(await self._post(url, f"status {context} of {sha}", data))

        return await once(find, write)

    async def ci_state(self, repo: RepoRef, sha: str, required_contexts: Sequence[str] = ()) -> CIState:
        """Gitea reports CI (Gitea Actions included) as commit statuses only; it has no check runs."""
        return judge_ci(sha, await self._statuses(repo, sha), (), required_contexts)


def _files_in(raw: object) -> list[str] | None:
    """The file paths of a contents listing (an array); None for a file's answer (an object)."""
    if not isinstance(raw, list):
        return None
    return [
        str(entry["path"])
        for entry in raw
        if isinstance(entry, Mapping) and entry.get("type") == "file" and isinstance(entry.get("path"), str)
    ]
