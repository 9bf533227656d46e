"""The forge effects of decision provenance: read what the juror needs (the issue, its thread, the
``--source`` comments, who may decide), ask it, and write the difference — the reconciliation comment and
the labels that mirror it.

``judge`` only reads (`steward forks`, ``api.unresolved_forks``, `/approve-spec`); ``sync_forks`` writes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.commands.context import EventContext
from bot.commands.grammar import could_hold_command, parse_commands_async
from bot.commands.permissions import PermissionsUnreadable, who_may
from bot.config.settings import HandlerSettings, Permission
from bot.forge import (
    Comment,
    Forge,
    ForgeError,
    Issue,
    NotFound,
    NotSupported,
    PermissionDenied,
    PermissionLevel,
    RepoRef,
    repo_key,
)
from bot.records import sticky
from bot.records.signing import parse_time
from bot.records.sticky import MISSING
from bot.records.sticky import Record as StickyRecord
from handlers.forks.juror import COMMANDS, RecordedRecord, Request, Source, Verdict, fork_status, requests_of
from handlers.forks.parse import ForkList, parse_forks
from handlers.forks.render import (
    KEY,
    KIND,
    Hints,
    data_block,
    recorded_from,
    remembered_from,
    render_comment,
)

DECIDE = "decide"
REOPEN = "reopen-fork"
DROP = "drop-fork"
DEFAULT_PERMISSION: Permission = "write"
# Source links followed per issue and run at most (each is one read).
MAX_SOURCES = 40
OPEN_COLOR = "d93f0b"
RESOLVED_COLOR = "0e8a16"


def decide_permission(settings: HandlerSettings) -> Permission:
    return settings.permission(DECIDE, DEFAULT_PERMISSION)


def reopen_permission(settings: HandlerSettings) -> Permission:
    return settings.permission(REOPEN, DEFAULT_PERMISSION)


def drop_permission(settings: HandlerSettings) -> Permission:
    return settings.permission(DROP, DEFAULT_PERMISSION)


@dataclass(frozen=True)
class Judged:
    issue: Issue
    forks: ForkList
    verdict: Verdict
    comments: list[Comment]
    sticky: Comment | None
    remembered: dict[str, str]
    # What the reconciliation comment's data block was worth (its records count only when it verifies).
    record: StickyRecord = MISSING


def _same_repo(a: RepoRef, b: RepoRef) -> bool:
    return a.full_name.casefold() == b.full_name.casefold()


async def read_source(forge: Forge, repo: RepoRef, url: str) -> Source:
    """What a ``--source`` link names, on this repository only (a comment elsewhere is not read further:
    its text could come from a repository the recorder cannot see)."""
    try:
        link = await forge.resolve_comment_url(url)
    except NotSupported as exc:
        text = str(exc)
        return Source(url, problem=text, foreign="not a link on this forge" in text)
    except NotFound:
        return Source(url)
    if not _same_repo(link.repo, repo):
        return Source(url, problem=f"it is in {link.repo}, not {repo}", foreign=True)
    return Source(url, link.comment, link.number, link.comment.html_url or url)


async def levels(
    forge: Forge, repo: RepoRef, logins: Iterable[str], required: Permission
) -> dict[str, PermissionLevel]:
    """Each login's access (casefolded keys); none asked when anyone may decide."""
    found: dict[str, PermissionLevel] = {}
    if required == "anyone":
        return found
    for login in sorted({login.casefold(): login for login in logins if login}.values()):
        try:
            found[login.casefold()] = await forge.permission_of(repo, login)
        except PermissionDenied:
            raise PermissionsUnreadable(repo) from None
        except NotFound:
            found[login.casefold()] = "none"
    return found


