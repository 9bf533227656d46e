"""The overview issue in the forge: one issue per repository that says what needs whom, derived at each
refresh from the forge and rewritten only when what it says changed (DESIGN §3.2, §3.3).

**Bound to the repository by its signed record.** Its body ends in Steward's signed data block (kind
``triage-overview``), whose signature names the repository's id and the issue's id: the overview is the
Steward-written issue with the overview label and marker whose record verifies — never one found by its
title. A body someone edited, or forged, does not verify: it is re-derived (everything on it is derived
anyway) and re-signed, and the thread is told who changed it (``EventContext.report_rebuilt``). A legacy or
unknown-key record is re-derived the same way, only quietly: nothing in it is ever believed.

**Never two.** Every write happens under the repository's ``overview`` lock; the overview is found before
one is made (the oldest of Steward's marked issues when none verifies, so an issue created but not yet
signed — a crash between the two writes — is taken up, not duplicated), and ``create_issue`` itself finds
its own issue after a write whose answer was lost. Replays and restarts find the same issue.

**Bounded.** A refresh reads one listing of the open issues and pull requests (GitHub pages by 100, Gitea by
50) and the open milestones, and writes at most one edit; it is coalesced (``request_refresh``: one job per
repository and ``triage.overview_refresh_seconds``), and the forge's write budget paces the edit like any
other. docs/overview.md has the measured figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from bot.commands.context import EventContext
from bot.events.event import Event
from bot.forge import Issue, PermissionDenied, TooManyItems, repo_key
from bot.records import sticky
from handlers.bugfix.api import EXHAUSTED_LABEL, OPEN_LABEL
from handlers.debug.api import ESCALATED_LABEL
from handlers.milestones.api import dashboard_gates
from handlers.triage import claims as claim_records
from handlers.triage.effects import CLAIMS_KEY, CLAIMS_KIND, Claims, dated_claims
from handlers.triage.overview_render import TITLE, Words, render_overview, without_stamp
from handlers.triage.overview_rules import Claim, Gate, OverviewLabels, classify

KIND = "triage-overview"
KEY = "repo"
REFRESH = "steward-overview"
LABEL_COLOR = "5319e7"
# The claimed issues whose claims one refresh reads (one listing of comments each), the stalest first.
MAX_CLAIMED = 30


def now_utc() -> datetime:
    return datetime.now(UTC)


def iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def wanted(ctx: EventContext) -> bool:
    """Whether this repository asked for the overview (`triage.overview`, within `triage.enabled`)."""
    return ctx.settings.triage.enabled and ctx.settings.triage.overview


def labels_of(ctx: EventContext) -> OverviewLabels:
    s = ctx.settings
    return OverviewLabels(
        needs_info=s.bug_refinement.needs_info_label,
        needs_triage=s.bug_refinement.needs_triage_label,
        old_rejected=s.bug_refinement.rejected_label,
        approved=s.bug_refinement.approved_label,
        forks_open=s.forks.open_label,
        bugfix_open=OPEN_LABEL,
        bugfix_exhausted=EXHAUSTED_LABEL,
        hold=s.triage.hold_label,
        needs_human=ESCALATED_LABEL,
        claimed=s.triage.claimed_label,
        overview=s.triage.overview_label,
        dashboard=s.milestones.labels.dashboard,
    )


def words_of(ctx: EventContext) -> Words:
    s = ctx.settings
    return Words(
        ctx.prefix,
        s.bug_refinement.needs_info_label,
        s.bug_refinement.needs_triage_label,
        s.bug_refinement.approved_label,
        s.forks.open_label,
        s.triage.stale_claim_days,
    )


def is_overview(issue: Issue, ctx: EventContext) -> bool:
    """One of Steward's overview issues by its look: written by Steward, with the overview label, and the
    overview's marker or none at all (a body someone emptied is still the overview, to be rebuilt; another
    of Steward's records given the label keeps its own marker and is never taken). A candidate, not yet the
    overview — that takes its record verifying (``find_overview``)."""
    if issue.is_pull_request or issue.author.casefold() != ctx.me.login.casefold():
        return False
    if not issue.has_label(ctx.settings.triage.overview_label):
        return False
    return sticky.marker_of(issue.body) in (None, (KIND, KEY))


async def find_overview(ctx: EventContext, listed: Sequence[Issue]) -> tuple[Issue, sticky.Record] | None:
    """The overview issue and what its record is worth: among Steward's marked issues (the open ones in
    ``listed``; when none is open, every one with the label, closed too), the first whose record verifies,
    else the oldest."""
    candidates = [issue for issue in listed if issue.state == "open" and is_overview(issue, ctx)]
    if not candidates:
        label = ctx.settings.triage.overview_label
        everyone = await ctx.forge.list_issues(ctx.repo, labels=[label], state="all", kind="issues")
        candidates = [issue for issue in everyone if is_overview(issue, ctx)]
    if not candidates:
        return None
    candidates.sort(key=lambda issue: issue.number)
    first: tuple[Issue, sticky.Record] | None = None
    for issue in candidates:
        record = await ctx.record_of_issue(issue, KIND, KEY)
        if record.outcome == "verified":
            return issue, record
        first = first or (issue, record)
    return first


async def read_claims(ctx: EventContext, items: Sequence[Issue]) -> list[Claim]:
    """The claims Steward recorded on ``items`` (`/claim`, `/assign` of someone the forge would not assign),
    each with when its holder was last active on the issue (the claim itself, or their latest comment).
    Only the issues labelled `triage.claimed_label` are read — the stalest ``MAX_CLAIMED`` of them, one
    listing of comments each — and only a claims record that verifies counts; one that does not is left to
    the everyday commands, which rebuild it at the issue's next event."""
    label = ctx.settings.triage.claimed_label
    held = sorted(
        (i for i in items if not i.is_pull_request and i.state == "open" and i.has_label(label)),
        key=lambda i: (i.updated_at, i.number),
    )
    found: list[Claim] = []
    for issue in held[:MAX_CLAIMED]:
        comments = await ctx.forge.list_comments(ctx.repo, issue.number)
        mine = sticky.find(comments, bot_login=ctx.me.login, kind=CLAIMS_KIND, key=CLAIMS_KEY)
        if mine is None:
            continue
        record = await ctx.record(mine, CLAIMS_KIND, CLAIMS_KEY)
        if record.trusted is None:
            continue
        # Dated as the claim-release job dates them: by their command comments, and each holder's latest
        # comment in the thread.
        held_now = Claims(issue, claim_records.from_data(record.trusted), comments, mine)
        dated, activity = dated_claims(held_now)
        for claim in dated:
            last = max(claim.since, activity.get(claim.login.casefold(), ""))
            found.append(Claim(issue.number, claim.login, last))
    return found


