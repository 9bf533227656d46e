"""GitHub's webhook payloads normalised into the forge-neutral ``Event`` (``bot.events.event``).

The receiver normalises before enqueueing, so a job carries a small, validated Event
rather than a payload of up to 25 MiB, and handlers never see a payload dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.events.event import (
    CommentSnapshot,
    Event,
    IssueSnapshot,
    MalformedPayload,
    MilestoneSnapshot,
    ReportSnapshot,
    ReviewSnapshot,
    Unhandled,
    require_repository,
)
from bot.events.payload import (
    as_object,
    handled_action,
    issue_snapshot,
    login_of,
    previous_body,
    pull_snapshot,
    push_event,
    repo_of,
)
from bot.forge import RepoRef
from bot.forge.ci import OWN_PREFIX

# What Steward handles, per GitHub event: the actions it accepts (None = any action).
GITHUB_HANDLED: dict[str, frozenset[str] | None] = {
    "issues": frozenset(
        {
            "opened",
            "edited",
            "labeled",
            "unlabeled",
            "closed",
            "reopened",
            "milestoned",
            "demilestoned",
            # Assignees changed (octokit/webhooks issues/{assigned,unassigned}): the overview refreshes.
            "assigned",
            "unassigned",
        }
    ),
    "issue_comment": frozenset({"created", "edited", "deleted"}),
    "pull_request": frozenset(
        {
            "opened",
            "edited",
            "synchronize",
            "reopened",
            "closed",
            "labeled",
            "unlabeled",
            "milestoned",
            "demilestoned",
            # A draft marked ready (octokit/webhooks pull_request/ready_for_review): bugfix reviewers.
            "ready_for_review",
            "assigned",
            "unassigned",
        }
    ),
    "milestone": frozenset({"created", "opened", "closed", "edited", "deleted"}),
    "push": None,
    "installation": None,
    "installation_repositories": frozenset({"added"}),
    # CI: a commit status (no action), and check runs and suites once they complete (a check run also when
    # it is created: one named like Steward's own, from another app, is answered at once).
    "status": None,
    "check_run": frozenset({"created", "completed"}),
    "check_suite": frozenset({"completed"}),
    # Native reviews (octokit payload-schemas pull_request_review/{submitted,edited,dismissed}).
    "pull_request_review": frozenset({"submitted", "edited", "dismissed"}),
    # A repository renamed or moved to another owner (octokit/webhooks repository/{renamed,transferred}):
    # its id stays, Steward's state with it; ``extra["renamed_from"]`` is the name it had.
    "repository": frozenset({"renamed", "transferred"}),
    # A sub-issue attached to an issue or removed from it (docs.github.com/en/webhooks/webhook-events-and-
    # payloads#sub_issues, schemas `webhook-sub-issues-sub-issue-added` and `-removed`): the parent's side
    # of the link. GitHub describes the same link from the child's side too (`parent_issue_added`, …);
    # one of the two is enough, and the parent — a bug whose stories wait with it — is what Steward looks at
    # (issue 36 §4). Gitea has no sub-issues.
    "sub_issues": frozenset({"sub_issue_added", "sub_issue_removed"}),
}


def _github_repo(payload: Mapping[str, Any]) -> RepoRef | None:
    return repo_of(payload, login_of)


def _github_issue(raw: Mapping[str, Any], *, is_pr: bool = False) -> IssueSnapshot:
    return issue_snapshot(raw, raw.get("number"), login=login_of, milestone_key="number", is_pr=is_pr)


def _github_milestone(raw: Any) -> MilestoneSnapshot | None:
    if not isinstance(raw, (dict, Mapping)) or not isinstance(raw.get("number"), int):
        return None
    return MilestoneSnapshot(
        number=raw["number"], title=str(raw.get("title") or ""), state=str(raw.get("state"))
    )


def _github_review(raw: Mapping[str, Any]) -> ReviewSnapshot:
    """common/pull-request-review.schema.json: ``state`` commented / changes_requested / approved /
    dismissed (lower case in webhooks), ``user``, ``id``, ``commit_id``."""
    state = raw.get("state")
    if not isinstance(state, str) or not isinstance(raw.get("id"), int):
        raise MalformedPayload("the review has no id or state")
    commit = raw.get("commit_id")
    return ReviewSnapshot(
        state=state.lower(), author=login_of(raw.get("user")), id=raw["id"], commit_id=str(commit or "")
    )


def _check_report(raw: Mapping[str, Any], kind: str) -> ReportSnapshot:
    """A completed check run (named by its name) or check suite (named by its app)."""
    sha = raw.get("head_sha")
    if not isinstance(sha, str):
        raise MalformedPayload(f"a {kind} payload must have a head_sha")
    app = raw.get("app") if isinstance(raw.get("app"), Mapping) else {}
    assert isinstance(app, (dict, Mapping))
    name = raw.get("name") if kind == "check_run" else (app.get("slug") or app.get("name"))
    pulls = tuple(
        int(p["number"])
        for p in raw.get("pull_requests") or ()
        if isinstance(p, (dict, Mapping)) and isinstance(p.get("number"), int)
    )
    return ReportSnapshot(
        sha=sha,
        context=str(name or ""),
        state=str(raw.get("status") or ""),
        conclusion=raw.get("conclusion") if isinstance(raw.get("conclusion"), str) else None,
        target_url=str(raw.get("details_url") or ""),
        pulls=pulls,
        app=str(app.get("slug") or ""),
    )


def normalise_github(event_name: str, delivery_id: str, payload: Any) -> Event:
    """Build an Event from a GitHub delivery, or raise Unhandled / MalformedPayload."""
    if not isinstance(payload, (dict, Mapping)):
        raise MalformedPayload("the payload is not a JSON object")
    action = handled_action(GITHUB_HANDLED, event_name, payload)
    sender = payload.get("sender")
    installation = payload.get("installation")
    common: dict[str, Any] = {
        "forge": "github",
        "delivery_id": delivery_id,
        "name": event_name,
        "action": action if isinstance(action, str) else "",
        "sender": login_of(sender),
        "sender_is_bot": isinstance(sender, (dict, Mapping)) and sender.get("type") == "Bot",
        "repo": _github_repo(payload),
        "installation_id": installation.get("id") if isinstance(installation, (dict, Mapping)) else None,
    }
    require_repository(event_name, common["repo"])
    if event_name == "issues":
        label = payload.get("label")
        return Event(
            **common,
            issue=_github_issue(as_object(payload, "issue")),
            previous_body=previous_body(payload),
            label=str(label["name"]) if isinstance(label, (dict, Mapping)) and "name" in label else None,
            milestone=_github_milestone(payload.get("milestone")),
        )
    if event_name == "issue_comment":
        raw = as_object(payload, "comment")
        if not isinstance(raw.get("id"), int):
            raise MalformedPayload("the comment has no id")
        comment = CommentSnapshot(
            id=raw["id"], body=str(raw.get("body") or ""), author=login_of(raw.get("user"))
        )
        return Event(
            **common,
            issue=_github_issue(as_object(payload, "issue")),
            comment=comment,
            previous_body=previous_body(payload),
        )
    if event_name == "pull_request":
        label = payload.get("label")
        raw_pull = as_object(payload, "pull_request")
        return Event(
            **common,
            issue=_github_issue(raw_pull, is_pr=True),
            previous_body=previous_body(payload),
            label=str(label["name"]) if isinstance(label, (dict, Mapping)) and "name" in label else None,
            milestone=_github_milestone(payload.get("milestone")),
            pull=pull_snapshot(raw_pull),
        )
    if event_name == "pull_request_review":
        raw_pull = as_object(payload, "pull_request")
        return Event(
            **common,
            issue=_github_issue(raw_pull, is_pr=True),
            pull=pull_snapshot(raw_pull),
            review=_github_review(as_object(payload, "review")),
        )
    if event_name == "status":
        sha = payload.get("sha")
        if not isinstance(sha, str):
            raise MalformedPayload("a status payload must have a sha")
        report = ReportSnapshot(
            sha=sha,
            context=str(payload.get("context") or "default"),
            state=str(payload.get("state") or ""),
            target_url=str(payload.get("target_url") or ""),
        )
        return Event(**common, report=report, after=sha)
    if event_name in ("check_run", "check_suite"):
        report = _check_report(as_object(payload, event_name), event_name)
        if action == "created" and not report.context.casefold().startswith(OWN_PREFIX):
            # Every CI run announces its start: only one named like Steward's own is looked at then (issue 35
            # item 7); the others wait for `completed`. Dropped here, so a busy CI queues no job for them.
            raise Unhandled(f"check_run.created ({report.context or 'unnamed'}): only its completion counts")
        return Event(**common, report=report)
    if event_name == "milestone":
        milestone = _github_milestone(as_object(payload, "milestone"))
        if milestone is None:
            raise MalformedPayload("the milestone has no number")
        return Event(**common, milestone=milestone)
    if event_name == "push":
        return push_event(payload, common)
    if event_name == "repository":
        return Event(**common, extra=_renamed_from(payload, common["repo"]))
    if event_name == "sub_issues":
        return _sub_issue_link(payload, common)
    if event_name == "installation_repositories":
        return Event(**common, repos=_installed_repos(payload.get("repositories_added")))
    # installation
    return Event(**common, repos=_installed_repos(payload.get("repositories")))


def _renamed_from(payload: Mapping[str, Any], repo: RepoRef | None) -> dict[str, str]:
    """The full name a renamed (``changes.repository.name.from``) or transferred (``changes.owner.from``,
    a user or an organisation) repository had; empty when the payload does not say."""
    if repo is None:
        raise MalformedPayload("a repository payload must name its repository")
    changes = payload.get("changes")
    changes = changes if isinstance(changes, Mapping) else {}
    name, owner = repo.name, repo.owner
    renamed = changes.get("repository")
    was = renamed.get("name") if isinstance(renamed, Mapping) else None
    if isinstance(was, Mapping) and isinstance(was.get("from"), str):
        name = was["from"]
    moved = changes.get("owner")
    before = moved.get("from") if isinstance(moved, Mapping) else None
    if isinstance(before, Mapping):
        account = before.get("user") or before.get("organization")
        owner = login_of(account) or owner
    old = f"{owner}/{name}"
    return {"renamed_from": old} if old != repo.full_name else {}


def _sub_issue_link(payload: Mapping[str, Any], common: dict[str, Any]) -> Event:
    """``sub_issue_added`` and ``sub_issue_removed``: the event is the parent's (``issue``, so it runs under
    the parent's lock); ``extra`` names the sub-issue (``sub_issue``, its number) and its repository
    (``sub_issue_repo``, which GitHub allows to differ from the parent's within one owner)."""
    if common["repo"] is None:
        raise MalformedPayload("a sub_issues payload must name its repository")
    child = as_object(payload, "sub_issue")
    if not isinstance(child.get("number"), int):
        raise MalformedPayload("the sub-issue has no number")
    where = payload.get("sub_issue_repo")
    name = where.get("full_name") if isinstance(where, Mapping) else None
    extra = {"sub_issue": str(child["number"])}
    extra["sub_issue_repo"] = name if isinstance(name, str) else common["repo"].full_name
    return Event(**common, issue=_github_issue(as_object(payload, "parent_issue")), extra=extra)


# An installation on "all repositories" of a large account lists every one; past this many, the rest are
# left to `/steward init` (an installation event carries no more than the names).
MAX_INSTALLED_REPOS = 200


def _installed_repos(raw: Any) -> tuple[RepoRef, ...]:
    """The repositories an installation payload lists (``full_name`` of each, ``owner/name``)."""
    found: list[RepoRef] = []
    for item in raw if isinstance(raw, list) else ():
        name = item.get("full_name") if isinstance(item, Mapping) else None
        if not isinstance(name, str):
            continue
        try:
            ref = RepoRef.parse(name)
        except ValueError:
            continue
        if ref not in found:
            found.append(ref)
        if len(found) >= MAX_INSTALLED_REPOS:
            break
    return tuple(found)
