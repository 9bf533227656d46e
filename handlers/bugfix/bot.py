"""Bugfix branches in the forge: `/bugfix` on a bug, `/review`, `/disposition` and `/accept-gap` on its pull
request, and the events that recompute the `steward/regression-first` status (a push to the branch, a pull
request opened or synchronised, a commit status, a check run or suite completing) or close the bug (a merge).
The work itself is in ``start`` (`/bugfix`), ``evidence`` (the status and the ledger comment),
``completion`` (the merge) and ``record`` (the bug's record comment)."""

from __future__ import annotations

from bot.commands.context import CommandContext, CommandError, EventContext
from bot.commands.periodic import PeriodicContext
from bot.commands.registry import Registry
from bot.events.event import ReportSnapshot
from bot.forge import Comment, ForgeError, PullRequest
from bot.forge.ci import OWN_PREFIX
from handlers.bugfix.completion import close_bug
from handlers.bugfix.effects import Evidence, assess, sync_pull
from handlers.bugfix.gate import UsageError, parse_bugfix_args
from handlers.bugfix.independence import moved_after
from handlers.bugfix.ledger import (
    DispositionRecord,
    Gap,
    RedProof,
    ReviewRequest,
    Round,
    parse_disposition,
    parse_review,
)
from handlers.bugfix.native_reviews import Conflict, blocking, clean_round
from handlers.bugfix.own_results import forged, restore_own_result
from handlers.bugfix.record import (
    GAP_LABEL,
    OPEN_LABEL,
    add_label,
    adopt,
    bugfix_of_branch,
    bugfix_pull,
    find_record,
    record_reply,
    recorded,
)
from handlers.bugfix.restorations import Restoration
from handlers.bugfix.scope import MAX_ITEMS as MAX_SCOPE_ITEMS
from handlers.bugfix.scope import ScopeAcceptance, item_words
from handlers.bugfix.start import start_bugfix
from handlers.bugfix.status import committers_of
from handlers.triage.api import HOLD_CONTEXT


def refused(message: str, code: str) -> str:
    """A refusal as people read it: the reason first, the rule's code small beside it (for a search)."""
    return f"{message[:1].upper()}{message[1:]} <sub>`{code}`</sub>"


# This module's commands and events; `handlers.build_registry()` includes them (importing registers nothing).
plugin = Registry()


def register(registry: Registry) -> None:
    registry.include(plugin)


SECTION = "bugfix"
# Open bugfix pull requests looked at for a commit status that names no pull request.
MAX_OPEN_BUGFIXES = 30


@plugin.command(
    "bugfix",
    usage="bugfix [H<n>] [--base BRANCH] [--trust-test DIGEST]",
    help="Open a regression-first bugfix branch for this refined bug: its first commit is the regression "
    "test from section 7, with a draft pull request.",
    permission="write",
    on_pulls=False,
    section=SECTION,
)
async def bugfix_command(ctx: CommandContext) -> None:
    try:
        request = parse_bugfix_args(ctx.command.args)
    except UsageError as exc:
        raise CommandError(
            f"{exc}. Usage: `/{ctx.prefix} bugfix [H<n>] [--base BRANCH] [--trust-test DIGEST]`."
        ) from None
    await start_bugfix(ctx, request)


