"""The forge effects of bugfix branches: open the branch and its pull request (`/bugfix`), recompute the
`steward/regression-first` status and the ledger comment, and close the bug when the fix merges.

Level-triggered: each function reads the current state (the bug's record comment, the pull request's
commits, CI, the ledger's events in Steward's command replies) and writes only what differs, so a replayed
delivery or a re-run job writes nothing new, and a job killed between two writes is finished by the next run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from bot import sticky
from bot.context import CommandContext, CommandError, EventContext
from bot.forge import (
    CIOutcome,
    Comment,
    Commit,
    FileChange,
    Issue,
    PermissionDenied,
    PullRequest,
    permission_at_least,
)
from bot.permissions import PermissionsUnreadable
from bot.settings import BugfixSettings
from handlers.bugfix import inputs
from handlers.bugfix.gate import (
    BugfixRequest,
    GateInput,
    branch_name,
    bug_of_branch,
    check_gate,
    pull_title,
    red_message,
    valid_branch,
)
from handlers.bugfix.ledger import Budgets, Event, Ledger, event_from_json, event_to_json, fold
from handlers.bugfix.render import (
    Opened,
    Summary,
    branch_url,
    exhausted_note,
    ledger_text,
    pull_body,
    record_text,
    refusal_text,
    summary_text,
)
from handlers.bugfix.slot import case_names, parse_slot, recipe_part, with_test
from handlers.bugfix.status import CONTEXT, BranchCommit, RegressionStatus, StatusInput, evaluate, red_commit

RECORD_KIND = "bugfix"
LEDGER_KIND = "bugfix-ledger"
EXHAUSTED_KIND = "bugfix-exhausted"
SUMMARY_KIND = "bugfix-summary"
OPEN_LABEL = "bugfix:open"
GAP_LABEL = "bugfix:disclosed-gap"
EXHAUSTED_LABEL = "bugfix:budget-exhausted"
MERGED_LABEL = "bugfix:merged"
LABELS: Mapping[str, tuple[str, str]] = {
    OPEN_LABEL: ("1d76db", "Steward: a regression-first bugfix branch is open"),
    GAP_LABEL: ("fbca04", "Steward: the fix has a disclosed gap instead of red proof"),
    EXHAUSTED_LABEL: ("d73a4a", "Steward: the review budget is exhausted; a person must decide"),
    MERGED_LABEL: ("0e8a16", "Steward: the regression-first fix was merged"),
}
# Commits read per pull request (each needs a call for its files); more than this fails the status anyway.
MAX_COMMITS = 30
# The ledger comment's copy of the events stays well inside a comment (DESIGN §3.11).
MAX_LEDGER_DATA = 30_000
_REPLY_HEAD = "<!-- steward:reply:"


def settings_of(ctx: EventContext) -> BugfixSettings:
    return ctx.settings.bugfix


def budgets_of(settings: BugfixSettings) -> Budgets:
    b = settings.budgets
    return Budgets(b.review_rounds, b.fix_cycles, b.no_verdict_retries)


# --- the bug's record -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Record:
    """What the bug's record comment remembers (its data block): the branch, the test, the budgets fixed at
    the first `/bugfix`, and every pull request the bug has had (so a new one reuses the ledger)."""

    branch: str
    base: str
    path: str
    digest: str
    budgets: Budgets
    pulls: tuple[int, ...] = ()
    red: str = ""
    trusted_by: str = ""
    opened_by: str = ""
    # The hypothesis `/bugfix H<n>` chose ("" when none was named).
    hypothesis: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "v": 1,
            "branch": self.branch,
            "base": self.base,
            "path": self.path,
            "digest": self.digest,
            "budgets": self.budgets.to_json(),
            "pulls": list(self.pulls),
            "red": self.red,
            "trusted_by": self.trusted_by,
            "opened_by": self.opened_by,
            "hypothesis": self.hypothesis,
        }

    @classmethod
    def from_json(cls, raw: Any, default: Budgets) -> Record | None:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("branch"), str):
            return None
        pulls = raw.get("pulls")
        return cls(
            branch=str(raw["branch"]),
            base=str(raw.get("base") or ""),
            path=str(raw.get("path") or ""),
            digest=str(raw.get("digest") or ""),
            budgets=Budgets.from_json(raw.get("budgets"), default),
            pulls=tuple(p for p in pulls if isinstance(p, int))[:50] if isinstance(pulls, list) else (),
            red=str(raw.get("red") or ""),
            trusted_by=str(raw.get("trusted_by") or ""),
            opened_by=str(raw.get("opened_by") or ""),
            hypothesis=str(raw.get("hypothesis") or "")[:10],
        )


async def find_record(
    ctx: EventContext, comments: Sequence[Comment], number: int
) -> tuple[Comment | None, Record | None]:
    """The bug's bugfix record, when its data block verifies (one that does not is not used: the budgets then
    come from Steward's own signed replies, ``ledger_events``)."""
    comment = sticky.find(list(comments), bot_login=ctx.me.login, kind=RECORD_KIND, key=str(number))
    if comment is None:
        return None, None
    verified = await ctx.record(comment, RECORD_KIND, str(number))
    if verified.broken:
        # Not used; the budgets then come from the signed replies. (No "rebuilt" note: this record is
        # rewritten only when /bugfix next writes it.)
        ctx.log.warning("the bugfix record does not verify; not using it", outcome=verified.outcome)
    return comment, Record.from_json(verified.trusted, budgets_of(settings_of(ctx)))


