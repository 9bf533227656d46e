"""The `steward/regression-first` status and the ledger comment of a bugfix pull request: read the evidence
(the commits, CI, the ledger's events in Steward's replies), evaluate it, write only what differs.

Level-triggered: each function reads the current state and writes only what differs, so a replayed delivery
or a re-run job writes nothing new, and a job killed between two writes is finished by the next run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.commands.context import EventContext
from bot.commands.permissions import PermissionsUnreadable
from bot.forge import (
    CIOutcome,
    Comment,
    Commit,
    Issue,
    NotFound,
    NotSupported,
    PermissionDenied,
    PullRequest,
    Push,
    Review,
    TooManyItems,
    repo_key,
)
from bot.forge.ci import is_own
from bot.forge.own_results import set_own_result
from bot.records import neutralise, sticky
from handlers.bugfix import other_capabilities, restorations
from handlers.bugfix.independence import modifiers, unaccounted, void_rounds
from handlers.bugfix.ledger import Budgets, Event, Ledger, event_from_json, event_to_json, fold
from handlers.bugfix.native_reviews import Conflict, judge
from handlers.bugfix.proof import check_proof, head_report, red_names_test, red_not_vouched
from handlers.bugfix.record import (
    EXHAUSTED_KIND,
    EXHAUSTED_LABEL,
    GAP_LABEL,
    LEDGER_KIND,
    Record,
    add_label,
    settings_of,
)
from handlers.bugfix.regression_slot import case_names, is_test_path
from handlers.bugfix.render import exhausted_note, ledger_text
from handlers.bugfix.restorations import Restoration
from handlers.bugfix.reviewer_requests import forge_requested_excluded, request_reviewers
from handlers.bugfix.scope import ScopeCheck, changed_lines, check_scope, regression_test_edited
from handlers.bugfix.status import (
    CONTEXT,
    BranchCommit,
    RegressionStatus,
    Specialists,
    StatusInput,
    evaluate,
    own_commits,
    red_commit,
)


async def group_logins(
    ctx: EventContext, reviewers: Sequence[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The logins a reviewer group's ``reviewers`` stand for — a login as it is, an ``@org/team`` as its
    members read from the forge (``Forge.team_members``) — and the teams whose members could not be read:
    they count as nobody (fail closed), and the status says so."""
    logins: list[str] = []
    unreadable: list[str] = []
    for name in reviewers:
        bare = name.strip().lstrip("@")
        if "/" not in bare:
            logins.append(bare)
            continue
        org, _, team = bare.partition("/")
        try:
            logins += await ctx.forge.team_members(org, team)
        except (NotFound, PermissionDenied):
            unreadable.append(f"@{bare}")
    return tuple(dict.fromkeys(logins)), tuple(unreadable)


