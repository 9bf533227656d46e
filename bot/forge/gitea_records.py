"""The Gitea adapter's records of who did what, what guards a branch and what CI said: the issue timeline,
pull request reviews, branches with their protection, commit statuses (Gitea has no check runs)."""

from __future__ import annotations

from collections.abc import Mapping

from bot.forge import Branch, CIReport, LabelEvent, NotFound, RepoRef, Review, ReviewVerdict
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


class GiteaRecords(GiteaCalls):
    async def label_events(self, repo: RepoRef, number: int) -> list[LabelEvent]:
        """``GET /issues/{index}/timeline``: entries of type ``label``, ``body`` "1" when the label was
        added and "" when it was removed (models/issues/issue_label.go), ``user`` who did it."""
        items = await self._pages(
            f"{self._r(repo)}/issues/{number}/timeline", f"timeline of {repo}#{number}", limit=self._max_items
        )
        return [
            LabelEvent(
                label=str((item.get("label") or {}).get("name") or ""),
                added=item.get("body") == "1",
                actor=str((item.get("user") or {}).get("login") or ""),
                at=str(item.get("created_at") or ""),
            )
            for item in items
            if item.get("type") == "label"
        ]

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