async def write_record(
    ctx: EventContext, number: int, record: Record, opened: Opened, comments: list[Comment] | None = None
) -> None:
    await ctx.upsert_sticky(
        RECORD_KIND, str(number), record_text(opened), data=record.to_json(), number=number, comments=comments
    )


async def add_label(ctx: EventContext, number: int, name: str, current: Sequence[str]) -> None:
    if any(label.casefold() == name.casefold() for label in current):
        return
    color, description = LABELS[name]
    await ctx.forge.ensure_label(ctx.repo, name, color=color, description=description)
    await ctx.forge.add_labels(ctx.repo, number, [name])


# --- /bugfix ----------------------------------------------------------------------------------------------


async def _author_can_write(ctx: EventContext, author: str) -> bool:
    try:
        level = await ctx.forge.permission_of(ctx.repo, author)
    except PermissionDenied:
        raise PermissionsUnreadable(ctx.repo) from None
    return permission_at_least(level, "write")


def _opened(
    ctx: EventContext, number: int, record: Record, pull: PullRequest | None, html_url: str
) -> Opened:
    return Opened(
        number=number,
        branch=record.branch,
        branch_link=branch_url(html_url, record.branch, ctx.event.forge),
        base=record.base,
        path=record.path,
        digest=record.digest,
        pull=pull.number if pull else None,
        pull_link=pull.html_url if pull else "",
        red_sha=record.red,
        trusted_by=record.trusted_by,
    )


