"""An in-memory forge with milestones, and an in-memory ``Deferred``, for effect tests that need exact
control of time and of what a job sees."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import structlog

from bot.commands.context import CommandContext, EventContext
from bot.commands.grammar import Command
from bot.config.settings import HandlerSettings
from bot.events.event import CommentSnapshot, Event, IssueSnapshot, MilestoneSnapshot
from bot.forge import (
    KEEP,
    Comment,
    Issue,
    IssueHistory,
    Keep,
    Label,
    LabelEvent,
    Milestone,
    MilestoneEvent,
    NotFound,
    PermissionDenied,
    Repo,
    RepoRef,
    User,
)
from handlers import build_registry

# The registry `steward run` builds, fresh for this module.
registry = build_registry()

REPO = RepoRef("o", "r")
BOT = User("steward-bot")


@dataclass
class FakeForge:
    kind: str = "github"
    issues: dict[int, Issue] = field(default_factory=dict)
    milestones: dict[int, Milestone] = field(default_factory=dict)
    comments: dict[int, list[Comment]] = field(default_factory=dict)
    permissions: dict[str, str] = field(default_factory=dict)
    # What `repo_admins` answers; None: the forge refuses (Gitea, to a bot without admin).
    admins: tuple[str, ...] | None = ()
    writes: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    next_id: int = 1000
    # Who put each label on an item, unless ``label_log`` has the item's events: ``labeller``, who holds
    # maintain unless ``permissions`` says otherwise.
    labeller: str = "maintainer"
    label_log: dict[int, list[LabelEvent]] = field(default_factory=dict)
    # Each item's milestone changes (``seq`` against its label events' place, from 1), when a test says.
    milestone_log: dict[int, list[MilestoneEvent]] = field(default_factory=dict)
    label_ids: dict[str, int] = field(default_factory=dict)

    # --- helpers for tests ---

    def add(
        self, title: str, state: str = "open", *labels: str, milestone: int | None = 1, pr: bool = False
    ) -> int:
        number = max([0, *self.issues]) + 1
        self.issues[number] = Issue(number, title, "", state, "alice", labels, milestone, pr)  # type: ignore[arg-type]
        self._recount()
        return number

    def set(self, number: int, **fields: Any) -> None:
        self.issues[number] = replace(self.issues[number], **fields)
        self._recount()

    def milestone(self, key: int = 1, title: str = "v1", description: str = "") -> None:
        self.milestones[key] = Milestone(key, title, "open", description)
        self._recount()

    def close_milestone(self, key: int, at: str) -> None:
        self.milestones[key] = replace(self.milestones[key], state="closed", closed_at=at)

    def _recount(self) -> None:
        for key, ms in self.milestones.items():
            items = [i for i in self.issues.values() if i.milestone == key]
            opened = sum(1 for i in items if i.state == "open")
            self.milestones[key] = replace(ms, open_issues=opened, closed_issues=len(items) - opened)

    def dashboards(self) -> list[Issue]:
        return [i for i in self.issues.values() if i.has_label("milestone-dashboard")]

    # --- the port ---

    async def whoami(self) -> User:
        return BOT

    async def get_issue(self, repo: RepoRef, number: int) -> Issue:
        self.reads.append(f"issue {number}")
        if number not in self.issues:
            raise NotFound("no such issue")
        return self.issues[number]

    async def list_issues(
        self,
        repo: RepoRef,
        *,
        milestone: int | None = None,
        labels: Sequence[str] = (),
        state: str = "open",
        kind: str = "issues",
    ) -> list[Issue]:
        self.reads.append(f"list milestone={milestone} labels={list(labels)}")
        found = sorted(self.issues.values(), key=lambda i: i.number)
        return [
            i
            for i in found
            if (milestone is None or i.milestone == milestone)
            and all(i.has_label(name) for name in labels)
            and (state == "all" or i.state == state)
            and (kind == "all" or i.is_pull_request == (kind == "pulls"))
        ]

    async def get_repo(self, repo: RepoRef) -> Repo:
        return Repo(repo, "main", id=4242)

    async def create_issue(
        self, repo: RepoRef, title: str, body: str, labels: Sequence[str] = (), milestone: int | None = None
    ) -> Issue:
        number = max([0, *self.issues]) + 1
        # As the forges do: the creation time, to the second (the signed records' legacy rule reads it).
        made = datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
        self.issues[number] = Issue(
            number,
            title,
            body,
            "open",
            BOT.login,
            tuple(labels),
            milestone,
            id=90_000 + number,
            created_at=made,
        )
        self.writes.append(f"create issue {number}")
        return self.issues[number]

    async def edit_issue(
        self,
        repo: RepoRef,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        state: str | None = None,
        milestone: int | Keep | None = KEEP,
    ) -> Issue:
        fields: dict[str, Any] = {
            k: v for k, v in (("title", title), ("body", body), ("state", state)) if v is not None
        }
        self.issues[number] = replace(self.issues[number], **fields)
        self.writes.append(f"edit issue {number} {sorted(fields)}")
        return self.issues[number]

    async def ensure_label(
        self, repo: RepoRef, name: str, *, color: str = "", description: str = ""
    ) -> Label:
        return Label(name, color, description)

    async def list_comments(self, repo: RepoRef, number: int) -> list[Comment]:
        return list(self.comments.get(number, []))

    async def create_comment(self, repo: RepoRef, number: int, body: str) -> Comment:
        self.next_id += 1
        comment = Comment(self.next_id, BOT.login, body, issue_number=number)
        self.comments.setdefault(number, []).append(comment)
        self.writes.append(f"comment on {number}")
        return comment

    async def get_comment(self, repo: RepoRef, comment_id: int) -> Comment:
        for thread in self.comments.values():
            for comment in thread:
                if comment.id == comment_id:
                    return comment
        raise NotFound(f"no comment {comment_id}")

    async def edit_comment(self, repo: RepoRef, comment_id: int, body: str) -> Comment:
        for number, thread in self.comments.items():
            for index, comment in enumerate(thread):
                if comment.id == comment_id:
                    thread[index] = replace(comment, body=body)
                    self.writes.append(f"edit comment on {number}")
                    return thread[index]
        raise NotFound("no such comment")

    async def add_reaction(self, repo: RepoRef, comment_id: int, content: str) -> None:
        return None

    async def list_milestones(self, repo: RepoRef, state: str = "open") -> list[Milestone]:
        self.reads.append(f"milestones {state}")
        return [m for k, m in sorted(self.milestones.items()) if state == "all" or m.state == state]

    async def get_milestone(self, repo: RepoRef, key: int) -> Milestone:
        self.reads.append(f"milestone {key}")
        if key not in self.milestones:
            raise NotFound("no such milestone")
        return self.milestones[key]

    async def set_milestone_state(self, repo: RepoRef, key: int, state: str) -> Milestone:
        self.milestones[key] = replace(self.milestones[key], state=state, closed_at=None)  # type: ignore[arg-type]
        self.writes.append(f"milestone {key} {state}")
        return self.milestones[key]

    async def permission_of(self, repo: RepoRef, login: str) -> str:
        return self.permissions.get(login, "maintain" if login == self.labeller else "read")

    async def label_events(self, repo: RepoRef, number: int) -> list[LabelEvent]:
        self.reads.append(f"label events {number}")
        if number in self.label_log:
            return list(self.label_log[number])
        return [LabelEvent(name, True, self.labeller) for name in self.issues[number].labels]

    async def issue_history(self, repo: RepoRef, number: int) -> IssueHistory:
        """``label_events`` after one ``milestoned`` event into the item's milestone now, unless
        ``milestone_log`` has the item's milestone changes."""
        events = await self.label_events(repo, number)
        labels = tuple(replace(e, seq=i + 1, label_id=self.label_id(e.label)) for i, e in enumerate(events))
        if number in self.milestone_log:
            return IssueHistory(labels, tuple(self.milestone_log[number]))
        key = self.issues[number].milestone
        ms = self.milestones.get(key) if key is not None else None
        moves = (MilestoneEvent(True, ms.title, key, self.labeller, "", 0),) if ms is not None else ()
        return IssueHistory(labels, moves)

    def label_id(self, name: str) -> int:
        """A label's id, given on first sight (Gitea's ids only grow)."""
        return self.label_ids.setdefault(name.casefold(), len(self.label_ids) + 1)

    async def list_repo_labels(self, repo: RepoRef) -> list[Label]:
        self.reads.append("labels")
        for issue in self.issues.values():
            for name in issue.labels:
                self.label_id(name)
        return [Label(name, id=ident) for name, ident in self.label_ids.items()]

    async def repo_admins(self, repo: RepoRef) -> tuple[str, ...]:
        if self.admins is None:
            raise PermissionDenied("403 Only admins can query all permissions")
        return self.admins