# Commits read per pull request (each needs a call for its files); more than this fails the status anyway.
MAX_COMMITS = 30
# The ledger comment's copy of the events stays well inside a comment (DESIGN §3.11).
MAX_LEDGER_DATA = 30_000
_REPLY_HEAD = "<!-- steward:reply:"
# The fix's size is measured file by file up to this many files (more count as over any budget), and kept a
# day per (red commit, head).
MAX_SIZED_FILES = 50
FIX_SIZE_TTL = 86_400


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
    # The pull request's native reviews (oldest first) and the recorded conflicts between reviewers.
    native: tuple[Review, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    # The branch's moves as the forge records them (None: this forge keeps no push history), and everyone
    # excluded from reviewing with why (``independence.modifiers``).
    pushes: list[Push] | None = None
    excluded: dict[str, str] = field(default_factory=dict)
    # What in the fix goes beyond its evidence (None: not checked, the hypotheses board is off).
    scope: ScopeCheck | None = None
    # Why the push history cannot show who moved the branch, in a reader's words ("": it can, or unreadable).
    push_gap: str = ""
    # Steward's own results someone else set, and Steward restored (the ledger's last few).
    restored: tuple[Restoration, ...] = ()


LONG_FEED = (
    "the repository's activity feed is longer than Steward reads (`STEWARD_MAX_LIST_ITEMS` entries), even a "
    "day at a time, so Steward cannot verify who pushed to the branch"
)


def hidden_move(sha: str) -> str:
    return (
        f"the branch's move to `{sha[:10]}` is not in the forge's activity feed (Gitea leaves out the "
        "activity of people who keep theirs private), so Steward cannot verify who pushed it"
    )


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
        out.append(
            BranchCommit(c.sha, c.parents, files, c.author_login or c.author_name, c.committer_login or "")
        )
    return out


@dataclass(frozen=True)
class LedgerSources:
    """What the ledger is re-derived from: each accepted command's event, and the budgets. Every event and
    the budgets are kept twice — in the command's reply and in each ledger comment's data block — so editing
    or deleting one of Steward's comments resets nothing: an event counts when either copy holds it, and a
    budget is the lowest either copy says."""

    events: list[Event]
    budgets: Budgets
    conflicts: list[Conflict] = field(default_factory=list)
    # Steward's own results someone else set, as the ledger comments recorded them (``restorations``).
    restored: list[Restoration] = field(default_factory=list)


def _lowest(a: Budgets, b: Budgets) -> Budgets:
    return Budgets(
        min(a.review_rounds, b.review_rounds),
        min(a.fix_cycles, b.fix_cycles),
        min(a.no_verdict_retries, b.no_verdict_retries),
    )


async def ledger_events(
    ctx: EventContext, number: int, record: Record, cache: dict[int, list[Comment]]
) -> LedgerSources:
    """The ledger's sources on the bug and on each of its pull requests (the ledger belongs to the bug):
    those the record lists, and the newest of the bug's branch in this repository (matched by head
    repository id, so a fork's branch of the same name is never one). The bug itself holds a copy of the
    ledger's events and budgets, so editing the record's list of pull requests resets nothing. Only
    Steward's own comments count."""
    found: list[Event] = []
    conflicts: dict[int, Conflict] = {}
    restored: list[Restoration] = []
    budgets = record.budgets
    ledger_head = sticky.marker(LEDGER_KIND, str(number))
    newest = await ctx.forge.find_pull_request(ctx.repo, record.branch, state="all")
    extra = (newest.number,) if newest is not None and not newest.from_fork else ()
    verifier = await ctx.verifier()
    blocks = trusted = 0
    for where in dict.fromkeys((number, *record.pulls, *extra)):
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
                raw_conflicts = data.get("conflicts")
                for raw in raw_conflicts if isinstance(raw_conflicts, list) else ():
                    if (conflict := Conflict.from_json(raw)) is not None:
                        conflicts.setdefault(conflict.comment_id, conflict)
                restored += restorations.from_data(data.get("restored"))
                continue
            event = event_from_json(data.get("bugfix"))
            if event is not None:
                found.append(event)
            if (conflict := Conflict.from_json(data.get("bugfix"))) is not None:
                conflicts.setdefault(conflict.comment_id, conflict)
    if blocks and not trusted:
        budgets = Budgets(0, 0, 0)  # nothing Steward wrote verifies: the budgets count as spent
    ordered = sorted(conflicts.values(), key=lambda c: c.comment_id)
    return LedgerSources(found, budgets, ordered, [*restorations.merged(restored)])


def ledger_data(
    number: int,
    ledger: Ledger,
    conflicts: tuple[Conflict, ...] = (),
    restored: Sequence[Restoration] = (),
    *,
    status: RegressionStatus | None = None,
) -> dict[str, Any] | None:
    """The ledger comment's data block: the budgets, every event and conflict, the last restorations of
    Steward's own results (only the budgets and those when it would not fit); on the pull request's copy,
    the status's state and the code of the rule that decided it (``status.py``; ``INFRA_ERROR`` when a check
    could not be made), for tools."""
    events = [
        *(event_to_json(e) for e in ledger.rounds),
        *(event_to_json(e) for e in ledger.dispositions),
        *(event_to_json(e) for e in ledger.gaps),
        *(event_to_json(e) for e in ledger.red_proofs),
        *(event_to_json(e) for e in ledger.scopes),
    ]
    data: dict[str, Any] = {"bug": number, "budgets": ledger.budgets.to_json(), "events": events}
    if conflicts:
        data["conflicts"] = [c.to_json() for c in conflicts]
    kept = [r.to_json() for r in restored]
    if kept:
        data["restored"] = kept
    if status is not None:
        data["status"] = {"state": status.state, "code": status.code}
    if len(sticky.encode_data(data)) < MAX_LEDGER_DATA:
        return data
    short = {"bug": number, "budgets": data["budgets"], **({"restored": kept} if kept else {})}
    return short | ({"status": data["status"]} if status is not None else {})


async def assess(
    ctx: EventContext,
    pull: PullRequest,
    number: int,
    record: Record,
    cache: dict[int, list[Comment]] | None = None,
    *,
    reviewing: bool = False,
) -> Evidence:
    """``reviewing``: a `/review` is being judged (the branch's push history is then read even before the
    first round; otherwise only once there is a round it could void)."""
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
    red_text = red_file.content.decode("utf-8", "replace") if red_file else None
    head_text = head_file.content.decode("utf-8", "replace") if head_file else None
    red_cases = case_names(record.path, red_text) if red_text is not None else frozenset()
    head_cases = case_names(record.path, head_text) if head_text is not None else None
    vouched = record.vouched_in(red_text) if red else ""
    problem = (
        red_not_vouched()
        if vouched is None
        else check_proof(path=record.path, vouched=vouched, red_text=red_text, head_text=head_text)
    )
    vouched = vouched or ""
    regression_cases = sorted(case_names(record.path, vouched)) if vouched else []
    # Steward's own results (statuses, and check runs as an App) never count as CI's word on the test.
    reports = await forge.ci_reports(repo, pull.head_sha) if regression_cases else []
    reports = [r for r in reports if not is_own(r.context)]
    at_head = head_report(reports, regression_cases) if regression_cases else None
    named: bool | None = None
    if red_state is not None and red_ci == "red" and regression_cases:
        failing = {c for c, o in red_state.contexts.items() if o == "red" and (not required or c in required)}
        only_ours = red_cases <= set(regression_cases)
        named = red_names_test(
            [r for r in await forge.ci_reports(repo, red_state.sha) if r.context in failing],
            regression_cases,
            record.path if only_ours else "",
        )
    sources = await ledger_events(ctx, number, record, cache)
    ledger = fold(sources.budgets, sources.events)
    native = tuple(await forge.list_reviews(repo, pull.number))
    conflicts = tuple(sources.conflicts)
    pushes: list[Push] | None = []
    gap = ""
    if reviewing or ledger.rounds:
        try:
            pushes = await forge.branch_pushes(repo, record.branch, pull.created_at)
        except (NotSupported, PermissionDenied):
            pushes = None  # nobody can be shown not to have pushed: `/review` is refused, with the reason
        except TooManyItems:
            pushes, gap = None, LONG_FEED
        missing = (
            unaccounted(pushes, pull.head_sha, ctx.me.login)
            if pushes and ctx.event.forge == "gitea"
            else None
        )
        if missing is not None:
            gap = hidden_move(missing)
    excluded = modifiers(commits, pushes or (), record.opened_by, ctx.me.login)
    pushes = None if gap else pushes
    # A round whose reviewer made or moved the branch, then or later, is void (never counted as settled).
    ledger = void_rounds(ledger, excluded)
    bug = await forge.get_issue(repo, number)
    root = await other_capabilities.root_cause(ctx, repo, bug, record.hypothesis or None)
    decisions, unchecked = await open_decisions(ctx, bug, pull)
    later = own_commits(commits)[1:]
    fixed = sorted({f.path for c in later for f in c.files})
    scope = (
        check_scope(
            fixed,
            root.files,
            test_globs=settings.test_globs,
            scope_globs=settings.scope_globs,
            test_path=record.path,
            test_edited=bool(later) and regression_test_edited(vouched, head_text),
            lines=await fix_size(ctx, red.sha, pull.head_sha, fixed) if red and later else 0,
            max_lines=settings.max_fix_lines,
        )
        if root.files is not None
        else None
    )
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
            proof_problem=problem,
            head_report=at_head,
            red_named=named,
            red_confirmed_by=ledger.red_confirmed_by(red.sha) if red else "",
            escalate_to=tuple(ctx.settings.debug.escalate_to),
            bug_author=bug.author,
            native=native,
            conflicts=conflicts,
            scope=scope,
            decisions=decisions,
            unchecked=unchecked,
            specialists=tuple(
                [
                    Specialists(name, group.reviewers, matched, *await group_logins(ctx, group.reviewers))
                    for name, group in sorted(settings.sensitive_paths.items())
                    if (matched := tuple(f for f in fixed if is_test_path(f, group.paths)))
                ]
            ),
        )
    )
    return Evidence(
        commits,
        red.sha if red else "",
        red_ci,
        head_ci,
        ledger,
        status,
        bug,
        cache,
        native,
        conflicts,
        pushes,
        excluded,
        scope,
        gap,
        tuple(sources.restored),
    )


