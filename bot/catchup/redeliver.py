"""Redeliveries in the catch-up (GitHub keeps failed deliveries and redelivers on request; Gitea cannot).

Issue 40 item 3 — a redelivery is a write, and after a restart they crowded out people's commands:

- What the catch-up covers by itself is not redelivered: a comment's commands (the comment catch-up queues
  their jobs) and an issue's own events (re-derived from its labels and text): ``COVERED``.
- Redeliveries have a budget of their own (``RedeliveryBudget``, a quarter of the write budget's minute) and
  take nothing from the shared write budget (``write_budget.unbudgeted``): the two are really separate.
- Nothing is redelivered while no receiver reports in (``RECEIVER_HEARTBEAT_KEY`` older than
  ``RECEIVER_GAP_SECONDS``): the forge would deliver into the void and record another failure. The window is
  held so the next run asks again.
- A repository whose deliveries Steward may not read (a push-only token: 403) is noted once a day, not every
  hour, and listed in ``steward_deliveries_unchecked{forge,repository}``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.catchup.report import Report
from bot.forge import Forge, HookDelivery, NotSupported, PermissionDenied, RateLimited, RepoRef
from bot.forge.write_budget import WriteBudget, unbudgeted
from bot.queue.gauges import RECEIVER_GAP_SECONDS, RECEIVER_HEARTBEAT_KEY
from bot.queue.repo_keys import repo_slot
from bot.telemetry import logs, metrics

log = logs.get("steward.reconcile")

# Events the catch-up makes good without a redelivery: a comment's commands (``bot.catchup.comments``) and an
# issue's own events (re-derived from its labels: ``reconcile_repo``).
COVERED = frozenset({("issue_comment", "created"), ("issues", "*")})
# How often a repository whose deliveries cannot be read is noted (a key per repository).
UNCHECKED_KEY = "steward:reconcile:unchecked"
UNCHECKED_EVERY = 86_400


def covered(delivery: HookDelivery) -> bool:
    return (delivery.event, delivery.action or "") in COVERED or (delivery.event, "*") in COVERED


def failed_deliveries(deliveries: Sequence[HookDelivery]) -> list[HookDelivery]:
    """The deliveries whose every attempt failed (an attempt of the same guid that arrived counts)."""
    arrived = {d.guid for d in deliveries if d.status_code is not None and 200 <= d.status_code < 300}
    latest: dict[str, HookDelivery] = {}
    for delivery in deliveries:
        if delivery.guid not in arrived:
            latest.setdefault(delivery.guid, delivery)
    return list(latest.values())


def _parse_time(value: str) -> datetime | None:
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _hold(report: Report, kind: str, when: datetime) -> None:
    if kind not in report.hold or when < report.hold[kind]:
        report.hold[kind] = when


class RedeliveryBudget:
    """Redeliveries take a budget of their own (a quarter of the write budget's minute by default), so a
    catch-up after a long outage neither spends the budget people's commands need nor stops on it: what
    does not fit waits for the next run."""

    def __init__(self, redis: Any, per_minute: int) -> None:
        self._budget = WriteBudget(redis, [(max(1, per_minute), 60.0)], prefix="steward:redeliver")

    async def room(self, kind: str) -> bool:
        return await self._budget.try_take(kind) <= 0


async def receiver_listens(redis: Any) -> bool:
    """Whether a receiver reported in lately (a redelivery needs one to arrive)."""
    raw = await redis.get(RECEIVER_HEARTBEAT_KEY)
    try:
        return raw is not None and time.time() - float(raw) <= RECEIVER_GAP_SECONDS
    except ValueError:
        return False


async def redeliver_failed(
    forge: Forge,
    repo: RepoRef | None,
    since: datetime | None,
    report: Report,
    *,
    dry_run: bool,
    say: Callable[[str], None],
    budget: RedeliveryBudget | None = None,
    redis: Any = None,
) -> None:
    try:
        deliveries = await forge.list_hook_deliveries(repo, since)
    except (NotSupported, PermissionDenied) as exc:
        need = (
            "give the token admin access to the repository (or run Steward as a GitHub App)"
            if repo is not None
            else "configure the App's id and key"
        )
        reason = str(exc).rstrip(".")
        where = repo_slot(forge.kind, repo) if repo is not None else f"{forge.kind}:app"
        metrics.DELIVERIES_UNCHECKED.labels(forge.kind, str(repo or "the App")).set(1)
        if redis is not None and not dry_run:
            # Once a day per repository: the reason does not change from one hourly run to the next.
            fresh = await redis.set(f"{UNCHECKED_KEY}:{where}", "1", nx=True, ex=UNCHECKED_EVERY)
            if not fresh:
                return
        note = (
            f"note: the failed deliveries of {repo or 'the App'} were not checked ({reason}); "
            f"{need} to let Steward redeliver them (said once a day)"
        )
        report.notes.append(note)
        say(note)
        log.warning("reconcile: failed deliveries not checked", repo=str(repo or "the App"), reason=reason)
        return
    except Exception:
        if since is not None:
            _hold(report, forge.kind, since)  # not listed: the next run looks at the same window again
        raise
    # Oldest first, so that what is left for the next run is the newest.
    failed = sorted(
        (d for d in failed_deliveries(deliveries) if not covered(d)), key=lambda d: d.delivered_at
    )
    if failed and not dry_run and redis is not None and not await receiver_listens(redis):
        # Into the void: the forge would record another failure. The next run asks again.
        when = _parse_time(failed[0].delivered_at) or since
        if when is not None:
            _hold(report, forge.kind, when - timedelta(seconds=1))
        report.left += len(failed)
        note = (
            f"note: {len(failed)} failed deliver{'y' if len(failed) == 1 else 'ies'} of {repo or 'the App'} "
            "not redelivered: no receiver is listening (its heartbeat is stale); the next run asks again"
        )
        report.notes.append(note)
        say(note)
        return
    for n, delivery in enumerate(failed):
        what = f"{repo or 'App'}: redeliver {delivery.event}.{delivery.action or ''} {delivery.guid}"
        if not dry_run:
            stop = budget is not None and not await budget.room(forge.kind)
            if not stop:
                try:
                    with unbudgeted():  # their own budget above, not people's
                        await forge.redeliver(repo, delivery)
                except RateLimited:
                    stop = True
            if stop:
                rest = failed[n:]
                report.left += len(rest)
                when = _parse_time(rest[0].delivered_at) or since
                if when is not None:
                    _hold(report, forge.kind, when - timedelta(seconds=1))
                note = (
                    f"note: {len(rest)} failed deliver{'y' if len(rest) == 1 else 'ies'} of "
                    f"{repo or 'the App'} left for the next run (redeliveries are paced to leave room "
                    "for people's commands)"
                )
                report.notes.append(note)
                say(note)
                return
        report.redelivered.append(what)
        say(("would " if dry_run else "") + what)


async def reconcile_app_deliveries(
    runtime: Any,
    repo: RepoRef,
    since: datetime | None,
    report: Report,
    *,
    dry_run: bool,
    say: Callable[[str], None],
    budget: RedeliveryBudget | None = None,
) -> None:
    """A GitHub App's own webhook (one for every installation), read with the App's credentials through
    the forge of one of its repositories."""
    if runtime.github is None or not runtime.github.is_app:
        return
    forge = await runtime.forge("github", repo)
    await redeliver_failed(
        forge, None, since, report, dry_run=dry_run, say=say, budget=budget, redis=runtime.redis
    )
