"""Gitea's and Forgejo's webhook payloads normalised into the forge-neutral ``Event``
(``bot.events.event``), with Gitea's event names and actions mapped onto GitHub's where they mean the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from bot.events.event import (
    CommentSnapshot,
    Event,
    IssueSnapshot,
    MalformedPayload,
    MilestoneSnapshot,
    ReportSnapshot,
    ReviewSnapshot,
    require_repository,
)
from bot.events.payload import (
    as_object,
    handled_action,
    issue_snapshot,
    previous_body,
    pull_snapshot,
    push_event,
    repo_of,
)
from bot.forge import RepoRef

# Gitea names its events in two levels: ``X-Gitea-Event`` is the broad event (``issues``,
# ``issue_comment``, ``pull_request``, ``push``) and ``X-Gitea-Event-Type`` the specific one
# (``issue_label``, ``pull_request_sync``, ``pull_request_comment``, …). Steward keys on the broad
# event, as handlers register for GitHub's names, and maps Gitea's actions onto GitHub's where they
# mean the same thing:
#
#   Gitea action                         Event.action     notes
#   ----------------------------------   --------------   -----------------------------------------
#   opened, edited, closed, reopened     same             issues and pull_request
#   synchronized                         synchronize      pull_request (X-Gitea-Event-Type pull_request_sync)
#   label_updated, label_cleared         labeled          the payload carries the whole label set, not the
#                                                         label that changed: ``label`` is None,
#                                                         ``labels_are_full_set`` is True and
#                                                         ``issue.labels`` is the set now on the issue, so
#                                                         handlers work from "the issue now has label X"
#   milestoned, demilestoned             same             issues and pull_request (X-Gitea-Event-Type
#                                                         issue_milestone / pull_request_milestone);
#                                                         ``milestone.number`` is the milestone's id
#                                                         (Gitea milestones have no number)
#   assigned, unassigned                 same             issues (type issue_assign) and pull_request (type
#                                                         pull_request_assign); the payload names no assignee
#   created, edited, deleted             same             issue_comment, on issues and on pull requests
#                                                         (X-Gitea-Event-Type pull_request_comment)
#   reviewed                             submitted        a native review: X-Gitea-Event
#                                                         pull_request_approved / _rejected / _comment
#                                                         (types pull_request_review_approved / …) become
#                                                         ``pull_request_review``, ``review.state`` approved /
#                                                         changes_requested / commented; no review id or
#                                                         commit (modules/structs/hook.go ReviewPayload: type
#                                                         and content); the sender is the reviewer
#                                                         (services/webhook/notifier.go PullRequestReview)
#   (push and status have no action)
#
# A merged pull request is ``closed`` with ``pull.merged`` (its payload's ``pull_request.merged``).
# Current Gitea sends ``status`` when a commit status is set (services/webhook/notifier.go
# CreateCommitStatus; older Gitea and Forgejo do not — there, and for anything missed, the periodic job
# polls ``ci_state``); Gitea has no check runs or suites. Older Gitea versions (and some test suites) put
# the specific type in X-Gitea-Event; it is mapped back to the broad event first. Gitea has no milestone
# event: the milestone gate polls there.

GITEA_HANDLED: dict[str, frozenset[str] | None] = {
    "issues": frozenset(
        {
            "opened",
            "edited",
            "closed",
            "reopened",
            "label_updated",
            "label_cleared",
            "milestoned",
            "demilestoned",
            "assigned",
            "unassigned",
        }
    ),
    "issue_comment": frozenset({"created", "edited", "deleted"}),
    "pull_request": frozenset(
        {
            "opened",
            "synchronized",
            "edited",
            "closed",
            "reopened",
            "label_updated",
            "label_cleared",
            "milestoned",
            "demilestoned",
            "assigned",
            "unassigned",
        }
    ),
    "push": None,
    "status": None,
    "pull_request_review": frozenset({"reviewed"}),
}

# X-Gitea-Event-Type → X-Gitea-Event (go-gitea/gitea modules/webhook/type.go).
GITEA_EVENT_OF_TYPE: dict[str, str] = {
    "issue_assign": "issues",
    "issue_label": "issues",
    "issue_milestone": "issues",
    "pull_request_assign": "pull_request",
    "pull_request_label": "pull_request",
    "pull_request_milestone": "pull_request",
    "pull_request_review_request": "pull_request",
    "pull_request_sync": "pull_request",
    "pull_request_comment": "issue_comment",
    "pull_request_review_approved": "pull_request_approved",
    "pull_request_review_rejected": "pull_request_rejected",
    "pull_request_review_comment": "pull_request_comment",
}

# The broad events of native reviews (modules/webhook/type.go HookEventType.Event) → the review's state.
# Gitea sends no webhook when a review is dismissed (services/webhook/notifier.go has no PullReviewDismiss).
GITEA_REVIEW_EVENTS: dict[str, str] = {
    "pull_request_approved": "approved",
    "pull_request_rejected": "changes_requested",
    "pull_request_comment": "commented",
}

GITEA_ACTIONS: dict[str, str] = {
    "reviewed": "submitted",
    "synchronized": "synchronize",
    "label_updated": "labeled",
    "label_cleared": "labeled",
}


def _gitea_login(user: Any) -> str:
    if isinstance(user, (dict, Mapping)):
        for key in ("login", "username"):
            if isinstance(user.get(key), str) and user[key]:
                return cast(str, user[key])
    return ""


def _gitea_repo(payload: Mapping[str, Any]) -> RepoRef | None:
    return repo_of(payload, _gitea_login)


def _gitea_issue(raw: Mapping[str, Any], *, number: Any = None, is_pr: bool = False) -> IssueSnapshot:
    # Some Gitea pull_request payloads carry the number only at the top level.
    found = raw.get("number", number)
    return issue_snapshot(raw, found, login=_gitea_login, milestone_key="id", is_pr=is_pr)


def _gitea_milestone(raw: Any) -> MilestoneSnapshot | None:
    if not isinstance(raw, (dict, Mapping)) or not isinstance(raw.get("id"), int):
        return None
    return MilestoneSnapshot(number=raw["id"], title=str(raw.get("title") or ""), state=str(raw.get("state")))


def _gitea_broad(event: str, event_type: str) -> str:
    """Gitea's broad event. The specific type decides when it is one Gitea maps: X-Gitea-Event
    `pull_request_comment` is a review's comment in current Gitea (type `pull_request_review_comment`), but a
    comment on a pull request where older versions put the specific type in X-Gitea-Event."""
    event, event_type = event.strip().lower(), event_type.strip().lower()
    return GITEA_EVENT_OF_TYPE.get(event_type) or GITEA_EVENT_OF_TYPE.get(event, event) or event_type


def gitea_event_name(event: str, event_type: str = "") -> str:
    """The event Steward handles for a delivery's X-Gitea-Event (and X-Gitea-Event-Type) headers: Gitea's
    broad event, or ``pull_request_review`` for a native review."""
    broad = _gitea_broad(event, event_type)
    return "pull_request_review" if broad in GITEA_REVIEW_EVENTS else broad


def normalise_gitea(event_name: str, delivery_id: str, payload: Any, *, event_type: str = "") -> Event:
    """Build an Event from a Gitea or Forgejo delivery, or raise Unhandled / MalformedPayload."""
    if not isinstance(payload, (dict, Mapping)):
        raise MalformedPayload("the payload is not a JSON object")
    name = gitea_event_name(event_name, event_type)
    raw_action = handled_action(GITEA_HANDLED, name, payload)
    action = raw_action if isinstance(raw_action, str) else ""
    extra = {"gitea_event_type": event_type or event_name}
    if action:
        extra["gitea_action"] = action
    common: dict[str, Any] = {
        "forge": "gitea",
        "delivery_id": delivery_id,
        "name": name,
        "action": GITEA_ACTIONS.get(action, action),
        "sender": _gitea_login(payload.get("sender")),
        "sender_is_bot": False,
        "repo": _gitea_repo(payload),
        "extra": extra,
    }
    require_repository(name, common["repo"])
    full_set = action in ("label_updated", "label_cleared")
    if name == "issues":
        issue = _gitea_issue(as_object(payload, "issue"), number=payload.get("number"))
        return Event(
            **common,
            issue=issue,
            previous_body=previous_body(payload),
            labels_are_full_set=full_set,
            milestone=_gitea_milestone(as_object(payload, "issue").get("milestone")),
        )
    if name == "issue_comment":
        raw = as_object(payload, "comment")
        if not isinstance(raw.get("id"), int):
            raise MalformedPayload("the comment has no id")
        comment = CommentSnapshot(
            id=raw["id"], body=str(raw.get("body") or ""), author=_gitea_login(raw.get("user"))
        )
        is_pr = payload.get("is_pull") is True or event_type == "pull_request_comment"
        return Event(
            **common,
            issue=_gitea_issue(as_object(payload, "issue"), is_pr=is_pr),
            comment=comment,
            previous_body=previous_body(payload),
        )
    if name == "pull_request":
        raw_pull = as_object(payload, "pull_request")
        return Event(
            **common,
            issue=_gitea_issue(raw_pull, number=payload.get("number"), is_pr=True),
            previous_body=previous_body(payload),
            labels_are_full_set=full_set,
            milestone=_gitea_milestone(raw_pull.get("milestone")),
            pull=pull_snapshot(raw_pull),
        )
    if name == "pull_request_review":
        raw_pull = as_object(payload, "pull_request")
        state = GITEA_REVIEW_EVENTS[_gitea_broad(event_name, event_type)]
        return Event(
            **common,
            issue=_gitea_issue(raw_pull, number=payload.get("number"), is_pr=True),
            pull=pull_snapshot(raw_pull),
            review=ReviewSnapshot(state=state, author=common["sender"]),
        )
    if name == "status":
        # modules/structs/hook.go CommitStatusPayload: sha, context, state, target_url, description, commit
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
    # push
    return push_event(payload, common)