async def start_bugfix(ctx: CommandContext, request: BugfixRequest) -> None:
    """`/bugfix`: the gate, then (each step found before it is made) the record, the branch with its red
    commit, the draft pull request, the label; a second run finds them all and says so."""
    forge, repo, number = ctx.forge, ctx.repo, ctx.number
    settings = settings_of(ctx)
    issue = await forge.get_issue(repo, number)
    comments = await forge.list_comments(repo, number)
    _, record = await find_record(ctx, comments, number)
    repository = await forge.get_repo(repo)
    if record is not None and await forge.get_branch(repo, record.branch) is not None:
        await _resume(ctx, issue, record, repository.html_url, comments)
        return
    slot = parse_slot(issue.body)
    verdict = inputs.refinement_verdict(comments, bot_login=ctx.me.login, number=number)
    root = await inputs.root_cause(ctx, repo, issue, request.hypothesis)
    result = check_gate(
        GateInput(
            verdict=verdict.status if verdict else None,
            blockers=verdict.blockers if verdict else (),
            slot=slot,
            test_globs=settings.test_globs,
            author=issue.author,
            author_can_write=await _author_can_write(ctx, issue.author),
            trust_digest=request.trust_digest,
            unresolved_forks=await inputs.unresolved_forks(ctx, repo, number),
            root_cause=root,
            prefix=ctx.prefix,
        )
    )
    if not result.passed:
        raise CommandError(refusal_text(result.refusals))
    assert slot.path is not None and slot.code is not None and slot.digest is not None
    base = request.base or (record.base if record else "") or repository.default_branch
    if not valid_branch(base) or await forge.get_branch(repo, base) is None:
        raise CommandError(
            f"there is no branch `{base}` to start from. Name an existing one: `--base <branch>`."
        )
    branch = record.branch if record else branch_name(settings.branch_prefix, number, issue.title)
    if record is None and await forge.get_branch(repo, branch) is not None:
        # Steward writes its record before the branch, so a branch without one was made by someone else.
        raise CommandError(
            f"a branch `{branch}` exists already and is not a bugfix branch Steward opened. Delete or rename "
            f"it, then run `/{ctx.prefix} bugfix` again."
        )
    record = Record(
        branch=branch,
        base=base,
        path=slot.path,
        digest=slot.digest,
        # Budgets belong to the bug, fixed at its first /bugfix: a later configuration does not raise them.
        budgets=record.budgets if record else budgets_of(settings),
        pulls=record.pulls if record else (),
        trusted_by=ctx.actor if request.trust_digest else "",
        opened_by=ctx.actor,
        hypothesis=request.hypothesis or (record.hypothesis if record else ""),
    )
    # The record first: a job killed after this finds it (and the budgets) on the next run.
    await write_record(ctx, number, record, _opened(ctx, number, record, None, repository.html_url), comments)
    existing = await forge.read_file(repo, slot.path, ref=base)
    content = with_test(existing.content.decode("utf-8", "replace") if existing else None, slot.code)
    red = await forge.commit_files(
        repo,
        base=base,
        branch=record.branch,
        files=[FileChange(slot.path, content.encode("utf-8"))],
        message=red_message(number, root.hypothesis),
    )
    record = replace(record, red=red.sha)
    await _resume(ctx, issue, record, repository.html_url, None, fresh=True, hypothesis=root.hypothesis)


async def _resume(
    ctx: CommandContext,
    issue: Issue,
    record: Record,
    html_url: str,
    comments: list[Comment] | None,
    *,
    fresh: bool = False,
    hypothesis: str | None = None,
) -> None:
    """The branch exists: find or open its pull request, bring the record and the label up to date, reply."""
    forge, repo, number = ctx.forge, ctx.repo, issue.number
    for previous in reversed(record.pulls):
        earlier = await forge.get_pull_request(repo, previous)
        if earlier.merged:
            await ctx.reply(
                f"This bug's fix was merged already in #{earlier.number} (branch `{record.branch}`): nothing "
                "to do."
            )
            return
    pull = await forge.find_pull_request(repo, record.branch)
    opened_now = pull is None
    if pull is None:
        pull = await forge.open_pull_request(
            repo,
            head=record.branch,
            base=record.base,
            title=pull_title(number, issue.title),
            body=pull_body(
                number,
                recipe_part(issue.body, "5.3"),
                inputs.hypothesis_of(issue.body) if hypothesis is None else hypothesis,
                record.path,
            ),
            draft=True,
        )
    if pull.number not in record.pulls:
        record = replace(record, pulls=(*record.pulls, pull.number))
    evidence = await sync_pull(ctx, pull, number, record)
    record = replace(record, red=evidence.red_sha or record.red)
    await write_record(ctx, number, record, _opened(ctx, number, record, pull, html_url), comments)
    await add_label(ctx, number, OPEN_LABEL, issue.labels)
    link = (
        f"[`{record.branch}`]({branch_url(html_url, record.branch, ctx.event.forge)})"
        if html_url
        else f"`{record.branch}`"
    )
    if fresh:
        # The record comment just written says it all (branch, pull request, what comes next): a reply
        # beside it would say the same twice. The command gets its 👍.
        pass
    elif opened_now:
        await ctx.reply(
            f"The bugfix branch {link} exists already; I opened the draft pull request #{pull.number} for "
            "it. The bug's review ledger and budget carry on from before."
        )
    else:
        await ctx.reply(
            f"The bugfix branch {link} and its pull request #{pull.number} exist already: nothing new was "
            "written. Push the fix to the branch; the pull request's ledger says what is missing next."
        )


