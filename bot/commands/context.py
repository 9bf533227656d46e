"""What a handler is given: the event, the forge port, settings and a few safe effects; and what a handler
is (``EventHandler``, ``CommandHandler``) and how it is declared (``CommandSpec``, ``EventSpec``,
``ReconcileSpec``).

The declarations live here, beside the contexts they take, and a context sees the registry it runs under
through ``RegistryView`` (``bot.commands.registry.Registry`` is one): so ``bot.commands.registry`` imports
this module and never the other way round.
"""

from __future__ import annotations

import hashlib
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from bot.commands.grammar import Command
from bot.config.repo_settings import RepoSettings
from bot.config.settings import HandlerSettings, Permission
from bot.events.event import CommentSnapshot, Event
from bot.forge import (
    Comment,
    Forge,
    Issue,
    PermissionDenied,
    ReactionContent,
    RepoRef,
    ThreadLocked,
    User,
    repo_key,
)
from bot.queue.budgets import CommandBudget
from bot.queue.deferred import Deferred
from bot.queue.locks import Busy, IssueLocks, issue_key
from bot.queue.once_across_workers import Memo
from bot.records import signing, sticky
from bot.records.citations import Citations

# Repository ids by forge client and owner/name: an id never changes; a name may come to mean another
# repository only after a delete or rename, so the cache is short.
_REPO_IDS: weakref.WeakKeyDictionary[Any, dict[str, tuple[int, float]]] = weakref.WeakKeyDictionary()
_REPO_ID_TTL = 600.0


class CommandError(Exception):
    """A failure the user caused (bad arguments, wrong state): answered in the thread."""


EventHandler = Callable[["EventContext"], Awaitable[None]]
CommandHandler = Callable[["CommandContext"], Awaitable[None]]


@dataclass(frozen=True)
class CommandSpec:
    name: str
    handler: CommandHandler
    usage: str
    help: str
    permission: Permission
    # Whether the short form `/<name>` is accepted beside `/steward <name>`.
    short: bool = True
    # Where the command makes sense: on issues, on pull requests, or both.
    on_issues: bool = True
    on_pulls: bool = True
    # The settings section of the capability the command belongs to ("backlog", …): when the repository
    # switches that section off (`enabled: false`), the command is answered so and not run.
    section: str = ""
    # Whether the command is answered on a repository that has not invited Steward yet (no valid
    # configuration file: DESIGN §3.15) — help, ping, init and config, the commands that lead to the
    # invitation. Every other command is refused there with the reason.
    uninvited: bool = False
    # A repository setting (a dotted path into its settings, e.g. ``triage.short_commands``) that must be true
    # for the short form `/<name>` to run; where it is false, `/<name>` is text meant for another bot (Prow
    # and triagebot answer `/assign` too) and Steward says nothing. `/steward <name>` always runs.
    short_setting: str = ""


@dataclass(frozen=True)
class EventSpec:
    name: str
    actions: frozenset[str] | None
    handler: EventHandler
    # What the handler checks, in a maintainer's words ("the bug report's refinement verdict"): what
    # `/steward refresh` says it re-checked.
    checks: str = ""
    # The capability's settings section; a repository that switches it off does not run the handler.
    section: str = ""

    def matches(self, name: str, action: str) -> bool:
        return self.name == name and (self.actions is None or action in self.actions)


@dataclass(frozen=True)
class ReconcileSpec:
    """A capability's repository-wide re-derivation (e.g. every milestone's dashboard), run by `steward
    reconcile` and its periodic job with an EventContext whose event is a ``reconcile`` event for the
    repository (no issue). Per-issue state is re-derived through the ``issues.edited`` handlers instead."""

    name: str
    handler: EventHandler
    checks: str
    section: str = ""


class Named(Protocol):
    @property
    def name(self) -> str: ...


class RegistryView(Protocol):
    """What a handler reads of the registry it runs under (``bot.commands.registry.Registry`` is one): the
    commands (``/steward help``, "did you mean"), the names a configuration file may set, the event handlers
    (``/steward refresh`` re-runs the ``issues.edited`` ones), and what else is registered (onboarding
    proposes the settings of each capability that registers something)."""

    @property
    def commands(self) -> Mapping[str, CommandSpec]: ...

    @property
    def events(self) -> Sequence[EventSpec]: ...

    @property
    def reconcilers(self) -> Sequence[ReconcileSpec]: ...

    @property
    def periodic(self) -> Sequence[Named]: ...

    @property
    def configurable(self) -> tuple[str, ...]: ...

    def short_names(self) -> frozenset[str]: ...

    def handlers_for(self, name: str, action: str) -> list[EventSpec]: ...


