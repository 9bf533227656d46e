"""The worker's behaviour around failures, caching and shutdown, against the sandbox over HTTP."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import httpx2
import pytest
import structlog
from arq import Retry

from bot.commands.context import CommandContext
from bot.commands.registry import Registry, load_registry
from bot.config.settings import Settings
from bot.demo.threads import ThreadedServer, ThreadedWorker
from bot.events.event import CommentSnapshot, Event, IssueSnapshot
from bot.forge import RepoRef
from bot.queue.jobs import dedupe_key, make_redis
from bot.receiver.app import create_app
from bot.sandbox.server import SandboxServer
from bot.telemetry import logs, metrics
from bot.worker.jobs import Runtime, build_runtime, process_event
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


def _jobs(outcome: str, stage: str = "-") -> float:
    return (
        metrics.REGISTRY.get_sample_value("steward_jobs_total", {"handler": stage, "outcome": outcome}) or 0.0
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


@asynccontextmanager
async def runtime_for(settings: Settings, registry: Registry | None = None) -> AsyncIterator[Runtime]:
    redis = make_redis(settings.redis_url)
    runtime = build_runtime(settings, redis, registry)
    try:
        yield runtime
    finally:
        await runtime.aclose()
        await redis.aclose()


async def run_until_done(runtime: Runtime, event: str, job_id: str, tries: int = 20) -> tuple[str, int]:
    """Run the job as arq would, again after each Retry; returns its result and how many runs it took."""
    for n in range(1, tries + 1):
        try:
            return await process_event({"runtime": runtime, "job_id": job_id}, event), n
        except Retry:
            continue
    raise AssertionError(f"the job still asked to be retried after {tries} runs")


async def test_a_refusal_no_retry_can_change_parks_the_job_at_once_with_its_delivery_id(
    sandbox: SandboxServer, redis_url: str
) -> None:
    _, event = ping_with_a_fault(sandbox, {"method": "POST", "path": "/comments$", "status": 403, "times": 5})
    before = _jobs("dead")
    async with runtime_for(_settings(sandbox, redis_url)) as runtime:
        await runtime.redis.set(dedupe_key("github", "delivery-under-test"), "x")
        with structlog.testing.capture_logs() as logs:
            result, runs = await run_until_done(runtime, event, "j1")
        [dead] = await runtime.dead.list()
        assert await runtime.redis.exists(dedupe_key("github", "delivery-under-test")) == 0
    assert (result, runs) == ("dead: PermissionDenied", 1)
    assert _jobs("dead") == before + 1
    assert (dead.delivery_id, dead.job_id, dead.error_type, dead.event) == (
        "delivery-under-test",
        "j1",
        "PermissionDenied",
        "issue_comment.created",
    )
    failure = [entry for entry in logs if entry["event"].startswith("job failed for good")]
    assert failure and failure[0]["delivery"] == "delivery-under-test" and failure[0]["log_level"] == "error"
    assert "tok-bot" not in repr(logs), "secrets never reach the log"


async def test_an_unavailable_forge_re_runs_the_job_a_bounded_number_of_times_then_parks_it(
    sandbox: SandboxServer, redis_url: str
) -> None:
    owner, event = ping_with_a_fault(
        sandbox, {"method": "*", "path": "/comments", "status": 502, "times": 1000}
    )
    settings = _settings(sandbox, redis_url).model_copy(update={"job_tries": 3})
    try:
        async with runtime_for(settings) as runtime:
            result, runs = await run_until_done(runtime, event, "j2")
            assert [d.job_id for d in await runtime.dead.list()] == ["j2"]
    finally:
        owner.call("DELETE", "/_sandbox/faults")
    assert (result, runs) == ("dead: ForgeUnavailable", 3)


async def test_a_forge_unavailable_while_setting_up_the_job_is_retried(
    sandbox: SandboxServer, redis_url: str
) -> None:
    """Lost deliveries: a failure before any handler ran (who am I) used to end the job for good."""
    owner, event = ping_with_a_fault(sandbox, {"method": "GET", "path": "^/user$", "status": 503, "times": 3})
    async with runtime_for(_settings(sandbox, redis_url)) as runtime:
        result, runs = await run_until_done(runtime, event, "j3")
    assert "ping" in _ran(result) and runs == 2
    assert [b for b in bot_replies(owner, *_where(event)) if "pong" in b]


def _ran(result: str) -> list[str]:
    """The handlers and commands a job's result says it ran ("ok: on_thread, ping")."""
    assert result.startswith("ok: "), result
    return result.removeprefix("ok: ").split(", ")


