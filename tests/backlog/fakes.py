"""An in-memory forge for the few effect tests that need to interleave a second writer exactly."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import structlog

from bot.commands.context import CommandContext, EventContext
from bot.commands.grammar import Command
from bot.config.settings import HandlerSettings
from bot.events.event import CommentSnapshot, Event, IssueSnapshot
from bot.forge import Comment, Issue, Label, NotFound, Repo, RepoRef, User
from handlers import build_registry

# The registry `steward run` builds, fresh for this module.
registry = build_registry()

REPO = RepoRef("o", "r")
BOT = User("steward-bot")


@dataclass
class FakeForge:
    issue: Issue
    comments: list[Comment] = field(default_factory=list)
    blocked_by: dict[int, list[int]] = field(default_factory=dict)
    # What listing an issue's blockers raises (a forge without issue dependencies); how often it was asked.
    blocked_by_error: Exception | None = None
    blocked_by_lists: int = 0
    # Called before each list_comments: lets a test play "another job" between reads.
    on_list: Callable[[FakeForge, int], None] | None = None
    lists: int = 0
    writes: list[str] = field(default_factory=list)
    kind: str = "github"
    next_id: int = 100

    async def get_repo(self, repo: RepoRef) -> Repo:
        return Repo(repo, "main", id=4242)

    async def list_folder(self, repo: RepoRef, path: str, ref: str | None = None) -> list[str] | None:
        return None  # a repository without issue templates

    async def get_issue(self, repo: RepoRef, number: int) -> Issue:
        if number != self.issue.number:
            raise NotFound("no such issue")
        return self.issue

    async def list_comments(self, repo: RepoRef, number: int) -> list[Comment]:
        self.lists += 1
        if self.on_list is not None:
            self.on_list(self, self.lists)
        return list(self.comments)

    async def create_comment(self, repo: RepoRef, number: int, body: str) -> Comment:
        self.next_id += 1
        comment = Comment(self.next_id, BOT.login, body)
        self.comments.append(comment)
        self.writes.append(f"create {comment.id}")
        return comment

    async def edit_comment(self, repo: RepoRef, comment_id: int, body: str) -> Comment:
        index = next(i for i, c in enumerate(self.comments) if c.id == comment_id)
        self.comments[index] = replace(self.comments[index], body=body)
        self.writes.append(f"edit {comment_id}")
        return self.comments[index]

    async def add_reaction(self, repo: RepoRef, comment_id: int, content: str) -> None:
        return None

    async def ensure_label(
        self, repo: RepoRef, name: str, *, color: str = "", description: str = ""
    ) -> Label:
        return Label(name)

    async def add_labels(self, repo: RepoRef, number: int, names: list[str]) -> tuple[str, ...]:
        self.issue = replace(self.issue, labels=(*self.issue.labels, *names))
        self.writes.append(f"labels +{names}")
        return self.issue.labels

    async def remove_label(self, repo: RepoRef, number: int, name: str) -> None:
        self.issue = replace(self.issue, labels=tuple(x for x in self.issue.labels if x != name))
        self.writes.append(f"labels -{name}")

    async def list_sub_issues(self, repo: RepoRef, number: int) -> list[Issue]:
        return []

    async def list_blocked_by(self, repo: RepoRef, number: int) -> list[int]:
        self.blocked_by_lists += 1
        if self.blocked_by_error is not None:
            raise self.blocked_by_error
        return list(self.blocked_by.get(number, []))

    async def add_blocked_by(self, repo: RepoRef, number: int, blocker: int) -> None:
        self.blocked_by.setdefault(number, []).append(blocker)
        self.writes.append(f"blocked {number}<-{blocker}")


def event_context(forge: FakeForge) -> EventContext:
    issue = forge.issue
    event = Event(
        forge="github",
        delivery_id="d1",
        name="issues",
        action="labeled",
        sender="maintainer",
        repo=REPO,
        issue=IssueSnapshot(issue.number, issue.title, issue.body, issue.state, issue.author, issue.labels),
        label="refine",
    )
    return EventContext(event, forge, BOT, HandlerSettings(), registry, structlog.get_logger())  # type: ignore[arg-type]


def command_context(forge: FakeForge, text: str, *, name: str, comment_id: int = 7) -> CommandContext:
    base = event_context(forge)
    args = tuple(text.split())
    return CommandContext(
        event=replace(base.event, name="issue_comment", action="created"),
        forge=forge,  # type: ignore[arg-type]
        me=BOT,
        settings=HandlerSettings(),
        registry=registry,
        log=structlog.get_logger(),
        command=Command(name, args, text, 1, False),
        comment=CommentSnapshot(comment_id, f"/{name} {text}", "maintainer"),
    )