@dataclass
class EventContext:
    event: Event
    forge: Forge
    me: User
    settings: HandlerSettings
    registry: RegistryView
    log: Any
    prefix: str = "steward"
    # Commands per person and repository (``HandlerSettings.limits``); None: unlimited (tests without Redis).
    command_budget: CommandBudget | None = None
    # The locks of other issues this job writes on; None: no locking (tests without Redis).
    locks: IssueLocks | None = None
    # Where ``settings`` came from: the repository's configuration file (and what is wrong with it).
    config: RepoSettings | None = None
    # Remembers what was done once across workers; None: everything counts as the first time.
    memo: Memo | None = None

    async def once(self, key: str, ttl: int = 30 * 86_400) -> bool:
        """True the first time ``key`` (scoped to this repository) is asked for within ``ttl`` seconds."""
        if self.memo is None:
            return True
        return await self.memo.first(f"{repo_key(self.event.forge, self.repo)}:{key}", ttl)

    async def was_once(self, key: str) -> bool:
        """Whether ``once(key)`` was asked for in this repository (and has not expired)."""
        return self.memo is not None and await self.memo.done(
            f"{repo_key(self.event.forge, self.repo)}:{key}"
        )

    @property
    def citations(self) -> Citations | None:
        """The index of which records cite which comment (``bot.records.citations``); None without Redis."""
        return None if self.memo is None else Citations(self.memo.redis)

    def enabled(self, section: str) -> bool:
        """Whether the repository lets the capability whose settings section is ``section`` run."""
        if not section:
            return True
        found = getattr(self.settings, section, None)
        return bool(getattr(found, "enabled", True))

    # Work for later (a deferred job, a short claim: ``bot.queue.deferred``); None: no Redis (unit tests).
    deferred: Deferred | None = None
    # The locked conversations the forge kept this job out of (``upsert_sticky``), said once each.
    locked_out: set[int] = field(default_factory=set)
    # In shadow mode (`mode: shadow`) ``forge`` writes nothing and this is the real one, for the answers of
    # the commands that speak even then (``bot.commands.dispatch.SHADOW_SPEAKERS``); None: live.
    live_forge: Forge | None = None

    @property
    def keyring(self) -> signing.Keyring:
        """The keys Steward signs and verifies its records with (``bot.records.signing``)."""
        return signing.current()

    async def repo_id(self) -> int:
        """The forge's id of this repository (signed records name it: it survives renames); the event's,
        when it named one (every webhook does), else asked of the forge once in a while."""
        if self.repo.id:
            return self.repo.id
        name = self.repo.full_name.casefold()
        try:
            cache = _REPO_IDS.setdefault(self.forge, {})
        except TypeError:  # a forge object that cannot be weakly referenced: no cache
            cache = {}
        found = cache.get(name)
        if found is not None and found[1] > time.monotonic():
            return found[0]
        repo_id = (await self.forge.get_repo(self.repo)).id
        if not repo_id:
            raise RuntimeError(f"the forge gave no id for repository {self.repo}")
        cache[name] = (repo_id, time.monotonic() + _REPO_ID_TTL)
        return repo_id

    async def verifier(self, repo: RepoRef | None = None) -> sticky.Verifier:
        """Checks records in this repository (or in ``repo``)."""
        if repo is None or repo == self.repo:
            return sticky.Verifier(self.keyring, self.forge.kind, await self.repo_id())
        return await sticky.Verifier.for_repo(self.keyring, self.forge, repo)

    async def record(
        self, comment: Comment | None, kind: str, key: str, *, expect_data: bool = True
    ) -> sticky.Record:
        """What the data block of Steward's ``kind``/``key`` comment is worth (``sticky.Record``): use its
        ``trusted`` data; when it is ``broken``, rebuild and ``report_rebuilt``."""
        return await (await self.verifier()).comment(comment, kind, key, expect_data=expect_data)

    async def record_of_issue(
        self, issue: Issue, kind: str, key: str, *, expect_data: bool = True
    ) -> sticky.Record:
        """The same for a record Steward keeps in an issue's body (a milestone's dashboard)."""
        return await sticky.verify(
            self.keyring,
            issue.body,
            forge=self.forge.kind,
            repo_id=await self.repo_id(),
            container="issue",
            id=issue.id,
            kind=kind,
            key=key,
            # An issue's updated_at moves with every comment and label, not only its body: only its creation
            # time (nobody can change it) tells a legacy body.
            changed_at="",
            created_at=issue.created_at,
            expect_data=expect_data,
        )

    async def signed_issue_body(self, issue_id: int, kind: str, key: str, text: str, data: Any) -> str:
        """An issue body that holds a signed record (the issue must exist: its id is signed)."""
        place = signing.Place(self.forge.kind, await self.repo_id(), "issue", issue_id, kind, key)
        after = await self.keyring.memory.last(place) or 0
        body, seq = sticky.signed(self.keyring, place, text, data, after=after)
        await self.keyring.memory.note(place, seq)
        return body

    def editor_of(self, record: sticky.Record) -> str | None:
        """Who changed the record, when this very event is that change (`issue_comment.edited` /
        `issues.edited` by someone other than Steward: the forge's ``sender``)."""
        place = record.place
        event = self.event
        if place is None or event.action != "edited" or not event.sender:
            return None
        if event.sender.casefold() == self.me.login.casefold():
            return None
        if place.container == "comment" and event.comment is not None and event.comment.id == place.id:
            return event.sender
        if place.container == "issue" and event.issue is not None and event.comment is None:
            issue_id = getattr(event.issue, "id", 0)
            if issue_id in (0, place.id):
                return event.sender
        return None

    async def report_rebuilt(self, record: sticky.Record, link: str, *, number: int | None = None) -> None:
        """One short note in the thread: Steward's record at ``link`` was changed (by whom, when this event
        says) or could not be verified, and was rebuilt. Once per broken version of the record."""
        if not record.broken or record.place is None:
            return
        editor = self.editor_of(record)
        if record.quiet and editor is None:
            # Legacy, or signed by a key Steward no longer holds (lost with Redis): re-derived and re-signed
            # without a word — nobody changed it that Steward can name (docs/integrity.md).
            self.log.info("record re-derived", kind=record.place.kind, outcome=record.outcome)
            return
        what = f"was changed by @{editor}" if editor else "could not be verified"
        if record.outcome == "replayed":
            what = f"was replaced by an older version{f' by @{editor}' if editor else ''}"
        text = f"Steward's record in {link} {what}; it was rebuilt. Nothing to do."
        # Keyed by the broken version itself: a replayed job finds its note (sticky) and writes nothing.
        key = f"{record.place.ident}\0{record.outcome}\0{record.seq}\0{record.shown!r}"
        digest = hashlib.sha256(key.encode()).hexdigest()[:12]
        self.log.warning("record rebuilt", kind=record.place.kind, outcome=record.outcome, editor=editor)
        await self.upsert_sticky("record-rebuilt", digest, text, number=number)

    def for_event(self, event: Event) -> EventContext:
        """The same context around another event (e.g. an issue re-read from the forge)."""
        return EventContext(
            event=event,
            forge=self.forge,
            me=self.me,
            settings=self.settings,
            registry=self.registry,
            log=self.log,
            prefix=self.prefix,
            command_budget=self.command_budget,
            locks=self.locks,
            config=self.config,
            memo=self.memo,
            deferred=self.deferred,
            live_forge=self.live_forge,
        )

    @property
    def repo(self) -> RepoRef:
        if self.event.repo is None:
            raise RuntimeError("this event names no repository")
        return self.event.repo

    @property
    def number(self) -> int:
        if self.event.issue is None:
            raise RuntimeError("this event names no issue")
        return self.event.issue.number

    @asynccontextmanager
    async def holding(self, number: int) -> AsyncIterator[None]:
        """Hold issue ``number``'s lock while writing on it (the job already holds its own issue's)."""
        if self.locks is None or (self.event.issue is not None and number == self.event.issue.number):
            yield
            return
        async with self.locks.hold(issue_key(self.event.forge, self.repo, number)):
            yield

    @asynccontextmanager
    async def holding_unless_busy(self, number: int) -> AsyncIterator[bool]:
        """Hold issue ``number``'s lock as a job on that issue would, and say True; or say False when another
        job keeps it. A reconciler's pass over many issues must not write beside the job of an event on one
        of them (both would create the same sticky comment); the job that holds the lock re-derives the
        same state (handlers are level-triggered), so the pass leaves the issue to it."""
        entered = False
        try:
            async with self.holding(number):
                entered = True
                yield True
        except Busy:
            if entered:
                raise
            self.log.info("an issue is being changed by another job; left to it", number=number)
            yield False

    @asynccontextmanager
    async def holding_repo(self, name: str) -> AsyncIterator[None]:
        """Hold a repository-wide lock named ``name`` (one issue the bot keeps per repository, a dashboard):
        two jobs that would both create it run one after the other, so the second finds the first's."""
        if self.locks is None:
            yield
            return
        async with self.locks.hold(f"{repo_key(self.event.forge, self.repo)}@{name}"):
            yield

    async def upsert_sticky(
        self,
        kind: str,
        key: str,
        text: str,
        *,
        data: Any = None,
        number: int | None = None,
        comments: list[Comment] | None = None,
        pin_text: bool = False,
    ) -> sticky.UpsertResult:
        """Create, edit or leave the bot's ``kind``/``key`` comment; ``comments``: the thread, when
        the caller has just read it; ``pin_text``: the signature covers the visible text too
        (``sticky.covered``).

        On a locked conversation the forge may refuse (``ThreadLocked``: always to a GitHub App): then
        nothing is written, the job says so once in its log, and the handler goes on with what it may still
        do there — labels, state — rather than fail or be retried (docs/forge-port.md, "Locked
        conversations"). The result is then ``unchanged`` with a comment of id 0: no comment of Steward's
        was made or changed."""
        thread = self.number if number is None else number
        try:
            result = await self._upsert(kind, key, text, data, thread, comments, pin_text)
        except ThreadLocked as exc:
            self.note_locked(thread, exc)
            return sticky.UpsertResult("unchanged", Comment(id=0, author=self.me.login, body=""))
        self.log.info("sticky comment", kind=kind, key=key, outcome=result.outcome)
        return result

    def note_locked(self, number: int, exc: ThreadLocked) -> None:
        """Say once per job and thread that the forge kept Steward out of a locked conversation."""
        if number in self.locked_out:
            return
        self.locked_out.add(number)
        self.log.warning(
            "the conversation is locked and the forge refuses Steward's comments there (a GitHub App may "
            "never comment on a locked issue): nothing was written in it, what else could be done (labels) "
            "was done; once it is unlocked, `/steward refresh` there or `steward reconcile` writes the rest",
            issue=number,
            error=str(exc),
        )

    async def _upsert(
        self,
        kind: str,
        key: str,
        text: str,
        data: Any,
        number: int,
        comments: list[Comment] | None,
        pin_text: bool,
    ) -> sticky.UpsertResult:
        return await sticky.upsert(
            self.forge,
            self.repo,
            number,
            bot_login=self.me.login,
            kind=kind,
            key=key,
            text=text,
            data=data,
            comments=comments,
            limit=sticky.MAX_CHARS,
            keyring=self.keyring if data is not None else None,
            repo_id=await self.repo_id() if data is not None else 0,
            pin_text=pin_text,
        )


