"""The receiver over real HTTP (uvicorn) with a real Redis: status codes, dedupe, 503, metrics."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
import redis

from bot.config.settings import Settings
from bot.receiver.app import create_app
from bot.receiver.signatures import sign_sha256
from tests.e2e.stack import SECRET, ThreadedServer, free_port, signed_delivery, wait_for

WEBHOOKS = Path(__file__).parent.parent / "fixtures" / "github" / "webhooks"
COMMENT = (WEBHOOKS / "issue_comment" / "created.json").read_bytes()


def queued(redis_url: str) -> int:
    client = redis.Redis.from_url(redis_url)
    try:
        return int(client.zcard("steward:queue"))
    finally:
        client.close()


@pytest.fixture
def receiver(redis_url: str) -> Iterator[ThreadedServer]:
    settings = Settings(redis_url=redis_url, github_webhook_secrets="old-secret," + SECRET)  # type: ignore[arg-type]
    server = ThreadedServer(create_app(settings)).start()
    yield server
    server.stop()


def test_a_signed_delivery_is_enqueued_once_and_replays_are_duplicates(
    receiver: ThreadedServer, redis_url: str
) -> None:
    first = signed_delivery(receiver.url, "issue_comment", COMMENT, delivery="d-1")
    assert first.status_code == 202 and first.json() == {"job": "delivery:github:d-1"}
    for _ in range(5):
        again = signed_delivery(receiver.url, "issue_comment", COMMENT, delivery="d-1")
        assert again.status_code == 200 and again.json() == {"duplicate": True}
    assert queued(redis_url) == 1


def test_secret_rotation_accepts_the_old_secret(receiver: ThreadedServer, redis_url: str) -> None:
    response = signed_delivery(receiver.url, "issue_comment", COMMENT, secret="old-secret")
    assert response.status_code == 202


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"X-GitHub-Delivery": "x", "X-Hub-Signature-256": "sha256=00"}, 400),  # no event
        ({"X-GitHub-Event": "issues", "X-Hub-Signature-256": "sha256=00"}, 400),  # no delivery
        ({"X-GitHub-Event": "issues", "X-GitHub-Delivery": "x"}, 401),  # no signature
        (
            {
                "X-GitHub-Event": "issues",
                "X-GitHub-Delivery": "x",
                "X-Hub-Signature-256": "sha256=" + "0" * 64,
            },
            401,
        ),
        (
            {
                "X-GitHub-Event": "issues",
                "X-GitHub-Delivery": "x",
                "X-Hub-Signature-256": "sha256=" + sign_sha256("wrong", COMMENT),
            },
            401,
        ),
    ],
)
def test_bad_deliveries_are_refused_and_nothing_is_enqueued(
    receiver: ThreadedServer, redis_url: str, headers: dict[str, str], status: int
) -> None:
    response = httpx2.post(f"{receiver.url}/webhooks/github", content=COMMENT, headers=headers)
    assert response.status_code == status
    assert "error" in response.json()
    assert queued(redis_url) == 0


def test_a_26_mib_body_is_refused_with_413(receiver: ThreadedServer, redis_url: str) -> None:
    body = b'{"a": "' + b"x" * (26 * 1024 * 1024) + b'"}'
    response = signed_delivery(receiver.url, "issues", body)
    assert response.status_code == 413
    assert queued(redis_url) == 0


def test_malformed_json_is_refused_with_400(receiver: ThreadedServer, redis_url: str) -> None:
    response = signed_delivery(receiver.url, "issues", b"{not json")
    assert response.status_code == 400 and "JSON" in response.json()["error"]
    assert queued(redis_url) == 0


def test_a_payload_missing_its_fields_is_refused_with_400(receiver: ThreadedServer, redis_url: str) -> None:
    response = signed_delivery(receiver.url, "issue_comment", json.dumps({"action": "created"}).encode())
    assert response.status_code == 400
    assert queued(redis_url) == 0


@pytest.mark.parametrize(
    ("event", "fixture"),
    [
        # Another CI's run starting (its name is not Steward's): only its completion counts.
        ("check_run", "check_run/created.json"),
        # Assignees changed are handled now (the overview refreshes); a review requested is not.
        ("pull_request", "pull_request/review_requested.json"),
        ("pull_request", "pull_request/review_request_removed.json"),
        # GitHub announces the pins Steward makes (the configuration error issue); nothing handles them.
        ("issues", "issues/pinned.json"),
        ("issues", "issues/unpinned.json"),
        ("label", "label/created.json"),
    ],
)
def test_unhandled_events_are_acknowledged_and_ignored(
    receiver: ThreadedServer, redis_url: str, event: str, fixture: str
) -> None:
    response = signed_delivery(receiver.url, event, (WEBHOOKS / fixture).read_bytes())
    assert response.status_code == 202
    assert "ignored" in response.json() and event in response.json()["ignored"]
    assert queued(redis_url) == 0


def test_ping_answers_200(receiver: ThreadedServer, redis_url: str) -> None:
    response = signed_delivery(receiver.url, "ping", (WEBHOOKS / "ping" / "payload.json").read_bytes())
    assert response.status_code == 200
    assert queued(redis_url) == 0


def test_health_readiness_and_metrics(receiver: ThreadedServer) -> None:
    signed_delivery(receiver.url, "issue_comment", COMMENT)
    assert httpx2.get(f"{receiver.url}/healthz").json() == {"status": "ok"}
    assert httpx2.get(f"{receiver.url}/readyz").json()["redis"] == "ok"
    text = httpx2.get(f"{receiver.url}/metrics").text
    assert 'steward_deliveries_total{event="issue_comment",forge="github",outcome="accepted"}' in text
    assert "steward_enqueue_seconds_bucket" in text
    assert SECRET not in text


def _series(text: str) -> set[str]:
    return {line.split(" ")[0] for line in text.splitlines() if line.startswith("steward_deliveries_total{")}


@pytest.mark.parametrize("forge", ["github", "gitea"])
def test_unsigned_requests_never_make_new_metric_series(receiver: ThreadedServer, forge: str) -> None:
    """Metric labels from untrusted input: 200 unsigned requests with made-up event names add at most the
    one `unverified` series; a signed delivery of an event Steward does not know is labelled `other`."""
    header = "X-GitHub-Event" if forge == "github" else "X-Gitea-Event"
    delivery = "X-GitHub-Delivery" if forge == "github" else "X-Gitea-Delivery"
    http = httpx2.Client(timeout=10)
    for i in range(200):
        http.post(
            f"{receiver.url}/webhooks/{forge}",
            content=b"{}",
            headers={header: f"made-up-{i}", delivery: f"d-{i}", "X-Hub-Signature-256": "sha256=00"},
        )
    series = _series(httpx2.get(f"{receiver.url}/metrics").text)
    assert not any("made-up" in s for s in series)
    assert any('event="unverified"' in s and f'forge="{forge}"' in s for s in series)
    if forge == "github":
        signed = signed_delivery(receiver.url, "made-up-but-signed", b"{}", delivery="signed-1")
        assert signed.status_code == 202
        text = httpx2.get(f"{receiver.url}/metrics").text
        assert 'steward_deliveries_total{event="other",forge="github",outcome="ignored"}' in text
        assert "made-up-but-signed" not in text


def test_redis_down_gives_503_and_recovers_when_it_is_back() -> None:
    port = free_port()
    workdir = tempfile.mkdtemp()
    url = f"redis://127.0.0.1:{port}/0"

    def start_redis() -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                workdir,
            ],
            stdout=subprocess.DEVNULL,
        )
        wait_for(lambda: _pings(url), timeout=10, what="the private Redis")
        return proc

    proc = start_redis()
    settings = Settings(redis_url=url, github_webhook_secrets=SECRET)  # type: ignore[arg-type]
    server = ThreadedServer(create_app(settings)).start()
    try:
        assert signed_delivery(server.url, "issue_comment", COMMENT).status_code == 202
        proc.terminate()
        proc.wait(10)
        down = signed_delivery(server.url, "issue_comment", COMMENT, delivery="while-down")
        assert down.status_code == 503
        assert httpx2.get(f"{server.url}/readyz").status_code == 503
        proc = start_redis()
        back = signed_delivery(server.url, "issue_comment", COMMENT, delivery="while-down")
        assert back.status_code == 202, "a delivery refused with 503 is accepted when redelivered"
        assert queued(url) == 1
    finally:
        server.stop()
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)


def _pings(url: str) -> bool:
    client = redis.Redis.from_url(url)
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False
    finally:
        client.close()


def test_concurrent_copies_of_one_delivery_enqueue_one_job(receiver: ThreadedServer, redis_url: str) -> None:
    """Deliveries arriving together share one Redis call; a delivery repeated within it is still one job."""
    from concurrent.futures import ThreadPoolExecutor

    def send(delivery: str) -> int:
        return signed_delivery(receiver.url, "issue_comment", COMMENT, delivery=delivery).status_code

    with ThreadPoolExecutor(16) as pool:
        same = list(pool.map(send, ["same-id"] * 16))
        distinct = list(pool.map(send, [f"id-{i}" for i in range(16)]))
    assert sorted(same) == [200] * 15 + [202]
    assert distinct == [202] * 16
    assert queued(redis_url) == 17
