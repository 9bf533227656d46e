"""Issue 25 §2 end to end, on both forges: one person's 40 quick edits of their own bug report are all
acknowledged, the first 30 handled at once and the rest at `limits.events_per_minute` (30: one every 2 s),
coalesced into one job for the issue; the newest edit is the one handled last, so nothing is lost; and a
`/steward ping` on another repository meanwhile is answered without waiting behind them."""

from __future__ import annotations

import re
import time

import httpx2

from tests.bugfix.bodies import BUG
from tests.e2e.conftest import Steward
from tests.e2e.stack import wait_for
from tests.e2e.test_bugfix_e2e import sticky_of

EDITS = 40


def _deliveries(steward: Steward, outcome: str) -> float:
    text = httpx2.get(f"{steward.receiver.url}/metrics").text
    pattern = (
        rf'steward_deliveries_total\{{event="issues",forge="{steward.forge}",outcome="{outcome}"\}} (\S+)'
    )
    found = re.search(pattern, text)
    return float(found.group(1)) if found else 0.0


def test_one_person_s_burst_is_handled_at_the_budget_rate_and_others_do_not_wait(steward: Steward) -> None:
    busy, quiet = steward.new_repo(), steward.new_repo()
    number = int(steward.outsider.open_issue(busy, "Cart total ignores the discount", "draft"))
    steward.maintainer.add_labels(busy, number, ["refine"])
    other = int(steward.maintainer.open_issue(quiet, "hello"))
    steward.settle()
    before = {outcome: _deliveries(steward, outcome) for outcome in ("accepted", "deferred", "coalesced")}

    for i in range(EDITS - 1):
        steward.outsider.edit_issue(busy, number, body=f"draft {i}: not a bug report yet")
    steward.outsider.edit_issue(busy, number, body=BUG)  # the newest edit: a complete report
    started = time.monotonic()
    steward.maintainer.comment(quiet, other, "/steward ping")

    def pong() -> bool:
        return any("pong" in c["body"] for c in steward.bot_comments(quiet, other))

    wait_for(pong, timeout=60, what="the ping on the other repository")
    ping_seconds = time.monotonic() - started
    steward.settle(timeout=120)

    after = {outcome: _deliveries(steward, outcome) - before[outcome] for outcome in before}
    assert after["deferred"] >= 1 and after["coalesced"] >= 1, after
    assert sum(after.values()) >= EDITS, "every edit was acknowledged"
    assert after["accepted"] <= 31, "at most the budget was handled at once"
    verdict = sticky_of(steward, busy, number, "ra9-verdict")
    assert verdict is not None and "approved" in verdict["body"], "the newest edit was handled: nothing lost"
    assert ping_seconds < 30, f"the ping waited {ping_seconds:.1f} s"