@dataclass
class FakeDeferred:
    """``bot.queue.deferred.Deferred`` in memory: jobs are kept for the test to run, claims never expire."""

    jobs: dict[str, tuple[Event, float]] = field(default_factory=dict)
    claims: set[str] = field(default_factory=set)
    marks: dict[str, float] = field(default_factory=dict)

    async def run_later(self, event: Event, *, delay: float, job_id: str) -> bool:
        if job_id in self.jobs:
            return False
        self.jobs[job_id] = (event, delay)
        return True

    async def mark(self, key: str, when: float, *, ttl: float, only_new: bool = False) -> None:
        if not (only_new and key in self.marks):
            self.marks[key] = when

    async def marked(self, key: str) -> float | None:
        return self.marks.get(key)

    async def claim(self, key: str, *, ttl: float) -> bool:
        if key in self.claims:
            return False
        self.claims.add(key)
        return True


def context(
    forge: FakeForge,
    event: Event,
    settings: HandlerSettings | None = None,
    deferred: FakeDeferred | None = None,
) -> EventContext:
    return EventContext(
        event,
        forge,
        BOT,
        settings or HandlerSettings(),
        registry,
        structlog.get_logger(),
        deferred=deferred,  # type: ignore[arg-type]
    )


def milestone_event(
    action: str, key: int = 1, *, sender: str = "maintainer", forge: str = "github", **kw: Any
) -> Event:
    return Event(
        forge=forge,  # type: ignore[arg-type]
        delivery_id="d",
        name="milestone",
        action=action,
        sender=sender,
        repo=REPO,
        milestone=MilestoneSnapshot(key, "v1", "closed"),
        **kw,
    )


