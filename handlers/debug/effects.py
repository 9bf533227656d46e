"""The board in the forge: read it with the thread, withdraw what was edited away, record, escalate once,
mirror the labels, and find the fix attempts. Everything a job writes goes through ``save``."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.commands.context import EventContext, RegistryView
from bot.commands.grammar import parse_commands
from bot.config.settings import HandlerSettings
from bot.forge import (
    Comment,
    FileContent,
    Forge,
    ForgeError,
    Issue,
    NotFound,
    RepoRef,
    TooManyItems,
    permission_at_least,
    repo_key,
)
from bot.forge.ci import latest_statuses
from bot.records import sticky
from handlers.bug_refinement import api as refinement_api
from handlers.bugfix import api as bugfix_api
from handlers.debug.board import (
    Board,
    Entry,
    Refused,
    Source,
    add_evidence,
    add_hypothesis,
    add_rank,
    add_resume,
    add_verdict,
    digest,
    escalation_due,
    escalation_entry,
    fold,
    grounds_of,
    log_from_json,
    log_to_json,
    withdraw,
)
from handlers.debug.grounding import Ground, Problem, check, merge, moved_to, named_commit, refusal
from handlers.debug.locations import find_locations
from handlers.debug.related import Related, ci_symptoms, related, related_from_json, related_to_json
from handlers.debug.render import FixAttempt, render_board, render_escalation

BOARD_KIND = "debug-board"
ESCALATION_KIND = "debug-escalation"
INVESTIGATING = "debug:investigating"
ROOT_CAUSE = "debug:root-cause"
NEEDS_HUMAN = "needs-human"
LABELS = {
    INVESTIGATING: ("fbca04", "Steward: root cause under investigation"),
    ROOT_CAUSE: ("0e8a16", "Steward: a root cause is evidenced"),
    NEEDS_HUMAN: ("d93f0b", "Steward: every hypothesis failed; a human must step in"),
}
REGRESSION_FIRST = "steward/regression-first"
# The command names the board records, as `bot.commands.grammar` returns them.
BOARD_COMMANDS = ("hypothesis", "evidence", "confirm", "refute", "inconclusive", "resume-debug", "rank")
MAX_PULLS_READ = 30
# The commands whose `path:line` places must exist in the repository (``Grounder``).
GROUNDED_COMMANDS = ("evidence", "confirm")
HEAD_BLOB_TTL = 86_400


def now_utc() -> datetime:
    return datetime.now(UTC)


def stamp(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Loaded:
    issue: Issue
    comments: list[Comment]
    board_comment: Comment | None
    log: tuple[Entry, ...]
    board: Board
    changed: bool
    # What the board's data block was worth when read (``sticky.Record``): when it did not verify, ``log``
    # was re-derived from the people's command comments and the board must be rewritten.
    record: sticky.Record = sticky.MISSING
    # The board's comment was deleted although the issue carries its labels: ``log`` was derived again.
    deleted: bool = False
    # What each grounded location pointed at when it was cited (``grounding.Ground``), by location.
    grounds: dict[str, Ground] = field(default_factory=dict)
    # The earlier boards and closed bugs found related when the board was made (``related``), and the CI
    # failures of the bug's regression test offered as symptoms then.
    related: tuple[Related, ...] = ()
    symptoms: tuple[str, ...] = ()


def _timeout(settings: HandlerSettings) -> timedelta:
    return timedelta(hours=settings.debug.pending_timeout_hours)


class Grounder:
    """Checks that the places evidence names exist in the repository (``grounding.check``): at the default
    branch's head, at the commit a person names (``--at <sha>``), or at a link's own ref. One contents read
    per file and ref in a job; the blob a file has at a head commit is kept in Redis (a commit never
    changes), so re-rendering a board to say "file changed since" costs no read while the head stays."""

    def __init__(self, forge: Forge, repo: RepoRef, *, redis: Any = None) -> None:
        self._forge = forge
        self._repo = repo
        self._redis = redis
        self._files: dict[tuple[str, str], FileContent | None] = {}
        self._trees: dict[str, list[str]] = {}
        self._head: tuple[str, str] | None = None

    async def head(self) -> tuple[str, str]:
        """The default branch and its head commit ("" when the repository has no commit yet)."""
        if self._head is None:
            branch = (await self._forge.get_repo(self._repo)).default_branch
            self._head = (branch, await self._forge.get_branch(self._repo, branch) or "")
        return self._head

    async def file(self, path: str, ref: str) -> FileContent | None:
        key = (path, ref)
        if key not in self._files:
            self._files[key] = await self._forge.read_file(self._repo, path, ref) if ref else None
        return self._files[key]

    async def moved(self, path: str, ref: str) -> tuple[str, int] | None:
        """A file of ``path``'s name elsewhere at ``ref`` (a moved file) and its line count; one tree read per
        ref in a job, only when a cited file is missing."""
        if not ref:
            return None
        if ref not in self._trees:
            try:
                self._trees[ref] = await self._forge.list_files(self._repo, ref) or []
            except ForgeError:
                self._trees[ref] = []
        found = moved_to(path, self._trees[ref])
        if found is None:
            return None
        content = await self.file(found, ref)
        return found, len(content.content.splitlines()) if content is not None else 0

    async def _commit(self, sha: str, prefix: str) -> str:
        try:
            return (await self._forge.get_commit(self._repo, sha)).sha
        except NotFound:
            raise Refused(
                f"there is no commit `{sha}` in this repository, so the places your evidence names cannot be "
                f"checked there. Name a commit of this repository (`--at <sha>`) or leave `--at` out to "
                f"check at the default branch's head (`/{prefix} evidence H1 for src/auth/login.py:42 …`)."
            ) from None

    async def _this_repository(self, named: str) -> bool:
        """Whether a link's owner/name is this repository: by its name, or by a name it had before a rename
        or a transfer (the forge redirects it: the same id). Asked of the forge only when the names differ."""
        if named.casefold() == self._repo.full_name.casefold():
            return True
        try:
            other = await self._forge.get_repo(RepoRef.parse(named))
            mine = await self._forge.get_repo(self._repo)
        except (ForgeError, ValueError):
            return False
        return bool(other.id) and other.id == mine.id

    async def ground(self, text: str, refs: Sequence[str], prefix: str) -> list[Ground]:
        """What the places ``refs`` (found in ``text``) point at; ``Refused`` naming every one that does
        not exist."""
        at, _ = named_commit(text)
        wanted = [loc for loc in find_locations(text) if str(loc) in refs]
        if not wanted:
            return []
        grounds: list[Ground] = []
        problems: list[Problem] = []
        for loc in wanted:
            if loc.url:
                if not await self._this_repository(loc.repo):
                    elsewhere = f"the link points at another repository (`{loc.repo}`), not this one"
                    problems.append(Problem(str(loc), elsewhere))
                    continue
                ref, where = loc.ref, f"`{loc.ref}`"
            elif at is not None:
                ref = await self._commit(at, prefix)
                where = f"commit `{ref[:7]}`"
            else:
                branch, ref = await self.head()
                where = f"`{branch}` (`{ref[:7]}`)" if ref else f"`{branch}` (no commit yet)"
            found = await self.file(loc.path, ref)
            result = check(
                loc,
                None if found is None else found.content,
                blob=found.sha if found is not None else "",
                commit=ref,
                where=where,
                moved=await self.moved(loc.path, ref) if found is None else None,
            )
            if isinstance(result, Ground):
                grounds.append(result)
            else:
                problems.append(result)
        if problems:
            raise Refused(refusal(problems, prefix), tuple(problems))
        return grounds

    async def _blob_at(self, path: str, commit: str) -> str:
        """The blob ``path`` has at ``commit`` ("" when it has none), remembered in Redis."""
        key = "steward:blob:" + digest("blob", f"{repo_key(self._forge.kind, self._repo)}\n{commit}\n{path}")
        if self._redis is not None:
            cached = await self._redis.get(key)
            if cached is not None:
                return cached.decode() if isinstance(cached, bytes) else str(cached)
        found = await self.file(path, commit)
        blob = found.sha if found is not None else ""
        if self._redis is not None:
            await self._redis.set(key, blob, ex=HEAD_BLOB_TTL)
        return blob

    async def changed(self, grounds: Mapping[str, Ground]) -> set[str]:
        """The grounded locations whose file is not the same at the default branch's head any more."""
        if not grounds:
            return set()
        _, head = await self.head()
        out: set[str] = set()
        for location, ground in grounds.items():
            blob = await self._blob_at(ground.path, head) if head else ""
            if blob[: len(ground.blob)] != ground.blob:
                out.add(location)
        return out