def _where(event: str) -> tuple[str, int]:
    parsed = Event.from_json(event)
    assert parsed.repo is not None and parsed.issue is not None
    return parsed.repo.full_name, parsed.issue.number


@pytest.fixture
def broken_command() -> Iterator[tuple[list[int], Registry]]:
    """`/steward explode` fails with an error in Steward itself the first two times it runs."""
    calls: list[int] = []

    async def explode(ctx: CommandContext) -> None:
        calls.append(1)
        if len(calls) <= 2:
            raise RuntimeError("a bug in a handler")
        await ctx.reply("it worked this time")

    registry = load_registry()
    registry.command("explode", usage="explode", help="test only", permission="anyone")(explode)
    yield calls, registry


async def test_an_error_in_steward_itself_is_retried_not_dropped(
    sandbox: SandboxServer, redis_url: str, broken_command: tuple[list[int], Registry]
) -> None:
    calls, registry = broken_command
    owner = ForgeUser(sandbox.url, "owner", "tok-owner")
    repo = owner.create_repo()
    owner.add_collaborator(repo, "steward-bot", "push")
    number = owner.open_issue(repo, "x")
    comment = owner.comment(repo, number, "/steward explode")
    event = _comment_event(repo, number, comment, "/steward explode").to_json()
    out = io.StringIO()
    before = structlog.get_config()
    logs.configure("info", "json", stream=out)
    try:
        async with runtime_for(_settings(sandbox, redis_url), registry) as runtime:
            result, runs = await run_until_done(runtime, event, "j4")
        logs._sink_for(out).flush()
    finally:
        structlog.configure(**before)  # the chain's contents are put back by tests/conftest.py
    assert "explode" in _ran(result) and (runs, len(calls)) == (3, 3)
    assert bot_replies(owner, repo, number) == [ANY_REPLY("it worked this time")]
    # Each failure's log line carries the stack trace of Steward's own error (issue 40 item 5).
    failed = [
        line
        for line in map(json.loads, out.getvalue().splitlines())
        if line["event"].startswith("job failed")
    ]
    assert len(failed) == 2
    assert all("Traceback" in line["exception"] and "in explode" in line["exception"] for line in failed)


class ANY_REPLY(str):
    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and str(self) in other

    __hash__ = str.__hash__


async def test_a_job_out_of_time_is_retried(sandbox: SandboxServer, redis_url: str) -> None:
    """The forge hangs longer than the job's time limit: the job is retried, not lost."""
    owner, event = ping_with_a_fault(
        sandbox, {"method": "POST", "path": "/comments$", "hang": True, "hang_seconds": 5, "times": 1}
    )
    settings = _settings(sandbox, redis_url).model_copy(
        update={"job_timeout_seconds": 1, "http_timeout_seconds": 30}
    )
    async with runtime_for(settings) as runtime:
        with pytest.raises(Retry):
            await process_event({"runtime": runtime, "job_id": "j5"}, event)
        result, _ = await run_until_done(runtime, event, "j5")
    assert "ping" in _ran(result)
    assert len([b for b in bot_replies(owner, *_where(event)) if "pong" in b]) == 1


