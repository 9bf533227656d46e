"""What an operator pages on (issue 26), end to end on both forges: the dead-letter gauge read from Redis
at each scrape (right after `steward dead retry` in another process, after a worker restart, on the
receiver too); `steward dead drop`; `dead list` counting runs as `STEWARD_JOB_TRIES` does; the queue's
ready and deferred jobs, the oldest ready job's age and the workers' heartbeat, with `/readyz` degraded
while no worker runs; which webhook secret matched, by position."""

from __future__ import annotations

import re
import time
import uuid

import httpx2
import pytest
import redis
from prometheus_client.parser import text_string_to_metric_families

from bot.demo.threads import ThreadedWorker
from bot.queue.gauges import HEARTBEAT_KEY
from tests.e2e.conftest import Steward
from tests.e2e.stack import SECRET, dumps, signed_delivery, wait_for
from tests.e2e.test_dead_letters import park_a_ping, steward_cli


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = httpx2.get(f"{url}/metrics", timeout=10).text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(url: str, name: str, **labels: str) -> float | None:
    return scrape(url).get((name, tuple(sorted(labels.items()))))


def test_the_dead_gauge_is_read_from_redis_and_dead_drop_forgets_a_job(
    steward: Steward, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = steward.receiver.url
    repo, number, _ = park_a_ping(steward)
    park_a_ping(steward)
    assert value(url, "steward_dead_jobs") == 2
    assert (value(url, "steward_dead_bytes") or 0) > 0
    code, listing = steward_cli(monkeypatch, steward, "dead", "list")
    assert "after 1 run:" in listing, "a refusal ends a job on its first run"
    [first, _second] = [line.split()[0] for line in listing.splitlines()[1:]]

    code, out = steward_cli(monkeypatch, steward, "dead", "drop", first)
    assert code == 0 and f"{first}: dropped" in out
    assert value(url, "steward_dead_jobs") == 1, "the receiver reads the list, whoever changed it"
    code, out = steward_cli(monkeypatch, steward, "dead", "drop", "--all")
    assert code == 0 and "dropped" in out
    assert value(url, "steward_dead_jobs") == 0 and value(url, "steward_dead_bytes") == 0
    assert steward_cli(monkeypatch, steward, "dead", "list")[1].startswith("No dead jobs")
    assert steward_cli(monkeypatch, steward, "dead", "drop", "no-such-job")[0] == 1
    httpx2.delete(f"{steward.sandbox.url}/_sandbox/faults")
    steward.settle()
    assert steward.bot_comments(repo, number) == [], "a dropped job never runs"


@pytest.mark.settings(job_tries=2, retry_attempts=1)
def test_dead_list_counts_the_runs_steward_job_tries_allows(
    steward: Steward, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "the forge is failing")
    path = f"/repos/{repo}/issues/{number}/comments$"
    steward.faults({"method": "POST", "path": path, "status": 500, "times": 100, "login": "steward-bot"})
    steward.maintainer.comment(repo, number, "/steward ping")
    wait_for(lambda: value(steward.receiver.url, "steward_dead_jobs") == 1, timeout=60, what="the parked job")
    _, listing = steward_cli(monkeypatch, steward, "dead", "list")
    assert "after 2 runs:" in listing, listing


def test_a_missing_worker_shows_in_readyz_and_the_queue_metrics(steward: Steward) -> None:
    url = steward.receiver.url
    repo = steward.new_repo()
    # The worker beats on its first poll after start-up, which a loaded machine may not have reached yet.
    ok = {"status": "ok", "redis": "ok"}
    wait_for(lambda: httpx2.get(f"{url}/readyz").json() == ok, what="the worker's first heartbeat")
    steward.workers[0].stop()
    # The last worker reported in two minutes ago.
    redis.Redis.from_url(steward.redis_url).set(HEARTBEAT_KEY, repr(time.time() - 120))
    steward.maintainer.comment(repo, steward.maintainer.open_issue(repo, "anyone there?"), "/steward ping")
    wait_for(lambda: value(url, "steward_queue_jobs", state="ready"), what="queued jobs")

    ready = httpx2.get(f"{url}/readyz")
    assert ready.status_code == 200, "still accepting: the queue is durable"
    assert ready.json()["status"] == "degraded" and "no worker heartbeat" in ready.json()["worker"]
    assert (value(url, "steward_worker_heartbeat_age_seconds") or 0) >= 120
    first = value(url, "steward_queue_oldest_ready_seconds") or 0.0
    assert wait_for(
        lambda: (value(url, "steward_queue_oldest_ready_seconds") or 0) > first, what="the wait to grow"
    )

    steward.workers = [ThreadedWorker(steward.settings).start()]
    steward.settle()
    assert value(url, "steward_queue_jobs", state="ready") == 0
    assert value(url, "steward_queue_oldest_ready_seconds") == 0
    assert (value(url, "steward_worker_last_job_age_seconds") or 99) < 30
    assert httpx2.get(f"{url}/readyz").json() == {"status": "ok", "redis": "ok"}


@pytest.mark.settings(
    github_webhook_secrets=f"rotated-in,{SECRET}", gitea_webhook_secrets=f"rotated-in,{SECRET}"
)
def test_which_webhook_secret_matched_is_counted_by_position(steward: Steward) -> None:
    url = steward.receiver.url
    repo = steward.new_repo()  # the hook signs with the old secret: position 1
    old = value(url, "steward_webhook_secret_matches_total", forge=steward.forge, position="1") or 0
    new = value(url, "steward_webhook_secret_matches_total", forge=steward.forge, position="0") or 0
    steward.maintainer.open_issue(repo, "signed with the old secret")
    steward.settle()
    assert (value(url, "steward_webhook_secret_matches_total", forge=steward.forge, position="1") or 0) > old
    payload = dumps({"zen": "x", "hook_id": 1}) if steward.forge == "github" else b"{}"
    steward_delivery = steward.deliver("ping" if steward.forge == "github" else "push", payload)
    assert steward_delivery.status_code < 500
    assert steward_delivery.status_code != 401  # signed with the old secret again (the test's helper)
    signed_delivery(
        url, "ping", payload, delivery=str(uuid.uuid4()), secret="rotated-in", flavor=steward.forge
    )
    assert value(url, "steward_webhook_secret_matches_total", forge=steward.forge, position="0") == new + 1
    assert (
        "rotated-in" not in httpx2.get(f"{url}/metrics").text
        and SECRET not in httpx2.get(f"{url}/metrics").text
    )


def test_the_forges_rate_limit_headroom_is_exported_per_token(steward: Steward) -> None:
    """GitHub reports its rate limit on every answer (X-RateLimit-Limit/-Remaining); Steward exports it per
    token or installation, as a digest. Gitea sends no such headers: no series for it."""
    repo = steward.new_repo()
    steward.maintainer.comment(repo, steward.maintainer.open_issue(repo, "q"), "/steward ping")
    steward.settle()
    series = {
        (labels, v)
        for (name, labels), v in scrape(steward.receiver.url).items()
        if name == "steward_forge_rate_limit_remaining"
    }
    github = [(dict(labels), v) for labels, v in series if dict(labels)["forge"] == "github"]
    if steward.forge == "github":
        assert github and all(0 <= v < 5000 for _, v in github)  # the sandbox's hour is the session's
        # A token's digest (this test's), or an App's `installation:<id>` (other tests in the session).
        names = [labels["installation"] for labels, _ in github]
        assert any(re.fullmatch(r"[0-9a-f]{16}", n) for n in names), names
        assert all(re.fullmatch(r"[0-9a-f]{16}|(installation|app):\d+", n) for n in names), names
        limits = [v for (n, lb), v in scrape(steward.receiver.url).items() if n == "steward_forge_rate_limit"]
        assert 5000 in limits
    assert not [labels for labels, _ in series if dict(labels)["forge"] == "gitea"]
