"""The receiver's own API, described in OpenAPI 3.1 (served at ``GET /openapi.json``): what a forge, a probe
or a scraper may send and every answer it can get (DESIGN §3.7). A schemathesis run checks the receiver
against it (tests/fuzz/test_openapi_schemathesis.py)."""

from __future__ import annotations

from typing import Any

from bot.version import steward_version

_ERROR = {
    "type": "object",
    "properties": {"error": {"type": "string"}},
    "required": ["error"],
}
_ACCEPTED = {
    "type": "object",
    "description": "Queued (`job`), or read and deliberately not acted on (`ignored`, with why).",
    "properties": {"job": {"type": "string"}, "ignored": {"type": "string"}},
}
_OK = {
    "type": "object",
    "description": "GitHub's `ping` (`pong`), or a delivery already received (`duplicate`).",
    "properties": {"pong": {"type": "boolean"}, "duplicate": {"type": "boolean"}},
}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _header(name: str, description: str, *, required: bool = True) -> dict[str, Any]:
    return {
        "name": name,
        "in": "header",
        "required": required,
        "description": description,
        # An empty header is a missing one (400): the description says so, or a generated request that
        # follows it could be refused (schemathesis found it).
        "schema": {"type": "string", "minLength": 1} if required else {"type": "string"},
    }


def _webhook(forge: str, headers: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "post": {
            "summary": f"A {forge} webhook delivery",
            "operationId": f"receive_{forge.lower()}",
            "parameters": headers,
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": {"type": "object"}}},
            },
            "responses": {
                "200": _json(_OK, "A ping, or a delivery already received"),
                "202": _json(_ACCEPTED, "Durably queued, or ignored (with why)"),
                "400": _json(_ERROR, "A header missing, the body not JSON, or a payload Steward cannot read"),
                "401": _json(_ERROR, "No webhook secret configured, or the signature missing or wrong"),
                "413": _json(_ERROR, "The body is larger than STEWARD_MAX_BODY_BYTES"),
                "503": _json(_ERROR, "The queue (Redis) is unavailable: redeliver later"),
            },
        }
    }


def description() -> dict[str, Any]:
    status = {"type": "object", "properties": {"status": {"type": "string"}, "redis": {"type": "string"}}}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Steward receiver",
            "version": steward_version(),
            "description": "Webhook deliveries in; health, readiness and metrics out. The receiver never "
            "calls the forge: it verifies, parses, deduplicates and queues.",
        },
        "paths": {
            "/webhooks/github": _webhook(
                "GitHub",
                [
                    _header("X-GitHub-Event", "The event name (`issues`, `issue_comment`, `ping`, …)"),
                    _header("X-GitHub-Delivery", "The delivery's GUID (deduplication key)"),
                    _header("X-Hub-Signature-256", "`sha256=` and the body's HMAC-SHA256", required=False),
                ],
            ),
            "/webhooks/gitea": _webhook(
                "Gitea",
                [
                    _header("X-Gitea-Event", "The event name (Forgejo: X-Forgejo-Event)"),
                    _header("X-Gitea-Delivery", "The delivery's GUID (Forgejo: X-Forgejo-Delivery)"),
                    _header("X-Gitea-Signature", "The body's HMAC-SHA256 in hex", required=False),
                ],
            ),
            "/healthz": {
                "get": {
                    "summary": "The process is alive",
                    "operationId": "healthz",
                    "responses": {"200": _json(status, "Alive")},
                }
            },
            "/readyz": {
                "get": {
                    "summary": "Redis answers (ready to queue deliveries)",
                    "operationId": "readyz",
                    "responses": {"200": _json(status, "Ready"), "503": _json(status, "Redis unreachable")},
                }
            },
            "/metrics": {
                "get": {
                    "summary": "Prometheus metrics",
                    "operationId": "metrics",
                    "responses": {
                        "200": {"description": "Prometheus text", "content": {"text/plain": {"schema": {}}}}
                    },
                }
            },
            "/queue": {
                "get": {
                    "summary": "The queue: ready and deferred jobs (what KEDA scales the workers on)",
                    "operationId": "queue",
                    "responses": {
                        "200": _json({"type": "object"}, "Jobs ready and deferred"),
                        "503": _json({"type": "object"}, "Redis unreachable"),
                    },
                }
            },
            "/openapi.json": {
                "get": {
                    "summary": "This description",
                    "operationId": "openapi",
                    "responses": {"200": _json({"type": "object"}, "OpenAPI 3.1")},
                }
            },
        },
    }
