"""The GitHub adapter's git, pull requests and CI: files, branches, commits through the git data API,
pull requests (drafts where the plan has them), commit statuses and check runs."""

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
from bot.forge.github_transport import GitHubCalls
from bot.forge.shapes import changed_files, commit_from_json, pull_from_json, status_from_json
from bot.forge.write_once import find_committed, once, same_status

# GitHub refuses a status description over 140 characters (FORGE-FACTS: 422 "description is too long").
STATUS_DESCRIPTION_LIMIT = 140
# GitHub's fallback when a repository has no draft pull requests (FORGE-FACTS "Draft PRs").
DRAFT_TITLE_PREFIX = "[WIP] "


class GitHubCode(GitHubCalls):
    """Git and what hangs on commits."""

    async def read_file(self, repo: RepoRef, path: str, ref: str | None = None) -> FileContent | None:
        url = f"/repos/{repo.full_name}/contents/{quote(path.lstrip('/'))}"
        if ref:
            url += f"?ref={quote(ref, safe='')}"
        try:
            raw = await self._get(url, f"file {path} of {repo}")
        except NotFound:
            return None
        if not isinstance(raw, Mapping) or raw.get("type", "file") != "file":
            return None
        content = (
            base64.b64decode(raw.get("content") or "") if raw.get("encoding", "base64") == "base64" else b""
        )
        return FileContent(path=raw.get("path") or path, content=content, sha=raw.get("sha") or "")

    async def list_folder(self, repo: RepoRef, path: str, ref: str | None = None) -> list[str] | None:
        url = f"/repos/{repo.full_name}/contents/{quote(path.strip('/'))}"
        if ref:
            url += f"?ref={quote(ref, safe='')}"
        try:
            raw = await self._get(url, f"folder {path} of {repo}")
        except NotFound:
            return None
        return _files_in(raw)

    async def list_files(self, repo: RepoRef, ref: str) -> list[str] | None:
        try:
            raw = await self._get(
                f"/repos/{repo.full_name}/git/trees/{quote(ref, safe='')}?recursive=1", f"files of {repo}"
            )
        except NotFound:
            return None
        entries = raw.get("tree") if isinstance(raw, Mapping) else None
        paths = [str(e["path"]) for e in entries or () if isinstance(e, Mapping) and e.get("type") == "blob"]
        return paths[:MAX_TREE_FILES]

    # --- branches and commits ----------------------------------------------------------------------

    async def get_branch(self, repo: RepoRef, name: str) -> str | None:
        try:
            raw = await self._get(
                f"/repos/{repo.full_name}/git/ref/heads/{quote(name)}", f"branch {name} of {repo}"
            )
        except NotFound:
            return None
        return str(raw["object"]["sha"])

    async def get_commit(self, repo: RepoRef, sha: str) -> Commit:
        try:
            raw = await self._get(f"/repos/{repo.full_name}/commits/{quote(sha)}", f"commit {sha} of {repo}")
        except ValidationFailed as exc:  # GitHub answers an unknown sha with 422 "No commit found"
            raise NotFound(str(exc), status=exc.status) from None
        return commit_from_json(raw)

    async def commit_files(
        self, repo: RepoRef, *, base: str, branch: str, files: Sequence[FileChange], message: str
    ) -> Commit:
        """Blobs, a tree on the parent's (``base_tree``), a commit, then the ref: created (``POST
        /git/refs``) or fast-forwarded (``PATCH``, ``force: false``; FORGE-FACTS). The git objects are
        addressed by their content and may be sent again; the ref is looked at before it is written again."""
        return await once(
            lambda: find_committed(self, repo, branch, files, message),
            lambda: self._commit(repo, base, branch, files, message),
            # "Reference already exists" or not a fast-forward: another run may have made it
            taken=lambda exc: True,
        )

    async def _commit(
        self, repo: RepoRef, base: str, branch: str, files: Sequence[FileChange], message: str
    ) -> Commit:
        head = await self.get_branch(repo, branch)
        parent = head or await self.get_branch(repo, base) or base
        r = f"/repos/{repo.full_name}"
        parent_commit = await self._get(f"{r}/git/commits/{quote(parent)}", f"commit {parent} of {repo}")
        entries: list[dict[str, Any]] = []
        for change in files:
            entry: dict[str, Any] = {"path": change.path.strip("/"), "mode": "100644", "type": "blob"}
            if change.content is None:
                entry["sha"] = None
            else:
                blob = await self._write(
                    "post",
                    f"{r}/git/blobs",
                    f"blob of {change.path} in {repo}",
                    {"content": base64.b64encode(change.content).decode(), "encoding": "base64"},
                )
                entry["sha"] = blob["sha"]
            entries.append(entry)
        tree = await self._write(
            "post",
            f"{r}/git/trees",
            f"tree for {branch} in {repo}",
            {"base_tree": parent_commit["tree"]["sha"], "tree": entries},
        )
        made = await self._write(
            "post",
            f"{r}/git/commits",
            f"commit on {branch} in {repo}",
            {"message": message, "tree": tree["sha"], "parents": [parent_commit["sha"]]},
        )
        sha = str(made["sha"])
        if head is None:
            ref: dict[str, Any] = {"ref": f"refs/heads/{branch}", "sha": sha}
            await self._write("post", f"{r}/git/refs", f"branch {branch} of {repo}", ref)
        else:
            ref = {"sha": sha, "force": False}
            await self._write(
                "patch", f"{r}/git/refs/heads/{quote(branch)}", f"branch {branch} of {repo}", ref
            )
        return await self.get_commit(repo, sha)

    # --- pull requests -------------------------------------------------------------------------------

    async def get_pull_request(self, repo: RepoRef, number: int) -> PullRequest:
        raw = await self._get(f"/repos/{repo.full_name}/pulls/{number}", f"pull request {repo}#{number}")
        return pull_from_json(raw, milestone_key="number")

    async def find_pull_request(
        self, repo: RepoRef, head: str, *, state: ListState = "open"
    ) -> PullRequest | None:
        head_filter = quote(f"{repo.owner}:{head}", safe=":")
        # Newest first (GitHub's default: sort=created, direction=desc).
        items = await self._get(
            f"/repos/{repo.full_name}/pulls?state={state}&head={head_filter}&per_page=100",
            f"pull requests of {repo}",
        )
        found = [pull_from_json(item, milestone_key="number") for item in items or ()]
        # The `head` filter names the owner, not the repository: a deleted fork (`head.repo` null) is never
        # this repository's branch.
        return next((pr for pr in found if pr.head_ref == head and not pr.from_fork), None)

    async def open_pull_request(
        self, repo: RepoRef, *, head: str, base: str, title: str, body: str, draft: bool = False
    ) -> PullRequest:
        """Finds the open pull request of `head` first. GitHub's 422 "A pull request already exists" is
        answered by finding it; its 422 "Draft pull requests are not supported in this repository" by one
        more try as a ready pull request titled ``[WIP] …`` (FORGE-FACTS "Draft PRs")."""
        data: dict[str, Any] = {"title": title, "head": head, "base": base, "body": body, "draft": draft}

        async def create() -> PullRequest:
            try:
                return await self._create_pull(repo, data)
            except ValidationFailed as exc:
                if not draft or "draft" not in str(exc).casefold():
                    raise
            wip = title if title.startswith(DRAFT_TITLE_PREFIX.strip()) else DRAFT_TITLE_PREFIX + title
            return await self._create_pull(repo, {**data, "title": wip, "draft": False})

        return await once(
            lambda: self.find_pull_request(repo, head),
            create,
            taken=lambda exc: "already exists" in str(exc),
        )

    async def _create_pull(self, repo: RepoRef, data: Mapping[str, Any]) -> PullRequest:
        raw = await self._write(
            "post", f"/repos/{repo.full_name}/pulls", f"pull request of {data['head']}", data
        )
        return pull_from_json(raw, milestone_key="number")

    async def list_pr_commits(self, repo: RepoRef, number: int) -> list[Commit]:
        items = await self._iter(
            f"/repos/{repo.full_name}/pulls/{number}/commits?per_page=100", f"commits of {repo}#{number}"
        )
        return [commit_from_json(item) for item in items]

    async def list_pr_files(self, repo: RepoRef, number: int) -> list[ChangedFile]:
        items = await self._iter(
            f"/repos/{repo.full_name}/pulls/{number}/files?per_page=100", f"files of {repo}#{number}"
        )
        return list(changed_files(items))

    async def request_reviewers(self, repo: RepoRef, number: int, logins: Sequence[str]) -> tuple[str, ...]:
        """``POST /repos/{o}/{r}/pulls/{n}/requested_reviewers`` (REST "Request reviewers for a pull
        request": 201 with the pull request; 422 for the author or someone who is not a collaborator). Those
        already requested are left out: a second request would notify them again."""
        pull = await self.get_pull_request(repo, number)
        have = {login.casefold() for login in pull.requested_reviewers}
        wanted = [login for login in dict.fromkeys(logins) if login.casefold() not in have]
        if not wanted:
            return pull.requested_reviewers
        url = f"/repos/{repo.full_name}/pulls/{number}/requested_reviewers"
        raw = await self._write("post", url, f"review request on {repo}#{number}", {"reviewers": wanted})
        return pull_from_json(raw, milestone_key="number").requested_reviewers

    # --- CI ------------------------------------------------------------------------------------------

    async def _statuses(self, repo: RepoRef, sha: str) -> list[CommitStatus]:
        try:
            items = await self._iter(
                f"/repos/{repo.full_name}/commits/{quote(sha)}/statuses?per_page=100", f"statuses of {sha}"
            )
        except ValidationFailed as exc:  # 422 "No commit found for SHA": as Gitea's 404, not found
            raise NotFound(str(exc), status=exc.status) from None
        return [status_from_json(item) for item in items]

    async def commit_statuses(self, repo: RepoRef, sha: str) -> list[CommitStatus]:
        return await self._statuses(repo, sha)

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
            url = f"/repos/{repo.full_name}/statuses/{sha}"
            return status_from_json(await self._write("post", url, f"status {context} of {sha}", data))

        return await once(find, write)

    async def set_check_run(
        self,
        repo: RepoRef,
        sha: str,
        name: str,
        state: StatusState,
        description: str = "",
        target_url: str = "",
    ) -> CheckRun:
        """POST /repos/{o}/{r}/check-runs (docs.github.com REST "Create a check run"): GitHub Apps only — any
        other token gets 403 "You must authenticate via a GitHub App." (FORGE-FACTS), so a token is not
        asked."""
        if not self.as_app:
            raise NotSupported("check runs are posted by a GitHub App only; Steward runs with a token")
        title = description[:STATUS_DESCRIPTION_LIMIT] or name
        status, conclusion = ("in_progress", None) if state == "pending" else ("completed", CONCLUSION[state])
        own_app = (await self.whoami()).login.removesuffix("[bot]")

        async def find() -> CheckRun | None:
            runs = await self._iter(
                f"/repos/{repo.full_name}/commits/{quote(sha)}/check-runs?per_page=100&filter=all"
                f"&check_name={quote(name, safe='')}",
                f"check runs {name} of {sha}",
                iterable_key="check_runs",
            )
            named = [check_from_json(r) for r in runs if r.get("name") == name]
            latest = max(named, key=lambda r: r.id, default=None)
            if latest is None:
                return None
            # Without a details URL of Steward's, GitHub shows its own there (the App's page): not compared.
            said = (latest.app, latest.status, latest.conclusion, latest.title)
            same = said == (own_app, status, conclusion, title)
            return latest if same and (not target_url or latest.details_url == target_url) else None

        async def write() -> CheckRun:
            data: dict[str, Any] = {
                "name": name,
                "head_sha": sha,
                "status": status,
                "output": {"title": title, "summary": description or title},
            }
            if conclusion is not None:
                data["conclusion"] = conclusion
            if target_url:
                data["details_url"] = target_url
            url = f"/repos/{repo.full_name}/check-runs"
            return check_from_json(await self._write("post", url, f"check run {name} of {sha}", data))

        return await once(find, write)

    async def ci_state(self, repo: RepoRef, sha: str, required_contexts: Sequence[str] = ()) -> CIState:
        """Commit statuses and check runs both (GitHub Actions reports as check runs: FORGE-FACTS)."""
        statuses = await self._statuses(repo, sha)
        runs = await self._iter(
            f"/repos/{repo.full_name}/commits/{quote(sha)}/check-runs?per_page=100&filter=latest",
            f"check runs of {sha}",
            iterable_key="check_runs",
        )
        return judge_ci(sha, statuses, [check_from_json(run) for run in runs], required_contexts)


# The conclusion of Steward's own check run for each state it sets (an error fails closed).
CONCLUSION: Mapping[str, str] = {"success": "success", "failure": "failure", "error": "failure"}


def check_from_json(run: Mapping[str, Any]) -> CheckRun:
    output = run.get("output") if isinstance(run.get("output"), Mapping) else {}
    return CheckRun(
        name=str(run["name"]),
        status=str(run.get("status") or ""),
        conclusion=run.get("conclusion"),
        id=int(run.get("id") or 0),
        app=str((run.get("app") or {}).get("slug") or ""),
        completed_at=run.get("completed_at"),
        title=str((output or {}).get("title") or ""),
        details_url=str(run.get("details_url") or ""),
    )


def _files_in(raw: object) -> list[str] | None:
    """The file paths of a contents listing (an array); None for a file's answer (an object)."""
    if not isinstance(raw, list):
        return None
    return [
        str(entry["path"])
        for entry in raw
        if isinstance(entry, Mapping) and entry.get("type") == "file" and isinstance(entry.get("path"), str)
    ]
