"""Only comments that name a command Steward runs skip the per-person event budget (issue 35 item 10), end to
end on both forges.

A comment with a line starting `/` used to skip its sender's event budget, since commands have a budget of
their own: 40 `/x` comments from one person were all queued at once. Now the receiver skips the event budget
only for a comment naming a command the workers run (they publish the names in Redis: `/steward NAME`, a bare
`/steward`, or a short command such as `/ratify`); `/x`, `/steward x` and a command inside a code fence are
text like any other comment, paced by the event budget (30 a minute by default).
"""

from __future__ import annotations

import re

import httpx2

from tests.e2e.conftest import Steward
from tests.e2e.stack import wait_for

FLOOD = 40


def _comments(steward: Steward, outcome: str) -> float:
    text = httpx2.get(f"{steward.receiver.url}/metrics").text
    pattern = (
        rf'steward_deliveries_total\{{event="issue_comment",forge="{steward.forge}",outcome="{outcome}"\}} '
        r"(\S+)"
    )
    found = re.search(pattern, text)
    return float(found.group(1)) if found else 0.0


def test_slash_text_is_paced_by_the_event_budget_and_a_real_command_is_not(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "a question")
    steward.settle()
    before = {o: _comments(steward, o) for o in ("accepted", "deferred", "coalesced")}
    bodies = ["/x", "/steward x", "```\n/steward ping\n```"]
    for n in range(FLOOD):
        steward.outsider.comment(repo, number, f"{bodies[n % len(bodies)]} {n}")
    wait_for(
        lambda: sum(_comments(steward, o) - before[o] for o in before) >= FLOOD,
        timeout=60,
        what="every comment acknowledged",
    )
    after = {o: _comments(steward, o) - before[o] for o in before}
    assert after["accepted"] <= 31, f"slash text is paced like any comment: {after}"
    assert after["deferred"] + after["coalesced"] >= FLOOD - 31, after

    # A command the workers run still skips the event budget. (Not the outsider's: their `/steward x`
    # lines were commands to the worker, unknown ones, and spent their command budget for the minute.)
    accepted = _comments(steward, "accepted")
    steward.maintainer.comment(repo, number, "/steward ping")
    wait_for(lambda: _comments(steward, "accepted") > accepted, what="the ping accepted at once")
    wait_for(
        lambda: any("pong" in c["body"] for c in steward.bot_comments(repo, number)),
        timeout=60,
        what="the ping answered",
    )
