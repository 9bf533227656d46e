"""The index of cited comments (bot/records/citations.py) on a real Redis: answers only once known complete,
keeps both directions in step when an owner's citations change, and two owners citing one comment do not
overwrite each other."""

from __future__ import annotations

import asyncio

from bot.queue.jobs import make_redis
from bot.records.citations import Citations


def test_the_index_answers_only_once_complete_and_tracks_changes(redis_url: str) -> None:
    async def main() -> None:
        redis = make_redis(redis_url)
        try:
            index = Citations(redis, prefix="test:cites")
            scope = "github:o/r"
            await index.put(scope, "7", ["500", "501"])
            assert await index.owners(scope, "500") is None, "not known complete: the caller scans"
            await index.mark_complete(scope)
            await index.put(scope, "8", ["500"])
            assert await index.owners(scope, "500") == {"7", "8"}
            assert await index.owners(scope, "999") == set()
            await index.put(scope, "7", ["502"])
            assert await index.owners(scope, "500") == {"8"}
            assert await index.owners(scope, "501") == set()
            assert await index.owners(scope, "502") == {"7"}
            assert await index.owners("gitea:o/r", "502") is None, "scopes are apart"
            # Repository names are compared case-insensitively, as the forges do.
            assert await index.owners("GITHUB:O/R", "502") == {"7"}
        finally:
            await redis.aclose()

    asyncio.run(main())