# --- the status -------------------------------------------------------------------------------------------


@dataclass
class Evidence:
    commits: list[BranchCommit]
    red_sha: str
    red_ci: CIOutcome | None
    head_ci: CIOutcome | None
    ledger: Ledger
    status: RegressionStatus
    bug: Issue
    comments: dict[int, list[Comment]] = field(default_factory=dict)


async def read_commits(ctx: EventContext, pull: PullRequest) -> list[BranchCommit]:
    """The pull request's commits, oldest first along the head's first parents (forges list them in
    different orders), each with the files it changed."""
    listed = await ctx.forge.list_pr_commits(ctx.repo, pull.number)
    by_sha = {c.sha: c for c in listed}
    chain: list[Commit] = []
    sha: str | None = pull.head_sha if pull.head_sha in by_sha else (listed[-1].sha if listed else None)
    while sha is not None and sha in by_sha and len(chain) <= len(listed):
        chain.append(by_sha[sha])
        sha = by_sha[sha].parents[0] if by_sha[sha].parents else None
    chain.reverse()
    out: list[BranchCommit] = []
    for i, c in enumerate(chain):
        files = c.files
        if not files and i < MAX_COMMITS:
            files = (await ctx.forge.get_commit(ctx.repo, c.sha)).files
        out.append(BranchCommit(c.sha, c.parents, files, c.author_login or c.author_name))
    return out


@dataclass(frozen=True)
class LedgerSources:
    """What the ledger is re-derived from: each accepted command's event, and the budgets. Every event and
    the budgets are kept twice — in the command's reply and in each ledger comment's data block — so editing
    or deleting one of Steward's comments resets nothing: an event counts when either copy holds it, and a
    budget is the lowest either copy says."""

    events: list[Event]
    budgets: Budgets


def _lowest(a: Budgets, b: Budgets) -> Budgets:
    return Budgets(
        min(a.review_rounds, b.review_rounds),
        min(a.fix_cycles, b.fix_cycles),
        min(a.no_verdict_retries, b.no_verdict_retries),
    )


async def ledger_events(
    ctx: EventContext, number: int, record: Record, cache: dict[int, list[Comment]]
) -> LedgerSources:
    """The ledger's sources on the bug and on each of its pull requests (the ledger belongs to the bug).
    Only Steward's own comments count."""
    found: list[Event] = []
    budgets = record.budgets
    ledger_head = sticky.marker(LEDGER_KIND, str(number))
    verifier = await ctx.verifier()
    blocks = trusted = 0
    for where in dict.fromkeys((number, *record.pulls)):
        if where not in cache:
            cache[where] = await ctx.forge.list_comments(ctx.repo, where)
        for comment in cache[where]:
            if comment.author.casefold() != ctx.me.login.casefold():
                continue
            body = comment.body.lstrip()
            head = sticky.marker_of(body) if body.startswith((_REPLY_HEAD, ledger_head)) else None
            if head is None:
                continue
            # Each reply's block verifies on its own: one forged or deleted comment changes nothing.
            checked = await verifier.comment(comment, head[0], head[1], expect_data=False)
            blocks += checked.outcome != "missing"
            data = checked.trusted
            if not isinstance(data, Mapping) or data.get("bug") != number:
                continue
            trusted += 1
            if body.startswith(ledger_head):
                budgets = _lowest(budgets, Budgets.from_json(data.get("budgets"), budgets))
                raw_events = data.get("events")
                for raw in raw_events if isinstance(raw_events, list) else ():
                    event = event_from_json(raw)
                    if event is not None:
                        found.append(event)
                continue
            event = event_from_json(data.get("bugfix"))
            if event is not None:
                found.append(event)
    if blocks and not trusted:
        budgets = Budgets(0, 0, 0)  # nothing Steward wrote verifies: the budgets count as spent
    return LedgerSources(found, budgets)


