"""The repository-wide comment listing the catch-up reads (`Forge.list_repo_comments`), through both
adapters against the sandbox: GitHub's "List issue comments for a repository" and Gitea's
`ListRepoIssueComments` — every comment on issues and pull requests updated at or after `since`, oldest
first, each with the number of the issue it is on; nothing after a `since` in the future."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from bot.forge import RepoRef
from bot.queue.jobs import make_redis
from bot.worker.jobs import build_runtime
from tests.e2e.conftest import Steward


def test_list_repo_comments_since_on_both_forges(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    one = m.open_issue(repo, "one")
    two = m.open_issue(repo, "two")
    pull = m.open_pull(repo, "a change", "a-branch")
    ids = [m.comment(repo, one, "first"), m.comment(repo, two, "second"), m.comment(repo, pull, "third")]

    async def run() -> None:
        redis = make_redis(steward.redis_url)
        runtime = build_runtime(steward.settings, redis)
        try:
            forge = await runtime.forge(steward.forge, RepoRef.parse(repo))  # type: ignore[arg-type]
            found = await forge.list_repo_comments(
                RepoRef.parse(repo), datetime.now(UTC) - timedelta(hours=1)
            )
            assert [c.id for c in found] == ids
            assert [c.issue_number for c in found] == [one, two, pull]
            assert [c.body for c in found] == ["first", "second", "third"]
            later = await forge.list_repo_comments(
                RepoRef.parse(repo), datetime.now(UTC) + timedelta(hours=1)
            )
            assert later == []
        finally:
            await runtime.aclose()
            await redis.aclose()

    asyncio.run(run())
