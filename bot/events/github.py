"""The normalisers that build the forge-neutral ``Event`` (``bot.event_types``) from webhook payloads.

The receiver normalises before enqueueing, so a job carries a small, validated Event
rather than a payload of up to 25 MiB, and handlers never see a payload dict.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from bot.event_types import (
    CommentSnapshot,
    Event,
    EventName,
    IssueSnapshot,
    MalformedPayload,
    MilestoneSnapshot,
    PullSnapshot,
    ReportSnapshot,
    ReviewSnapshot,
    Unhandled,
)
from bot.forge import RepoRef

__all__ = [
    "GITEA_ACTIONS",
    "GITEA_EVENT_OF_TYPE",
    "GITEA_HANDLED",
    "GITHUB_HANDLED",
    "CommentSnapshot",
    "Event",
    "EventName",
    "IssueSnapshot",
    "MalformedPayload",
    "MilestoneSnapshot",
    "PullSnapshot",
    "ReportSnapshot",
    "ReviewSnapshot",
    "Unhandled",
    "gitea_event_name",
    "normalise_gitea",
    "normalise_github",
]

# What Steward handles, per forge event: the actions it accepts (None = any action).
GITHUB_HANDLED: dict[str, frozenset[str] | None] = {
    "issues": frozenset(
        {"opened", "edited", "labeled", "unlabeled", "closed", "reopened", "milestoned", "demilestoned"}
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
        }
    ),
    "milestone": frozenset({"created", "opened", "closed", "edited", "deleted"}),
    "push": None,
    "installation": None,
    "installation_repositories": frozenset({"added"}),
    # CI: a commit status (no action), and check runs and suites once they complete.
    "status": None,
    "check_run": frozenset({"completed"}),
    "check_suite": frozenset({"completed"}),
    # Native reviews (octokit payload-schemas pull_request_review/{submitted,edited,dismissed}).
    "pull_request_review": frozenset({"submitted", "edited", "dismissed"}),
}


# --- GitHub -------------------------------------------------------------------------------------
#
# ``isinstance(x, (dict, Mapping))``: payloads are dicts (orjson), and a dict is recognised without the
# abstract class's slower check; anything else still passes as a Mapping. This runs for every delivery.


def _obj(payload: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = payload.get(key)
    if not isinstance(value, (dict, Mapping)):
        raise MalformedPayload(f"the payload has no {key!r} object")
    return value


def _login(user: Any) -> str:
    if isinstance(user, (dict, Mapping)) and isinstance(user.get("login"), str):
        return cast(str, user["login"])
    return ""


def _repo(payload: Mapping[str, Any], login: Callable[[Any], str]) -> RepoRef | None:
    """The payload's repository; ``login`` reads its owner (Gitea may name users ``username``)."""
    repo = payload.get("repository")
    if not isinstance(repo, (dict, Mapping)):
        return None
    full_name = repo.get("full_name")
    if isinstance(full_name, str) and "/" in full_name:
        return RepoRef.parse(full_name)
    owner = login(repo.get("owner"))
    name = repo.get("name")
    if owner and isinstance(name, str):
        return RepoRef(owner, name)
    raise MalformedPayload("the repository has no full_name")


def _github_repo(payload: Mapping[str, Any]) -> RepoRef | None:
    return _repo(payload, _login)


def _issue_snapshot(
    raw: Mapping[str, Any], number: Any, *, login: Callable[[Any], str], milestone_key: str, is_pr: bool
) -> IssueSnapshot:
    """An issue or pull request from a payload; GitHub names milestones by number, Gitea by id."""
    if not isinstance(number, int):
        raise MalformedPayload("the issue has no number")
    labels = tuple(
        str(label["name"])
        for label in raw.get("labels") or ()
        if isinstance(label, (dict, Mapping)) and "name" in label
    )
    milestone = raw.get("milestone")
    return IssueSnapshot(
        number=number,
        title=str(raw.get("title") or ""),
        body=str(raw.get("body") or ""),
        state="closed" if raw.get("state") == "closed" else "open",
        author=login(raw.get("user")),
        labels=labels,
        milestone=milestone.get(milestone_key) if isinstance(milestone, (dict, Mapping)) else None,
        is_pull_request=is_pr or isinstance(raw.get("pull_request"), Mapping),
    )


def _github_issue(raw: Mapping[str, Any], *, is_pr: bool = False) -> IssueSnapshot:
    return _issue_snapshot(raw, raw.get("number"), login=_login, milestone_key="number", is_pr=is_pr)