def grounder(ctx: EventContext, repo: RepoRef | None = None) -> Grounder:
    return Grounder(ctx.forge, repo or ctx.repo, redis=ctx.memo.redis if ctx.memo is not None else None)


def held_commands(body: str, *, known: Sequence[str], prefix: str) -> set[tuple[int, str]]:
    """The (occurrence, digest) of every board command ``body`` holds now (as the dispatcher counts them)."""
    seen: Counter[tuple[str, tuple[str, ...]]] = Counter()
    out: set[tuple[int, str]] = set()
    for command in parse_commands(body, known=known, prefix=prefix):
        occurrence = seen[(command.name, command.args)]
        seen[(command.name, command.args)] += 1
        if command.name in BOARD_COMMANDS:
            out.add((occurrence, digest(command.name, command.text)))
    return out


def reconcile_log(
    log: Sequence[Entry], comments: Sequence[Comment], *, bot_login: str, known: Sequence[str], prefix: str
) -> tuple[Entry, ...]:
    """The log with the evidence of comments since edited or deleted marked withdrawn."""
    by_id = {c.id: c for c in comments if c.author.casefold() != bot_login.casefold()}
    wanted = {e.comment for e in log if e.comment}
    gone = {cid for cid in wanted if cid not in by_id}
    held = {cid: held_commands(by_id[cid].body, known=known, prefix=prefix) for cid in wanted if cid in by_id}
    return withdraw(log, gone, held)