@plugin.command(
    "review",
    usage="review [<sha>] clean | inconclusive <why> | findings",
    help="Record a review round on a bugfix pull request's head; `findings` is followed by lines "
    "`<id> <severity> [category=<c>] [impact=<i>] <path:line> <text>`; `<sha>` names the head reviewed "
    "(without it, the head when the comment was written). Not by whoever ran `/bugfix`, authored, "
    "committed or pushed to the branch.",
    permission="write",
    on_issues=False,
    section=SECTION,
)
async def review_command(ctx: CommandContext) -> None:
    pull, number, record = await bugfix_pull(ctx)
    cache: dict[int, list[Comment]] = {}
    ev = await assess(ctx, pull, number, record, cache, reviewing=True)
    events = [*ev.ledger.rounds]
    done = recorded(events, ctx.comment.id, Round)
    conflict = next((c for c in ev.conflicts if c.comment_id == ctx.comment.id), None)
    if conflict is not None:
        await _record_conflict(ctx, ev, number, conflict)
        await sync_pull(ctx, pull, number, record)
        return
    if done is None:
        try:
            request = parse_review(ctx.command.text)
        except UsageError as exc:
            raise CommandError(str(exc)) from None
        if request.sha and not pull.head_sha.startswith(request.sha):
            raise CommandError(
                refused(
                    f"the branch moved after your review: its head is `{pull.head_sha[:10]}`, not "
                    f"`{request.sha[:10]}`. Review `{pull.head_sha[:10]}`: "
                    f"`/{ctx.prefix} review {pull.head_sha[:10]} clean|findings …`.",
                    "HEAD_MOVED",
                )
            )
        await _check_independent(ctx, pull, ev, explicit=bool(request.sha))
        refusal = ev.ledger.check_review(
            head=pull.head_sha,
            actor=ctx.actor,
            # Whoever ran `/bugfix`, authored or committed a commit, or pushed (``independence``).
            committers={*committers_of(ev.commits), record.opened_by.casefold(), *ev.excluded} - {""},
            findings=request.findings,
        )
        if refusal is not None and refusal.code == "SAME_HEAD_REVIEWED":
            conflict = _conflict(ctx, ev, pull.head_sha, request)
            if conflict is not None:
                await _record_conflict(ctx, ev, number, conflict)
                await sync_pull(ctx, pull, number, record)
                return
        if refusal is not None:
            await sync_pull(ctx, pull, number, record)
            raise CommandError(refused(refusal.message, refusal.code))
        done = Round(
            ctx.comment.id, ctx.actor, pull.head_sha, request.verdict, request.findings, request.reason
        )
    assert isinstance(done, Round)
    after = ev.ledger.apply(done) if done not in ev.ledger.rounds else ev.ledger
    n = after.number_of(after.rounds.index(done) + 1)
    state = after.review_state(done.head)
    nxt = "the review is complete for this head." if state == "complete" else f"next: {state}."
    text = (
        f"Recorded review round {n} of {after.budgets.review_rounds} on `{done.head[:10]}`: "
        f"**{done.verdict}**"
        + (
            f" ({len(done.findings)} finding{'' if len(done.findings) == 1 else 's'})"
            if done.findings
            else ""
        )
        + f"; {nxt}"
    )
    await record_reply(ctx, number, done, text)
    await sync_pull(ctx, pull, number, record)


def _conflict(ctx: CommandContext, ev: Evidence, head: str, request: ReviewRequest) -> Conflict | None:
    """A second reviewer's blocking findings on a head another reviewer passed clean: two reviewers in
    conflict (recorded instead of a round; the head is not reviewed twice and no budget is spent)."""
    passed = clean_round(ev.ledger, head)
    found = blocking(request.findings)
    if passed is None or not found or passed[1].actor.casefold() == ctx.actor.casefold():
        return None
    return Conflict(ctx.comment.id, ctx.actor, head, found)


async def _record_conflict(ctx: CommandContext, ev: Evidence, number: int, conflict: Conflict) -> None:
    passed = clean_round(ev.ledger, conflict.head)
    round_said = f"@{passed[1].actor} reviewed it clean in round {passed[0]}" if passed else "it was passed"
    names = [*(w.lstrip("@") for w in ctx.settings.debug.escalate_to), ev.bug.author]
    who = " ".join(f"@{n}" for n in dict.fromkeys(names) if n) or "the maintainers"
    ids = ", ".join(f"`{f.id}` ({f.severity})" for f in conflict.findings)
    text = (
        f"{who}: reviewers disagree about `{conflict.head[:10]}` — {round_said} and @{conflict.actor} "
        f"reports blocking findings: {ids}. The review stops here and a person decides how bug #{number} "
        "goes on (`debug.escalate_to` names whom to ask): push a new head and review it again, or close "
        "the pull request. Recorded as a conflict, not a round: it spends no review budget."
    )
    await ctx.upsert_sticky("reply", ctx.reply_key, text, data={"bug": number, "bugfix": conflict.to_json()})
    ctx.replied = True