@dataclass(frozen=True)
class Synced:
    outcome: Literal["off", "too-many", "unchanged", "written", "created"]
    number: int | None = None
    # How many lines each section has (what the record keeps).
    counts: dict[str, int] | None = None


async def sync_overview(ctx: EventContext, *, now: datetime | None = None) -> Synced:
    """Bring the overview up to date (under the repository's ``overview`` lock)."""
    if not wanted(ctx):
        return Synced("off")
    async with ctx.holding_repo("overview"):
        return await _sync(ctx, now or now_utc())


async def _sync(ctx: EventContext, now: datetime) -> Synced:
    try:
        items = await ctx.forge.list_issues(ctx.repo, state="open", kind="all")
    except TooManyItems as exc:
        # No overview from part of a list (it would say "nothing waits" of what it did not read).
        ctx.log.warning("overview: too many open issues to list; not refreshed", limit=exc.limit)
        return Synced("too-many")
    milestones = await ctx.forge.list_milestones(ctx.repo, state="open")
    gates = {
        key: Gate(found.dashboard, found.verdict, found.blockers)
        for key, found in (await dashboard_gates(ctx, items)).items()
    }
    overview = classify(
        items,
        milestones,
        gates,
        await read_claims(ctx, items),
        labels_of(ctx),
        bot_login=ctx.me.login,
        now=now,
        stale_after_days=ctx.settings.triage.stale_claim_days,
    )
    text = render_overview(overview, words_of(ctx), changed_at=iso(now))
    base = {"v": 1, "counts": overview.counts()}
    # The signed block pins the visible text too: what a maintainer reads is what Steward derived.
    shown, data = sticky.covered(KIND, KEY, text, base)
    found = await find_overview(ctx, items)
    label = ctx.settings.triage.overview_label
    if found is None:
        await ctx.forge.ensure_label(
            ctx.repo, label, color=LABEL_COLOR, description="Steward: what needs whom in this repository"
        )
        # The signature names the issue's id: create it with the marker only, then sign it in.
        made = await ctx.forge.create_issue(ctx.repo, TITLE, sticky.fit(KIND, KEY, shown), labels=[label])
        body = await ctx.signed_issue_body(made.id, KIND, KEY, shown, data)
        made = await ctx.forge.edit_issue(ctx.repo, made.number, body=body)
        await _pin(ctx, made)
        ctx.log.info("overview created", number=made.number)
        return Synced("created", made.number, overview.counts())
    current, record = found
    kept = record.trusted if isinstance(record.trusted, dict) else None
    same = (
        kept is not None
        and {k: v for k, v in kept.items() if k != sticky.TEXT_KEY} == base
        and without_stamp(sticky.visible_text(current.body)) == without_stamp(shown)
    )
    title = TITLE if current.title != TITLE else None
    outcome: Literal["unchanged", "written"] = "unchanged"
    if not same or title is not None:
        body = await ctx.signed_issue_body(current.id, KIND, KEY, shown, data)
        current = await ctx.forge.edit_issue(ctx.repo, current.number, body=body, title=title)
        outcome = "written"
    if record.broken:
        await ctx.report_rebuilt(record, current.html_url or "the overview", number=current.number)
    ctx.log.info("overview refreshed", number=current.number, outcome=outcome)
    return Synced(outcome, current.number, overview.counts())