async def test_a_long_wait_for_write_budget_defers_the_job_instead_of_sleeping_in_it(
    sandbox: SandboxServer, redis_url: str
) -> None:
    owner, event = ping_with_a_fault(sandbox, {"method": "GET", "path": "^/nothing$", "times": 0})
    settings = _settings(sandbox, redis_url).model_copy(
        update={"write_budget_per_minute": 1, "budget_max_wait_seconds": 1.0}
    )
    async with runtime_for(settings) as runtime:
        with pytest.raises(Retry) as deferred:
            await process_event({"runtime": runtime, "job_id": "j6"}, event)
    assert deferred.value.defer_score is not None and deferred.value.defer_score > 10_000
    assert bot_replies(owner, *_where(event)) == [], "the reply waits for budget; nothing half-done"


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
    """A receiver and a worker; `/steward ping` is commented and the bot's reading of the thread hangs in
    the forge for ``hang_seconds``. Yields once the bot's request is hanging."""
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
        # The bot reads the thread before it replies; a read is safe to send again after the 500.
        fault = {
            "method": "GET",
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
        # The cut-off job's task was still writing its re-queue when the worker closed: a second cancel
        # there aborted the close (its CancelledError), leaving Redis's pool and the forge sessions open.
        assert worker.error is None, f"the worker closed cleanly: {worker.error!r}"
        assert worker.worker._pool is None, "its Redis pool is closed"
        second = ThreadedWorker(settings).start()
        try:
            settle(sandbox.url, redis_url, timeout=60)
        finally:
            second.stop()
        bodies = bot_replies(owner, repo, number)
        assert len(bodies) == 1 and "pong" in bodies[0], "the cut-off job ran again and answered once"


async def test_a_comment_job_takes_its_lock_and_reads_its_mark_in_one_call_and_ends_in_one(
    sandbox: SandboxServer, redis_url: str
) -> None:
    """Redis round trips on a job's path (issue 28): taking the issue's lock reads the comment's done mark
    and the repository's cached settings in the same round trip, and a job that ends well writes its marks
    and gives the lock back in one script."""
    from tests.integration.redis_watch import RoundTrips, commands_on

    owner = ForgeUser(sandbox.url, "owner", "tok-owner")
    repo = owner.create_repo()
    owner.add_collaborator(repo, "steward-bot", "push")
    jobs = []
    for _ in range(2):
        number = owner.open_issue(repo, "x")
        comment = owner.comment(repo, number, "/steward ping")
        jobs.append(_comment_event(repo, number, comment, "/steward ping").to_json())
    settings = _settings(sandbox, redis_url)
    redis = make_redis(redis_url)
    trips = RoundTrips(redis)
    runtime = build_runtime(settings, redis)
    try:
        # The first job loads the scripts, reads the settings and notes the repository (once a minute).
        assert "ping" in _ran((await run_until_done(runtime, jobs[0], "job-warm"))[0])
        results: list[tuple[str, int]] = []

        async def second() -> None:
            before = trips.count
            # A first try, as arq runs it (no failure count to clear).
            ctx = {"runtime": runtime, "job_id": "job-measured", "job_try": 1}
            results.append((await process_event(ctx, jobs[1]), 1))
            results.append(("", trips.count - before))

        seen = await commands_on(redis_url, repo, second, scripts=False)
        assert "ping" in _ran(results[0][0])
        again = await commands_on(redis_url, repo, lambda: run_until_done(runtime, jobs[1], "job-again"))
    finally:
        await runtime.aclose()
        await redis.aclose()
    calls = [c.split(" ", 1)[0].strip('"').upper() for c in seen]
    # The lock with the mark's read, then the marks with the release: nothing else names the issue's repo.
    assert calls == ["EVALSHA", "EVALSHA"], seen
    assert any("EXISTS" in c and "comment-done" in c for c in again), "the mark is read under the lock"
    assert not [c for c in again if c.startswith('"SET"') and "comment-done" in c], "a done comment: no work"
    # The lock, the mark and the settings (1); the command budget (1); each of the reply's two writes is
    # charged to the write budget before it is sent (2); the reply's sequence number noted (1); the marks
    # and the release (1).
    assert results[1][1] == 5, results
