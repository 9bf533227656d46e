"""The per-sender event budget (issue 25 §2), taken where deliveries are enqueued, against real Redis: one
person's edits, comments and label changes beyond `limits.events_per_minute` are still accepted but queued
at that rate — after everyone else's due work — and coalesced per issue; commands are not counted here."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest
from arq.connections import ArqRedis
from arq.constants import job_key_prefix
from arq.jobs import deserialize_job

from bot.config.repo_settings import RepoConfigs
from bot.config.settings import HandlerSettings
from bot.events.event import CommentSnapshot, Event, IssueSnapshot
from bot.forge import RepoRef, repo_key
from bot.queue.budgets import publish_events_limit
from bot.queue.jobs import QUEUE_NAME, Enqueuer, make_redis
from tests.integration.test_config_cache import FileForge

_count = 0


def _event(sender: str = "mallory", *, number: int = 7, label: str = "spam", repo: str = "acme/app",
           name: str = "issues", action: str = "labeled", body: str = "just text",
           repo_id: int = 0) -> Event:  # fmt: skip
    global _count
    _count += 1
    return Event(
        forge="github",
        delivery_id=f"d-{time.time_ns()}-{_count}",
        name=name,  # type: ignore[arg-type]
        action=action,
        sender=sender,
        repo=RepoRef(*repo.split("/"), id=repo_id),
        issue=IssueSnapshot(number=number, title="t", body="b", state="open", author="someone"),
        comment=CommentSnapshot(id=_count, body=body, author=sender) if name == "issue_comment" else None,
        label=label if name != "issue_comment" else None,
    )


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[ArqRedis]:
    client = make_redis(redis_url)
    yield client
    await client.aclose()


async def _score(redis: ArqRedis, job_id: str) -> float:
    score = await redis.zscore(QUEUE_NAME, job_id)
    assert score is not None
    return float(score)


async def test_beyond_the_budget_events_are_accepted_but_queued_at_the_rate_and_coalesced(
    redis: ArqRedis,
) -> None:
    enqueuer = Enqueuer(redis, dedupe_ttl=60, events_per_minute=30)
    now_ms = time.time() * 1000
    burst = [await enqueuer.enqueue(_event(number=n)) for n in range(1, 31)]
    assert {r.outcome for r in burst} == {"enqueued"}, "30 a minute run at once"

    first = await enqueuer.enqueue(_event(number=100))
    second = await enqueuer.enqueue(_event(number=101))
    assert (first.outcome, second.outcome) == ("deferred", "deferred")
    assert 1.5 <= first.delay <= 2.5 and 3.5 <= second.delay <= 4.5, "one every 2 s, in arrival order"
    assert now_ms + 1500 <= await _score(redis, first.job_id) < await _score(redis, second.job_id)

    newest = _event(number=100)
    again = await enqueuer.enqueue(newest)
    assert again.outcome == "coalesced" and again.job_id == first.job_id, "the same issue, kind and label"
    stored = deserialize_job(await redis.get(job_key_prefix + first.job_id))
    assert Event.from_json(stored.args[0]).delivery_id == newest.delivery_id, "the newest event stands"
    assert (await enqueuer.enqueue(newest)).outcome == "duplicate", "a redelivery is still a duplicate"
    other_label = await enqueuer.enqueue(_event(number=100, label="other"))
    assert other_label.outcome == "deferred" and other_label.job_id != first.job_id

    someone_else = await enqueuer.enqueue(_event("alice", number=100))
    assert someone_else.outcome == "enqueued", "the budget is the sender's"
    assert await _score(redis, someone_else.job_id) < await _score(redis, first.job_id), "others go first"
    command = await enqueuer.enqueue(
        _event(name="issue_comment", action="created", body="hi\n /steward ping")
    )
    assert command.outcome == "enqueued", "a comment that may hold a command keeps the command budget"
    elsewhere = await enqueuer.enqueue(_event(repo="acme/other"))
    assert elsewhere.outcome == "enqueued", "the budget is per repository"


async def test_the_repository_s_published_limit_overrides_the_default(redis: ArqRedis) -> None:
    enqueuer = Enqueuer(redis, dedupe_ttl=60, events_per_minute=30)
    await publish_events_limit(redis, "github", repo_key("github", RepoRef("acme", "app")), 2)
    outcomes = [(await enqueuer.enqueue(_event(number=n))).outcome for n in range(3)]
    assert outcomes == ["enqueued", "enqueued", "deferred"]
    await publish_events_limit(redis, "github", repo_key("github", RepoRef("ACME", "App")), 0)
    outcomes = [(await enqueuer.enqueue(_event(number=n))).outcome for n in range(10, 50)]
    assert set(outcomes) == {"enqueued"}, "0 means no limit"


async def test_the_budget_and_the_limit_follow_a_renamed_repository_by_its_id(redis: ArqRedis) -> None:
    """Events name the repository's id (every webhook does): renamed or moved to another owner, it keeps
    its senders' budgets and its published limit."""
    enqueuer = Enqueuer(redis, dedupe_ttl=60, events_per_minute=30)
    await publish_events_limit(redis, "github", repo_key("github", RepoRef("acme", "app", 77)), 2)
    before = [(await enqueuer.enqueue(_event(number=n, repo_id=77))).outcome for n in range(2)]
    after = await enqueuer.enqueue(_event(number=9, repo="elsewhere/app-renamed", repo_id=77))
    assert (before, after.outcome) == (["enqueued", "enqueued"], "deferred")
    other = await enqueuer.enqueue(_event(number=9, repo="acme/app", repo_id=78))
    assert other.outcome == "enqueued", "another repository that took the old name has its own"


async def test_new_issues_comments_edits_and_label_changes_count_others_do_not(redis: ArqRedis) -> None:
    enqueuer = Enqueuer(redis, dedupe_ttl=60, events_per_minute=1)
    kinds = [("issue_comment", "created"), ("issue_comment", "edited"), ("issues", "edited"),
             ("issues", "unlabeled"), ("pull_request", "labeled")]  # fmt: skip
    outcomes = [(await enqueuer.enqueue(_event(name=n, action=a, number=i))).outcome for i, (n, a) in
                enumerate(kinds)]  # fmt: skip
    assert outcomes == ["enqueued", "deferred", "deferred", "deferred", "deferred"]
    # A new issue counts too (issue 35 item 5: an outsider's 40 issues cost 2-3 writes each).
    assert (await enqueuer.enqueue(_event(name="issues", action="opened", number=90))).outcome == "deferred"
    for name, action in (("issues", "closed"), ("pull_request", "synchronize")):
        assert (await enqueuer.enqueue(_event(name=name, action=action))).outcome == "enqueued"


async def test_reading_a_repository_s_configuration_tells_the_receiver_its_limit(redis: ArqRedis) -> None:
    forge = FileForge("limits:\n  events_per_minute: 1\n")
    configs = RepoConfigs(redis, HandlerSettings())
    repo = RepoRef.parse("acme/app")
    assert (await configs.get(forge, repo)).settings.limits.events_per_minute == 1  # type: ignore[arg-type]
    enqueuer = Enqueuer(redis, dedupe_ttl=60, events_per_minute=30)
    outcomes = [(await enqueuer.enqueue(_event(number=n))).outcome for n in range(2)]
    assert outcomes == ["enqueued", "deferred"]
