"""Catch-up runs that overlap, stop on time, and cost little when nothing changed (issue 26), end to end on
both forges.

- An outage noticed while a run goes on (a receiver restarting after a gap) is not cleared by that run: the
  run may have listed the comments before the outage's events were written, so the next run must look again.
- A run with a tiny time budget stops, says so, and the next runs go on where it stopped until every
  repository was covered: none missed, none done twice.
- The reconcile's `since` listings are asked for with the ETags (and answered from the bodies) a previous
  `steward reconcile` process kept in Redis: on GitHub an unchanged listing costs a 304, which does not count
  against the hourly quota; a change is still seen.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import redis

from bot.context import EventContext
from bot.forge import RepoRef
from bot.gauges import mark_outage, outages
from bot.queue import make_redis
from bot.reconcile import reconcile_all
from bot.registry import Registry
from bot.worker import build_runtime
from tests.e2e.conftest import Steward


def test_a_run_never_clears_an_outage_noticed_while_it_ran(steward: Steward) -> None:
    """Marker A is set, a run starts, marker B is set while it runs (by a reconciler the run calls, so the
    order is certain), the run finishes: A is cleared, B stays for the next run, which clears it."""
    repo = RepoRef.parse(steward.new_repo())
    kind: Any = steward.forge

    async def run(meanwhile: bool) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
        client = make_redis(steward.redis_url)
        registry = Registry()
        noticed: dict[str, float] = {}

        @registry.reconcile("outage-meanwhile", checks="a receiver outage noticed while the run goes on")
        async def outage_meanwhile(ctx: EventContext) -> None:
            if meanwhile and not noticed:
                before = await outages(client)
                await mark_outage(client, time.time() - 30)  # B: began after the run's listings
                noticed.update({m: s for m, s in (await outages(client)).items() if m not in before})

        runtime = build_runtime(steward.settings, client, registry)
        try:
            first: dict[str, float] = {}
            if meanwhile:
                await mark_outage(client, time.time() - 600)  # A: before the run
                first = await outages(client)
            report = await reconcile_all(runtime, [(kind, repo)])
            assert not report.stopped and not report.errors, report
            return first, noticed, await outages(client)
        finally:
            await runtime.aclose()
            await client.aclose()

    redis.Redis.from_url(steward.redis_url).delete("steward:outage-since")
    marked_a, marked_b, left = asyncio.run(run(meanwhile=True))
    assert len(marked_a) == 1 and len(marked_b) == 1
    assert left == marked_b, "the outage noticed during the run stays; the one before it is cleared"
    *_, after = asyncio.run(run(meanwhile=False))
    assert after == {}, "the next run covers it and clears it"