def ledger_data(number: int, ledger: Ledger) -> dict[str, Any] | None:
    """The ledger comment's data block: the budgets and every event (None when it would not fit)."""
    events = [
        *(event_to_json(e) for e in ledger.rounds),
        *(event_to_json(e) for e in ledger.dispositions),
        *(event_to_json(e) for e in ledger.gaps),
    ]
    data = {"bug": number, "budgets": ledger.budgets.to_json(), "events": events}
    return (
        data
        if len(sticky.encode_data(data)) < MAX_LEDGER_DATA
        else {"bug": number, "budgets": data["budgets"]}
    )


async def assess(
    ctx: EventContext,
    pull: PullRequest,
    number: int,
    record: Record,
    cache: dict[int, list[Comment]] | None = None,
) -> Evidence:
    forge, repo = ctx.forge, ctx.repo
    settings = settings_of(ctx)
    cache = {} if cache is None else cache
    commits = await read_commits(ctx, pull)
    red = red_commit(commits)
    required = settings.required_contexts
    red_state = await forge.ci_state(repo, red.sha, required) if red else None
    # Nothing reported at all reads "pending" from the forge; None lets the status say "no CI reported".
    red_ci = red_state.verdict if red_state is not None and red_state.contexts else None
    head_ci = (await forge.ci_state(repo, pull.head_sha, required)).verdict
    red_file = await forge.read_file(repo, record.path, ref=red.sha) if red else None
    head_file = await forge.read_file(repo, record.path, ref=pull.head_sha)
    red_cases = (
        case_names(record.path, red_file.content.decode("utf-8", "replace")) if red_file else frozenset()
    )
    head_cases = case_names(record.path, head_file.content.decode("utf-8", "replace")) if head_file else None
    sources = await ledger_events(ctx, number, record, cache)
    ledger = fold(sources.budgets, sources.events)
    bug = await forge.get_issue(repo, number)
    root = await inputs.root_cause(ctx, repo, bug, record.hypothesis or None)
    status = evaluate(
        StatusInput(
            commits=commits,
            test_globs=settings.test_globs,
            test_path=record.path,
            red_ci=red_ci,
            head_ci=head_ci,
            red_cases=red_cases,
            head_cases=head_cases,
            max_commits_after_red=settings.max_commits_after_red,
            ledger=ledger,
            root_cause_evidenced=root.evidenced,
            root_cause_note=root.detail,
        )
    )
    return Evidence(commits, red.sha if red else "", red_ci, head_ci, ledger, status, bug, cache)


async def sync_pull(
    ctx: EventContext,
    pull: PullRequest,
    number: int,
    record: Record,
    cache: dict[int, list[Comment]] | None = None,
) -> Evidence:
    """Recompute the status of the pull request's head, its ledger comment, and the labels they mirror."""
    ev = await assess(ctx, pull, number, record, cache)
    if pull.state != "open":
        return ev
    text = ledger_text(
        number=number,
        status=ev.status,
        ledger=ev.ledger,
        red_sha=ev.red_sha,
        head_sha=pull.head_sha,
        red_ci=ev.red_ci or "",
        head_ci=ev.head_ci or "",
    )
    written = await ctx.upsert_sticky(
        LEDGER_KIND,
        str(number),
        text,
        data=ledger_data(number, ev.ledger),
        number=pull.number,
        comments=ev.comments.get(pull.number),
    )
    await ctx.forge.set_commit_status(
        ctx.repo, pull.head_sha, CONTEXT, ev.status.state, ev.status.description, written.comment.html_url
    )
    if ev.ledger.gaps:
        await add_label(ctx, number, GAP_LABEL, ev.bug.labels)
    if ev.ledger.exhausted:
        await add_label(ctx, number, EXHAUSTED_LABEL, ev.bug.labels)
        await add_label(ctx, pull.number, EXHAUSTED_LABEL, pull.labels)
        # The bug's author and the pull request's assignees decide how it goes on (whoever ran `/bugfix`
        # when nobody is assigned).
        mentions = [ev.bug.author, *(pull.assignees or (record.opened_by,))]
        note = exhausted_note(mentions, ev.ledger, written.comment.html_url, number)
        await ctx.upsert_sticky(
            EXHAUSTED_KIND, str(number), note, number=pull.number, comments=ev.comments.get(pull.number)
        )
    return ev


