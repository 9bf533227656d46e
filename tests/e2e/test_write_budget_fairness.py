"""An outsider's flood does not drain the shared write budget (issue 35 item 5), end to end on both forges.

With a write budget of 40 a minute, 30 `/steward ping` comments from one outsider used to spend all of it: the
first 10 (their command budget) were answered, and each of the 20 refused past the budget still cost a 😕 —
so another repository's ping waited for the budget's minute to pass. Now a refusal past the command budget
writes nothing but the one notice a minute, and each person (and each repository) may spend only a share of
the write budget (`STEWARD_WRITE_SHARE_PER_PERSON`, a quarter; `…_PER_REPOSITORY`, a half): the rest stays
for everyone else, and the other repository's ping is answered at once.
"""

from __future__ import annotations

import time

import httpx2
import pytest

from tests.e2e.conftest import Steward
from tests.e2e.stack import wait_for

FLOOD = 30


def _reactions(steward: Steward, repo: str, comment_id: int) -> list[str]:
    path = f"/repos/{repo}/issues/comments/{comment_id}/reactions"
    return [r["content"] for r in steward.maintainer.call("GET", path)]


@pytest.mark.settings(write_budget_per_minute=40)
def test_another_repositorys_ping_is_answered_while_an_outsider_floods(steward: Steward) -> None:
    flooded, quiet = steward.new_repo(), steward.new_repo()
    number = steward.outsider.open_issue(flooded, "a question")
    other = steward.maintainer.open_issue(quiet, "hello")
    steward.settle()
    flood = [steward.outsider.comment(flooded, number, "/steward ping") for _ in range(FLOOD)]

    def flood_spent() -> bool:
        writes = [r for r in steward.bot_requests(flooded) if r["method"] not in ("GET", "HEAD")]
        queue = httpx2.get(f"{steward.receiver.url}/queue", timeout=10).json()
        return len(writes) >= 10 and queue["ready"] == 0 and queue["running"] == 0

    # The flood has written what it may now; the rest of its jobs wait (for the budget, or deferred).
    wait_for(flood_spent, timeout=60, what="the flood's writes so far")
    started = time.monotonic()
    steward.maintainer.comment(quiet, other, "/steward ping")
    wait_for(
        lambda: any("pong" in c["body"] for c in steward.bot_comments(quiet, other)),
        timeout=20,
        what="the other repository's ping (the write budget's minute would be 60 s)",
    )
    print(f"\n{steward.forge}: the other repository's ping took {time.monotonic() - started:.1f} s")
    # The outsider's own answers come at their share of the budget (a quarter: 10 writes a minute).
    confused = [c for c in flood if "confused" in _reactions(steward, flooded, c)]
    assert len(confused) <= 1, f"{len(confused)} refusals past the budget wrote a 😕"