async def judge(
    forge: Forge,
    repo: RepoRef,
    number: int,
    settings: HandlerSettings,
    *,
    bot_login: str,
    prefix: str = "steward",
    issue: Issue | None = None,
    comments: list[Comment] | None = None,
    verifier: sticky.Verifier,
) -> Judged:
    """The juror's answer from forge state (reads only). The recorded decisions of a reconciliation comment
    whose data block does not verify are not used: the verdict is derived from the people's commands.

    Cost: a comment is parsed only when some line of it looks like a fork command (a linear scan, no
    markdown); the parse is bounded (``bot.commands.grammar``), cached by (comment id, updated_at) — each
    comment is parsed once, not at every sync of its thread — and a long body is parsed off the event loop.
    Access is read only for the authors of fork commands, once per author and run."""
    if issue is None:
        issue = await forge.get_issue(repo, number)
    forks = parse_forks(issue.body, settings.forks.headings)
    if comments is None:
        comments = await forge.list_comments(repo, number)
    found = sticky.find(comments, bot_login=bot_login, kind=KIND, key=KEY)
    record = await verifier.comment(found, KIND, KEY)
    data = record.trusted if found else None
    recorded = recorded_from(data)
    remembered = remembered_from(data)
    if found is not None and record.quiet:
        # Legacy, or signed by a key Steward no longer holds: not trusted, re-derived from the `/decide`
        # comments. Its records only say which were made under the earlier rule (docs/forks.md), and that
        # counts for a record whose `/decide` comment the forge says was written before Steward signed.
        recorded = _made_before_signing(recorded_from(record.shown), comments, verifier.keyring.since)
        remembered = remembered_from(record.shown)
    required = decide_permission(settings)
    reopen = reopen_permission(settings)
    drop = drop_permission(settings)
    me = bot_login.casefold()
    requests: list[Request] = []
    for comment in sorted(comments, key=lambda c: (c.created_at, c.id)):
        if comment.author.casefold() == me or not could_hold_command(
            comment.body, known=COMMANDS, prefix=prefix
        ):
            continue
        commands = await parse_commands_async(
            comment.body, known=COMMANDS, prefix=prefix, key=(comment.id, comment.updated_at)
        )
        requests += requests_of(comment, commands)
    anyone = all(p == "anyone" for p in (required, reopen, drop))
    people = await levels(forge, repo, [r.comment.author for r in requests], "anyone" if anyone else "write")
    sources: dict[str, Source] = {}
    for request in requests:
        if request.source is None or request.source in sources or request.problem:
            continue
        if not _allowed(request.comment.author, people, required, issue.author):
            continue
        if len(sources) >= MAX_SOURCES:
            break
        sources[request.source] = await read_source(forge, repo, request.source)
    authors = [s.comment.author for s in sources.values() if s.comment is not None]
    people.update(await levels(forge, repo, [a for a in authors if a.casefold() not in people], required))
    verdict = fork_status(
        issue,
        comments,
        people,
        forks=forks,
        sources=sources,
        recorded=recorded,
        remembered=remembered,
        required=required,
        reopen_required=reopen,
        drop_required=drop,
        bot_login=bot_login,
        prefix=prefix,
        requests=requests,
    )
    return Judged(issue, forks, verdict, comments, found, remembered, record)


def _allowed(login: str, people: dict[str, PermissionLevel], required: Permission, author: str) -> bool:
    from bot.commands.permissions import decide

    return decide(
        required, actor=login, author=author, actor_level=people.get(login.casefold(), "none")
    ).allowed


def hints_for(ctx: EventContext) -> Hints:
    return Hints(ctx.prefix, who_may(decide_permission(ctx.settings), forge=ctx.event.forge))


def labels_wanted(verdict: Verdict, open_label: str, resolved_label: str) -> tuple[str, ...]:
    """`forks:open` while any fork is open, claimed or invalid; `forks:resolved` when all are resolved;
    none when the issue lists no forks."""
    if not verdict.forks:
        return ()
    return (resolved_label,) if verdict.all_resolved else (open_label,)


async def _mirror_labels(ctx: EventContext, issue: Issue, verdict: Verdict) -> None:
    cfg = ctx.settings.forks
    wanted = labels_wanted(verdict, cfg.open_label, cfg.resolved_label)
    ours = {cfg.open_label.casefold(), cfg.resolved_label.casefold()}
    have = {label.casefold() for label in issue.labels}
    add = [name for name in wanted if name.casefold() not in have]
    drop = [
        name
        for name in issue.labels
        if name.casefold() in ours and name.casefold() not in {w.casefold() for w in wanted}
    ]
    for name in add:
        color = RESOLVED_COLOR if name == cfg.resolved_label else OPEN_COLOR
        await ctx.forge.ensure_label(
            ctx.repo, name, color=color, description="Design forks on this issue (Steward's decision records)"
        )
    if add:
        await ctx.forge.add_labels(ctx.repo, issue.number, add)
    for name in drop:
        with contextlib.suppress(NotFound):
            await ctx.forge.remove_label(ctx.repo, issue.number, name)


def tracked(issue_body: str, labels: Sequence[str], settings: HandlerSettings) -> bool:
    """Whether an issue concerns decision provenance: it lists forks, or carries one of the labels."""
    cfg = settings.forks
    ours = {cfg.open_label.casefold(), cfg.resolved_label.casefold()}
    return any(label.casefold() in ours for label in labels) or bool(
        parse_forks(issue_body, cfg.headings).forks
    )


async def sync_forks(
    ctx: EventContext, number: int, *, issue: Issue | None = None, comments: list[Comment] | None = None
) -> Judged | None:
    """Re-derive the reconciliation comment and the labels of one issue or pull request; writes only what
    differs. None when the issue has nothing to do with forks (no forks, no comment, no label).

    The issue is read holding its lock, not only written: what was read before another job's write (a
    reconciliation comment it created) must not decide this one's (a second comment)."""
    async with ctx.holding(number):
        return await _sync_held(ctx, number, issue=issue, comments=comments)