async def derive_log(
    forge: Forge,
    repo: RepoRef,
    comments: Sequence[Comment],
    *,
    bot_login: str,
    known: Sequence[str],
    prefix: str,
    now: datetime,
    pending_timeout: timedelta,
    grounder: Grounder,
) -> tuple[tuple[Entry, ...], dict[str, Ground]]:
    """The board's log re-derived from its source — the people's board commands in the thread, in order,
    each counted only when its author has write access now (as the command requires) and, for evidence and
    confirmations, when the places they name exist (checked again now, as the command was). For a board
    whose data block does not verify. Escalations (Steward's own entries) are made again when they fall
    due. Also what the grounded places point at."""
    log: list[Entry] = []
    grounds: dict[str, Ground] = {}
    allowed: dict[str, bool] = {}
    for comment in comments:
        if comment.author.casefold() == bot_login.casefold():
            continue
        seen: Counter[tuple[str, tuple[str, ...]]] = Counter()
        for command in parse_commands(comment.body, known=known, prefix=prefix):
            occurrence = seen[(command.name, command.args)]
            seen[(command.name, command.args)] += 1
            if command.name not in BOARD_COMMANDS:
                continue
            if comment.author not in allowed:
                level = await forge.permission_of(repo, comment.author)
                allowed[comment.author] = permission_at_least(level, "write")
            if not allowed[comment.author]:
                continue
            board = fold(log, now=now, pending_timeout=pending_timeout)
            source = Source(comment.author, comment.created_at, comment.id, occurrence, comment.html_url)
            try:
                if command.name == "hypothesis":
                    entry = add_hypothesis(board, command.text, source, prefix)
                elif command.name == "evidence":
                    entry = add_evidence(board, command.args, command.text, source, prefix)
                elif command.name == "resume-debug":
                    entry = add_resume(board, command.text, source, prefix)
                elif command.name == "rank":
                    entry = add_rank(board, command.args, command.text, source, prefix)
                else:
                    kind = "confirm" if command.name == "confirm" else "refute"
                    kind = "inconclusive" if command.name == "inconclusive" else kind
                    entry = add_verdict(board, kind, command.args, command.text, source, prefix)  # type: ignore[arg-type]
                if command.name in GROUNDED_COMMANDS and entry.refs:
                    grounds = merge(grounds, await grounder.ground(command.text, entry.refs, prefix))
            except Refused:
                continue
            log.append(entry)
    return tuple(log), grounds