async def _check_independent(ctx: CommandContext, pull: PullRequest, ev: Evidence, *, explicit: bool) -> None:
    """Refuse a reviewer who made or moved the branch (from the forge's own push history), and a `/review`
    without a sha written before the branch's latest push (it is leased to the head it was written on)."""
    short = pull.head_sha[:10]
    if ev.pushes is None:
        cannot = (
            f"{ev.push_gap} — nor that you did not modify the fix"
            if ev.push_gap
            else "the branch's push history could not be read (this forge keeps none in its API, or refused "
            "it), so Steward cannot tell whether you modified the fix"
        )
        raise CommandError(
            refused(
                f"{cannot}. Ask an administrator to let Steward read the repository's activity.",
                "PUSH_HISTORY_UNREADABLE",
            )
        )
    why = ev.excluded.get(ctx.actor.casefold())
    if why is not None:
        raise CommandError(
            refused(
                f"you {why} (the forge's push history counts, and every commit's author and committer): "
                "whoever makes or moves the fix does not judge it. Ask another person with write access to "
                "review.",
                "REVIEWER_COMMITTED",
            )
        )
    if explicit:
        return
    written = await ctx.forge.get_comment(ctx.repo, ctx.comment.id)
    moved = moved_after(ev.pushes, written.created_at)
    if moved is not None:
        raise CommandError(
            refused(
                f"the branch moved after your review; review `{short}`: {moved.actor or 'someone'} pushed "
                f"at {moved.at}, after your comment was written. Look at the new head, then write "
                f"`/{ctx.prefix} review {short} clean|findings …`.",
                "HEAD_MOVED",
            )
        )


@plugin.command(
    "disposition",
    usage="disposition <id> fix|low|out-of-scope|unvalidated <reason>",
    help="Dispose of a review finding on a bugfix pull request (`low` only for low and info findings).",
    permission="write",
    on_issues=False,
    section=SECTION,
)
async def disposition_command(ctx: CommandContext) -> None:
    pull, number, record = await bugfix_pull(ctx)
    ev = await assess(ctx, pull, number, record)
    done = recorded(ev.ledger.dispositions, ctx.comment.id, DispositionRecord)
    if done is None:
        try:
            finding, disposition, reason = parse_disposition(ctx.command.args, ctx.command.text)
        except UsageError as exc:
            raise CommandError(str(exc)) from None
        round_number, refusal = ev.ledger.check_disposition(
            finding, disposition, actor=ctx.actor, committers={*committers_of(ev.commits), *ev.excluded}
        )
        if refusal is not None:
            await sync_pull(ctx, pull, number, record)
            raise CommandError(refused(refusal.message, refusal.code))
        done = DispositionRecord(ctx.comment.id, ctx.actor, finding, disposition, reason, round_number)
    assert isinstance(done, DispositionRecord)
    await record_reply(
        ctx,
        number,
        done,
        f"Recorded: finding `{done.finding}` of round {done.round} — **{done.disposition}**.",
    )
    await sync_pull(ctx, pull, number, record)


@plugin.command(
    "accept-gap",
    usage="accept-gap <reason>",
    help="On a bugfix pull request: record a disclosed gap instead of red proof (the test cannot fail on "
    "CI).",
    permission="maintain",
    on_issues=False,
    section=SECTION,
)
async def accept_gap_command(ctx: CommandContext) -> None:
    pull, number, record = await bugfix_pull(ctx)
    reason = ctx.command.text.strip()
    if not reason:
        raise CommandError(f"say why there is no red proof: `/{ctx.prefix} accept-gap <reason>`.")
    ev = await assess(ctx, pull, number, record)
    done = recorded(ev.ledger.gaps, ctx.comment.id, Gap) or Gap(ctx.comment.id, ctx.actor, reason[:500])
    await record_reply(
        ctx,
        number,
        done,
        f"Recorded a disclosed gap instead of red proof (labelled `{GAP_LABEL}` on #{number}).",
    )
    await add_label(ctx, number, GAP_LABEL, ev.bug.labels)
    await sync_pull(ctx, pull, number, record)


