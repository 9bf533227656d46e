"""A forge that refuses Steward's credentials (401) is an outage: nothing is parked (issue 40 item 5), end to
end on both forges.

A revoked token (or a rotated App key) used to park every job as a permanent failure on its first run. Now
the first 401 pauses the forge for every job (doubling from 5 s while it goes on), the jobs wait in the queue
without asking the forge, `steward_forge_auth_failing{forge}` is 1 and each process logs one line a minute;
once the credentials work again the waiting jobs run, and the dead-letter list stays empty.
"""

from __future__ import annotations

import httpx2

from tests.e2e.conftest import Steward
from tests.e2e.stack import wait_for
from tests.e2e.test_ops_monitoring import value


def test_a_revoked_token_parks_nothing_and_the_work_resumes(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "a question")
    steward.settle()
    url = steward.receiver.url
    # Every request of the bot is refused as unauthenticated, as with a revoked token.
    steward.faults({"method": "*", "path": ".*", "status": 401, "times": 100_000, "login": "steward-bot"})
    steward.maintainer.comment(repo, number, "/steward ping")
    wait_for(
        lambda: (
            (value(url, "steward_dead_jobs") or 0) > 0
            or value(url, "steward_forge_auth_failing", forge=steward.forge) == 1
        ),
        timeout=30,
        what="the job parked, or the forge's credentials reported failing",
    )
    assert (value(url, "steward_dead_jobs") or 0) == 0, "nothing parked"
    assert value(url, "steward_forge_auth_failing", forge=steward.forge) == 1
    httpx2.delete(f"{steward.sandbox.url}/_sandbox/faults", timeout=10).raise_for_status()  # renewed
    wait_for(
        lambda: any("pong" in c["body"] for c in steward.bot_comments(repo, number)),
        timeout=60,
        what="the waiting ping answered once the credentials work",
    )
    assert value(url, "steward_forge_auth_failing", forge=steward.forge) == 0
    assert (value(url, "steward_dead_jobs") or 0) == 0
