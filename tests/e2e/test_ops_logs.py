"""Logs that parse (issue 26): with `STEWARD_LOG_FORMAT=json` every line the receiver and the worker write —
Steward's own, arq's per-job lines, uvicorn's start and stop, the HTTP client's — is one JSON object; and a
delivery refused with 401 is logged once per source address and minute (address, event, reason), never
with its signature. Separate processes, as an operator runs them."""

from __future__ import annotations

import signal
import subprocess

import httpx2
import orjson

from tests.e2e.stack import wait_for
from tests.e2e.test_processes import _ping_round_trip, _up, process, sandbox_process

BAD_SIGNATURE = "sha256=" + "ab" * 32


def _lines(proc: subprocess.Popen[bytes]) -> list[str]:
    proc.log.seek(0)  # type: ignore[attr-defined]
    return [line for line in proc.log.read().decode().splitlines() if line.strip()]  # type: ignore[attr-defined]


def test_every_line_is_json_and_a_401_is_logged_once_per_address_and_minute(redis_url: str) -> None:
    with sandbox_process(redis_url) as (sandbox_url, receiver_url, env):
        env = {**env, "STEWARD_LOG_FORMAT": "json"}
        with process("serve", env=env) as serve, process("worker", env=env) as worker:
            wait_for(lambda: _up(f"{receiver_url}/healthz"), timeout=30, what="the receiver")
            _ping_round_trip(sandbox_url, redis_url, receiver_url)
            for n in range(5):
                refused = httpx2.post(
                    f"{receiver_url}/webhooks/github",
                    content=b"{}",
                    headers={
                        "X-GitHub-Event": "issues",
                        "X-GitHub-Delivery": f"forged-{n}",
                        "X-Hub-Signature-256": BAD_SIGNATURE,
                    },
                )
                assert refused.status_code == 401
            for proc in (worker, serve):
                proc.send_signal(signal.SIGTERM)
                proc.wait(30)
            served, worked = _lines(serve), _lines(worker)

    for line in served + worked:
        try:
            orjson.loads(line)
        except orjson.JSONDecodeError:
            raise AssertionError(f"not JSON: {line[:300]}") from None
    events = [orjson.loads(line) for line in served + worked]
    assert any("Application shutdown complete" in e.get("event", "") for e in events), "uvicorn's, as JSON"
    assert any(e.get("logger", "").startswith("arq") for e in events), "arq's job lines, as JSON"
    refusals = [e for e in events if "refused (401)" in e.get("event", "")]
    assert len(refusals) == 1, refusals
    [refusal] = refusals
    assert refusal["address"] == "127.0.0.1" and refusal["webhook_event"] == "issues"
    assert "X-Hub-Signature-256" in refusal["reason"]
    assert "ab" * 32 not in "\n".join(served)