async def open_decisions(
    ctx: EventContext, bug: Issue, pull: PullRequest
) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """The design forks of the bug and of its pull request that are not decided (a fork open on the bug when
    `/bugfix` ran refused it, so these were opened since), each as ("F2 on #12", the issue's address); and
    the issues ("#12", its address) whose forks the juror cannot check because the forge will not say who
    may decide — their decisions count as not made (fail closed: ``INFRA_ERROR``)."""
    found: list[tuple[str, str]] = []
    unchecked: list[tuple[str, str]] = []
    for number, url in ((bug.number, bug.html_url), (pull.number, pull.html_url)):
        try:
            names = await other_capabilities.unresolved_forks(ctx, ctx.repo, number)
        except PermissionsUnreadable:
            unchecked.append((f"#{number}", url))
            continue
        found += [(f"{name} on #{number}", url) for name in names]
    return tuple(found), tuple(unchecked)


async def fix_size(ctx: EventContext, red: str, head: str, paths: Sequence[str]) -> int:
    """The lines the fix changes between the red commit and the head (added plus removed, test files aside):
    two contents reads per file, remembered in Redis per (red, head) — commits never change. More files than
    ``MAX_SIZED_FILES`` count as over any budget."""
    globs = settings_of(ctx).test_globs
    code = [p for p in paths if not is_test_path(p, globs)]
    if len(code) > MAX_SIZED_FILES:
        return 1_000_000
    redis = ctx.memo.redis if ctx.memo is not None else None
    named = f"{repo_key(ctx.event.forge, ctx.repo)}\n{red}\n{head}\n{chr(0).join(code)}"
    key = "steward:fix-lines:" + hashlib.sha256(named.encode()).hexdigest()[:32]
    if redis is not None and (cached := await redis.get(key)) is not None:
        return int(cached)
    total = 0
    for path in code:
        before = await ctx.forge.read_file(ctx.repo, path, ref=red)
        after = await ctx.forge.read_file(ctx.repo, path, ref=head)
        total += changed_lines(
            before.content.decode("utf-8", "replace") if before else None,
            after.content.decode("utf-8", "replace") if after else None,
        )
    if redis is not None:
        await redis.set(key, str(total), ex=FIX_SIZE_TTL)
    return total