@plugin.command(
    "scope",
    usage="scope <reason>",
    help="On a bugfix pull request whose fix changes files its evidence does not point at: accept the "
    "files it names, with the reason (maintain access; not whoever made or moved the branch).",
    permission="maintain",
    on_issues=False,
    section=SECTION,
)
async def scope_command(ctx: CommandContext) -> None:
    pull, number, record = await bugfix_pull(ctx)
    reason = ctx.command.text.strip()
    if not reason:
        raise CommandError(f"say why the fix may go beyond its evidence: `/{ctx.prefix} scope <reason>`.")
    ev = await assess(ctx, pull, number, record, reviewing=True)
    done = recorded(ev.ledger.scopes, ctx.comment.id, ScopeAcceptance)
    if done is None:
        if ev.pushes is None:
            cannot = (
                f"{ev.push_gap} — nor that you did not modify the fix"
                if ev.push_gap
                else "the branch's push history could not be read, so Steward cannot tell whether you "
                "modified the fix"
            )
            raise CommandError(
                refused(
                    f"{cannot}. Ask an administrator to let Steward read the repository's activity.",
                    "PUSH_HISTORY_UNREADABLE",
                )
            )
        why = ev.excluded.get(ctx.actor.casefold())
        if why is not None:
            raise CommandError(
                refused(
                    f"you {why}: whoever makes or moves the fix does not widen its scope. Ask another person "
                    "with maintain access.",
                    "SCOPE_BY_COMMITTER",
                )
            )
        waiting = ev.scope.waiting(ev.ledger.scope_accepted).items() if ev.scope is not None else ()
        if not waiting:
            off = " — the hypotheses board is off here, so the scope is not checked"
            raise CommandError(
                "nothing to accept: the fix touches only the files its evidence names (tests aside)"
                + (off if ev.scope is None else "")
                + "."
            )
        done = ScopeAcceptance(ctx.comment.id, ctx.actor, reason[:500], tuple(waiting[:MAX_SCOPE_ITEMS]))
    assert isinstance(done, ScopeAcceptance)
    await record_reply(
        ctx,
        number,
        done,
        "Recorded: the fix may go beyond its evidence for "
        + ", ".join(item_words(f) for f in done.files[:20])
        + f" — accepted by @{done.actor}. A later commit that changes other files needs another `/scope`.",
    )
    await sync_pull(ctx, pull, number, record)


@plugin.command(
    "red-proof",
    usage="red-proof ok",
    help="On a bugfix pull request whose CI failed on the first commit without naming the failing test: "
    "confirm that the regression test is what failed (write access or more, whatever the configuration).",
    permission="write",
    on_issues=False,
    section=SECTION,
)
async def red_proof_command(ctx: CommandContext) -> None:
    if [a.casefold() for a in ctx.command.args] != ["ok"]:
        raise CommandError(
            f"write `/{ctx.prefix} red-proof ok` once CI's log shows the regression test failing."
        )
    pull, number, record = await bugfix_pull(ctx)
    ev = await assess(ctx, pull, number, record)
    done = recorded(ev.ledger.red_proofs, ctx.comment.id, RedProof)
    if done is None:
        if not ev.red_sha or ev.red_ci != "red":
            raise CommandError(
                f"CI on the first commit is {ev.red_ci or 'not reported'}, not red: there is no failure to "
                "confirm."
            )
        done = RedProof(ctx.comment.id, ctx.actor, ev.red_sha)
    assert isinstance(done, RedProof)
    await record_reply(
        ctx,
        number,
        done,
        f"Recorded: @{done.actor} confirmed that CI's failure on the first commit `{done.sha[:10]}` is the "
        "regression test's.",
    )
    await sync_pull(ctx, pull, number, record)