async def _sync_held(
    ctx: EventContext, number: int, *, issue: Issue | None, comments: list[Comment] | None
) -> Judged | None:
    judged = await judge(
        ctx.forge,
        ctx.repo,
        number,
        ctx.settings,
        bot_login=ctx.me.login,
        prefix=ctx.prefix,
        issue=issue,
        comments=comments,
        verifier=await ctx.verifier(),
    )
    cfg = ctx.settings.forks
    ours = {cfg.open_label.casefold(), cfg.resolved_label.casefold()}
    labelled = any(label.casefold() in ours for label in judged.issue.labels)
    if not judged.verdict.forks and judged.sticky is None and not labelled:
        return None
    if judged.verdict.forks or judged.sticky is not None:
        previous: dict[str, RecordedRecord] = recorded_from(judged.record.trusted)
        if judged.sticky is not None and judged.record.quiet:
            previous = _made_before_signing(
                recorded_from(judged.record.shown), judged.comments, ctx.keyring.since
            )
        data = data_block(judged.verdict, previous, judged.remembered)
        # Indexed before the comment is written: the index may only over-approximate.
        await _index(ctx, number, data.get("sources", []))
        written = await ctx.upsert_sticky(
            KIND,
            KEY,
            render_comment(judged.verdict, hints_for(ctx)),
            data=data,
            number=number,
            comments=judged.comments,
        )
        if judged.record.broken:
            await ctx.report_rebuilt(judged.record, written.comment.html_url or "this issue", number=number)
    await _mirror_labels(ctx, judged.issue, judged.verdict)
    return judged


def _made_before_signing(
    recorded: dict[str, RecordedRecord], comments: list[Comment], since: float
) -> dict[str, RecordedRecord]:
    """The records of an untrusted block whose command comment (the id its key starts with) the forge says
    was created before Steward started signing: the earlier rule may have judged those. Each is judged again
    from its sources all the same (its hash must still match them)."""
    created = {str(c.id): parse_time(c.created_at) for c in comments}
    kept: dict[str, RecordedRecord] = {}
    for key, record in recorded.items():
        at = created.get(key.split(":", 1)[0])
        if at is not None and since > 0 and at < since:
            kept[key] = record
    return kept


def _scope(ctx: EventContext) -> str:
    return repo_key(ctx.event.forge, ctx.repo)


async def _index(ctx: EventContext, number: int, cited: Iterable[object]) -> None:
    if ctx.citations is not None:
        await ctx.citations.put(_scope(ctx), str(number), [str(c) for c in cited])


async def issues_citing(ctx: EventContext, comment_id: int, *, skip: int, limit: int = 20) -> list[int]:
    """The issues whose reconciliation comment cites comment ``comment_id`` as a decision (an edit or a
    deletion there changes their verdict). From the Redis index when it is known complete (no forge read);
    otherwise by scanning the issues carrying a forks label, at most ``limit``."""
    if ctx.citations is not None:
        owners = await ctx.citations.owners(_scope(ctx), str(comment_id))
        if owners is not None:
            return sorted(int(o) for o in owners if o.isdigit() and int(o) != skip)
    return [n for n, cited in await _scan_citations(ctx, limit=limit, skip=skip) if comment_id in cited]


async def _scan_citations(ctx: EventContext, *, limit: int, skip: int = 0) -> list[tuple[int, set[int]]]:
    """(issue, the comment ids its reconciliation comment cites) for the issues carrying a forks label, at
    most ``limit`` of them (all when ``limit`` is 0)."""
    cfg = ctx.settings.forks
    found: list[tuple[int, set[int]]] = []
    seen: set[int] = {skip}
    for label in (cfg.resolved_label, cfg.open_label):
        try:
            issues = await ctx.forge.list_issues(ctx.repo, labels=[label], state="all", kind="all")
        except ForgeError:
            continue
        for issue in issues:
            if issue.number in seen or (limit and len(seen) > limit):
                continue
            seen.add(issue.number)
            mine = sticky.find(
                await ctx.forge.list_comments(ctx.repo, issue.number),
                bot_login=ctx.me.login,
                kind=KIND,
                key=KEY,
            )
            data = (await ctx.record(mine, KIND, KEY)).trusted if mine is not None else None
            cited = data.get("sources", []) if isinstance(data, dict) else []
            found.append((issue.number, {c for c in cited if isinstance(c, int)}))
    return found


async def rebuild_citations(ctx: EventContext) -> None:
    """Rebuild the index of cited comments from the forge (every issue carrying a forks label, open or
    closed) and mark it complete (`steward reconcile`), unless it is known complete already: every write of
    a reconciliation comment keeps it so, and Redis runs without eviction."""
    if ctx.citations is None or await ctx.citations.complete(_scope(ctx)):
        return
    for number, cited in await _scan_citations(ctx, limit=0):
        await _index(ctx, number, sorted(cited))
    await ctx.citations.mark_complete(_scope(ctx))
