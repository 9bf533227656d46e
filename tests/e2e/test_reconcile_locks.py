"""A reconciler's pass reads and writes an issue only while it holds that issue's lock, on both forges.

Found as a flaky end-to-end failure: the worker's catch-up at start-up (the forks reconciler, which walks
every open issue listing forks) read an issue's comments, found no reconciliation comment, and then waited
for the issue's lock while the first event's job created one; it went on to create a second from what it had
read — two sticky comments where DESIGN §3.3 allows one. A pass now takes an issue's lock before it reads the
issue, and leaves an issue another job keeps busy to that job (which re-derives the same state)."""

from __future__ import annotations

import asyncio
from typing import Any

from bot.catchup.reconcile import reconcile_all
from bot.forge import RepoRef
from bot.queue.jobs import make_redis
from bot.queue.locks import issue_key, issue_lock
from bot.worker.jobs import build_runtime
from tests.e2e.conftest import Steward
from tests.e2e.test_forks_e2e import BODY, MARK
from tests.e2e.test_reconcile_e2e import _steward_down


def _reconciliations(steward: Steward, repo: str, number: int) -> list[str]:
    return [c["body"] for c in steward.bot_comments(repo, number) if c["body"].startswith(MARK)]


def _issue_reads(steward: Steward, repo: str, number: int) -> list[str]:
    """What the bot asked of issue ``number`` itself (its comments, the issue), not the repository's lists."""
    here = (f"/issues/{number}", f"/issues/{number}/comments")
    return [r["path"] for r in steward.bot_requests(repo) if r["path"].rstrip("/").endswith(here)]


def test_a_pass_leaves_an_issue_a_job_keeps_and_reads_it_only_holding_its_lock(steward: Steward) -> None:
    repo = steward.new_repo()
    kind: Any = steward.forge
    with _steward_down(steward):
        number = steward.maintainer.open_issue(repo, "Storage", BODY)
        steward.settle()
        assert _reconciliations(steward, repo, number) == [], "Steward heard nothing"

        async def passes() -> None:
            client = make_redis(steward.redis_url)
            runtime = build_runtime(steward.settings, client)
            try:
                # Keyed by the repository's id, as the worker's jobs and the pass key it.
                ident = steward.maintainer.call("GET", f"/repos/{repo}")["id"]
                key = issue_key(kind, RepoRef(*repo.split("/"), id=ident), number)
                async with issue_lock(client, key, ttl=60, wait=1, owner="the job of an event") as held:
                    assert held
                    steward.clear_requests()
                    report = await reconcile_all(runtime, [(kind, RepoRef.parse(repo))], full=True)
                    assert _issue_reads(steward, repo, number) == [], "read while another job held it"
                    assert _reconciliations(steward, repo, number) == []
                    assert report.errors == [], "the busy issue is left to its job, not a failed step"
                await reconcile_all(runtime, [(kind, RepoRef.parse(repo))], full=True)
                await reconcile_all(runtime, [(kind, RepoRef.parse(repo))], full=True)
            finally:
                await runtime.aclose()
                await client.aclose()

        asyncio.run(passes())
    assert len(_reconciliations(steward, repo, number)) == 1, "one reconciliation comment, written once"