async def read_board(
    forge: Forge,
    repo: RepoRef,
    number: int,
    *,
    bot_login: str,
    settings: HandlerSettings,
    registry: RegistryView,
    prefix: str,
    verifier: sticky.Verifier,
    now: datetime | None = None,
    grounder: Grounder | None = None,
) -> Loaded:
    """The bug, its thread and its board as the forge holds them now (nothing is written). A board whose data
    block does not verify is re-derived from the people's commands (``derive_log``)."""
    issue = await forge.get_issue(repo, number)
    comments = await forge.list_comments(repo, number)
    board_comment = sticky.find(comments, bot_login=bot_login, kind=BOARD_KIND, key=str(number))
    record = await verifier.comment(board_comment, BOARD_KIND, str(number))
    now = now or now_utc()
    known = sorted(registry.short_names())
    # The board's labels say a board existed: if its comment is gone (any writer may delete it), it is
    # derived again from the people's commands like a board that does not verify.
    deleted = board_comment is None and any(label.casefold() in LABELS for label in issue.labels)
    if (board_comment is not None and record.trusted is None) or deleted:
        kept: tuple[Related, ...] = ()
        seen: tuple[str, ...] = ()
        stored, grounds = await derive_log(
            forge,
            repo,
            comments,
            bot_login=bot_login,
            known=known,
            prefix=prefix,
            now=now,
            pending_timeout=_timeout(settings),
            grounder=grounder or Grounder(forge, repo),
        )
        log, changed = stored, True
    else:
        stored, grounds = log_from_json(record.trusted), grounds_of(record.trusted)
        trusted = record.trusted if isinstance(record.trusted, dict) else {}
        kept = related_from_json(trusted.get("related"))
        seen = tuple(str(x)[:400] for x in trusted.get("symptoms") or () if isinstance(x, str))[:3]
        log = reconcile_log(stored, comments, bot_login=bot_login, known=known, prefix=prefix)
        changed = log != stored or record.outcome == "legacy"
    board = fold(log, now=now, pending_timeout=_timeout(settings))
    return Loaded(
        issue,
        comments,
        board_comment,
        log,
        board,
        changed,
        record,
        deleted,
        grounds,
        kept if stored else (),
        seen if stored else (),
    )


async def load(ctx: EventContext, number: int) -> Loaded:
    return await read_board(
        ctx.forge,
        ctx.repo,
        number,
        bot_login=ctx.me.login,
        settings=ctx.settings,
        registry=ctx.registry,
        prefix=ctx.prefix,
        verifier=await ctx.verifier(),
        grounder=grounder(ctx),
    )


def _hypothesis_of_pull(board: Board, text: str) -> int | None:
    confirmed = [h.id for h in board.confirmed]
    if len(confirmed) == 1:
        return confirmed[0]
    for match in re.finditer(r"\bH([1-9][0-9]{0,3})\b", text):
        if int(match.group(1)) in confirmed:
            return int(match.group(1))
    return None