def item_event(forge: FakeForge, number: int, action: str = "labeled") -> Event:
    i = forge.issues[number]
    snapshot = IssueSnapshot(
        i.number, i.title, i.body, i.state, i.author, i.labels, i.milestone, i.is_pull_request
    )
    return Event(
        forge="github",
        delivery_id="d",
        name="issues",
        action=action,
        sender="alice",
        repo=REPO,
        issue=snapshot,
    )


def command_context(
    forge: FakeForge,
    number: int,
    text: str,
    *,
    actor: str = "maintainer",
    settings: HandlerSettings | None = None,
) -> CommandContext:
    i = forge.issues[number]
    snapshot = IssueSnapshot(
        i.number, i.title, i.body, i.state, i.author, i.labels, i.milestone, i.is_pull_request
    )
    event = Event(
        forge="github",
        delivery_id="c",
        name="issue_comment",
        action="created",
        sender=actor,
        repo=REPO,
        issue=snapshot,
    )
    args = tuple(text.split()[1:])
    # The person's command comment, as the forge holds it.
    thread = forge.comments.setdefault(number, [])
    thread[:] = [c for c in thread if c.id != 77]
    thread.append(Comment(77, actor, f"/{text}", issue_number=number))
    return CommandContext(
        event=event,
        forge=forge,  # type: ignore[arg-type]
        me=BOT,
        settings=settings or HandlerSettings(),
        registry=registry,
        log=structlog.get_logger(),
        command=Command("gate", args, " ".join(text.split(None, 1)[1:]), 1, False),
        comment=CommentSnapshot(77, f"/{text}", actor),
    )
