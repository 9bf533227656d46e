"""Schemathesis against the receiver's own OpenAPI description (GET /openapi.json): for every operation,
generated requests — unsigned, and signed with the configured secret so they get past the signature to the
parser — never get a 500, and every answer (status, content type, body) is one the description lists."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance
from starlette.applications import Starlette
from starlette.testclient import TestClient

from bot.receiver.app import create_app
from bot.receiver.signatures import sign_sha256
from tests.e2e.conftest import make_settings
from tests.e2e.stack import SECRET


@pytest.fixture(scope="module")
def receiver(redis_url: str) -> Iterator[Starlette]:
    """The receiver without its lifespan: schemathesis sends every request from its one event loop, and the
    app's Redis client (its connection pool's lock) may belong to one loop only, as in `steward serve`. A
    lifespan run by a TestClient would use the same client from a second loop (the heartbeat), a 500 no
    server can produce (found as a flaky failure on /readyz)."""
    yield create_app(make_settings("http://127.0.0.1:9", redis_url))


@pytest.fixture(scope="module")
def redis_url(redis_claim: Any) -> str:  # one database for the whole run, not flushed per example
    redis_claim.reset()
    return str(redis_claim.url)


@pytest.fixture(scope="module")
def operations(receiver: Starlette) -> list[Any]:
    """Every operation of the receiver's description, loaded the way schemathesis loads any API's."""
    api = schemathesis.openapi.from_asgi("/openapi.json", receiver)
    return [result.ok() for result in api.get_all_operations()]


def test_the_receiver_serves_its_description(receiver: Starlette) -> None:
    answer = TestClient(receiver).get("/openapi.json")  # no lifespan: see the receiver fixture
    assert answer.status_code == 200
    assert set(answer.json()["paths"]) == {
        "/webhooks/github",
        "/webhooks/gitea",
        "/healthz",
        "/readyz",
        "/metrics",
        "/queue",
        "/openapi.json",
    }


def _signed(case: Any) -> Any:
    """The case signed with the receiver's secret, so that its payload reaches the parser and normaliser."""
    body = json.dumps(case.body).encode()
    headers = {str(k): str(v) for k, v in (case.headers or {}).items()}
    signature = sign_sha256(SECRET, body)
    if case.path.endswith("/github"):
        headers["X-Hub-Signature-256"] = "sha256=" + signature
    else:
        headers["X-Gitea-Signature"] = signature
    headers["Content-Type"] = "application/json"
    return body, headers


# Schemathesis's pytest plugin does not run under this pytest; its strategies do, driven by hypothesis here.
def test_generated_requests_get_a_described_answer_and_never_a_500(operations: list[Any]) -> None:
    assert len(operations) >= 5  # schemathesis leaves out the description itself
    for operation in operations:

        @settings(max_examples=40, suppress_health_check=list(HealthCheck), database=None)
        @given(case=operation.as_strategy())
        def unsigned(case: Any) -> None:
            case.call_and_validate()

        unsigned()


def test_signed_generated_deliveries_get_a_described_answer_and_never_a_500(operations: list[Any]) -> None:
    webhooks = [op for op in operations if op.method.upper() == "POST"]
    assert len(webhooks) == 2
    for operation in webhooks:

        @settings(max_examples=60, suppress_health_check=list(HealthCheck), database=None)
        @given(case=operation.as_strategy())
        def signed(case: Any) -> None:
            if not isinstance(case.body, dict):
                return
            body, headers = _signed(case)
            case.headers = headers
            response = case.call(data=body)
            assert response.status_code < 500, response.text
            # Any JSON object matches the description's body, but only a payload of the named event's shape
            # is read; the rest is a described 400, not a schema-valid request wrongly refused.
            case.validate_response(response, excluded_checks=[positive_data_acceptance])

        signed()
