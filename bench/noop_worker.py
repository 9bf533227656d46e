"""The queue's own ceiling for bench/throughput.py: an arq worker whose jobs do nothing, with Steward's
worker settings (max jobs, poll delay, results kept). Run as `python bench/noop_worker.py REDIS_URL`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from arq.connections import RedisSettings
from arq.worker import Worker

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.config.settings import Settings

QUEUE = "bench:noop"


async def noop(ctx: dict[str, Any], n: int) -> int:
    return n


def main() -> None:
    settings = Settings()
    worker = Worker(
        functions=[noop],
        redis_settings=RedisSettings.from_dsn(sys.argv[1]),
        queue_name=QUEUE,
        poll_delay=settings.worker_poll_delay_seconds,
        max_jobs=settings.max_jobs,
        keep_result=600,
        handle_signals=True,
    )
    worker.run()  # arq's own event loop (the one the worker was made with)


if __name__ == "__main__":
    main()
