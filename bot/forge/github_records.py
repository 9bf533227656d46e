"""The GitHub adapter's records of who did what, what guards a branch and what CI said: issue events,
pull request reviews, branches with their protection and rulesets, check run output and annotations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from bot.forge import (
    Annotation,
    AnnotationLevel,
    Branch,
    CIReport,
    IssueHistory,
    LabelEvent,
    MilestoneEvent,
    NotFound,
    PermissionDenied,
    Push,
    PushKind,
    RepoRef,
    Review,
    ReviewVerdict,
    ValidationFailed,
)
from bot.forge.ci import latest_statuses
from bot.forge.github_transport import GitHubCalls
from bot.forge.shapes import status_from_json

# GitHub's review states (REST "pull-request-review") in the port's words; PENDING and DISMISSED reviews
# say nothing about the pull request and are left out.
_VERDICTS: Mapping[str, ReviewVerdict] = {
    "APPROVED": "approved",
    "CHANGES_REQUESTED": "changes_requested",
    "COMMENTED": "commented",
}
# GitHub's activity types ("List repository activities", REST repos): all of them move the branch.
_PUSH_KINDS: Mapping[str, PushKind] = {
    "push": "push",
    "force_push": "force_push",
    "branch_creation": "branch_creation",
    "branch_deletion": "branch_deletion",
    "pr_merge": "pr_merge",
    "merge_queue_merge": "pr_merge",
}
_LEVELS: Mapping[str, AnnotationLevel] = {"notice": "notice", "warning": "warning", "failure": "failure"}


def annotation_from_json(raw: Mapping[str, Any]) -> Annotation:
    return Annotation(
        path=str(raw.get("path") or ""),
        start_line=int(raw.get("start_line") or 0),
        end_line=int(raw.get("end_line") or raw.get("start_line") or 0),
        level=_LEVELS.get(str(raw.get("annotation_level")), "notice"),
        message=str(raw.get("message") or ""),
        title=str(raw.get("title") or ""),
    )


class GitHubRecords(GitHubCalls):
    async def label_events(self, repo: RepoRef, number: int) -> list[LabelEvent]:
        """``GET /issues/{n}/events`` (oldest first): its ``labeled``/``unlabeled`` events and their actor."""
        return list((await self.issue_history(repo, number)).labels)

    async def issue_history(self, repo: RepoRef, number: int) -> IssueHistory:
        """``GET /issues/{n}/events`` (oldest first): ``labeled``/``unlabeled`` (``label: {name, color}``,
        the name it had then) and ``milestoned``/``demilestoned`` (``milestone: {title}``, the title it had
        then: REST "milestoned-issue-event"/"demilestoned-issue-event"), each with its ``actor``."""
        items = await self._iter(
            f"/repos/{repo.full_name}/issues/{number}/events?per_page=100",
            f"events of {repo}#{number}",
            limit=self._max_items,
        )
        labels: list[LabelEvent] = []
        milestones: list[MilestoneEvent] = []
        for seq, item in enumerate(items):
            kind = item.get("event")
            actor = str((item.get("actor") or {}).get("login") or "")
            at = str(item.get("created_at") or "")
            if kind in ("labeled", "unlabeled"):
                name = str((item.get("label") or {}).get("name") or "")
                labels.append(LabelEvent(label=name, added=kind == "labeled", actor=actor, at=at, seq=seq))
            elif kind in ("milestoned", "demilestoned"):
                title = str((item.get("milestone") or {}).get("title") or "")
                milestones.append(MilestoneEvent(kind == "milestoned", title, None, actor, at, seq))
        return IssueHistory(tuple(labels), tuple(milestones))

    async def list_reviews(self, repo: RepoRef, number: int) -> list[Review]:
        items = await self._iter(
            f"/repos/{repo.full_name}/pulls/{number}/reviews?per_page=100",
            f"reviews of {repo}#{number}",
            limit=self._max_items,
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
            if item.get("state") in _VERDICTS
        ]

    async def branch_pushes(self, repo: RepoRef, branch: str, since: str = "") -> list[Push]:
        """``GET /repos/{o}/{r}/activity?ref=refs/heads/<b>`` ("List repository activities", newest first,
        cursor-paged through Link): each activity's ``actor`` (nullable), ``timestamp``, ``before``/``after``
        and ``activity_type``. The branch's own activity only, so ``since`` is not needed."""
        ref = quote(f"refs/heads/{branch}", safe="")
        items = await self._iter(
            f"/repos/{repo.full_name}/activity?ref={ref}&per_page=100",
            f"activity of branch {branch} of {repo}",
            limit=self._max_items,
        )
        return [
            Push(
                actor=str((item.get("actor") or {}).get("login") or ""),
                at=str(item.get("timestamp") or ""),
                after=str(item.get("after") or ""),
                before=str(item.get("before") or ""),
                kind=_PUSH_KINDS.get(str(item.get("activity_type")), "other"),
            )
            for item in items
            if str(item.get("ref") or "") in (f"refs/heads/{branch}", branch)
        ]

    async def read_branch(self, repo: RepoRef, name: str) -> Branch | None:
        """``GET /branches/{b}`` (contents read is enough): its ``protected`` flag and the protection summary
        with the required status checks; then ``GET /rules/branches/{b}``: the ``required_status_checks``
        rules of the rulesets that apply. ``/branches/{b}/protection`` is not read: it wants admin."""
        try:
            raw = await self._get(
                f"/repos/{repo.full_name}/branches/{quote(name, safe='')}", f"branch {name} of {repo}"
            )
        except NotFound:
            return None
        protected = bool(raw.get("protected"))
        contexts: list[str] | None = []
        unread = ""
        if protected:
            checks = (raw.get("protection") or {}).get("required_status_checks")
            if not isinstance(checks, Mapping):
                contexts = None
                unread = "the forge's answer for the branch had no summary of its protection"
            elif checks.get("enforcement_level", "everyone") != "off":
                contexts = [str(c) for c in checks.get("contexts") or ()]
        try:
            rules = await self._iter(
                f"/repos/{repo.full_name}/rules/branches/{quote(name, safe='')}?per_page=100",
                f"rules of branch {name} of {repo}",
            )
        except NotFound:  # a GitHub Enterprise Server without rulesets
            rules = []
        except PermissionDenied as exc:  # the rulesets that apply are not known: neither are the checks
            rules, contexts = [], None
            unread = f"the forge refused to list the rulesets that apply to the branch ({exc})"
        for rule in rules:
            if rule.get("type") == "required_status_checks":
                found = (rule.get("parameters") or {}).get("required_status_checks") or ()
                if contexts is not None:
                    contexts.extend(str(c["context"]) for c in found if c.get("context"))
        return Branch(
            name=str(raw["name"]),
            sha=str(raw["commit"]["sha"]),
            protected=protected or bool(rules),
            required_contexts=tuple(dict.fromkeys(contexts)) if contexts is not None else None,
            unread=unread,
        )

    async def ci_reports(self, repo: RepoRef, sha: str) -> list[CIReport]:
        try:
            statuses = await self._iter(
                f"/repos/{repo.full_name}/commits/{quote(sha)}/statuses?per_page=100", f"statuses of {sha}"
            )
        except ValidationFailed as exc:  # 422 "No commit found for SHA"
            raise NotFound(str(exc), status=exc.status) from None
        runs = await self._iter(
            f"/repos/{repo.full_name}/commits/{quote(sha)}/check-runs?per_page=100&filter=latest",
            f"check runs of {sha}",
            iterable_key="check_runs",
        )
        reports: list[CIReport] = []
        for run in sorted(runs, key=lambda r: str(r.get("name"))):
            output = run.get("output") or {}
            annotations: list[Annotation] = []
            if int(output.get("annotations_count") or 0) > 0:
                items = await self._iter(
                    f"/repos/{repo.full_name}/check-runs/{int(run['id'])}/annotations?per_page=100",
                    f"annotations of check run {run['name']}",
                    limit=self._max_items,
                )
                annotations = [annotation_from_json(item) for item in items]
            reports.append(
                CIReport(
                    context=str(run["name"]),
                    kind="check_run",
                    outcome=str(run.get("conclusion") or run.get("status") or ""),
                    title=str(output.get("title") or ""),
                    summary=str(output.get("summary") or ""),
                    text=str(output.get("text") or ""),
                    annotations=tuple(annotations),
                    url=str(run.get("details_url") or run.get("html_url") or ""),
                )
            )
        latest = latest_statuses([status_from_json(item) for item in statuses])
        reports.extend(
            CIReport(context=s.context, kind="status", outcome=s.state, title=s.description, url=s.target_url)
            for _, s in sorted(latest.items())
        )
        return reports
