"""What a forge records about who did what, what guards a branch and what CI said: the port's values for
``label_events``, ``issue_history``, ``list_reviews``, ``read_branch``, ``ci_reports``, ``branch_pushes``,
``body_versions``, ``read_file``, ``commit_statuses`` and ``set_check_run`` (re-exported by ``bot.forge``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# A review's verdict in the port's words: GitHub APPROVED / CHANGES_REQUESTED / COMMENTED, Gitea APPROVED /
# REQUEST_CHANGES / COMMENT. Pending (unsubmitted) and dismissed reviews are not listed.
ReviewVerdict = Literal["approved", "changes_requested", "commented"]
AnnotationLevel = Literal["notice", "warning", "failure"]
# How a branch moved, in GitHub's activity types (Gitea's feed says `commit_repo` for all but a deletion).
PushKind = Literal["push", "force_push", "branch_creation", "branch_deletion", "pr_merge", "other"]


@dataclass(frozen=True)
class LabelEvent:
    """A label put on (``added``) or taken off an issue or pull request, by ``actor`` at ``at``."""

    label: str
    added: bool
    actor: str
    at: str = ""
    # The label's id where the forge says it (Gitea's timeline: the label as it is *now*, renamed or not);
    # None on GitHub, whose issue events give the name the label had when it was put on or taken off.
    label_id: int | None = None
    # The event's place in the forge's one list of the issue's events (``issue_history``), oldest first.
    seq: int = 0


@dataclass(frozen=True)
class MilestoneEvent:
    """An issue put in (``joined``) or taken out of a milestone, by ``actor`` at ``at``: GitHub's issue
    events ``milestoned``/``demilestoned``, which name the milestone by its ``title`` only (REST
    "milestoned-issue-event": ``milestone: {title}``), so ``key`` is None; Gitea's timeline entries of type
    ``milestone``, which carry the milestone (``key``: its id) it left and the one it joined."""

    joined: bool
    title: str
    key: int | None
    actor: str
    at: str = ""
    seq: int = 0


@dataclass(frozen=True)
class IssueHistory:
    """An issue's label and milestone changes, each list oldest first; ``seq`` orders them across both."""

    labels: tuple[LabelEvent, ...] = ()
    milestones: tuple[MilestoneEvent, ...] = ()


@dataclass(frozen=True)
class FileContent:
    path: str
    content: bytes
    sha: str = ""


@dataclass(frozen=True)
class BodyVersion:
    """A version of an issue's body: who wrote it (the creation's version: the author), when (ISO 8601), and
    its text (None: the forge did not say)."""

    editor: str
    edited_at: str
    body: str | None


@dataclass(frozen=True)
class Review:
    """A submitted pull request review. ``commit_id`` is the commit it was made on (None when the forge
    does not say)."""

    id: int
    user: str
    state: ReviewVerdict
    commit_id: str | None = None
    body: str = ""
    submitted_at: str = ""


@dataclass(frozen=True)
class Branch:
    """A branch as a bot with read access sees it. ``required_contexts`` are the status checks that must
    pass before it can be merged into (empty: none); None when the branch is protected but the forge did
    not let the bot read which checks it requires, and then ``unread`` says why, in a maintainer's words.
    On Gitea each entry is a glob pattern (``status_check_contexts``)."""

    name: str
    sha: str
    protected: bool = False
    required_contexts: tuple[str, ...] | None = ()
    unread: str = ""


@dataclass(frozen=True)
class Annotation:
    """A line a check run points at (GitHub check run annotations)."""

    path: str
    start_line: int
    end_line: int
    level: AnnotationLevel
    message: str
    title: str = ""


@dataclass(frozen=True)
class CIReport:
    """What one CI context said of a commit and why: a GitHub check run (its ``output`` title, summary
    and text, and its annotations) or a commit status (its description as ``title``, both forges)."""

    context: str
    kind: Literal["check_run", "status"]
    # The check run's conclusion (or its status while it runs), or the status's state.
    outcome: str
    title: str = ""
    summary: str = ""
    text: str = ""
    annotations: tuple[Annotation, ...] = ()
    url: str = ""


@dataclass(frozen=True)
class Push:
    """One move of a branch as the forge's own history records it: who (``actor``, the forge login; "" when
    the forge did not say), when (``at``, ISO 8601), from ``before`` to ``after`` (either "" when the forge
    did not say)."""

    actor: str
    at: str
    after: str = ""
    before: str = ""
    kind: PushKind = "push"


@dataclass(frozen=True)
class CommitStatus:
    context: str
    # The forge's word: pending, success, failure, error (and Gitea's warning, skipped).
    state: str
    description: str = ""
    target_url: str = ""
    creator: str = ""
    id: int = 0
    updated_at: str = ""


@dataclass(frozen=True)
class CheckRun:
    """A GitHub check run (GitHub Actions jobs are check runs). ``status`` is queued, in_progress,
    completed, …; ``conclusion`` is set once it is completed."""

    name: str
    status: str
    conclusion: str | None = None
    id: int = 0
    app: str = ""
    completed_at: str | None = None
    # Its output's title and its details link (what ``set_check_run`` compares before writing again).
    title: str = ""
    details_url: str = ""