@plugin.on("issue_comment", "edited", "deleted", section=SECTION)
async def on_ledger_touched(ctx: EventContext) -> None:
    """Someone edited or deleted Steward's ledger comment: it is re-derived and written again at once."""
    comment, issue = ctx.event.comment, ctx.event.issue
    if comment is None or issue is None or not issue.is_pull_request:
        return
    if (
        comment.author.casefold() != ctx.me.login.casefold()
        or "<!-- steward:bugfix-ledger:" not in comment.body
    ):
        return
    await _sync(ctx, await ctx.forge.get_pull_request(ctx.repo, issue.number))


# --- events -------------------------------------------------------------------------------------------------


async def _sync(ctx: EventContext, pull: PullRequest, restored: Restoration | None = None) -> None:
    """``restored``: the ledger records that Steward set its own result again over someone else's."""
    if pull.from_fork:
        # A fork's branch named like the bug's (or a deleted fork's) never joins the bug.
        return
    found = await bugfix_of_branch(ctx, pull.head_ref)
    if found is None:
        return
    number, record = found
    if pull.merged:
        await close_bug(ctx, pull, number, record)
        return
    if pull.state != "open":
        return
    record = await adopt(ctx, number, record, pull)
    async with ctx.holding(pull.number):
        await sync_pull(ctx, pull, number, record, restored=restored)


@plugin.on("pull_request_review", "submitted", "edited", "dismissed", section=SECTION)
async def on_native_review(ctx: EventContext) -> None:
    """A native review (GitHub Approve / Request changes, Gitea APPROVED / REQUEST_CHANGES): the ledger shows
    it and a request for changes on the head keeps the status pending. The forge's review list is read
    again (Gitea's payload names no commit; a dismissal on Gitea sends no webhook at all)."""
    snapshot = ctx.event.pull
    if snapshot is None or not snapshot.head_ref.startswith(ctx.settings.bugfix.branch_prefix):
        return
    await _sync(ctx, await ctx.forge.get_pull_request(ctx.repo, ctx.number))


@plugin.on(
    "pull_request",
    "opened",
    "reopened",
    "synchronize",
    "edited",
    "ready_for_review",
    "closed",
    section=SECTION,
)
async def on_pull(ctx: EventContext) -> None:
    snapshot = ctx.event.pull
    if snapshot is None or not snapshot.head_ref.startswith(ctx.settings.bugfix.branch_prefix):
        return
    await _sync(ctx, await ctx.forge.get_pull_request(ctx.repo, ctx.number))


@plugin.on("issues", "edited", section=SECTION)
async def on_bug_edited(ctx: EventContext) -> None:
    """A bug with a fix in progress was edited — a design fork may have been opened on it: its pull request's
    status is recomputed (a product decision stops the loop, ``DECISION_PENDING``)."""
    issue = ctx.event.issue
    if issue is None or issue.is_pull_request or OPEN_LABEL not in issue.labels:
        return
    _, record = await find_record(ctx, await ctx.forge.list_comments(ctx.repo, issue.number), issue.number)
    if record is None:
        return
    pull = await ctx.forge.find_pull_request(ctx.repo, record.branch)
    if pull is not None:
        await _sync(ctx, pull)


@plugin.on("push", section=SECTION)
async def on_push(ctx: EventContext) -> None:
    ref = ctx.event.ref or ""
    branch = ref.removeprefix("refs/heads/")
    if not ref.startswith("refs/heads/") or not branch.startswith(ctx.settings.bugfix.branch_prefix):
        return
    pull = await ctx.forge.find_pull_request(ctx.repo, branch)
    if pull is not None:
        await _sync(ctx, pull)


