"""The forge stops taking Steward's writes for a while: it rate-limits every write for 30 seconds, answering
as each forge does (GitHub: 403 with Retry-After, its secondary limit; Gitea: the 429 of the proxy in front of
it, with no Retry-After), or one route never answers at all. Jobs wait or defer and then complete; the write
budget is never exceeded; a job that cannot finish is parked and `steward dead retry` completes it."""

from __future__ import annotations

import time

import httpx2
import pytest

from bot.demo.texts import APPROVED_BUG
from tests.e2e.conftest import Steward
from tests.faults.scenario import Expected, bot_requests, check_forge_state, dead_count, steward_cli

LIMITED_FOR = 30.0
BUDGET = 30  # writes a minute, as configured for this scenario
BUGS = 4
PINGS = 4


def most_writes_in_a_minute(stamps: list[float]) -> int:
    """The most writes the forge saw in any 60 s, less half a second: a write reaches the forge a few
    milliseconds after it takes budget, so a window of exactly 60 s can catch one write too many at its
    edge."""
    stamps = sorted(stamps)
    most = 0
    start = 0
    for end, t in enumerate(stamps):
        while stamps[start] <= t - 59.5:
            start += 1
        most = max(most, end - start + 1)
    return most


@pytest.mark.timeout(300)  # 30 s of refusals, then up to a minute of budget on a busy machine
# One person's work on one repository: the shares of the budget a person and a repository may spend
# (tests/e2e/test_write_budget_fairness.py pins those) are the whole budget here, so the jobs meet the
# shared budget itself.
@pytest.mark.settings(
    write_budget_per_minute=BUDGET, write_share_per_repository=1.0, write_share_per_person=1.0
)
@pytest.mark.handler_settings(limits={"commands_per_minute": 1000})
def test_a_forge_that_rate_limits_every_write_for_30_seconds(steward: Steward) -> None:
    repo = steward.new_repo()
    steward.clear_requests()
    kind = "github-secondary" if steward.forge == "github" else "gitea-proxy"
    limit = {"method": "WRITE", "path": ".", "rate_limit": kind, "seconds": LIMITED_FOR, "times": 1_000_000}
    steward.faults({**limit, "login": "steward-bot"})
    started = time.monotonic()
    expected = Expected()
    for i in range(BUGS):
        number = steward.maintainer.open_issue(
            repo, f"Discount lost {i}", APPROVED_BUG, labels=["bug", "refine"]
        )
        expected.verdict_label[number] = "refinement:approved"
    for p in range(PINGS):
        steward.maintainer.comment(repo, number, f"/steward ping {p}")
        expected.replies[number] += 1

    steward.settle(timeout=180)
    elapsed = time.monotonic() - started
    assert elapsed >= LIMITED_FOR * 0.9, "nothing could be written before the limit ended"
    problems = check_forge_state(steward, repo, expected)
    assert not problems, "\n".join(problems)
    assert dead_count(steward.redis_url) == 0, "every job waited or deferred, none was given up"
    requests = bot_requests(steward.sandbox.url)
    writes = [r for r in requests if r["method"] not in ("GET", "HEAD")]
    limited = [r for r in writes if r.get("rate_limited")]
    assert limited, "the forge did refuse writes"
    sent = [float(r["at"]) for r in writes]
    most = most_writes_in_a_minute(sent)
    assert most <= BUDGET, "the write budget held, refused writes included"
    print(
        f"\n{steward.forge}: {len(writes)} writes ({len(limited)} rate-limited), "
        f"settled after {elapsed:.1f}s, at most {most} writes in a minute (budget {BUDGET})"
    )


@pytest.mark.settings(http_timeout_seconds=0.5, job_tries=2, retry_attempts=2)
def test_a_route_that_never_answers_is_parked_then_completed_by_dead_retry(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "the reply route hangs")
    path = f"/repos/{repo}/issues/{number}/comments$"
    hang = {"method": "POST", "path": path, "hang": True, "hang_seconds": 30, "times": 1000}
    steward.faults({**hang, "login": "steward-bot"})
    steward.maintainer.comment(repo, number, "/steward ping")
    steward.settle(timeout=60)
    assert dead_count(steward.redis_url) == 1, "timed out, retried, then parked"
    requests = bot_requests(steward.sandbox.url)
    hung = [r for r in requests if r.get("fault") and r["path"].endswith("/comments")]
    assert len(hung) >= 2, "the job was tried again before it was parked"
    assert steward.bot_comments(repo, number) == []

    httpx2.delete(f"{steward.sandbox.url}/_sandbox/faults").raise_for_status()
    code, out = steward_cli(steward.redis_url, "dead", "retry", "--all")
    assert code == 0 and "queued again" in out
    steward.settle()
    expected = Expected()
    expected.replies[number] = 1
    assert not check_forge_state(steward, repo, expected)
    assert dead_count(steward.redis_url) == 0
