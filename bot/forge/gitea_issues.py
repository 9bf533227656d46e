"""The Gitea adapter's issues, comments, labels, milestones and issue relations.

- Issues: ``Issue.request`` fetches the whole repository again for every issue (its ``repository``
  field parser), so issues are read with the raw ``requests_get`` helper and translated here.
- Comments: ``Issue.get_comments`` lists *every* comment of the repository and filters by URL; comments
  are read, created and edited with the raw helpers on ``/issues/{n}/comments`` and
  ``/issues/comments/{id}``. Reactions and dependencies have no object model at all.
- Labels: ``Issue.set_labels`` needs Label objects and drops the response; labels are changed by id with
  the raw helpers, and a name → id map is cached per repository (refreshed when a name is unknown or an
  id turns out stale). ``requests_put`` returns nothing, so the response of a PUT is read from the
  session's last response on that thread.
- Milestones are named by ``id`` (``Milestone.key``); Gitea records no one who closed them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from bot.forge import (
    KEEP,
    BodyVersion,
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
    TooManyItems,
    ValidationFailed,
    locked_refusal,
)
from bot.forge.gitea_transport import PAGE_LIMIT, GiteaCalls
from bot.forge.known_labels import KnownLabels
from bot.forge.links import parse_comment_url, repo_now
from bot.forge.shapes import comment_from_json, issue_from_json, label_from_json, milestone_from_json
from bot.forge.write_once import once


class GiteaIssues(GiteaCalls):
    def __init__(self, base_url: str, token: str, **kwargs: Any) -> None:
        super().__init__(base_url, token, **kwargs)
        self._label_ids: dict[str, dict[str, int]] = {}
        self._label_lock = asyncio.Lock()
        # Labels ensured, as they were: 0 requests for an ensured label in the steady state, and a deleted
        # one is recreated as it was (``bot.forge.known_labels``).
        self._known_labels = KnownLabels()

    # --- issues and comments ---------------------------------------------------------------------

    async def get_issue(self, repo: RepoRef, number: int) -> Issue:
        raw = await self._get(f"{self._r(repo)}/issues/{number}", f"issue {repo}#{number}")
        return issue_from_json(raw, milestone_key="id")

    async def list_comments(self, repo: RepoRef, number: int) -> list[Comment]:
        # Gitea answers this list whole (it takes no page/limit).
        raw = await self._get(f"{self._r(repo)}/issues/{number}/comments", f"comments of {repo}#{number}")
        return [comment_from_json(item) for item in raw or []]

    async def list_repo_comments(self, repo: RepoRef, since: datetime) -> list[Comment]:
        stamp = since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        items = await self._pages(
            f"{self._r(repo)}/issues/comments", f"comments of {repo}", {"since": stamp}, limit=self._max_items
        )
        return [comment_from_json(item) for item in items]

    async def create_comment(self, repo: RepoRef, number: int, body: str) -> Comment:
        try:
            raw = await self._post(
                f"{self._r(repo)}/issues/{number}/comments", f"comment on {repo}#{number}", {"body": body}
            )
        except PermissionDenied as exc:
            raise locked_refusal(exc) from None
        return comment_from_json(raw)

    async def edit_comment(self, repo: RepoRef, comment_id: int, body: str) -> Comment:
        raw = await self._patch(
            f"{self._r(repo)}/issues/comments/{comment_id}", f"comment {comment_id}", {"body": body}
        )
        return comment_from_json(raw)

    async def add_reaction(self, repo: RepoRef, comment_id: int, content: ReactionContent) -> None:
        await self._post(
            f"{self._r(repo)}/issues/comments/{comment_id}/reactions",
            f"reaction on comment {comment_id}",
            {"content": content},
        )

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
        """``since``: updated at or after it.
        ``type`` issues|pulls, ``milestones`` (names or ids: the id is given and checked again here, a
        milestone titled like another's id would match too) and ``labels`` (Gitea: any of them; the port:
        all of them, so they are checked here too)."""
        params: dict[str, Any] = {"state": state}
        if kind != "all":
            params["type"] = kind
        if milestone is not None:
            params["milestones"] = str(milestone)
        if labels:
            params["labels"] = ",".join(labels)
        if since is not None:
            params["since"] = since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        items = await self._pages(
            f"{self._r(repo)}/issues", f"issues of {repo}", params, limit=self._max_items
        )
        found = [issue_from_json(item, milestone_key="id") for item in items]
        wanted = {name.casefold() for name in labels}
        return [
            issue
            for issue in found
            if (milestone is None or issue.milestone == milestone)
            and wanted <= {name.casefold() for name in issue.labels}
        ]

    async def _own_open_issue(self, repo: RepoRef, title: str, body: str) -> Issue | None:
        me = (await self.whoami()).login
        items = await self._get(
            f"{self._r(repo)}/issues",
            f"issues of {repo}",
            {"state": "open", "type": "issues", "created_by": me, "limit": 50},
        )
        for item in items or ():
            found = issue_from_json(item, milestone_key="id")
            if found.title == title and found.body == body:
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
        """Finds before it creates: the bot's own open issue with the same title and body is returned."""

        async def create() -> Issue:
            data: dict[str, Any] = {"title": title, "body": body}
            if labels:
                data["labels"] = await self._label_ids_for(repo, list(labels))
            if milestone is not None:
                data["milestone"] = milestone
            raw = await self._post(f"{self._r(repo)}/issues", f"new issue in {repo}", data)
            return issue_from_json(raw, milestone_key="id")

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
        """Gitea takes the milestone's id, and 0 for none (EditIssueOption)."""
        data: dict[str, Any] = {}
        if title is not None:
            data["title"] = title
        if body is not None:
            data["body"] = body
        if state is not None:
            data["state"] = state
        if milestone is not KEEP:
            data["milestone"] = milestone or 0
        raw = await self._patch(f"{self._r(repo)}/issues/{number}", f"issue {repo}#{number}", data)
        return issue_from_json(raw, milestone_key="id")

    async def close_issue(
        self, repo: RepoRef, number: int, *, reason: CloseReason = "completed", duplicate_of: int = 0
    ) -> Issue:
        """Gitea keeps no reason (EditIssueOption has `state` only): it only closes; a duplicate's label and
        comment are the caller's."""
        return await self.edit_issue(repo, number, state="closed")

    async def opened_before(self, repo: RepoRef, login: str, number: int) -> bool:
        """The person's issues and pull requests (`created_by=`, every state; Gitea lists them newest
        first, routers/api/v1/repo/issue.go ListIssues SortByCreatedDesc): one numbered below ``number``, or
        more than a page of them."""
        try:
            items = await self._pages(
                f"{self._r(repo)}/issues",
                f"issues by {login} in {repo}",
                {"created_by": login, "state": "all"},
                limit=PAGE_LIMIT,
            )
        except TooManyItems:
            return True
        except NotFound:  # the login names nobody now (a deleted account): no newcomer to welcome
            return True
        return any(int(item.get("number") or 0) < number for item in items)

    async def body_versions(self, repo: RepoRef, number: int) -> list[BodyVersion] | None:
        """None: Gitea's API has no edit history. Gitea keeps one (the issue page's "edited" menu), but its
        routes — ``/{owner}/{repo}/issues/{index}/content-history/overview``, ``/list``, ``/detail`` — are
        the web UI's (routers/web/web.go), for that page; the API (routers/api/v1/api.go)
        has none (go-gitea/gitea#6454 asks for one)."""
        return None

    async def get_comment(self, repo: RepoRef, comment_id: int) -> Comment:
        raw = await self._get(
            f"{self._r(repo)}/issues/comments/{comment_id}", f"comment {comment_id} in {repo}"
        )
        return comment_from_json(raw)

    async def resolve_comment_url(self, url: str) -> CommentLink:
        address = parse_comment_url(url, self._web_base, "gitea")
        comment = await self.get_comment(address.repo, address.comment_id)
        if comment.issue_number and comment.issue_number != address.number:
            raise NotFound(f"comment {address.comment_id} is not on {address.repo}#{address.number}")
        # The repository as the forge names it now (a link by a renamed repository's old name is redirected).
        return CommentLink(
            repo_now(address, comment.html_url, self._web_base, "gitea"), address.number, comment
        )

    # --- milestones (by id) -------------------------------------------------------------------------

    def _milestone(self, repo: RepoRef, raw: Any) -> Milestone:
        page = f"{self._web_base}/{repo.full_name}/milestone/{raw['id']}"
        return milestone_from_json(raw, key="id", html_url=page)

    async def list_milestones(self, repo: RepoRef, state: ListState = "open") -> list[Milestone]:
        items = await self._pages(f"{self._r(repo)}/milestones", f"milestones of {repo}", {"state": state})
        return [self._milestone(repo, item) for item in items]

    async def get_milestone(self, repo: RepoRef, key: int) -> Milestone:
        raw = await self._get(f"{self._r(repo)}/milestones/{key}", f"milestone {key} of {repo}")
        return self._milestone(repo, raw)

    async def set_milestone_state(self, repo: RepoRef, key: int, state: IssueState) -> Milestone:
        raw = await self._patch(
            f"{self._r(repo)}/milestones/{key}", f"milestone {key} of {repo}", {"state": state}
        )
        return self._milestone(repo, raw)

    # --- labels ------------------------------------------------------------------------------------

    async def _fetch_labels(self, repo: RepoRef) -> list[tuple[int, Label]]:
        items = await self._pages(f"{self._r(repo)}/labels", f"labels of {repo}")
        found = [(int(item["id"]), label_from_json(item)) for item in items]
        self._label_ids[repo.full_name.casefold()] = {
            label.name.casefold(): label_id for label_id, label in reversed(found)
        }
        return found

    async def list_repo_labels(self, repo: RepoRef) -> list[Label]:
        return [label for _, label in await self._fetch_labels(repo)]

    async def _create_label(self, repo: RepoRef, name: str, color: str, description: str) -> int:
        try:
            raw = await self._post(
                f"{self._r(repo)}/labels",
                f"create label {name!r}",
                {"name": name, "color": "#" + color.lstrip("#"), "description": description},
            )
        except ValidationFailed:
            # Created meanwhile by another worker: read the winner's.
            await self._fetch_labels(repo)
            label_id = self._label_ids[repo.full_name.casefold()].get(name.casefold())
            if label_id is None:
                raise
            return label_id
        self._label_ids.setdefault(repo.full_name.casefold(), {})[name.casefold()] = int(raw["id"])
        if raw.get("name"):
            self._known_labels.remember(repo.full_name, label_from_json(raw))
        return int(raw["id"])

    async def set_label_description(self, repo: RepoRef, name: str, description: str) -> Label:
        async with self._label_lock:
            label_id = self._label_ids.get(repo.full_name.casefold(), {}).get(name.casefold())
            if label_id is None:
                await self._fetch_labels(repo)
                label_id = self._label_ids[repo.full_name.casefold()].get(name.casefold())
        if label_id is None:
            raise NotFound(f"label {name!r} of {repo}")
        raw = await self._patch(
            f"{self._r(repo)}/labels/{label_id}", f"label {name!r} of {repo}", {"description": description}
        )
        label = label_from_json(raw)
        self._known_labels.remember(repo.full_name, label)
        return label

    async def _label_ids_for(self, repo: RepoRef, names: list[str], *, refresh: bool = False) -> list[int]:
        """Ids for label names, creating the missing ones (as GitHub does when labels are set): an ensured
        label deleted since is recreated with the colour and description it had."""
        async with self._label_lock:
            known = self._label_ids.get(repo.full_name.casefold())
            if refresh or known is None or any(n.casefold() not in known for n in names):
                await self._fetch_labels(repo)
                known = self._label_ids[repo.full_name.casefold()]
            ids: list[int] = []
            for name in names:
                label_id = known.get(name.casefold())
                if label_id is None:
                    was = self._known_labels.get(repo.full_name, name)
                    self._known_labels.forget(repo.full_name, name)
                    label_id = await self._create_label(
                        repo, name, was.color if was else "ededed", was.description if was else ""
                    )
                if label_id not in ids:
                    ids.append(label_id)
            return ids

    async def ensure_label(
        self, repo: RepoRef, name: str, *, color: str = "ededed", description: str = ""
    ) -> Label:
        """The label, created when missing; one this process already ensured costs no request."""
        known = self._known_labels.get(repo.full_name, name)
        if known is not None and name.casefold() in self._label_ids.get(repo.full_name.casefold(), {}):
            return known
        for _, label in await self._fetch_labels(repo):
            if label.name.casefold() == name.casefold():
                self._known_labels.remember(repo.full_name, label)
                return label
        await self._create_label(repo, name, color, description)
        known = self._known_labels.get(repo.full_name, name)
        if known is None:  # created by another worker meanwhile: read above by `_create_label`
            label_id = self._label_ids[repo.full_name.casefold()][name.casefold()]
            known = label_from_json(await self._get(f"{self._r(repo)}/labels/{label_id}", f"label {name!r}"))
            self._known_labels.remember(repo.full_name, known)
        return known

    async def _change_labels(
        self, method: str, repo: RepoRef, number: int, names: list[str]
    ) -> tuple[str, ...]:
        url = f"{self._r(repo)}/issues/{number}/labels"
        what = f"labels of {repo}#{number}"
        for refresh in (False, True):
            ids = await self._label_ids_for(repo, names, refresh=refresh)
            try:
                if method == "PUT":
                    raw = await self._put(url, what, {"labels": ids})
                else:
                    raw = await self._post(url, what, {"labels": ids})
            except (ValidationFailed, NotFound):
                # A cached id may belong to a label deleted since: refresh the map once.
                if refresh:
                    raise
                continue
            now = tuple(str(item["name"]) for item in raw or [])
            if not refresh and not {n.casefold() for n in names} <= {n.casefold() for n in now}:
                # An id the forge ignored instead of refusing (a label deleted since): refresh once too.
                continue
            return now
        raise AssertionError("unreachable")

    async def set_labels(self, repo: RepoRef, number: int, names: list[str]) -> tuple[str, ...]:
        return await self._change_labels("PUT", repo, number, names)

    async def add_labels(self, repo: RepoRef, number: int, names: list[str]) -> tuple[str, ...]:
        return await self._change_labels("POST", repo, number, names)

    async def remove_label(self, repo: RepoRef, number: int, name: str) -> None:
        async with self._label_lock:
            known = self._label_ids.get(repo.full_name.casefold())
            if known is None or name.casefold() not in known:
                await self._fetch_labels(repo)
                known = self._label_ids[repo.full_name.casefold()]
        label_id = known.get(name.casefold())
        if label_id is None:
            return
        with contextlib.suppress(NotFound):
            await self._delete(
                f"{self._r(repo)}/issues/{number}/labels/{label_id}", f"label {name!r} of {repo}#{number}"
            )

    # --- assignees ---------------------------------------------------------------------------------

    async def _assignable(self, repo: RepoRef) -> set[str]:
        """Who Gitea will assign here (write access): an edit naming anyone else fails whole, with a 500
        (FORGE-FACTS "Assignees"), so Steward asks first."""
        items = await self._get(f"{self._r(repo)}/assignees", f"assignees of {repo}")
        return {str(item["login"]).casefold() for item in items or []}

    async def add_assignees(self, repo: RepoRef, number: int, logins: Sequence[str]) -> tuple[str, ...]:
        issue = await self.get_issue(repo, number)
        have = {a.casefold() for a in issue.assignees}
        wanted = [login for login in logins if login.casefold() not in have]
        if not wanted:
            return issue.assignees
        assignable = await self._assignable(repo)
        adding = [login for login in wanted if login.casefold() in assignable]
        if not adding:
            return issue.assignees
        raw = await self._patch(
            f"{self._r(repo)}/issues/{number}",
            f"assignees of {repo}#{number}",
            {"assignees": [*issue.assignees, *adding]},
        )
        return issue_from_json(raw, milestone_key="id").assignees

    async def remove_assignees(self, repo: RepoRef, number: int, logins: Sequence[str]) -> tuple[str, ...]:
        issue = await self.get_issue(repo, number)
        gone = {login.casefold() for login in logins}
        keep = [a for a in issue.assignees if a.casefold() not in gone]
        if len(keep) == len(issue.assignees):
            return issue.assignees
        raw = await self._patch(
            f"{self._r(repo)}/issues/{number}", f"assignees of {repo}#{number}", {"assignees": keep}
        )
        return issue_from_json(raw, milestone_key="id").assignees

    async def user_exists(self, login: str) -> bool:
        try:
            await self._get(f"/users/{quote(login, safe='')}", f"user {login}")
        except NotFound:
            return False
        return True

    # --- issue relations ---------------------------------------------------------------------------

    async def list_sub_issues(self, repo: RepoRef, number: int) -> list[Issue]:
        return []  # Gitea has no sub-issues

    async def list_blocked_by(self, repo: RepoRef, number: int) -> list[int]:
        items = await self._pages(
            f"{self._r(repo)}/issues/{number}/dependencies", f"dependencies of {repo}#{number}"
        )
        # A blocker may live in another repository (each item carries its `repository`); its number is not
        # a "#N" of this one.
        here = repo.full_name.casefold()
        return [
            int(item["number"])
            for item in items
            if str((item.get("repository") or {}).get("full_name") or here).casefold() == here
        ]

    async def add_blocked_by(self, repo: RepoRef, number: int, blocker: int) -> None:
        await self._post(
            f"{self._r(repo)}/issues/{number}/dependencies",
            f"dependency of {repo}#{number} on #{blocker}",
            {"owner": repo.owner, "repo": repo.name, "index": blocker},
        )