async def fix_attempts(
    forge: Forge, repo: RepoRef, number: int, board: Board, branch_prefix: str
) -> list[FixAttempt]:
    """Open pull requests from `<branch_prefix><number>-…` (or exactly `<branch_prefix><number>`), with the
    confirmed hypothesis each fixes and its `steward/regression-first` status. Read only while a hypothesis
    is confirmed (a fix needs one); only open pull requests whose title or body names `#<number>` are read
    (Steward's bugfix pull requests are titled `Bugfix for #<number>: …`), at most ``MAX_PULLS_READ``."""
    if not board.confirmed:
        return []
    branch = f"{branch_prefix}{number}"
    found: list[FixAttempt] = []
    pulls = await forge.list_issues(repo, state="open", kind="pulls")
    # Only pull requests that name the bug (`Bugfix for #42: …`, `Fixes #42`) are read one by one.
    names_bug = re.compile(rf"#{number}\b")
    mentioning = [p for p in pulls if names_bug.search(f"{p.title}\n{p.body}")]
    for item in sorted(mentioning, key=lambda p: -p.number)[:MAX_PULLS_READ]:
        try:
            pull = await forge.get_pull_request(repo, item.number)
        except NotFound:
            continue
        if pull.state != "open" or not (pull.head_ref == branch or pull.head_ref.startswith(branch + "-")):
            continue
        latest = latest_statuses(await forge.commit_statuses(repo, pull.head_sha)).get(REGRESSION_FIRST)
        state = latest.state if latest is not None else ""
        found.append(
            FixAttempt(
                pull.number, pull.html_url, _hypothesis_of_pull(board, f"{pull.title}\n{pull.body}"), state
            )
        )
    return found


async def find_symptoms(ctx: EventContext, issue: Issue) -> tuple[str, ...]:
    """CI failures the forge reports at the default branch's head that name the bug's regression test
    (section 7's path, or a test case its code defines): offered as symptoms when the board is made."""
    slot = bugfix_api.parse_slot(issue.body)
    if not slot.path:
        return ()
    branch, head = await grounder(ctx).head()
    if not head:
        return ()
    cases = bugfix_api.case_names(slot.path, slot.code) if slot.code else frozenset()
    reports = await ctx.forge.ci_reports(ctx.repo, head)
    return ci_symptoms(reports, slot.path, sorted(cases), where=f"`{branch}` (`{head[:7]}`)")


async def find_related(ctx: EventContext, issue: Issue, board: Board) -> tuple[Related, ...]:
    """Seed 004's related sessions, looked for once, when the board is made: other boards (any state) and
    closed bugs citing the same files or whose symptom (the report's observed behaviour) shares words with
    this bug's. A repository with more issues than
    the port lists gets none (``TooManyItems``)."""
    candidates: dict[int, Issue] = {}
    try:
        for label in (INVESTIGATING, ROOT_CAUSE, NEEDS_HUMAN):
            for other in await ctx.forge.list_issues(ctx.repo, labels=[label], state="all"):
                candidates[other.number] = other
        bug_label = ctx.settings.backlog.bug_label
        for other in await ctx.forge.list_issues(ctx.repo, labels=[bug_label], state="closed"):
            candidates[other.number] = other
    except TooManyItems:
        return ()
    cited = {ref.rsplit(":", 1)[0] for h in board.hypotheses for ref in h.locations}
    return related(issue, cited, list(candidates.values()), observed_of)


def observed_of(body: str) -> str:
    """What a bug report says happened, as bug refinement reads a report (its observed behaviour)."""
    return refinement_api.observed_text(refinement_api.report_of(body))


def wanted_labels(board: Board) -> tuple[set[str], set[str]]:
    """(labels to have, labels to drop) for the board's state. `needs-human` is dropped only after a resume,
    so a human's own `needs-human` label on a bug never investigated stays."""
    if board.escalated is not None:
        return {NEEDS_HUMAN}, {INVESTIGATING, ROOT_CAUSE}
    drop = {NEEDS_HUMAN} if board.resumes else set()
    if board.confirmed:
        return {ROOT_CAUSE}, {INVESTIGATING} | drop
    return {INVESTIGATING}, {ROOT_CAUSE} | drop


