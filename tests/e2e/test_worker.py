"""The worker's behaviour around failures, caching and shutdown, against the sandbox over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx2
import pytest
import structlog
from arq import Retry

from bot import metrics
from bot.events import CommentSnapshot, Event, IssueSnapshot
from bot.forge import RepoRef
from bot.queue import make_redis
from bot.runner import ThreadedServer, ThreadedWorker
from bot.sandbox.server import SandboxServer
from bot.settings import Settings
from bot.web import create_app
from bot.worker import build_runtime, process_event
from tests.e2e.stack import SECRET, ForgeUser, settle, wait_for

USERS = {"owner": "tok-owner", "steward-bot": "tok-bot"}


@pytest.fixture
def sandbox() -> Iterator[SandboxServer]:
    with SandboxServer(USERS) as server:
        yield server


def _settings(sandbox: SandboxServer, redis_url: str) -> Settings:
    return Settings(
        redis_url=redis_url,
        github_api_url=sandbox.url,
        github_token="tok-bot",  # type: ignore[arg-type]
        github_webhook_secrets=SECRET,  # type: ignore[arg-type]
        retry_base_delay=0.01,
        retry_attempts=3,
    )


def _comment_event(repo: str, number: int, comment_id: int, body: str) -> Event:
    return Event(
        forge="github",
        delivery_id="delivery-under-test",
        name="issue_comment",
        action="created",
        sender="owner",
        repo=RepoRef.parse(repo),
        issue=IssueSnapshot(number=number, title="t", body="", state="open", author="owner"),
        comment=CommentSnapshot(id=comment_id, body=body, author="owner"),
    )


def _failed(stage: str) -> float:
    return (
        metrics.REGISTRY.get_sample_value("steward_jobs_total", {"handler": stage, "outcome": "failed"})
        or 0.0
    )


def ping_with_a_fault(sandbox: SandboxServer, fault: dict[str, object]) -> tuple[ForgeUser, str]:
    """A repo where the owner commented `/steward ping` and the bot's calls matching ``fault`` fail;
    returns the owner and the job's event, ready for ``process_event``."""
    owner = ForgeUser(sandbox.url, "owner", "tok-owner")
    repo = owner.create_repo()
    owner.add_collaborator(repo, "steward-bot", "push")
    number = owner.open_issue(repo, "x")
    comment = owner.comment(repo, number, "/steward ping")
    owner.call("POST", "/_sandbox/faults", {**fault, "login": "steward-bot"})
    return owner, _comment_event(repo, number, comment, "/steward ping").to_json()


async def test_a_non_retryable_forge_error_fails_the_job_with_its_delivery_id_logged(
    sandbox: SandboxServer, redis_url: str
) -> None:
    _, event = ping_with_a_fault(sandbox, {"method": "POST", "path": "/comments$", "status": 403, "times": 5})
    redis = make_redis(redis_url)
    runtime = build_runtime(_settings(sandbox, redis_url), redis)
    before = _failed("dispatch")
    try:
        with structlog.testing.capture_logs() as logs:
            result = await process_event({"runtime": runtime, "job_id": "j1"}, event)
    finally:
        await runtime.aclose()
        await redis.aclose()
    assert result == "failed: PermissionDenied"
    assert _failed("dispatch") == before + 1
    failure = [entry for entry in logs if entry["event"] == "job failed"]
    assert failure and failure[0]["delivery"] == "delivery-under-test" and failure[0]["log_level"] == "error"
    assert "tok-bot" not in repr(logs), "secrets never reach the log"


async def test_an_unavailable_forge_re_runs_the_job_later_a_bounded_number_of_times(
    sandbox: SandboxServer, redis_url: str
) -> None:
    owner, event = ping_with_a_fault(
        sandbox, {"method": "*", "path": "/comments", "status": 502, "times": 1000}
    )
    redis = make_redis(redis_url)
    settings = _settings(sandbox, redis_url).model_copy(update={"job_tries": 2})
    runtime = build_runtime(settings, redis)
    try:
        with pytest.raises(Retry):
            await process_event({"runtime": runtime, "job_id": "j2"}, event)
        assert await process_event({"runtime": runtime, "job_id": "j2"}, event) == "failed: ForgeUnavailable"
    finally:
        await runtime.aclose()
        await redis.aclose()
        owner.call("DELETE", "/_sandbox/faults")