@plugin.on("status", section=SECTION)
@plugin.on("check_run", "created", "completed", section=SECTION)
@plugin.on("check_suite", "completed", section=SECTION)
async def on_ci(ctx: EventContext) -> None:
    """CI reported on a commit: the bugfix pull requests that hold it (its head, or its red commit). A
    ``steward/*`` result someone else set is answered with Steward's own (``own_results``)."""
    report = ctx.event.report
    if report is None:
        return
    if report.context.casefold().startswith(OWN_PREFIX):
        if forged(ctx, report) and (ctx.event.name != "status" or report.context.casefold() != HOLD_CONTEXT):
            # (A forged `steward/hold` status: the hold's own handler restores it, handlers.triage.hold.)
            held = await _pulls_holding(ctx, report)
            await restore_own_result(ctx, report, [p for p in held if p.head_sha == report.sha], _sync)
        return
    if ctx.event.name == "check_run" and ctx.event.action == "created":
        return  # another CI's run started: nothing to judge until it completes
    for pull in await _pulls_holding(ctx, report):
        await _sync(ctx, pull)


async def _pulls_holding(ctx: EventContext, report: ReportSnapshot) -> list[PullRequest]:
    if report.pulls:
        return [await ctx.forge.get_pull_request(ctx.repo, number) for number in report.pulls[:10]]
    found: list[PullRequest] = []
    bugs = await ctx.forge.list_issues(ctx.repo, labels=[OPEN_LABEL], state="open")
    for bug in bugs[:MAX_OPEN_BUGFIXES]:
        _, record = await find_record(ctx, await ctx.forge.list_comments(ctx.repo, bug.number), bug.number)
        if record is None:
            continue
        pull = await ctx.forge.find_pull_request(ctx.repo, record.branch)
        if pull is None:
            continue
        if (
            pull.head_sha == report.sha
            or report.sha == record.red
            or any(c.sha == report.sha for c in await ctx.forge.list_pr_commits(ctx.repo, pull.number))
        ):
            found.append(pull)
    return found


# --- catching up --------------------------------------------------------------------------------------------


async def sync_open_bugfixes(ctx: EventContext) -> int:
    """Recompute every open bugfix pull request of the repository; returns how many were looked at."""
    seen = 0
    bugs = await ctx.forge.list_issues(ctx.repo, labels=[OPEN_LABEL], state="open")
    for bug in bugs[:MAX_OPEN_BUGFIXES]:
        _, record = await find_record(ctx, await ctx.forge.list_comments(ctx.repo, bug.number), bug.number)
        if record is None:
            continue
        pull = await ctx.forge.find_pull_request(ctx.repo, record.branch)
        if pull is None:
            continue
        async with ctx.holding_unless_busy(pull.number) as held:
            if held:
                await _sync(ctx, pull)
                seen += 1
    return seen


@plugin.reconcile(
    "bugfix", checks="the regression-first status of every open bugfix pull request", section=SECTION
)
async def reconcile_bugfixes(ctx: EventContext) -> None:
    await sync_open_bugfixes(ctx)


@plugin.every(minutes=1, name="bugfix-ci")
async def poll_gitea_ci(pctx: PeriodicContext) -> None:
    """Gitea and Forgejo versions that send no `status` webhook: CI results are noticed by looking, once a
    minute, at the open bugfix pull requests of the repositories Steward has had events from. (GitHub sends
    `status`, `check_run` and `check_suite` webhooks.)"""
    if "gitea" not in pctx.forges:
        return
    for repo in await pctx.repositories("gitea"):
        try:
            forge = await pctx.forge("gitea", repo)
            config = await pctx.settings_for(forge, repo)
            if not config.settings.bugfix.enabled:
                continue
            ctx = pctx.repo_context("gitea", repo, forge, await forge.whoami(), config)
            await sync_open_bugfixes(ctx)
        except ForgeError as exc:
            pctx.log.warning("bugfix: could not look at a repository", repo=repo.full_name, error=str(exc))
