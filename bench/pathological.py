"""The pathological thread (issue 25 §2, CPU): an outsider posts 12 comments of
``"x " + "![" * 30000 + "\\n/decide F1 y](u)"`` on an issue listing forks, and each comment is an event that
re-derives the issue. Measured in-process, on the forks juror's own code path, against a baseline run in the
same process: the previous behaviour (every sync re-parses every comment of the thread, with no bound on
the span search and no cache).

    .venv/bin/python bench/pathological.py

Prints, for one parse and for the whole thread (12 events), the CPU seconds of the baseline and of Steward
now, and their ratio; and the longest stretch one event's parsing holds the event loop.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bot.commands.grammar as commands
from bot.commands.grammar import STATS, could_hold_command, parse_cached, parse_commands, parse_commands_async
from bot.forge import Comment
from handlers.forks.juror import COMMANDS, requests_in, requests_of

PATHOLOGICAL = "x " + "![" * 30000 + "\n/decide F1 y](u)"
EVENTS = 12


def thread(n: int) -> list[Comment]:
    at = "2026-01-01T10:00:00Z"
    decider = Comment(1, "maria", "/decide F1 Postgres", at, at)
    return [decider] + [Comment(100 + i, "outsider", PATHOLOGICAL, at, at) for i in range(n)]


def baseline_sync(comments: list[Comment]) -> None:
    """Before: every comment of the thread parsed, whoever wrote it, the span search unbounded."""
    requests_in(comments, prefix="steward")


def steward_sync(comments: list[Comment]) -> None:
    """Now: a cheap line scan, then a bounded parse, cached by (comment id, updated_at)."""
    for comment in comments:
        if not could_hold_command(comment.body, known=COMMANDS):
            continue
        requests_of(comment, parse_cached(comment.body, known=COMMANDS, key=(comment.id, comment.updated_at)))


def cpu(run: object) -> float:
    start = time.process_time()
    run()  # type: ignore[operator]
    return time.process_time() - start


def longest_loop_hold() -> float:
    """The longest gap between ticks of a 1 ms heartbeat while one pathological comment is parsed the way
    an event parses it (``parse_commands_async``)."""

    async def main() -> float:
        gaps: list[float] = []
        done = asyncio.Event()

        async def heartbeat() -> None:
            last = time.perf_counter()
            while not done.is_set():
                await asyncio.sleep(0.001)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        beat = asyncio.create_task(heartbeat())
        await asyncio.sleep(0.01)
        await parse_commands_async(PATHOLOGICAL, known=COMMANDS, key=("bench", time.time()))
        done.set()
        await beat
        return max(gaps)

    return asyncio.run(main())


def main() -> None:
    bound = commands.MAX_PARAGRAPH_OPENERS
    # Baseline: the span search unbounded (the previous parser), no cache.
    commands.MAX_PARAGRAPH_OPENERS = 10**9  # type: ignore[misc]
    one_before = cpu(lambda: parse_commands(PATHOLOGICAL, known=COMMANDS))
    comments = thread(EVENTS)
    before = 0.0
    for n in range(1, EVENTS + 1):
        before += cpu(lambda n=n: baseline_sync(comments[: n + 1]))
    commands.MAX_PARAGRAPH_OPENERS = bound  # type: ignore[misc]

    one_now = cpu(lambda: parse_commands(PATHOLOGICAL, known=COMMANDS))
    STATS.reset()
    now = 0.0
    for n in range(1, EVENTS + 1):
        # The event's own parse (the command dispatcher reads the new comment once) …
        now += cpu(lambda n=n: parse_cached(comments[n].body, known=COMMANDS, key=(comments[n].id, "")))
        # … and the juror's re-derivation of the thread.
        now += cpu(lambda n=n: steward_sync(comments[: n + 1]))
    hold = longest_loop_hold()
    print(
        f"one pathological comment: baseline {one_before:.3f} s, now {one_now:.4f} s "
        f"(÷{one_before / max(one_now, 1e-6):.0f})"
    )
    print(
        f"thread of {EVENTS} events:      baseline {before:.2f} s, now {now:.4f} s "
        f"(÷{before / max(now, 1e-6):.0f}); per event now {now / EVENTS * 1000:.1f} ms"
    )
    print(
        f"parses now: {STATS.block_parses} block, {STATS.inline_parses} inline, {STATS.cache_hits} cache hits"
    )
    print(f"longest event-loop hold while parsing one: {hold * 1000:.1f} ms")


if __name__ == "__main__":
    main()
