"""The GitHub adapter's issues, comments, labels, milestones and issue relations."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from bot.forge import (
    KEEP,
    CloseReason,
    Comment,
    CommentLink,
    Issue,
    IssueKind,
    IssueState,
    Keep,
    Label,
    ListState,
    Milestone,
    NotFound,
    PermissionDenied,
    ReactionContent,
    RepoRef,
    ValidationFailed,
    locked_refusal,
)
from bot.forge.github_transport import GitHubCalls
from bot.forge.links import parse_comment_url, repo_now
from bot.forge.shapes import comment_from_json, issue_from_json, label_from_json, milestone_from_json
from bot.forge.write_once import once


class GitHubIssues(GitHubCalls):
    """Issues and what hangs on them. A pull request is an issue too: GitHub lists pull requests among
    issues, with a ``pull_request`` key (FORGE-FACTS "Milestones")."""

    # --- issues and comments -------------------------------------------------------------------

    async def get_issue(self, repo: RepoRef, number: int) -> Issue:
        raw = await self._get(f"/repos/{repo.full_name}/issues/{number}", f"issue {repo}#{number}")
        return issue_from_json(raw)

    async def list_comments(self, repo: RepoRef, number: int) -> list[Comment]:
        items = await self._iter(
            f"/repos/{repo.full_name}/issues/{number}/comments?per_page=100", f"comments of {repo}#{number}"
        )
        return [comment_from_json(item) for item in items]

    async def list_repo_comments(self, repo: RepoRef, since: datetime) -> list[Comment]:
        stamp = since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        items = await self._iter(
            f"/repos/{repo.full_name}/issues/comments?since={stamp}&per_page=100",
            f"comments of {repo}",
            limit=self._max_items,
        )
        return [comment_from_json(item) for item in items]

    async def create_comment(self, repo: RepoRef, number: int, body: str) -> Comment:
        try:
            raw = await self._write(
                "post",
                f"/repos/{repo.full_name}/issues/{number}/comments",
                f"comment on {repo}#{number}",
                {"body": body},
            )
        except PermissionDenied as exc:
            raise locked_refusal(exc) from None
        return comment_from_json(raw)

    async def edit_comment(self, repo: RepoRef, comment_id: int, body: str) -> Comment:
        try:
            raw = await self._write(
                "patch",
                f"/repos/{repo.full_name}/issues/comments/{comment_id}",
                f"comment {comment_id}",
                {"body": body},
            )
        except PermissionDenied as exc:
            raise locked_refusal(exc) from None
        return comment_from_json(raw)

    async def add_reaction(self, repo: RepoRef, comment_id: int, content: ReactionContent) -> None:
        try:
            await self._write(
                "post",
                f"/repos/{repo.full_name}/issues/comments/{comment_id}/reactions",
                f"reaction on comment {comment_id}",
                {"content": content},
            )
        except PermissionDenied as exc:
            raise locked_refusal(exc) from None

    async def list_issues(
        self,
        repo: RepoRef,
        *,
        milestone: int | None = None,
        labels: Sequence[str] = (),
        state: ListState = "open",
        kind: IssueKind = "issues",
        since: datetime | None = None,
    ) -> list[Issue]:
        query = f"state={state}&per_page=100"
        if since is not None:
            query += "&since=" + since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        if milestone is not None:
            query += f"&milestone={milestone}"
        if labels:
            query += "&labels=" + quote(",".join(labels), safe=",")
        items = await self._iter(
            f"/repos/{repo.full_name}/issues?{query}", f"issues of {repo}", limit=self._max_items
        )
        found = [issue_from_json(item) for item in items]
        if kind == "issues":
            return [i for i in found if not i.is_pull_request]
        if kind == "pulls":
            return [i for i in found if i.is_pull_request]
        return found

    async def _own_open_issue(self, repo: RepoRef, title: str, body: str) -> Issue | None:
        """The bot's newest open issues (one page): one with this very title and body, if any."""
        me = (await self.whoami()).login
        items = await self._get(
            f"/repos/{repo.full_name}/issues?state=open&creator={quote(me, safe='')}"
            "&sort=created&direction=desc&per_page=100",
            f"issues of {repo}",
        )
        for item in items or ():
            found = issue_from_json(item)
            if not found.is_pull_request and found.title == title and found.body == body:
                return found
        return None

    async def create_issue(
        self,
        repo: RepoRef,
        title: str,
        body: str,
        labels: Sequence[str] = (),
        milestone: int | None = None,
    ) -> Issue:
        """Finds before it creates: the bot's own open issue with the same title and body is returned, so a
        job that runs again (or whose POST was applied but not confirmed) makes no second issue."""

        async def create() -> Issue:
            data: dict[str, Any] = {"title": title, "body": body}
            if labels:
                data["labels"] = list(labels)
            if milestone is not None:
                data["milestone"] = milestone
            url = f"/repos/{repo.full_name}/issues"
            return issue_from_json(await self._write("post", url, f"new issue in {repo}", data))

        return await once(lambda: self._own_open_issue(repo, title, body), create)

    async def edit_issue(
        self,
        repo: RepoRef,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        state: IssueState | None = None,
        milestone: int | Keep | None = KEEP,
    ) -> Issue:
        data: dict[str, Any] = {}
        if title is not None:
            data["title"] = title
        if body is not None:
            data["body"] = body
        if state is not None:
            data["state"] = state
        if milestone is not KEEP:
            data["milestone"] = milestone
        raw = await self._write(
            "patch", f"/repos/{repo.full_name}/issues/{number}", f"issue {repo}#{number}", data
        )
        return issue_from_json(raw)

    async def close_issue(
        self, repo: RepoRef, number: int, *, reason: CloseReason = "completed", duplicate_of: int = 0
    ) -> Issue:
        """ "Update an issue" with `state_reason`; with `duplicate`, `duplicate_issue_id` is the canonical
        issue's global id (GitHub links the two itself)."""
        data: dict[str, Any] = {"state": "closed", "state_reason": reason}
        if reason == "duplicate" and duplicate_of:
            data["duplicate_issue_id"] = duplicate_of
        raw = await self._write(
            "patch", f"/repos/{repo.full_name}/issues/{number}", f"issue {repo}#{number}", data
        )
        return issue_from_json(raw)

    async def opened_before(self, repo: RepoRef, login: str, number: int) -> bool:
        """The oldest of the person's issues and pull requests (`creator=`, every state, `sort=created`,
        ascending, one item): an earlier number means they opened something here before."""
        query = f"creator={quote(login, safe='')}&state=all&sort=created&direction=asc&per_page=1"
        oldest = await self._get(f"/repos/{repo.full_name}/issues?{query}", f"issues by {login} in {repo}")
        return any(int(item.get("number") or 0) < number for item in oldest or ())

    async def get_comment(self, repo: RepoRef, comment_id: int) -> Comment:
        raw = await self._get(
            f"/repos/{repo.full_name}/issues/comments/{comment_id}", f"comment {comment_id} in {repo}"
        )
        return comment_from_json(raw)

    async def resolve_comment_url(self, url: str) -> CommentLink:
        address = parse_comment_url(url, self._web_base, "github")
        comment = await self.get_comment(address.repo, address.comment_id)
        if comment.issue_number and comment.issue_number != address.number:
            raise NotFound(f"comment {address.comment_id} is not on {address.repo}#{address.number}")
        # The repository as the forge names it now (a link by a renamed repository's old name is redirected).
        return CommentLink(
            repo_now(address, comment.html_url, self._web_base, "github"), address.number, comment
        )

    # --- milestones (by number) ------------------------------------------------------------------

    async def list_milestones(self, repo: RepoRef, state: ListState = "open") -> list[Milestone]:
        items = await self._iter(
            f"/repos/{repo.full_name}/milestones?state={state}&per_page=100", f"milestones of {repo}"
        )
        return [milestone_from_json(item, key="number") for item in items]

    async def get_milestone(self, repo: RepoRef, key: int) -> Milestone:
        raw = await self._get(f"/repos/{repo.full_name}/milestones/{key}", f"milestone {key} of {repo}")
        return milestone_from_json(raw, key="number")

    async def set_milestone_state(self, repo: RepoRef, key: int, state: IssueState) -> Milestone:
        raw = await self._write(
            "patch",
            f"/repos/{repo.full_name}/milestones/{key}",
            f"milestone {key} of {repo}",
            {"state": state},
        )
        return milestone_from_json(raw, key="number")

    # --- labels ------------------------------------------------------------------------------

    async def list_repo_labels(self, repo: RepoRef) -> list[Label]:
        items = await self._iter(f"/repos/{repo.full_name}/labels?per_page=100", f"labels of {repo}")
        return [label_from_json(item) for item in items]

    async def ensure_label(
        self, repo: RepoRef, name: str, *, color: str = "ededed", description: str = ""
    ) -> Label:
        """The label, created when missing. A label this process already saw is not read again (0 requests
        in the steady state, ``bot.forge.known_labels``)."""
        known = self._known_labels.get(repo.full_name, name)
        if known is not None:
            return known
        url = f"/repos/{repo.full_name}/labels"
        try:
            label = label_from_json(await self._get(f"{url}/{quote(name, safe='')}", f"label {name!r}"))
        except NotFound:
            try:
                raw = await self._write(
                    "post",
                    url,
                    f"create label {name!r}",
                    {"name": name, "color": color.lstrip("#"), "description": description[:100]},
                )
            except ValidationFailed:
                # Created meanwhile by another worker: read the winner's.
                raw = await self._get(f"{url}/{quote(name, safe='')}", f"label {name!r}")
            label = label_from_json(raw)
        self._known_labels.remember(repo.full_name, label)
        return label

    async def set_label_description(self, repo: RepoRef, name: str, description: str) -> Label:
        """The label ``name`` described anew: ``PATCH /repos/{o}/{r}/labels/{name}`` (at most 100 characters;
        Gitea's adapter patches ``…/labels/{id}``); ``NotFound`` when there is no such label."""
        raw = await self._write(
            "patch",
            f"/repos/{repo.full_name}/labels/{quote(name, safe='')}",
            f"label {name!r}",
            {"description": description[:100]},
        )
        label = label_from_json(raw)
        self._known_labels.remember(repo.full_name, label)
        return label

    async def set_labels(self, repo: RepoRef, number: int, names: list[str]) -> tuple[str, ...]:
        raw = await self._write(
            "put",
            f"/repos/{repo.full_name}/issues/{number}/labels",
            f"labels of {repo}#{number}",
            {"labels": names},
        )
        await self._repair_recreated(repo, names, raw)
        return tuple(item["name"] for item in raw)

    async def add_labels(self, repo: RepoRef, number: int, names: list[str]) -> tuple[str, ...]:
        raw = await self._write(
            "post",
            f"/repos/{repo.full_name}/issues/{number}/labels",
            f"labels of {repo}#{number}",
            {"labels": names},
        )
        await self._repair_recreated(repo, names, raw)
        return tuple(item["name"] for item in raw)

    async def _repair_recreated(self, repo: RepoRef, names: list[str], raw: Any) -> None:
        """A label known to exist that GitHub had to create again when it was added (someone deleted it):
        GitHub makes it grey with no description, so give it back the colour and description it had."""
        wanted = {name.casefold() for name in names}
        for item in raw if isinstance(raw, list) else []:
            name = str(item.get("name") or "")
            known = self._known_labels.get(repo.full_name, name) if name.casefold() in wanted else None
            if known is None:
                continue
            now = label_from_json(item)
            if now == known:
                continue
            made_anew = now.color.casefold() == "ededed" and not now.description
            if made_anew and known.color.casefold() != "ededed":
                await self._write(
                    "patch",
                    f"/repos/{repo.full_name}/labels/{quote(name, safe='')}",
                    f"label {name!r}",
                    {"color": known.color.lstrip("#"), "description": known.description[:100]},
                )
            else:
                self._known_labels.remember(repo.full_name, now)  # a person changed it: theirs stands

    async def remove_label(self, repo: RepoRef, number: int, name: str) -> None:
        with contextlib.suppress(NotFound):
            await self._write(
                "delete",
                f"/repos/{repo.full_name}/issues/{number}/labels/{quote(name, safe='')}",
                f"label {name!r} of {repo}#{number}",
            )

    # --- assignees ---------------------------------------------------------------------------------

    async def add_assignees(self, repo: RepoRef, number: int, logins: Sequence[str]) -> tuple[str, ...]:
        """GitHub drops whoever it will not assign without a word (FORGE-FACTS "Assignees")."""
        raw = await self._write(
            "post",
            f"/repos/{repo.full_name}/issues/{number}/assignees",
            f"assignees of {repo}#{number}",
            {"assignees": list(logins)[:10]},
        )
        return issue_from_json(raw).assignees

    async def remove_assignees(self, repo: RepoRef, number: int, logins: Sequence[str]) -> tuple[str, ...]:
        await self._write(
            "delete",
            f"/repos/{repo.full_name}/issues/{number}/assignees",
            f"assignees of {repo}#{number}",
            {"assignees": list(logins)},
        )
        return (await self.get_issue(repo, number)).assignees  # gidgethub's delete returns no body

    async def user_exists(self, login: str) -> bool:
        try:
            await self._get(f"/users/{quote(login, safe='')}", f"user {login}")
        except NotFound:
            return False
        return True

    # --- issue relations ------------------------------------------------------------------------

    async def list_sub_issues(self, repo: RepoRef, number: int) -> list[Issue]:
        try:
            items = await self._iter(
                f"/repos/{repo.full_name}/issues/{number}/sub_issues?per_page=100",
                f"sub-issues of {repo}#{number}",
            )
        except NotFound:
            return []
        return [issue_from_json(item) for item in items]

    async def list_blocked_by(self, repo: RepoRef, number: int) -> list[int]:
        items = await self._iter(
            f"/repos/{repo.full_name}/issues/{number}/dependencies/blocked_by?per_page=100",
            f"dependencies of {repo}#{number}",
        )
        # A blocker may live in another repository; its number is not a "#N" of this one.
        here = f"/repos/{repo.full_name}".casefold()
        return [
            int(item["number"])
            for item in items
            if str(item.get("repository_url") or here).casefold().endswith(here)
        ]

    async def add_blocked_by(self, repo: RepoRef, number: int, blocker: int) -> None:
        blocking = await self.get_issue(repo, blocker)
        await self._write(
            "post",
            f"/repos/{repo.full_name}/issues/{number}/dependencies/blocked_by",
            f"dependency of {repo}#{number} on #{blocker}",
            {"issue_id": blocking.id},
        )