def _github_milestone(raw: Any) -> MilestoneSnapshot | None:
    if not isinstance(raw, (dict, Mapping)) or not isinstance(raw.get("number"), int):
        return None
    return MilestoneSnapshot(
        number=raw["number"], title=str(raw.get("title") or ""), state=str(raw.get("state"))
    )


def _pull_snapshot(raw: Mapping[str, Any]) -> PullSnapshot:
    """Branches of a pull request payload (both forges: ``head``/``base`` with ``ref`` and ``sha``)."""
    head = raw.get("head") if isinstance(raw.get("head"), Mapping) else {}
    base = raw.get("base") if isinstance(raw.get("base"), Mapping) else {}
    assert isinstance(head, (dict, Mapping)) and isinstance(base, (dict, Mapping))
    return PullSnapshot(
        head_ref=str(head.get("ref") or ""),
        head_sha=str(head.get("sha") or ""),
        base_ref=str(base.get("ref") or ""),
        merged=raw.get("merged") is True,
        draft=raw.get("draft") is True,
    )


def _github_review(raw: Mapping[str, Any]) -> ReviewSnapshot:
    """common/pull-request-review.schema.json: ``state`` commented / changes_requested / approved /
    dismissed (lower case in webhooks), ``user``, ``id``, ``commit_id``."""
    state = raw.get("state")
    if not isinstance(state, str) or not isinstance(raw.get("id"), int):
        raise MalformedPayload("the review has no id or state")
    commit = raw.get("commit_id")
    return ReviewSnapshot(
        state=state.lower(), author=_login(raw.get("user")), id=raw["id"], commit_id=str(commit or "")
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
    )


def _previous_body(payload: Mapping[str, Any]) -> str | None:
    changes = payload.get("changes")
    if isinstance(changes, (dict, Mapping)):
        body = changes.get("body")
        if isinstance(body, (dict, Mapping)) and isinstance(body.get("from"), str):
            return cast(str, body["from"])
    return None


def _handled_action(
    handled: Mapping[str, frozenset[str] | None], name: str, payload: Mapping[str, Any]
) -> Any:
    """The payload's action, or Unhandled when Steward has nothing to do with this event or action."""
    if name not in handled:
        raise Unhandled(f"event {name!r} is not handled")
    action = payload.get("action")
    allowed = handled[name]
    if allowed is not None:
        if not isinstance(action, str):
            raise MalformedPayload(f"a {name} payload must have an action")
        if action not in allowed:
            raise Unhandled(f"action {name}.{action} is not handled")
    return action