async def test_repeated_reads_are_served_from_the_etag_cache(sandbox: SandboxServer, redis_url: str) -> None:
    owner = ForgeUser(sandbox.url, "owner", "tok-owner")
    repo = owner.create_repo()
    owner.add_collaborator(repo, "steward-bot", "push")
    number = owner.open_issue(repo, "cache me")
    owner.comment(repo, number, "hello")
    redis = make_redis(redis_url)
    runtime = build_runtime(_settings(sandbox, redis_url), redis)
    try:
        assert runtime.github is not None
        forge = await runtime.github.for_event(None, RepoRef.parse(repo))
        owner.call("DELETE", "/_sandbox/requests")
        first = await forge.list_comments(RepoRef.parse(repo), number)
        second = await forge.list_comments(RepoRef.parse(repo), number)
    finally:
        await runtime.aclose()
        await redis.aclose()
    assert first == second and [c.body for c in first] == ["hello"]
    statuses = [r["status"] for r in owner.call("GET", "/_sandbox/requests") if r["login"] == "steward-bot"]
    assert statuses == [200, 304]


@contextmanager
def ping_while_the_forge_hangs(
    sandbox: SandboxServer, redis_url: str, *, hang_seconds: float
) -> Iterator[tuple[ForgeUser, str, int, ThreadedWorker, Settings]]:
    """A receiver and a worker; `/steward ping` is commented and the bot's reply hangs in the forge for
    ``hang_seconds``. Yields once the bot's request is hanging."""
    owner = ForgeUser(sandbox.url, "owner", "tok-owner")
    repo = owner.create_repo()
    owner.add_collaborator(repo, "steward-bot", "push")
    settings = _settings(sandbox, redis_url)
    receiver = ThreadedServer(create_app(settings)).start()
    worker = ThreadedWorker(settings).start()
    try:
        owner.add_hook(repo, f"{receiver.url}/webhooks/github")
        number = owner.open_issue(repo, "slow forge")
        settle(sandbox.url, redis_url)
        fault = {
            "method": "POST",
            "path": "/comments$",
            "status": 500,
            "times": 1,
            "hang": True,
            "hang_seconds": hang_seconds,
            "login": "steward-bot",
        }
        owner.call("POST", "/_sandbox/faults", fault)
        owner.comment(repo, number, "/steward ping")
        wait_for(
            lambda: any(r.get("fault") for r in owner.call("GET", "/_sandbox/requests")),
            timeout=20,
            what="the bot's request to reach the hanging forge",
        )
        yield owner, repo, number, worker, settings
    finally:
        worker.stop()
        receiver.stop()
        httpx2.delete(f"{sandbox.url}/_sandbox/faults")


def bot_replies(owner: ForgeUser, repo: str, number: int) -> list[str]:
    return [c["body"] for c in owner.comments(repo, number) if c["user"]["login"] == "steward-bot"]


def test_sigterm_lets_a_running_job_finish(sandbox: SandboxServer, redis_url: str) -> None:
    with ping_while_the_forge_hangs(sandbox, redis_url, hang_seconds=1.5) as (owner, repo, number, worker, _):
        worker.stop()
        assert not worker.thread.is_alive()
        bodies = bot_replies(owner, repo, number)
        assert len(bodies) == 1 and "pong" in bodies[0], "the in-flight job finished before the worker exited"


def test_a_job_cut_off_by_shutdown_runs_again_on_the_next_worker(
    sandbox: SandboxServer, redis_url: str
) -> None:
    with ping_while_the_forge_hangs(sandbox, redis_url, hang_seconds=5) as (
        owner,
        repo,
        number,
        worker,
        settings,
    ):
        worker.worker._job_completion_wait = 0.2  # cut the running job off
        worker.stop()
        second = ThreadedWorker(settings).start()
        try:
            settle(sandbox.url, redis_url, timeout=60)
        finally:
            second.stop()
        bodies = bot_replies(owner, repo, number)
        assert len(bodies) == 1 and "pong" in bodies[0], "the cut-off job ran again and answered once"
