"""Which claims the overview reads: only the claimed issues' threads, only a claims record that verifies,
each claim dated by its holder's latest word in the thread (a fake forge: no I/O)."""

from __future__ import annotations

from dataclasses import replace

from bot.forge import Comment
from handlers.triage.claims import Claim as Held
from handlers.triage.claims import to_data
from handlers.triage.effects import CLAIMS_KEY, CLAIMS_KIND
from handlers.triage.overview import MAX_CLAIMED, read_claims
from tests.milestones.fakes import FakeForge, context, item_event


async def _claimed(forge: FakeForge, title: str, holder: str, at: str) -> int:
    number = forge.add(title, "open", "refinement:approved", "claimed", milestone=None)
    forge.set(number, updated_at=at)
    forge.comments[number] = [Comment(900 + number, holder, "/steward claim", created_at=at)]
    ctx = context(forge, item_event(forge, number))
    claim = Held(holder, at, holder, False, 900 + number)
    await ctx.upsert_sticky(
        CLAIMS_KIND, CLAIMS_KEY, f"Claimed by {holder}.", data=to_data([claim]), number=number
    )
    return number


async def test_a_claim_is_dated_by_its_holders_latest_comment_and_a_broken_record_counts_for_nothing() -> (
    None
):
    forge = FakeForge()
    quiet = await _claimed(forge, "quiet", "carol", "2026-11-01T09:00:00Z")
    busy = await _claimed(forge, "busy", "dave", "2026-11-01T09:00:00Z")
    forge.comments[busy].append(Comment(990, "dave", "working on it", created_at="2026-11-30T09:00:00Z"))
    forged = await _claimed(forge, "forged", "erin", "2026-11-01T09:00:00Z")
    record = forge.comments[forged][-1]
    forge.comments[forged][-1] = replace(record, body=record.body.replace("erin", "mallory"))
    unclaimed = forge.add("no label", "open", "refinement:approved", milestone=None)
    ctx = context(forge, item_event(forge, quiet))
    threads: list[int] = []
    listed = forge.list_comments

    async def list_comments(repo: object, number: int) -> list[Comment]:
        threads.append(number)
        return await listed(repo, number)  # type: ignore[arg-type]

    forge.list_comments = list_comments  # type: ignore[method-assign]
    found = await read_claims(ctx, list(forge.issues.values()))
    assert {(c.number, c.login, c.last_active) for c in found} == {
        (quiet, "carol", "2026-11-01T09:00:00Z"),
        (busy, "dave", "2026-11-30T09:00:00Z"),
    }
    assert sorted(threads) == sorted([quiet, busy, forged]) and unclaimed not in threads


async def test_at_most_the_stalest_claimed_issues_are_read() -> None:
    forge = FakeForge()
    for n in range(MAX_CLAIMED + 3):
        await _claimed(forge, f"c{n}", "carol", f"2026-10-{n + 1:02d}T09:00:00Z")
    ctx = context(forge, item_event(forge, 1))
    found = await read_claims(ctx, list(forge.issues.values()))
    assert len(found) == MAX_CLAIMED
    assert max(c.last_active for c in found) == f"2026-10-{MAX_CLAIMED:02d}T09:00:00Z"
