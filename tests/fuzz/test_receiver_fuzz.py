"""Hostile deliveries: mutated real payloads (a value replaced by a wrong type, a huge string or deep nesting,
a key dropped), bodies that are not UTF-8 or not JSON, and headers of any shape, all correctly signed so
they reach the parser and normaliser. The receiver never answers 500, only one of its described answers;
and the worker, fed every event the receiver accepted, finishes each job (done or parked with a forge
error), never crashes, never fails on Steward's own error."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from bot.demo.threads import ThreadedWorker
from bot.queue.dead_letters import DeadLetters
from bot.queue.jobs import make_redis
from bot.receiver.app import create_app
from bot.receiver.signatures import sign_sha256
from bot.sandbox.server import SandboxServer
from tests.e2e.conftest import make_settings
from tests.e2e.stack import SECRET, queue_idle, wait_for

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DESCRIBED = {200, 202, 400, 401, 413}


def _github_payloads() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted((FIXTURES / "github" / "webhooks").glob("*/*.json")):
        payload = json.loads(path.read_text())
        if isinstance(payload, dict):
            out.append((path.parent.name, payload))
    return out


def _gitea_payloads() -> list[tuple[str, dict[str, Any]]]:
    index = json.loads((FIXTURES / "gitea" / "webhooks" / "index.json").read_text())
    out = []
    for entry in index["files"]:
        payload = json.loads((FIXTURES / "gitea" / "webhooks" / entry["file"]).read_text())
        if isinstance(payload, dict) and entry.get("x_gitea_event"):
            out.append((str(entry["x_gitea_event"]), payload))
    return out


GITHUB = _github_payloads()
GITEA = _gitea_payloads()

# Values that break assumptions: wrong types, huge and odd strings, deep nesting, big and negative numbers.
hostile = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64)
    | st.floats(allow_nan=False)
    | st.text(max_size=50)
    | st.just("x" * 200_000)
    | st.just("\u0000\ud7ff\ufeff/steward ping\n" * 100)
    | st.just(json.loads("[" * 200 + "]" * 200)),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=10,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value[:3]):
            yield from _paths(child, (*prefix, index))


def _mutate(payload: Any, path: tuple[Any, ...], new: Any, drop: bool) -> Any:
    if not path:
        return new
    copy = json.loads(json.dumps(payload))
    node = copy
    for step in path[:-1]:
        node = node[step]
    if drop and isinstance(node, dict):
        node.pop(path[-1], None)
    else:
        node[path[-1]] = new
    return copy


@st.composite
def mutated(draw: st.DrawFn, payloads: list[tuple[str, dict[str, Any]]]) -> tuple[str, bytes]:
    event, payload = draw(st.sampled_from(payloads))
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(payload))
        path = draw(st.sampled_from(paths))
        payload = _mutate(payload, path, draw(hostile), draw(st.booleans()))
    return event, json.dumps(payload).encode()


raw_bodies = st.one_of(
    st.binary(max_size=300),  # mostly not UTF-8, not JSON
    st.just(b'{"action": "opened", "issue": "\xff\xfe"}'),
    st.just(b"[" * 5000 + b"]" * 5000),  # nesting past any parser's limit
    st.just(b'{"a":' * 3000 + b"1" + b"}" * 3000),
    st.just(b"\xef\xbb\xbf{}"),  # a BOM
)


@pytest.fixture(scope="module")
def stack(redis_claim: Any) -> Iterator[tuple[TestClient, str, SandboxServer]]:
    """One client, so one event loop: the app's Redis client (and its connection pool's lock) belongs to
    the loop its lifespan runs in, as in `steward serve`. A second TestClient would post from another
    loop while the first one's heartbeat uses the same pool — a 500 no server can produce."""
    redis_claim.reset()
    with SandboxServer({"steward-bot": "tok-bot"}) as sandbox:
        app = create_app(make_settings(sandbox.url, redis_claim.url))
        with TestClient(app, raise_server_exceptions=False) as client:
            yield client, redis_claim.url, sandbox


def _post(client: TestClient, forge: str, event: str | bytes, body: bytes, delivery: str) -> int:
    signature = sign_sha256(SECRET, body)
    if forge == "github":
        headers: dict[str, str | bytes] = {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery}
        headers["X-Hub-Signature-256"] = "sha256=" + signature
    else:
        headers = {"X-Gitea-Event": event, "X-Gitea-Delivery": delivery, "X-Gitea-Signature": signature}
    return client.post(f"/webhooks/{forge}", content=body, headers=headers).status_code


FUZZ = settings(max_examples=150, suppress_health_check=list(HealthCheck), database=None)


def test_hostile_deliveries_never_get_a_500_and_never_crash_a_worker(
    stack: tuple[TestClient, str, SandboxServer],
) -> None:
    client, redis_url, sandbox = stack
    answers: dict[int, int] = {}
    counter = iter(range(10**9))

    @FUZZ
    @given(forge=st.sampled_from(["github", "gitea"]), data=st.data())
    def mutated_payloads(forge: str, data: st.DataObject) -> None:
        event, body = data.draw(mutated(GITHUB if forge == "github" else GITEA))
        status = _post(client, forge, event, body, f"fuzz-{next(counter)}")
        answers[status] = answers.get(status, 0) + 1
        assert status in DESCRIBED, (forge, event, body[:500])

    @FUZZ
    @given(
        forge=st.sampled_from(["github", "gitea"]),
        event=st.sampled_from(["issues", "issue_comment", "push", "pull_request"])
        | st.text(st.characters(min_codepoint=32, exclude_characters="\x7f"), max_size=30),
        body=raw_bodies,
    )
    def raw(forge: str, event: str, body: bytes) -> None:
        surrogates = event.encode("utf-8", "surrogatepass")  # any bytes a header can carry
        status = _post(client, forge, surrogates, body, f"raw-{next(counter)}")
        assert status in DESCRIBED, (forge, event, body[:200])

    mutated_payloads()
    raw()
    assert answers.get(202), "some mutated payloads were accepted and queued"

    # Every accepted event runs through a real worker against the sandbox (whose repositories do not
    # exist): each job ends handled or parked with a forge error, never with Steward's own.
    worker = ThreadedWorker(make_settings(sandbox.url, redis_url, job_tries=1)).start()
    try:
        wait_for(lambda: queue_idle(redis_url), timeout=120, what="the worker to take every fuzzed job")
        assert worker.thread.is_alive() and worker.error is None, "the worker did not crash"
    finally:
        worker.stop()

    async def dead() -> list[str]:
        redis = make_redis(redis_url)
        try:
            return [f"{job.error_type}: {job.error} ({job.event})" for job in await DeadLetters(redis).list()]
        finally:
            await redis.aclose()

    forge_errors = ("NotFound", "PermissionDenied", "ValidationFailed", "ForgeUnavailable", "ForgeError")
    own = [entry for entry in asyncio.run(dead()) if not entry.startswith(forge_errors)]
    assert not own, "\n".join(own)