async def _mirror_labels(ctx: EventContext, issue: Issue, board: Board) -> None:
    have, drop = wanted_labels(board)
    missing = [name for name in sorted(have) if not issue.has_label(name)]
    for name in missing:
        color, description = LABELS[name]
        await ctx.forge.ensure_label(ctx.repo, name, color=color, description=description)
    if missing:
        await ctx.forge.add_labels(ctx.repo, issue.number, missing)
    for name in sorted(drop):
        if issue.has_label(name):
            await ctx.forge.remove_label(ctx.repo, issue.number, name)


async def save(
    ctx: EventContext, loaded: Loaded, add: Entry | None = None, grounded: Sequence[Ground] = ()
) -> Board:
    """Record ``add`` (if any, with what its places point at: ``grounded``), escalate when due (one comment
    per round, written before the board so a re-run finds it), then write the board and its labels — only
    what differs."""
    settings = ctx.settings.debug
    now = now_utc()
    log = loaded.log if add is None else (*loaded.log, add)
    grounds = merge(loaded.grounds, grounded) if grounded else loaded.grounds
    board = fold(log, now=now, pending_timeout=_timeout(ctx.settings))
    if not log and loaded.board_comment is None:
        return board
    number = loaded.issue.number
    if escalation_due(board):
        text = render_escalation(
            board,
            author=loaded.issue.author,
            escalate_to=settings.escalate_to,
            prefix=ctx.prefix,
            board_url=loaded.board_comment.html_url if loaded.board_comment else "",
        )
        await ctx.upsert_sticky(
            ESCALATION_KIND, f"{number}-{board.epoch}", text, number=number, comments=loaded.comments
        )
        log = (*log, escalation_entry(board, stamp(now)))
        board = fold(log, now=now, pending_timeout=_timeout(ctx.settings))
    near, symptoms = loaded.related, loaded.symptoms
    if loaded.board_comment is None and not loaded.deleted:
        near = await find_related(ctx, loaded.issue, board)
        symptoms = await find_symptoms(ctx, loaded.issue)
    fixes = await fix_attempts(ctx.forge, ctx.repo, number, board, ctx.settings.bugfix.branch_prefix)
    text = render_board(
        board,
        author=loaded.issue.author,
        escalate_to=settings.escalate_to,
        prefix=ctx.prefix,
        timeout_hours=settings.pending_timeout_hours,
        fixes=fixes,
        grounds=grounds,
        changed=await grounder(ctx).changed(grounds),
        related=near,
        symptoms=symptoms,
    )
    data = log_to_json(log, grounds)
    if near:
        data["related"] = related_to_json(near)
    if symptoms:
        data["symptoms"] = list(symptoms)
    written = await ctx.upsert_sticky(
        BOARD_KIND,
        str(number),
        text,
        data=data,
        number=number,
        comments=loaded.comments,
    )
    if loaded.record.broken:
        await ctx.report_rebuilt(
            loaded.record, written.comment.html_url or "the root-cause board", number=number
        )
    elif loaded.deleted:
        await ctx.upsert_sticky(
            "record-rebuilt",
            f"deleted-{written.comment.id}",
            f"Steward's record in {written.comment.html_url or 'the root-cause board'} was deleted; it was "
            "rebuilt from the commands in this thread. Nothing to do.",
            number=number,
        )
    await _mirror_labels(ctx, loaded.issue, board)
    return board


async def refresh(ctx: EventContext, number: int) -> Board | None:
    """Re-derive the board of bug ``number`` when it has one (edits, deletions, time, fix attempts)."""
    async with ctx.holding(number):
        loaded = await load(ctx, number)
        if loaded.board_comment is None and not loaded.deleted:
            return None
        return await save(ctx, loaded)