@dataclass
class CommandContext(EventContext):
    command: Command = field(default=None)  # type: ignore[assignment]
    comment: CommentSnapshot = field(default=None)  # type: ignore[assignment]
    occurrence: int = 0
    replied: bool = False

    @property
    def actor(self) -> str:
        return self.comment.author

    @property
    def reply_key(self) -> str:
        """Stable per command in its comment, so a replayed job edits instead of reposting."""
        digest = hashlib.sha256(f"{self.command.name}\0{'\0'.join(self.command.args)}".encode()).hexdigest()[
            :10
        ]
        return f"{self.comment.id}-{digest}-{self.occurrence}"

    async def reply(self, text: str) -> None:
        await self.upsert_sticky("reply", self.reply_key, text)
        self.replied = True

    async def react(self, content: ReactionContent) -> None:
        """React to the command's comment. In a locked conversation GitHub takes no reaction from anyone
        (docs.github.com "Locking conversations"): the reaction is left out, the command still runs."""
        try:
            await self.forge.add_reaction(self.repo, self.comment.id, content)
        except PermissionDenied as exc:
            locked = self.event.issue is not None and self.event.issue.locked
            if not isinstance(exc, ThreadLocked) and not locked:
                raise
            self.log.info("no reaction: the conversation is locked", reaction=content)
