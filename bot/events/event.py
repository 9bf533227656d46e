"""The forge-neutral ``Event`` a webhook becomes (``bot.events.github`` builds it), and how it travels through
the queue (``to_json``/``from_json``)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from bot.forge import ForgeKind, Issue, RepoRef, repo_key

EventName = Literal[
    "issues",
    "issue_comment",
    "pull_request",
    "milestone",
    "push",
    "installation",
    # A GitHub App installation that gained (``added``) or lost repositories: ``Event.repos`` lists them.
    "installation_repositories",
    "status",
    "check_run",
    "check_suite",
    # A pull request review submitted, edited or dismissed (GitHub's name; Gitea's `pull_request_approved`,
    # `pull_request_rejected` and review `pull_request_comment` map onto it, action `submitted`).
    "pull_request_review",
    # A repository renamed or transferred (GitHub; Gitea sends no webhook for either): ``extra`` has
    # ``renamed_from``, the full name it had.
    "repository",
    # A sub-issue attached to an issue (GitHub's `sub_issues`, action `sub_issue_added`; Gitea has no
    # sub-issues): ``issue`` is the parent, ``extra`` has ``sub_issue`` (its number) and ``sub_issue_repo``.
    "sub_issues",
    # Not a webhook: `steward reconcile` (and its periodic job) re-deriving a repository's state.
    "reconcile",
]


class Unhandled(Exception):
    """The delivery is well-formed but Steward has nothing to do with it (answered 202 ignored)."""


class MalformedPayload(Exception):
    """The payload lacks fields that its event must have (answered 400)."""


# The events about an App's installation, not one repository (GitHub's `installation` and
# `installation_repositories`): every other event Steward handles happens in a repository and must name it, as
# both forges' payloads do (docs/forge-port.md, "More forge facts, with sources").
REPOSITORY_LESS = frozenset({"installation", "installation_repositories"})


def require_repository(name: str, repo: object) -> None:
    """A payload of an event that happens in a repository (a milestone, a push, a status, …) but names none
    is malformed: answered 400 by the receiver, never queued for a job that cannot act."""
    if repo is None and name not in REPOSITORY_LESS:
        raise MalformedPayload(f"a {name} payload must name its repository")


# The format of a queued event (``Event.to_json``), carried in ``extra`` (``_FORMAT``) where a worker of any
# version takes an unknown key (issue 40 item 5): bump it when a job of the new format must not be run by a
# worker that would read it wrongly. A worker refuses an event of a newer format (``NewerEventFormat``: the
# job waits in the queue for an upgraded worker) and reads every older one, leaving out fields it does not
# know.
EVENT_FORMAT = 2
_FORMAT = "_format"


# The longest text a queued event keeps (an issue's body, a comment's, the body before an edit): Gitea takes
# bodies of 25 MB, and a job's JSON is copied several times between the receiver, Redis, arq and the worker
# (a worker held 3.7 GiB with ten 24 MiB deliveries in flight: issue 40 item 5). Every reader of Steward's
# reads less than this (commands 128 KiB; a report, a forks list, a backlog body 64 Ki characters); a worker
# re-reads a cut issue or comment from the forge before it runs the job (``CUT``), so digests and records see
# the whole text.
MAX_EVENT_TEXT = 256 * 1024
CUT = "_cut"


class NewerEventFormat(Exception):
    """A queued event written by a newer Steward than this worker (a rolling upgrade under way)."""

    def __init__(self, version: int) -> None:
        super().__init__(f"event format {version}; this worker reads up to {EVENT_FORMAT}")
        self.version = version


@dataclass(frozen=True)
class IssueSnapshot:
    number: int
    title: str
    body: str
    state: str
    author: str
    labels: tuple[str, ...] = ()
    milestone: int | None = None
    is_pull_request: bool = False
    # Its conversation is locked (GitHub's `locked`, Gitea's `is_locked`).
    locked: bool = False
    # GitHub's `author_association` (OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, FIRST_TIME_CONTRIBUTOR …);
    # "" on Gitea, which has none.
    author_association: str = ""

    @classmethod
    def of(cls, issue: Issue) -> IssueSnapshot:
        """The issue as the forge shows it now (for re-running checks outside a delivery)."""
        return cls(
            number=issue.number,
            title=issue.title,
            body=issue.body,
            state=issue.state,
            author=issue.author,
            labels=issue.labels,
            milestone=issue.milestone,
            is_pull_request=issue.is_pull_request,
            locked=issue.locked,
            author_association=issue.author_association,
        )


@dataclass(frozen=True)
class CommentSnapshot:
    id: int
    body: str
    author: str


@dataclass(frozen=True)
class MilestoneSnapshot:
    """``number`` is the milestone's key: GitHub's number, Gitea's id (``Milestone.key``)."""

    number: int
    title: str
    state: str