def normalise_github(event_name: str, delivery_id: str, payload: Any) -> Event:
    """Build an Event from a GitHub delivery, or raise Unhandled / MalformedPayload."""
    if not isinstance(payload, (dict, Mapping)):
        raise MalformedPayload("the payload is not a JSON object")
    action = _handled_action(GITHUB_HANDLED, event_name, payload)
    sender = payload.get("sender")
    installation = payload.get("installation")
    common: dict[str, Any] = {
        "forge": "github",
        "delivery_id": delivery_id,
        "name": event_name,
        "action": action if isinstance(action, str) else "",
        "sender": _login(sender),
        "sender_is_bot": isinstance(sender, (dict, Mapping)) and sender.get("type") == "Bot",
        "repo": _github_repo(payload),
        "installation_id": installation.get("id") if isinstance(installation, (dict, Mapping)) else None,
    }
    if (
        event_name in ("issues", "issue_comment", "pull_request", "pull_request_review")
        and common["repo"] is None
    ):
        raise MalformedPayload(f"a {event_name} payload must name its repository")
    if event_name == "issues":
        label = payload.get("label")
        return Event(
            **common,
            issue=_github_issue(_obj(payload, "issue")),
            previous_body=_previous_body(payload),
            label=str(label["name"]) if isinstance(label, (dict, Mapping)) and "name" in label else None,
            milestone=_github_milestone(payload.get("milestone")),
        )
    if event_name == "issue_comment":
        raw = _obj(payload, "comment")
        if not isinstance(raw.get("id"), int):
            raise MalformedPayload("the comment has no id")
        comment = CommentSnapshot(
            id=raw["id"], body=str(raw.get("body") or ""), author=_login(raw.get("user"))
        )
        return Event(
            **common,
            issue=_github_issue(_obj(payload, "issue")),
            comment=comment,
            previous_body=_previous_body(payload),
        )
    if event_name == "pull_request":
        label = payload.get("label")
        raw_pull = _obj(payload, "pull_request")
        return Event(
            **common,
            issue=_github_issue(raw_pull, is_pr=True),
            previous_body=_previous_body(payload),
            label=str(label["name"]) if isinstance(label, (dict, Mapping)) and "name" in label else None,
            milestone=_github_milestone(payload.get("milestone")),
            pull=_pull_snapshot(raw_pull),
        )
    if event_name == "pull_request_review":
        raw_pull = _obj(payload, "pull_request")
        return Event(
            **common,
            issue=_github_issue(raw_pull, is_pr=True),
            pull=_pull_snapshot(raw_pull),
            review=_github_review(_obj(payload, "review")),
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
        return Event(
            **common,
            report=_check_report(_obj(payload, event_name), event_name),
        )
    if event_name == "milestone":
        milestone = _github_milestone(_obj(payload, "milestone"))
        if milestone is None:
            raise MalformedPayload("the milestone has no number")
        return Event(**common, milestone=milestone)
    if event_name == "push":
        return _push(payload, common)
    if event_name == "installation_repositories":
        return Event(**common, repos=_installed_repos(payload.get("repositories_added")))
    # installation
    return Event(**common, repos=_installed_repos(payload.get("repositories")))


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


MAX_PUSH_PATHS = 1000


def _push(payload: Mapping[str, Any], common: dict[str, Any]) -> Event:
    """A push on either forge: its ref, its new head, and the paths its commits touched (both forges list
    them per commit as ``added``/``modified``/``removed``)."""
    ref = payload.get("ref")
    if not isinstance(ref, str):
        raise MalformedPayload("a push payload must have a ref")
    after = payload.get("after")
    paths: dict[str, None] = {}
    commits = payload.get("commits")
    for commit in commits if isinstance(commits, list) else ():
        if not isinstance(commit, (dict, Mapping)):
            continue
        for key in ("added", "modified", "removed"):
            changed = commit.get(key)
            for path in changed if isinstance(changed, list) else ():
                if isinstance(path, str) and len(paths) < MAX_PUSH_PATHS:
                    paths[path[:1000]] = None
    return Event(**common, ref=ref, after=after if isinstance(after, str) else None, paths=tuple(paths))


# --- Gitea and Forgejo --------------------------------------------------------------------------
#
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
#   assigned                             same             issues only
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
    return _repo(payload, _gitea_login)


def _gitea_issue(raw: Mapping[str, Any], *, number: Any = None, is_pr: bool = False) -> IssueSnapshot:
    # Some Gitea pull_request payloads carry the number only at the top level.
    found = raw.get("number", number)
    return _issue_snapshot(raw, found, login=_gitea_login, milestone_key="id", is_pr=is_pr)


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
    raw_action = _handled_action(GITEA_HANDLED, name, payload)
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
    if name in ("issues", "issue_comment", "pull_request", "pull_request_review") and common["repo"] is None:
        raise MalformedPayload(f"a {name} payload must name its repository")
    full_set = action in ("label_updated", "label_cleared")
    if name == "issues":
        issue = _gitea_issue(_obj(payload, "issue"), number=payload.get("number"))
        return Event(
            **common,
            issue=issue,
            previous_body=_previous_body(payload),
            labels_are_full_set=full_set,
            milestone=_gitea_milestone(_obj(payload, "issue").get("milestone")),
        )
    if name == "issue_comment":
        raw = _obj(payload, "comment")
        if not isinstance(raw.get("id"), int):
            raise MalformedPayload("the comment has no id")
        comment = CommentSnapshot(
            id=raw["id"], body=str(raw.get("body") or ""), author=_gitea_login(raw.get("user"))
        )
        is_pr = payload.get("is_pull") is True or event_type == "pull_request_comment"
        return Event(
            **common,
            issue=_gitea_issue(_obj(payload, "issue"), is_pr=is_pr),
            comment=comment,
            previous_body=_previous_body(payload),
        )
    if name == "pull_request":
        raw_pull = _obj(payload, "pull_request")
        return Event(
            **common,
            issue=_gitea_issue(raw_pull, number=payload.get("number"), is_pr=True),
            previous_body=_previous_body(payload),
            labels_are_full_set=full_set,
            milestone=_gitea_milestone(raw_pull.get("milestone")),
            pull=_pull_snapshot(raw_pull),
        )
    if name == "pull_request_review":
        raw_pull = _obj(payload, "pull_request")
        state = GITEA_REVIEW_EVENTS[_gitea_broad(event_name, event_type)]
        return Event(
            **common,
            issue=_gitea_issue(raw_pull, number=payload.get("number"), is_pr=True),
            pull=_pull_snapshot(raw_pull),
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
    return _push(payload, common)