async def _pin(ctx: EventContext, issue: Issue) -> None:
    """Pin the new overview where the forge allows (GitHub: GraphQL `pinIssue`, write access; Gitea 1.21+:
    `POST …/issues/{index}/pin`, repository admin). Full pins, a forge without pins or a bot that may not
    pin leave it unpinned (the adapter logs why once); the overview works the same."""
    try:
        await ctx.forge.pin_issue(ctx.repo, issue.number)
    except PermissionDenied as exc:
        ctx.log.warning("overview: Steward may not pin it here", number=issue.number, error=str(exc))


# --- coalesced refreshes ---------------------------------------------------------------------------------


def refresh_event(ctx: EventContext, job: str) -> Event:
    """The synthetic event of a due refresh (``bot.queue.deferred``); its issue key is the repository's."""
    return Event(
        forge=ctx.event.forge,
        delivery_id=job,
        name="repository",
        action=REFRESH,
        sender="",
        repo=ctx.repo,
        installation_id=ctx.event.installation_id,
    )


def refresh_run_at(now: float, debounce: float) -> float:
    """The end of the debounce, rounded up to a slot boundary: every request of one slot names one job."""
    if debounce <= 0:
        return now
    slots = -(-(now + debounce) // debounce)
    return slots * debounce


async def request_refresh(ctx: EventContext) -> None:
    """Refresh the overview soon, once for a whole burst of changes (the milestone dashboards' way): the
    first request of a slot claims it and queues one job; the others find the claim. Without Redis (unit
    tests) the refresh runs at once."""
    if not wanted(ctx):
        return
    if ctx.deferred is None:
        await sync_overview(ctx)
        return
    now = now_utc().timestamp()
    run_at = refresh_run_at(now, ctx.settings.triage.overview_refresh_seconds)
    base = f"triage:overview:{repo_key(ctx.event.forge, ctx.repo)}"
    if not await ctx.deferred.claim(base, ttl=max(0.001, run_at - now)):
        return
    job = f"{base}:{int(run_at * 1000)}"
    await ctx.deferred.run_later(refresh_event(ctx, job), delay=run_at - now, job_id=job)
