"""`POST /webhooks/gitea` over real HTTP (uvicorn) with a real Redis: Gitea's headers and signature,
the same status codes, dedupe and 503 rules as GitHub's endpoint."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
import redis

from bot.config.settings import Settings
from bot.receiver.app import create_app
from bot.receiver.signatures import sign_sha256
from tests.e2e.stack import ThreadedServer, free_port

GITEA = Path(__file__).parent.parent / "fixtures" / "gitea"
VECTORS: list[dict[str, Any]] = json.loads((GITEA / "signature-vectors.json").read_text())["vectors"]
INDEX = {e["file"]: e for e in json.loads((GITEA / "webhooks" / "index.json").read_text())["files"]}
SECRET = "gitea-secret"
COMMENT_FILE = "go-scm/issue_comment_created.json"
COMMENT = (GITEA / "webhooks" / COMMENT_FILE).read_bytes()


def queued(redis_url: str) -> int:
    client = redis.Redis.from_url(redis_url)
    try:
        return int(client.zcard("steward:queue"))
    finally:
        client.close()


def gitea_headers(
    file: str, body: bytes, *, secret: str = SECRET, delivery: str | None = None
) -> dict[str, str]:
    entry = INDEX[file]
    return {
        "Content-Type": "application/json",
        "X-Gitea-Event": entry["x_gitea_event"],
        "X-Gitea-Event-Type": entry["x_gitea_event_type"],
        "X-Gitea-Delivery": delivery or str(uuid.uuid4()),
        "X-Gitea-Signature": sign_sha256(secret, body),
    }


@pytest.fixture
def receiver(redis_url: str) -> Iterator[ThreadedServer]:
    secrets = ",".join(["old-secret", SECRET, *sorted({v["secret"] for v in VECTORS})])
    settings = Settings(redis_url=redis_url, gitea_webhook_secrets=secrets)  # type: ignore[arg-type]
    server = ThreadedServer(create_app(settings)).start()
    yield server
    server.stop()


@pytest.mark.parametrize("vector", VECTORS, ids=[v["file"] for v in VECTORS])
def test_every_signature_vector_verifies_on_its_byte_exact_payload(
    receiver: ThreadedServer, vector: dict[str, Any]
) -> None:
    file = vector["file"].removeprefix("webhooks/")
    body = (GITEA / "webhooks" / file).read_bytes()
    headers = {**gitea_headers(file, body), "X-Gitea-Signature": vector["x_gitea_signature"]}
    response = httpx2.post(f"{receiver.url}/webhooks/gitea", content=body, headers=headers)
    assert response.status_code in (200, 202), response.text
    assert "error" not in response.json()


def test_x_hub_signature_256_alone_is_accepted(receiver: ThreadedServer) -> None:
    headers = gitea_headers(COMMENT_FILE, COMMENT)
    del headers["X-Gitea-Signature"]
    headers["X-Hub-Signature-256"] = "sha256=" + sign_sha256(SECRET, COMMENT)
    response = httpx2.post(f"{receiver.url}/webhooks/gitea", content=COMMENT, headers=headers)
    assert response.status_code == 202 and "job" in response.json()


def test_a_delivery_is_enqueued_once_and_replays_are_duplicates(
    receiver: ThreadedServer, redis_url: str
) -> None:
    headers = gitea_headers(COMMENT_FILE, COMMENT, delivery="g-1", secret="old-secret")
    first = httpx2.post(f"{receiver.url}/webhooks/gitea", content=COMMENT, headers=headers)
    assert first.status_code == 202 and first.json() == {"job": "delivery:gitea:g-1"}
    for _ in range(3):
        again = httpx2.post(f"{receiver.url}/webhooks/gitea", content=COMMENT, headers=headers)
        assert again.status_code == 200 and again.json() == {"duplicate": True}
    assert queued(redis_url) == 1


def _without(headers: dict[str, str], *names: str) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k not in names}


@pytest.mark.parametrize(
    ("change", "status"),
    [
        (lambda h: _without(h, "X-Gitea-Event"), 400),
        (lambda h: _without(h, "X-Gitea-Delivery"), 400),
        (lambda h: _without(h, "X-Gitea-Signature"), 401),
        (lambda h: {**h, "X-Gitea-Signature": ""}, 401),
        (lambda h: {**h, "X-Gitea-Signature": "0" * 64}, 401),
        (lambda h: {**h, "X-Gitea-Signature": sign_sha256("wrong", COMMENT)}, 401),
        (lambda h: {**h, "X-Gitea-Signature": "sha256=" + sign_sha256(SECRET, COMMENT)}, 401),
    ],
    ids=["no-event", "no-delivery", "no-signature", "empty", "zeros", "wrong-secret", "github-prefix"],
)
def test_bad_deliveries_are_refused_and_nothing_is_enqueued(
    receiver: ThreadedServer, redis_url: str, change: Any, status: int
) -> None:
    headers = change(gitea_headers(COMMENT_FILE, COMMENT))
    response = httpx2.post(f"{receiver.url}/webhooks/gitea", content=COMMENT, headers=headers)
    assert response.status_code == status and "error" in response.json()
    assert queued(redis_url) == 0


def test_oversize_malformed_and_incomplete_bodies(receiver: ThreadedServer, redis_url: str) -> None:
    big = b'{"a": "' + b"x" * (26 * 1024 * 1024) + b'"}'
    for body, status in [(big, 413), (b"{not json", 400), (b'{"action": "created"}', 400)]:
        headers = gitea_headers(COMMENT_FILE, body)
        response = httpx2.post(f"{receiver.url}/webhooks/gitea", content=body, headers=headers, timeout=60)
        assert response.status_code == status
    assert queued(redis_url) == 0


@pytest.mark.parametrize(
    "file",
    [
        "go-playground/release-event.json",
        "woodpecker/HookPullRequestAddReviewRequest.json",
        "go-scm/tag_create.json",
    ],
)
def test_unhandled_events_are_acknowledged_and_ignored(
    receiver: ThreadedServer, redis_url: str, file: str
) -> None:
    body = (GITEA / "webhooks" / file).read_bytes()
    response = httpx2.post(f"{receiver.url}/webhooks/gitea", content=body, headers=gitea_headers(file, body))
    assert response.status_code == 202 and "ignored" in response.json()
    assert queued(redis_url) == 0


@pytest.mark.parametrize(
    "file",
    [
        "woodpecker/HookPullRequestReviewAck.json",
        "woodpecker/HookPullRequestReviewDeny.json",
        "woodpecker/HookPullRequestReviewComment.json",
    ],
)
def test_native_reviews_are_enqueued(receiver: ThreadedServer, redis_url: str, file: str) -> None:
    """Gitea's review deliveries (X-Gitea-Event pull_request_approved / _rejected / _comment) are handled:
    the bugfix ledger shows native reviews."""
    body = (GITEA / "webhooks" / file).read_bytes()
    response = httpx2.post(f"{receiver.url}/webhooks/gitea", content=body, headers=gitea_headers(file, body))
    assert response.status_code == 202 and "ignored" not in response.json()
    assert queued(redis_url) == 1


def test_redis_unreachable_gives_503() -> None:
    settings = Settings(
        redis_url=f"redis://127.0.0.1:{free_port()}/0",
        gitea_webhook_secrets=SECRET,  # type: ignore[arg-type]
    )
    server = ThreadedServer(create_app(settings)).start()
    try:
        response = httpx2.post(
            f"{server.url}/webhooks/gitea", content=COMMENT, headers=gitea_headers(COMMENT_FILE, COMMENT)
        )
        assert response.status_code == 503
    finally:
        server.stop()


def test_metrics_count_gitea_deliveries(receiver: ThreadedServer) -> None:
    httpx2.post(
        f"{receiver.url}/webhooks/gitea", content=COMMENT, headers=gitea_headers(COMMENT_FILE, COMMENT)
    )
    text = httpx2.get(f"{receiver.url}/metrics").text
    assert 'steward_deliveries_total{event="issue_comment",forge="gitea",outcome="accepted"}' in text
    assert SECRET not in text