async def sync_pull(
    ctx: EventContext,
    pull: PullRequest,
    number: int,
    record: Record,
    cache: dict[int, list[Comment]] | None = None,
    restored: Restoration | None = None,
) -> Evidence:
    """Recompute the status of the pull request's head, its ledger comment, and the labels they mirror.
    ``restored``: someone else set one of Steward's results on the head and Steward set its own again; the
    ledger records it."""
    ev = await assess(ctx, pull, number, record, cache)
    if pull.state != "open":
        return ev
    if restored is not None:
        ev.restored = restorations.merged(ev.restored, [restored])
    text = ledger_text(
        number=number,
        status=ev.status,
        ledger=ev.ledger,
        red_sha=ev.red_sha,
        head_sha=pull.head_sha,
        red_ci=ev.red_ci or "",
        head_ci=ev.head_ci or "",
        native=ev.native,
        restored=ev.restored,
    )
    if flagged := forge_requested_excluded(pull, {**ev.excluded, pull.author.casefold(): "opened it"}):
        text += "\n\n" + "\n".join(f"- {line}" for line in flagged)
    written = await ctx.upsert_sticky(
        LEDGER_KIND,
        str(number),
        text,
        data=ledger_data(number, ev.ledger, ev.conflicts, ev.restored, status=ev.status),
        number=pull.number,
        comments=ev.comments.get(pull.number),
    )
    await set_own_result(
        ctx.forge,
        ctx.repo,
        pull.head_sha,
        CONTEXT,
        ev.status.state,
        ev.status.description,
        written.comment.html_url,
    )
    await request_reviewers(ctx, pull, number, record, ev.commits)
    # The copy on the bug: the events and budgets outlive the pull request and the record's list of them
    # (written once there is an event to keep).
    ledger = ev.ledger
    kept = (
        ledger.rounds,
        ledger.dispositions,
        ledger.gaps,
        ledger.red_proofs,
        ledger.scopes,
        ev.conflicts,
        ev.restored,
    )
    if any(kept):
        await ctx.upsert_sticky(
            LEDGER_KIND,
            str(number),
            f"The review ledger of this bug's fix is on #{pull.number} "
            f"([ledger]({written.comment.html_url})); this copy keeps its events and budgets with the bug.",
            data=ledger_data(number, ev.ledger, ev.conflicts, ev.restored),
            number=number,
            comments=ev.comments.get(number),
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
    elif ev.status.code in ("REVIEW_STOPPED", "REVIEWERS_IN_CONFLICT"):
        # Whom to ask (`debug.escalate_to`) and the bug's author: Steward's own mentions of real logins.
        names = [*(w.lstrip("@") for w in ctx.settings.debug.escalate_to), ev.bug.author]
        who = " ".join(f"@{n}" for n in dict.fromkeys(names) if n)
        if ev.status.code == "REVIEW_STOPPED":
            why = neutralise.inert(ev.ledger.stop_reason)
            meaning = "A finding that comes back means the fix does not address it"
        else:
            why = neutralise.inert(judge(ev.ledger, ev.native, ev.conflicts, pull.head_sha).reason)
            meaning = "Two reviewers disagree about the same head"
        note = (
            f"{who}: the review of bug #{number} stopped early — {why}. {meaning}: decide how this bug "
            f"goes on (`debug.escalate_to` names whom to ask). [Ledger]({written.comment.html_url})"
        )
        await ctx.upsert_sticky(
            EXHAUSTED_KIND, str(number), note, number=pull.number, comments=ev.comments.get(pull.number)
        )
    return ev
