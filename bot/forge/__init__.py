"""The Forge port: what handlers may ask of a forge, in the domain's words.

Adapters (``bot.forge.github``, ``bot.forge.gitea``) translate these calls into a
forge's API; handlers never see a payload dict or a URL. Everything here is a small
frozen value so results can be cached and compared.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Literal, Protocol, runtime_checkable

# Re-exported: the errors of every call.
from bot.forge.errors import ForgeError as ForgeError
from bot.forge.errors import ForgeUnavailable as ForgeUnavailable
from bot.forge.errors import NotFound as NotFound
from bot.forge.errors import NotSupported as NotSupported
from bot.forge.errors import PermissionDenied as PermissionDenied
from bot.forge.errors import RateLimited as RateLimited
from bot.forge.errors import ThreadLocked as ThreadLocked
from bot.forge.errors import TooManyItems as TooManyItems
from bot.forge.errors import Unauthorized as Unauthorized
from bot.forge.errors import ValidationFailed as ValidationFailed
from bot.forge.errors import locked_refusal as locked_refusal

# Re-exported: the values of label_events, list_reviews, read_branch, ci_reports, body_versions, read_file,
# commit_statuses and set_check_run.
from bot.forge.records import Annotation as Annotation
from bot.forge.records import AnnotationLevel as AnnotationLevel
from bot.forge.records import BodyVersion as BodyVersion
from bot.forge.records import Branch as Branch
from bot.forge.records import CheckRun as CheckRun
from bot.forge.records import CIReport as CIReport
from bot.forge.records import CommitStatus as CommitStatus
from bot.forge.records import FileContent as FileContent
from bot.forge.records import IssueHistory as IssueHistory
from bot.forge.records import LabelEvent as LabelEvent
from bot.forge.records import MilestoneEvent as MilestoneEvent
from bot.forge.records import Push as Push
from bot.forge.records import PushKind as PushKind
from bot.forge.records import Review as Review
from bot.forge.records import ReviewVerdict as ReviewVerdict

ForgeKind = Literal["github", "gitea"]
PermissionLevel = Literal["none", "read", "triage", "write", "maintain", "admin"]
ReactionContent = Literal["+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"]
IssueState = Literal["open", "closed"]
# Which issues a list holds: by state, and issues, pull requests or both.
ListState = Literal["open", "closed", "all"]
IssueKind = Literal["issues", "pulls", "all"]
# Why an issue was closed, where the forge keeps a reason (GitHub's `state_reason`; Gitea keeps none).
CloseReason = Literal["completed", "not_planned", "duplicate"]
# The commit-status states Steward writes (both forges take these four).
StatusState = Literal["pending", "success", "failure", "error"]
# What CI says of a context, and of a commit as a whole (see ``bot.forge.ci``).
CIOutcome = Literal["green", "red", "inconclusive", "pending"]
FileStatus = Literal["added", "modified", "removed"]


class Keep(enum.Enum):
    """An argument left out: ``edit_issue(..., milestone=KEEP)`` leaves the milestone as it is, where
    ``milestone=None`` takes the issue out of its milestone."""

    KEEP = "keep"


KEEP: Final = Keep.KEEP
MAX_TREE_FILES: Final = 10_000  # the most paths ``Forge.list_files`` reads (Gitea: ten pages of 1,000)

PERMISSION_ORDER: tuple[PermissionLevel, ...] = ("none", "read", "triage", "write", "maintain", "admin")


@dataclass(frozen=True, order=True)
class RepoRef:
    owner: str
    name: str
    # The forge's id of the repository, when known (every webhook names it): a rename or a transfer keeps
    # it, so Steward's state in Redis is keyed by it (``repo_key``). Not part of equality: a reference
    # parsed from a name is the same repository as one read from an event.
    id: int = field(default=0, compare=False)

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    @classmethod
    def parse(cls, full_name: str) -> RepoRef:
        owner, _, name = full_name.partition("/")
        if not owner or not name or "/" in name:
            raise ValueError(f"not an owner/name repository reference: {full_name!r}")
        return cls(owner, name)

    def __str__(self) -> str:
        return self.full_name


def listed_repo(item: Mapping[str, Any]) -> RepoRef:
    """The reference to a repository object the forge listed (``full_name``), with its ``id``."""
    named, found = RepoRef.parse(str(item["full_name"])), item.get("id")
    return RepoRef(
        named.owner, named.name, found if isinstance(found, int) and not isinstance(found, bool) else 0
    )


def repo_key(forge: str, repo: RepoRef) -> str:
    """The one key Steward keeps a repository's state in Redis under (budgets, catch-up marks, the
    repositories it has seen, the catch-up's passes, locks, memos): the forge and the repository's id,
    which survives a rename or a transfer (``github:#1296269``); the lowercased full name only while the id
    is not known (a job an earlier version queued), which then expires as any cache does."""
    return f"{forge}:#{repo.id}" if repo.id else f"{forge}:{repo.full_name.casefold()}"


@dataclass(frozen=True)
class User:
    login: str
    id: int = 0
    is_bot: bool = False


@dataclass(frozen=True)
class Repo:
    ref: RepoRef
    default_branch: str
    private: bool = False
    html_url: str = ""
    # The forge's id of the repository: it survives renames and transfers (signed records name it).
    id: int = 0


@dataclass(frozen=True)
class Label:
    name: str
    color: str = ""
    description: str = ""
    id: int = 0


@dataclass(frozen=True)
class Issue:
    number: int
    title: str
    body: str
    state: Literal["open", "closed"]
    author: str
    labels: tuple[str, ...] = ()
    milestone: int | None = None
    is_pull_request: bool = False
    html_url: str = ""
    # The forge's global id (GitHub's dependency API wants it rather than the number).
    id: int = 0
    # When anything about it last changed (its body, labels, comments …), as the forge says.
    updated_at: str = ""
    # When it was created, as the forge says (nobody can change it: signed records' legacy rule).
    created_at: str = ""
    # Its conversation is locked: only those with write access comment there, and never a GitHub App
    # (``ThreadLocked``).
    locked: bool = False
    # Who is assigned (logins), as the forge lists them.
    assignees: tuple[str, ...] = ()
    # A pull request that is a draft, as the issue listings say (GitHub: the issue's ``draft``; Gitea: its
    # ``pull_request.draft``, the title's WIP prefix); False for an issue.
    draft: bool = False
    # Why it is closed (GitHub's `state_reason`: completed, not_planned, duplicate; "" on Gitea, which keeps
    # none) and who closed it (GitHub's `closed_by`, in a single issue's answer only; "" where not said).
    state_reason: str = ""
    closed_by: str = ""
    # When it was last closed, as the forge says ("" while open).
    closed_at: str = ""
    # GitHub's `author_association` (OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, FIRST_TIME_CONTRIBUTOR,
    # FIRST_TIMER, NONE …); "" on Gitea, which has none.
    author_association: str = ""

    def has_label(self, name: str) -> bool:
        wanted = name.casefold()
        return any(label.casefold() == wanted for label in self.labels)


@dataclass(frozen=True)
class Comment:
    id: int
    author: str
    body: str
    created_at: str = ""
    updated_at: str = ""
    html_url: str = ""
    # The issue or pull request it is on (0 when the forge did not say).
    issue_number: int = 0


@dataclass(frozen=True)
class CommentLink:
    """What a comment link names: the repository, the issue or pull request, and the comment itself."""

    repo: RepoRef
    number: int
    comment: Comment


@dataclass(frozen=True)
class Milestone:
    """``key`` is how the forge names the milestone in its API: GitHub's ``number``, Gitea's ``id``
    (``Issue.milestone`` holds the same key)."""

    key: int
    title: str
    state: IssueState
    description: str = ""
    open_issues: int = 0
    closed_issues: int = 0
    closed_at: str | None = None
    due_on: str | None = None
    html_url: str = ""


@dataclass(frozen=True)
class PullRequest:
    number: int
    title: str
    body: str
    state: IssueState
    draft: bool
    merged: bool
    head_ref: str
    head_sha: str
    base_ref: str
    author: str
    html_url: str = ""
    labels: tuple[str, ...] = ()
    milestone: int | None = None
    id: int = 0
    # Who the pull request is assigned to (logins), as the forge lists them.
    assignees: tuple[str, ...] = ()
    # The repositories of its head and base branches (forge ids; 0: not said). ``head_repo_id`` is None
    # when the head repository is gone (a deleted fork: GitHub answers ``head.repo`` null, Gitea too).
    head_repo_id: int | None = 0
    base_repo_id: int = 0
    # Whose review is requested and not yet given (logins; GitHub ``requested_reviewers``, Gitea's too): a
    # requested reviewer who submits a review leaves the list on both forges.
    requested_reviewers: tuple[str, ...] = ()
    created_at: str = ""  # when it was opened, as the forge says

    @property
    def from_fork(self) -> bool:
        """Its head branch lives in another repository than its base (or in one that was deleted)."""
        return self.head_repo_id is None or self.head_repo_id != self.base_repo_id


@dataclass(frozen=True)
class ChangedFile:
    path: str
    status: FileStatus


@dataclass(frozen=True)
class Commit:
    """A commit with its parents and, where the forge lists them, the files it changed against its first
    parent (lists of commits, such as a pull request's, carry no files: read each with ``get_commit``)."""

    sha: str
    parents: tuple[str, ...]
    message: str
    author_name: str = ""
    # The forge accounts the commit's author and committer are linked to, when there are.
    author_login: str | None = None
    committer_login: str | None = None
    files: tuple[ChangedFile, ...] = ()
    html_url: str = ""


@dataclass(frozen=True)
class FileChange:
    """One file of ``commit_files``: its new content, or ``None`` to delete it."""

    path: str
    content: bytes | None


@dataclass(frozen=True)
class CIState:
    """What CI says of a commit: each context's outcome, and one verdict (``bot.forge.ci`` has the rules)."""

    sha: str
    verdict: CIOutcome
    contexts: Mapping[str, CIOutcome] = field(default_factory=dict)

    def outcome(self, context: str) -> CIOutcome | None:
        return self.contexts.get(context)


@dataclass(frozen=True)
class HookDelivery:
    """One delivery of a GitHub webhook (``hook_id`` None: the App's own webhook)."""

    id: int
    guid: str
    delivered_at: str
    status_code: int
    event: str
    action: str | None = None
    redelivery: bool = False
    hook_id: int | None = None
    repo: RepoRef | None = None


# --- the port -----------------------------------------------------------------------------------


@runtime_checkable
class Forge(Protocol):
    """Everything a handler may ask of a forge. All methods are idempotent reads or single writes."""

    kind: ForgeKind

    async def whoami(self) -> User: ...

    async def get_repo(self, repo: RepoRef) -> Repo: ...

    async def get_issue(self, repo: RepoRef, number: int) -> Issue: ...

    async def list_comments(self, repo: RepoRef, number: int) -> list[Comment]: ...

    async def create_comment(self, repo: RepoRef, number: int, body: str) -> Comment: ...

    async def edit_comment(self, repo: RepoRef, comment_id: int, body: str) -> Comment: ...

    async def add_reaction(self, repo: RepoRef, comment_id: int, content: ReactionContent) -> None: ...

    async def list_repo_labels(self, repo: RepoRef) -> list[Label]: ...

    async def ensure_label(
        self, repo: RepoRef, name: str, *, color: str = "ededed", description: str = ""
    ) -> Label: ...

    async def set_label_description(self, repo: RepoRef, name: str, description: str) -> Label: ...

    async def set_labels(self, repo: RepoRef, number: int, names: list[str]) -> tuple[str, ...]: ...

    async def add_labels(self, repo: RepoRef, number: int, names: list[str]) -> tuple[str, ...]: ...

    async def remove_label(self, repo: RepoRef, number: int, name: str) -> None: ...

    async def add_assignees(self, repo: RepoRef, number: int, logins: Sequence[str]) -> tuple[str, ...]:
        """Assign those of ``logins`` the forge will (FORGE-FACTS "Assignees"); who is assigned afterwards."""

    async def remove_assignees(self, repo: RepoRef, number: int, logins: Sequence[str]) -> tuple[str, ...]:
        """Unassign ``logins``; who is assigned afterwards."""

    async def user_exists(self, login: str) -> bool:
        """Whether the forge has an account ``login`` (`GET /users/{login}`: 404 when not)."""

    async def permission_of(self, repo: RepoRef, login: str) -> PermissionLevel: ...

    async def repo_admins(self, repo: RepoRef) -> tuple[str, ...]:
        """Who administers the repository, to mention: logins, and ``org/team`` for a team. GitHub:
        ``GET /repos/{o}/{r}/collaborators?permission=admin`` (owners and team grants included; needs write).
        Gitea: the owner (a user) or the repository's teams with admin or owner access
        (``GET /repos/{o}/{r}/teams``, 405 for a user's repository), and each collaborator whose
        ``/collaborators/{user}/permission`` is admin — which only a repository admin may read: a bot with
        write access gets ``PermissionDenied`` (FORGE-FACTS, "Permissions")."""
        ...

    async def team_members(self, org: str, team: str) -> tuple[str, ...]:
        """The logins in team ``org/team`` (docs/forge-port.md); NotFound or PermissionDenied: unreadable."""

    async def read_file(self, repo: RepoRef, path: str, ref: str | None = None) -> FileContent | None: ...

    async def list_folder(self, repo: RepoRef, path: str, ref: str | None = None) -> list[str] | None:
        """The paths of the files directly in the folder ``path`` (both forges list a folder with
        ``GET /repos/{o}/{r}/contents/{path}``, an array of entries with ``type`` and ``path``); None when
        there is no such folder (404, or ``path`` is a file)."""
        ...

    async def list_files(self, repo: RepoRef, ref: str) -> list[str] | None:
        """Every file path at ``ref`` (at most ``MAX_TREE_FILES``; None: no such ref), from the recursive tree
        (GitHub and Gitea ``git/trees/{ref}``; docs/forge-port.md)."""
        ...

    # Pins: an issue (not a pull request) on top of the repository's issue list.
    async def pin_issue(self, repo: RepoRef, number: int) -> bool:
        """Pins the issue. True when it is pinned afterwards (nothing is written when it already was). False,
        never raising, when the forge refuses because the repository's pins are full (GitHub: 3; Gitea:
        ``[repository.issue] MAX_PINNED``, default 3; closed pinned issues count on both) or pinning is not
        available there (Gitea before 1.21 or with MAX_PINNED 0; a GitHub without ``pinIssue``): the reason
        is logged once per repository and process. Anything else raises as usual — ``NotFound`` (no such
        issue), ``PermissionDenied`` (GitHub wants write access, Gitea repository admin),
        ``ForgeUnavailable``, …"""
        ...

    async def unpin_issue(self, repo: RepoRef, number: int) -> None:
        """Takes the issue off the pinned list. Closing an issue does not (on either forge a closed pinned
        issue keeps its pin, and its place under the limit). Nothing is written when it is not pinned or
        pinning is not available; other failures raise as for ``pin_issue``."""
        ...

    # Issue relations. A forge without sub-issues answers []; dependencies exist on both forges.
    async def list_sub_issues(self, repo: RepoRef, number: int) -> list[Issue]: ...

    async def list_blocked_by(self, repo: RepoRef, number: int) -> list[int]: ...

    async def add_blocked_by(self, repo: RepoRef, number: int, blocker: int) -> None: ...

    # Issues and comments (phase 2).
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
        """Every matching issue (all ``labels``; ``since``: only those updated at or after it — GitHub's and
        Gitea's ``since`` parameter), paged to the end; raises ``TooManyItems`` past the bound."""
        ...

    async def create_issue(
        self,
        repo: RepoRef,
        title: str,
        body: str,
        labels: Sequence[str] = (),
        milestone: int | None = None,
    ) -> Issue:
        """Creates an issue, or returns the bot's own open issue with this very title and body."""
        ...

    async def edit_issue(
        self,
        repo: RepoRef,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        state: IssueState | None = None,
        milestone: int | Keep | None = KEEP,
    ) -> Issue: ...

    async def close_issue(
        self, repo: RepoRef, number: int, *, reason: CloseReason = "completed", duplicate_of: int = 0
    ) -> Issue:
        """Close the issue, with ``reason`` where the forge keeps one (GitHub's `state_reason`, and with
        `duplicate` the canonical issue's global id ``duplicate_of``: `duplicate_issue_id`); Gitea keeps no
        reason, so there it only closes."""

    async def opened_before(self, repo: RepoRef, login: str, number: int) -> bool:
        """Whether ``login`` opened an issue or pull request in the repository before ``number`` (or more than
        one page of them: no first-timer either) — the forge's listing by creator, not Steward's memory."""
        ...

    async def body_versions(self, repo: RepoRef, number: int) -> list[BodyVersion] | None:
        """The body's versions, oldest first ([]: never edited); None: no edit history in the API (Gitea)."""
        ...

    async def get_comment(self, repo: RepoRef, comment_id: int) -> Comment: ...

    async def list_repo_comments(self, repo: RepoRef, since: datetime) -> list[Comment]:
        """Every comment on the repository's issues and pull requests updated at or after ``since``, oldest
        first (the catch-up after downtime: ``bot.catchup.reconcile``)."""
        ...

    async def resolve_comment_url(self, url: str) -> CommentLink:
        """The comment a link on this forge names; ``NotSupported`` for anything else."""
        ...

    # Milestones, by ``Milestone.key``.
    async def list_milestones(self, repo: RepoRef, state: ListState = "open") -> list[Milestone]: ...

    async def get_milestone(self, repo: RepoRef, key: int) -> Milestone: ...

    async def set_milestone_state(self, repo: RepoRef, key: int, state: IssueState) -> Milestone: ...

    # Git.
    async def get_branch(self, repo: RepoRef, name: str) -> str | None:
        """The head commit of a branch, or None when there is no such branch."""
        ...

    async def commit_files(
        self, repo: RepoRef, *, base: str, branch: str, files: Sequence[FileChange], message: str
    ) -> Commit:
        """One commit of ``files`` on ``branch`` (made from the branch ``base`` when it does not exist yet),
        or the commit already there when a run before made it: never two."""
        ...

    async def get_commit(self, repo: RepoRef, sha: str) -> Commit: ...

    # Pull requests.
    async def open_pull_request(
        self, repo: RepoRef, *, head: str, base: str, title: str, body: str, draft: bool = False
    ) -> PullRequest:
        """Opens a pull request of branch ``head`` into ``base``, or returns the one already open for it."""
        ...

    async def get_pull_request(self, repo: RepoRef, number: int) -> PullRequest: ...

    async def find_pull_request(
        self, repo: RepoRef, head: str, *, state: ListState = "open"
    ) -> PullRequest | None:
        """The newest pull request of branch ``head`` of this repository in ``state`` (default: the open
        one), if there is one."""

    async def list_pr_commits(self, repo: RepoRef, number: int) -> list[Commit]: ...

    async def list_pr_files(self, repo: RepoRef, number: int) -> list[ChangedFile]: ...

    async def request_reviewers(self, repo: RepoRef, number: int, logins: Sequence[str]) -> tuple[str, ...]:
        """Request a review of pull request ``number`` from each of ``logins`` not yet requested; returns
        whose review is requested after. The author and people who may not review: ``ValidationFailed``."""
        ...

    # CI.
    async def set_commit_status(
        self,
        repo: RepoRef,
        sha: str,
        context: str,
        state: StatusState,
        description: str = "",
        target_url: str = "",
    ) -> CommitStatus:
        """Sets a status (description cut to 140 characters); an equal latest status is not written again."""
        ...

    async def set_check_run(
        self,
        repo: RepoRef,
        sha: str,
        name: str,
        state: StatusState,
        description: str = "",
        target_url: str = "",
    ) -> CheckRun:
        """Steward's own result as a check run of ``name``: ``pending`` in progress, ``success`` a success,
        ``failure`` and ``error`` a failure; the description is its title. Only a GitHub App may post one
        (else ``NotSupported``: a GitHub token, Gitea); an equal latest run of that name is not written again
        — unless another app's run of that name is the latest."""
        ...

    async def ci_state(self, repo: RepoRef, sha: str, required_contexts: Sequence[str] = ()) -> CIState: ...

    async def commit_statuses(self, repo: RepoRef, sha: str) -> list[CommitStatus]:
        """Every commit status of ``sha`` as the forge lists them, Steward's own included (``ci_state`` leaves
        ``steward/*`` out: Steward does not judge itself, but may read what it said)."""
        ...

    # Webhook deliveries (GitHub keeps them; Gitea's API has none: NotSupported).
    async def list_hook_deliveries(
        self, repo: RepoRef | None, since: datetime | None = None
    ) -> list[HookDelivery]:
        """The deliveries of the repository's hooks, or of the App's hook for ``repo=None``, newest first."""
        ...

    async def redeliver(self, repo: RepoRef | None, delivery: HookDelivery) -> None: ...

    # Who did what, what guards a branch, what CI said (``bot.forge.records``).
    async def label_events(self, repo: RepoRef, number: int) -> list[LabelEvent]:
        """Every label put on or taken off issue (or pull request) ``number``, oldest first, with who did
        it: GitHub's issue events ``labeled``/``unlabeled``, Gitea's timeline entries of type ``label``."""
        ...

    async def issue_history(self, repo: RepoRef, number: int) -> IssueHistory:
        """``label_events`` and the milestone changes, from the same one read (``bot.forge.records``)."""
        ...

    async def list_reviews(self, repo: RepoRef, number: int) -> list[Review]:
        """The submitted reviews of pull request ``number``, oldest first (pending ones are left out)."""
        ...

    async def read_branch(self, repo: RepoRef, name: str) -> Branch | None:
        """The branch, whether it is protected and the status checks it requires, as read access shows
        them (GitHub: the branch's protection summary and the rulesets that apply to it; Gitea: the
        branch's ``status_check_contexts``); None when there is no such branch."""
        ...

    async def ci_reports(self, repo: RepoRef, sha: str) -> list[CIReport]:
        """What each CI context said of ``sha`` and why: GitHub's latest check run of each name (output and
        annotations) and every latest commit status; Gitea's latest statuses (description as title)."""
        ...

    async def branch_pushes(self, repo: RepoRef, branch: str, since: str = "") -> list[Push]:
        """Every move of ``branch`` the forge's own history records, newest first, with who made it:
        GitHub's repository activity (``GET /repos/{o}/{r}/activity?ref=refs/heads/<b>``), Gitea's
        activity feed (``GET /repos/{o}/{r}/activities/feeds``, ``commit_repo`` entries of the branch).
        Not the webhooks'. ``NotSupported`` where it keeps none. ``since``: when the branch was made."""
        ...


def permission_at_least(have: PermissionLevel, need: PermissionLevel) -> bool:
    return PERMISSION_ORDER.index(have) >= PERMISSION_ORDER.index(need)