@dataclass(frozen=True)
class PullSnapshot:
    """What a pull request event says of its branches (``issue`` holds its number, title, labels, …)."""

    head_ref: str
    head_sha: str
    base_ref: str
    merged: bool = False
    draft: bool = False


@dataclass(frozen=True)
class ReportSnapshot:
    """A CI report on a commit: a status (``context``, ``state``) or a completed check run or suite (its
    name or its app's, ``state`` "completed", ``conclusion``); ``pulls`` are the open pull requests whose
    head it is, where the forge says (GitHub's check runs and suites)."""

    sha: str
    context: str
    state: str
    conclusion: str | None = None
    target_url: str = ""
    pulls: tuple[int, ...] = ()
    # The app that posted a check run or suite (its slug; "" for a status).
    app: str = ""


@dataclass(frozen=True)
class ReviewSnapshot:
    """A pull request review as its webhook tells it: ``state`` approved / changes_requested / commented /
    dismissed, by ``author``. ``id`` and ``commit_id`` where the forge says (GitHub; Gitea's payload
    carries neither: 0 and "")."""

    state: str
    author: str
    id: int = 0
    commit_id: str = ""


@dataclass(frozen=True)
class Event:
    forge: ForgeKind
    delivery_id: str
    name: EventName
    action: str
    sender: str
    sender_is_bot: bool = False
    repo: RepoRef | None = None
    installation_id: int | None = None
    issue: IssueSnapshot | None = None
    comment: CommentSnapshot | None = None
    # The body before an edit (issue or comment), when the forge says.
    previous_body: str | None = None
    # The label that changed on labeled/unlabeled. Gitea sends the whole set instead:
    # then ``label`` is None and ``labels_are_full_set`` is True.
    label: str | None = None
    labels_are_full_set: bool = False
    milestone: MilestoneSnapshot | None = None
    ref: str | None = None
    after: str | None = None
    extra: Mapping[str, str] = field(default_factory=dict)
    pull: PullSnapshot | None = None
    report: ReportSnapshot | None = None
    # A push's changed paths (added, modified or removed by its commits, as the payload lists them; at most
    # MAX_PUSH_PATHS), so a handler can tell whether a push touched a file without reading the forge.
    paths: tuple[str, ...] = ()
    # The repositories an App installation event names (``installation.created``: all it was installed on;
    # ``installation_repositories.added``: the ones added); ``repo`` is None on these events.
    repos: tuple[RepoRef, ...] = ()
    review: ReviewSnapshot | None = None

    @property
    def issue_key(self) -> str | None:
        """A key naming the issue this event touches, for per-issue serialisation."""
        if self.repo is None:
            return None
        where = repo_key(self.forge, self.repo)
        if self.issue is not None:
            return f"{where}#{self.issue.number}"
        if self.milestone is not None:
            return f"{where}%{self.milestone.number}"
        return where

    @property
    def kind(self) -> str:
        return f"{self.name}.{self.action}" if self.action else self.name

    def trimmed(self) -> Event:
        """This event with each text longer than ``MAX_EVENT_TEXT`` cut, and ``extra[CUT]`` naming what was
        cut (``issue``, ``comment``, ``previous``); itself when nothing is that long."""
        cut: list[str] = []
        issue, comment, previous = self.issue, self.comment, self.previous_body
        if issue is not None and len(issue.body) > MAX_EVENT_TEXT:
            issue = dataclasses.replace(issue, body=issue.body[:MAX_EVENT_TEXT])
            cut.append("issue")
        if comment is not None and len(comment.body) > MAX_EVENT_TEXT:
            comment = dataclasses.replace(comment, body=comment.body[:MAX_EVENT_TEXT])
            cut.append("comment")
        if previous is not None and len(previous) > MAX_EVENT_TEXT:
            previous = previous[:MAX_EVENT_TEXT]
            cut.append("previous")
        if not cut:
            return self
        extra = {**self.extra, CUT: ",".join(cut)}
        return dataclasses.replace(self, issue=issue, comment=comment, previous_body=previous, extra=extra)

    def to_json(self) -> str:
        # Hand-built rather than dataclasses.asdict: this runs once per delivery in the receiver.
        data = {
            "forge": self.forge,
            "delivery_id": self.delivery_id,
            "name": self.name,
            "action": self.action,
            "sender": self.sender,
            "sender_is_bot": self.sender_is_bot,
            "repo": {"owner": self.repo.owner, "name": self.repo.name} if self.repo else None,
            "installation_id": self.installation_id,
            "issue": self._issue_json(),
            "comment": self.comment.__dict__ if self.comment else None,
            "previous_body": self.previous_body,
            "label": self.label,
            "labels_are_full_set": self.labels_are_full_set,
            "milestone": self.milestone.__dict__ if self.milestone else None,
            "ref": self.ref,
            "after": self.after,
            "extra": _extra_json(self.extra, self.repo),
            "pull": self.pull.__dict__ if self.pull else None,
            "report": self.report.__dict__ if self.report else None,
            "paths": list(self.paths),
            "repos": [r.full_name for r in self.repos],
            "review": self.review.__dict__ if self.review else None,
        }
        return orjson.dumps(data).decode()

    def _issue_json(self) -> dict[str, Any] | None:
        """The issue's snapshot; `locked` only when true, so a job of an unlocked issue reads as before
        (a worker of an earlier version takes it during a rolling upgrade)."""
        if self.issue is None:
            return None
        found = dict(self.issue.__dict__)
        if not found["locked"]:
            del found["locked"]
        return found

    @classmethod
    def from_json(cls, raw: str | bytes) -> Event:
        data = json.loads(raw)
        extra = dict(data.get("extra") or {})
        version = str(extra.pop(_FORMAT, "1"))
        if not version.isdigit() or int(version) > EVENT_FORMAT:
            raise NewerEventFormat(int(version) if version.isdigit() else EVENT_FORMAT + 1)
        # An older event lacks the newer fields (their defaults stand); a field this version does not know
        # is left out rather than refused.
        data = {k: v for k, v in data.items() if k in _EVENT_FIELDS}
        repo = data.pop("repo")
        ident = extra.pop(_REPO_ID, "")
        data["extra"] = extra
        if repo is not None and str(ident).isdigit():
            repo["id"] = int(ident)
        issue = data.pop("issue")
        comment = data.pop("comment")
        milestone = data.pop("milestone")
        pull = data.pop("pull", None)
        report = data.pop("report", None)
        review = data.pop("review", None)
        data["paths"] = tuple(data.get("paths") or ())
        data["repos"] = tuple(RepoRef.parse(name) for name in data.get("repos") or ())
        if issue is not None:
            issue["labels"] = tuple(issue["labels"])
        if report is not None:
            report["pulls"] = tuple(report["pulls"])
        return cls(
            repo=RepoRef(**_known(RepoRef, repo)) if repo else None,
            issue=IssueSnapshot(**_known(IssueSnapshot, issue)) if issue else None,
            comment=CommentSnapshot(**_known(CommentSnapshot, comment)) if comment else None,
            milestone=MilestoneSnapshot(**_known(MilestoneSnapshot, milestone)) if milestone else None,
            pull=PullSnapshot(**_known(PullSnapshot, pull)) if pull else None,
            report=ReportSnapshot(**_known(ReportSnapshot, report)) if report else None,
            review=ReviewSnapshot(**_known(ReviewSnapshot, review)) if review else None,
            **data,
        )


def _known(kind: Any, data: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of ``data`` that ``kind`` (a dataclass) has."""
    names = {f.name for f in dataclasses.fields(kind)}
    return {k: v for k, v in data.items() if k in names}


# The repository's id travels in ``extra`` (as a string, like every value there): a worker of the previous
# version builds ``RepoRef(**repo)`` and would refuse a new key there, but takes any key in ``extra``, so a
# job queued by a new receiver still runs on an old worker during a rolling upgrade.
_REPO_ID = "_repo_id"


_EVENT_FIELDS = frozenset(f.name for f in dataclasses.fields(Event))


def _extra_json(extra: Mapping[str, str], repo: RepoRef | None) -> dict[str, str]:
    found = dict(extra)
    found[_FORMAT] = str(EVENT_FORMAT)
    if repo is not None and repo.id:
        found[_REPO_ID] = str(repo.id)
    return found
