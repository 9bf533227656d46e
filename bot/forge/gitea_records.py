"""The Gitea adapter's records of who did what, what guards a branch and what CI said: the issue timeline,
pull request reviews, branches with their protection, commit statuses (Gitea has no check runs)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.forge import (
    Branch,
    CIReport,
    IssueHistory,
    LabelEvent,
    MilestoneEvent,
    NotFound,
    NotSupported,
    Push,
    RepoRef,
    Review,
    ReviewVerdict,
    TooManyItems,
)
from bot.forge.ci import latest_statuses
from bot.forge.gitea_transport import GiteaCalls, seg
from bot.forge.shapes import status_from_json

# Gitea's ReviewStateType (modules/structs/pull_review.go) in the port's words; PENDING and REQUEST_REVIEW
# are not verdicts, and a dismissed review is left out.
_VERDICTS: Mapping[str, ReviewVerdict] = {
    "APPROVED": "approved",
    "REQUEST_CHANGES": "changes_requested",
    "COMMENT": "commented",
}


def _head_of(content: Any) -> str:
    """The branch's new head from a ``commit_repo`` entry's ``content``: the JSON of the push's
    ``PushCommits`` (modules/repository/commits.go: ``HeadCommit``, ``Commits`` newest first, each with
    ``Sha1``); "" when it says none (a branch created without commits has no content)."""
    try:
        data = json.loads(content) if isinstance(content, str) and content else None
    except ValueError:
        return ""
    if not isinstance(data, Mapping):
        return ""
    head = data.get("HeadCommit")
    commits = data.get("Commits")
    if not isinstance(head, Mapping) and isinstance(commits, list) and commits:
        head = commits[0]
    return str(head.get("Sha1") or "") if isinstance(head, Mapping) else ""


def _before_of(content: Any) -> str:
    """The branch's head before a ``commit_repo`` push: the left side of its ``CompareURL``
    (repo.ComposeCompareURL(old, new): ".../compare/<old>...<new>"); "" when it says none (a new branch)."""
    try:
        data = json.loads(content) if isinstance(content, str) and content else None
    except ValueError:
        return ""
    url = data.get("CompareURL") if isinstance(data, Mapping) else None
    if not isinstance(url, str) or "/compare/" not in url or "..." not in url:
        return ""
    return url.rsplit("/compare/", 1)[1].split("...", 1)[0]


# The most days of a branch's life the feed is read for, a day at a time (past it: ``TooManyItems``).
MAX_FEED_DAYS = 62


def _days(since: str) -> list[str]:
    """The days (YYYY-MM-DD) from the day before ``since`` to the day after today, UTC; [] when ``since``
    is not a time or the span is longer than ``MAX_FEED_DAYS``."""
    try:
        start = datetime.fromisoformat(since.replace("Z", "+00:00")).astimezone(UTC).date()
    except ValueError:
        return []
    first, last = start - timedelta(days=1), datetime.now(UTC).date() + timedelta(days=1)
    count = (last - first).days + 1
    if count > MAX_FEED_DAYS or count < 1:
        return []
    return [(first + timedelta(days=n)).isoformat() for n in range(count)]


class GiteaRecords(GiteaCalls):
    async def label_events(self, repo: RepoRef, number: int) -> list[LabelEvent]:
        """``GET /issues/{index}/timeline``: entries of type ``label`` (see ``issue_history``)."""
        return list((await self.issue_history(repo, number)).labels)

    async def issue_history(self, repo: RepoRef, number: int) -> IssueHistory:
        """``GET /issues/{index}/timeline`` (oldest first; services/convert/issue_comment.go
        ToTimelineComment). Entries of type ``label``: ``body`` "1" when the label was added and "" when it
        was removed (models/issues/issue_label.go), the ``label`` as it is now — loaded by its id, so a label
        renamed since shows its new name: the id is what identifies it. Entries of type ``milestone``:
        ``old_milestone`` left and ``milestone`` joined (either null; services/issue/milestone.go
        changeMilestoneAssign, and NewIssueWithIndex for an issue opened in one), by their ids. ``user``
        who did it."""
        items = await self._pages(
            f"{self._r(repo)}/issues/{number}/timeline", f"timeline of {repo}#{number}", limit=self._max_items
        )
        labels: list[LabelEvent] = []
        milestones: list[MilestoneEvent] = []
        for seq, item in enumerate(items):
            kind = item.get("type")
            actor = str((item.get("user") or {}).get("login") or "")
            at = str(item.get("created_at") or "")
            if kind == "label":
                label = item.get("label") or {}
                ident = label.get("id")
                labels.append(
                    LabelEvent(
                        label=str(label.get("name") or ""),
                        added=item.get("body") == "1",
                        actor=actor,
                        at=at,
                        label_id=ident if isinstance(ident, int) else None,
                        seq=seq,
                    )
                )
            elif kind == "milestone":
                for joined, field in ((False, "old_milestone"), (True, "milestone")):
                    ms = item.get(field)
                    if isinstance(ms, Mapping) and isinstance(ms.get("id"), int):
                        title = str(ms.get("title") or "")
                        milestones.append(MilestoneEvent(joined, title, ms["id"], actor, at, seq))
        return IssueHistory(tuple(labels), tuple(milestones))

    async def list_reviews(self, repo: RepoRef, number: int) -> list[Review]:
        items = await self._pages(
            f"{self._r(repo)}/pulls/{number}/reviews", f"reviews of {repo}#{number}", limit=self._max_items
        )
        return [
            Review(
                id=int(item["id"]),
                user=str((item.get("user") or {}).get("login") or ""),
                state=_VERDICTS[item["state"]],
                commit_id=item.get("commit_id") or None,
                body=str(item.get("body") or ""),
                submitted_at=str(item.get("submitted_at") or ""),
            )
            for item in items
            if item.get("state") in _VERDICTS and not item.get("dismissed")
        ]

    async def branch_pushes(self, repo: RepoRef, branch: str, since: str = "") -> list[Push]:
        """``GET /repos/{o}/{r}/activities/feeds`` (swagger ``repoListActivityFeeds``, newest first, paged):
        the ``commit_repo`` and ``delete_branch`` entries whose ``ref_name`` is the branch
        (services/feed/notifier.go PushCommits writes the full ref, older Gitea the bare name), ``act_user``
        who pushed, ``created`` when, ``content`` the PushCommits JSON (``HeadCommit`` the new head,
        ``CompareURL`` ".../compare/<before>...<after>", empty for a new branch). A Gitea without the route
        (before 1.21) answers 404: NotSupported.

        The feed is the whole repository's, and Gitea does not cap it (models/activities/action.go GetFeeds
        pages it, X-Total-Count counts it all); Steward reads at most ``max_items`` entries. When it is
        longer, and ``since`` says when the branch was made, it is read a day at a time (``date``, one day
        either side of the branch's days, as Gitea's day may be another time zone's): ``TooManyItems`` only
        when a day of its own is too long too."""
        try:
            items = await self._pages(
                f"{self._r(repo)}/activities/feeds", f"activity feed of {repo}", limit=self._max_items
            )
        except NotFound:
            raise NotSupported(f"{repo}: this Gitea keeps no activity feed in its API") from None
        except TooManyItems:
            days = _days(since)
            if not days:
                raise
            items = []
            for day in days:
                items += await self._pages(
                    f"{self._r(repo)}/activities/feeds",
                    f"activity feed of {repo} on {day}",
                    {"date": day},
                    limit=self._max_items,
                )
        refs = (f"refs/heads/{branch}", branch)
        found = {
            item.get("id", n): Push(
                actor=str((item.get("act_user") or {}).get("login") or ""),
                at=str(item.get("created") or ""),
                after=_head_of(item.get("content")),
                before=_before_of(item.get("content")),
                kind="branch_deletion" if item.get("op_type") == "delete_branch" else "push",
            )
            for n, item in enumerate(items)
            if item.get("op_type") in ("commit_repo", "delete_branch") and item.get("ref_name") in refs
        }
        return sorted(found.values(), key=lambda p: p.at, reverse=True)

    async def read_branch(self, repo: RepoRef, name: str) -> Branch | None:
        """``GET /branches/{b}`` (readers may): ``protected`` and, when status checks are on
        (``enable_status_check``), ``status_check_contexts`` — the branch protection itself
        (``/branch_protections``) wants repository admin."""
        try:
            raw = await self._get(f"{self._r(repo)}/branches/{seg(name)}", f"branch {name} of {repo}")
        except NotFound:
            return None
        contexts = raw.get("status_check_contexts") or () if raw.get("enable_status_check") else ()
        return Branch(
            name=str(raw["name"]),
            sha=str(raw["commit"]["id"]),
            protected=bool(raw.get("protected")),
            required_contexts=tuple(str(c) for c in contexts),
        )

    async def ci_reports(self, repo: RepoRef, sha: str) -> list[CIReport]:
        """The latest status of each context, its ``description`` as the title (Gitea has no check runs)."""
        items = await self._pages(f"{self._r(repo)}/commits/{seg(sha)}/statuses", f"statuses of {sha}")
        latest = latest_statuses(status_from_json(item) for item in items)
        return [
            CIReport(context=s.context, kind="status", outcome=s.state, title=s.description, url=s.target_url)
            for _, s in sorted(latest.items())
        ]