async def bugfix_of_branch(ctx: EventContext, branch: str) -> tuple[int, Record] | None:
    """The bug whose record names ``branch`` (a branch merely named like one is not a bugfix branch)."""
    number = bug_of_branch(settings_of(ctx).branch_prefix, branch)
    if number is None:
        return None
    comments = await ctx.forge.list_comments(ctx.repo, number)
    _, record = await find_record(ctx, comments, number)
    if record is None or record.branch != branch:
        return None
    return number, record


async def adopt(ctx: EventContext, number: int, record: Record, pull: PullRequest) -> Record:
    """A pull request of the bug's branch that the record does not list yet joins it (the ledger carries
    on)."""
    if pull.number in record.pulls:
        return record
    record = replace(record, pulls=(*record.pulls, pull.number))
    repository = await ctx.forge.get_repo(ctx.repo)
    await write_record(ctx, number, record, _opened(ctx, number, record, pull, repository.html_url))
    return record


async def close_bug(ctx: EventContext, pull: PullRequest, number: int, record: Record) -> None:
    """The fix merged: the bug gets the summary, `bugfix:merged`, and is closed."""
    ev = await assess(ctx, pull, number, record)
    body = ev.bug.body
    summary = Summary(
        number=number,
        pull=pull.number,
        steps=recipe_part(body, "5.2"),
        observed_expected=recipe_part(body, "5.3"),
        hypothesis=inputs.hypothesis_of(body),
        path=record.path,
        red_sha=ev.red_sha,
        red_ci=ev.red_ci or "—",
        head_sha=pull.head_sha,
        head_ci=ev.head_ci or "—",
        status=f"{ev.status.state} ({ev.status.description})",
    )
    await ctx.upsert_sticky(
        SUMMARY_KIND,
        str(number),
        summary_text(summary, ev.ledger),
        number=number,
        comments=ev.comments.get(number),
    )
    repository = await ctx.forge.get_repo(ctx.repo)
    done = replace(_opened(ctx, number, record, pull, repository.html_url), merged=True)
    await write_record(ctx, number, record, done, ev.comments.get(number))
    await add_label(ctx, number, MERGED_LABEL, ev.bug.labels)
    if any(label.casefold() == OPEN_LABEL for label in ev.bug.labels):
        await ctx.forge.remove_label(ctx.repo, number, OPEN_LABEL)
    if ev.bug.state != "closed":
        await ctx.forge.edit_issue(ctx.repo, number, state="closed")


# --- commands on the pull request -------------------------------------------------------------------------


async def bugfix_pull(ctx: CommandContext) -> tuple[PullRequest, int, Record]:
    pull = await ctx.forge.get_pull_request(ctx.repo, ctx.number)
    found = await bugfix_of_branch(ctx, pull.head_ref)
    if found is None:
        raise CommandError(
            f"this pull request is not a bugfix branch Steward opened. Run `/{ctx.prefix} bugfix` on the bug "
            "first."
        )
    number, record = found
    if pull.state != "open":
        raise CommandError("this pull request is closed: the ledger takes commands on the open one.")
    return pull, number, await adopt(ctx, number, record, pull)


async def record_reply(ctx: CommandContext, number: int, event: Event, text: str) -> None:
    """The command's reply, carrying the accepted event: the ledger is re-derived from these."""
    await ctx.upsert_sticky(
        "reply", ctx.reply_key, text, data={"bug": number, "bugfix": event_to_json(event)}
    )
    ctx.replied = True


def recorded(events: Sequence[Event], comment_id: int, kind: type) -> Event | None:
    return next((e for e in events if e.comment_id == comment_id and isinstance(e, kind)), None)
