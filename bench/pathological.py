"""Two benchmarks of what other people's text costs Steward's parsers.

1. Growth (issue 35 item 4): every parser that reads other people's text — the RA9 document, issue forms and
   common formats, the command grammar, forks, debug locations, the neutraliser, the backlog's gaps, the test
   case names read from a bug's regression test — is fed adversarial inputs (long runs of every kind of
   opener: `[`, `![`, `*`, `_`, `` ` ``, `<`, `#`, `>`, list markers, blanks, blank lines, `**Label:`,
   ` / `, `@Test`) at growing sizes, and the growth of its time is printed as a ratio: each size is 4× the
   last, so a linear parser shows about ×4 and a quadratic one ×16. The worst ratio of each parser is its
   line; over ×8 is flagged. (``--growth`` runs only this part.)

2. The pathological thread (issue 25 §2, CPU): an outsider posts 12 comments of
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
import itertools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bot.commands.grammar as commands
from bot.commands.grammar import STATS, could_hold_command, parse_cached, parse_commands, parse_commands_async
from bot.forge import Comment
from bot.records import neutralise
from handlers.backlog.gaps import scan as backlog_scan
from handlers.bug_refinement.blocks import scan as block_scan
from handlers.bug_refinement.bug_kind import is_bug_report
from handlers.bug_refinement.formats import from_common_format
from handlers.bug_refinement.forms import from_issue_form
from handlers.bug_refinement.rules import refine_bug
from handlers.bugfix.regression_slot import case_names
from handlers.debug.locations import find_locations
from handlers.forks.juror import COMMANDS, requests_in, requests_of
from handlers.forks.parse import parse_forks

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


# Adversarial inputs: each a function of a size n (characters, roughly).
OPENERS: dict[str, object] = {
    "[": lambda n: "[" * n,
    "[ then ]:": lambda n: "[" * n + "]: x",
    "![": lambda n: "![" * (n // 2),
    "*": lambda n: "*" * n,
    "_": lambda n: "_" * n,
    "`": lambda n: "`" * n,
    "<": lambda n: "<" * n,
    "<!--": lambda n: "<!--" * (n // 4),
    "#": lambda n: "#" * n,
    "# + blanks": lambda n: "# x" + " " * n + "y",
    "> ": lambda n: "> " * (n // 2),
    "- ": lambda n: "- " * (n // 2),
    "1. ": lambda n: "1. " * (n // 3),
    "blanks": lambda n: "given " + " " * n + "x",
    "tabs": lambda n: "\t" * n + ":",
    "**Label:": lambda n: "**Actual:" + " " * n + "x\n" + "**" * (n // 2),
    "lines of [": lambda n: "[\n" * (n // 2),
    "lines of ### 1.": lambda n: "### 1. Vision" + " " * 30 + "x\n" * (n // 32),
    " / ": lambda n: "x / " * (n // 4),
    "path/": lambda n: "a/" * (n // 2) + ":1x",
    "resolved": lambda n: "- [ ] F1: q" + " \t" * (n // 2) + "resolvedx",
    "blank lines": lambda n: "def test_x():\n" + "\n" * n + "x",
    "@Test ": lambda n: "@Test " * (n // 6),
}


def _as_forks(text: str) -> str:
    return "## Open forks\n\n- [ ] F1: " + text + "\n"


PARSERS: dict[str, object] = {
    "RA9 document (blocks.scan)": lambda t: block_scan(t.split("\n"), 0),
    "RA9 verdict (refine_bug)": lambda t: refine_bug(t, bug_id="b", refined_at="2026-01-01T00:00:00Z"),
    "issue forms": from_issue_form,
    "common formats": from_common_format,
    "is it a bug report": lambda t: is_bug_report((), t),
    "command grammar": lambda t: parse_commands(t, known=COMMANDS),
    "forks": lambda t: parse_forks(_as_forks(t), ("Open forks",)),
    "debug locations": find_locations,
    "neutraliser": lambda t: (neutralise.inert(t), neutralise.line(t, 10_000), neutralise.quote(t)),
    "backlog gaps": lambda t: backlog_scan("title", t),
    # A bug's section 7 (an outsider's test code), by each language's finder.
    "test case names": lambda t: [case_names(path, t) for path in TEST_PATHS],
}
SIZES = (2_000, 8_000, 32_000)
# One path per language ``case_names`` tells apart, and one it does not (every finder then).
TEST_PATHS = ("t/test_x.py", "t/x_spec.rb", "t/XTest.java", "t/x.test.js", "t/x_test.go", "t/x.rs", "t/x")


def _seconds(parse: object, text: str) -> float:
    best = float("inf")
    for _ in range(2):
        start = time.process_time()
        parse(text)  # type: ignore[operator]
        best = min(best, time.process_time() - start)
    return best


def growth() -> bool:
    """Print each parser's worst growth ratio over the adversarial inputs; False if one looks superlinear."""
    ok = True
    print(f"growth per 4x input ({' -> '.join(f'{n:,}' for n in SIZES)} chars; linear ~x4, quadratic ~x16)")
    for name, parse in PARSERS.items():
        worst, worst_input, slowest = 0.0, "", 0.0
        for opener, make in OPENERS.items():
            times = [_seconds(parse, make(n)) for n in SIZES]  # type: ignore[operator]
            slowest = max(slowest, times[-1])
            # Below a millisecond the clock's noise dominates: the ratio is not read there.
            ratios = [b / a for a, b in itertools.pairwise(times) if a >= 1e-3]
            if ratios and max(ratios) > worst:
                worst, worst_input = max(ratios), opener
        flag = "  <-- superlinear?" if worst > 8 else ""
        ok = ok and not flag
        shown = f"x{worst:.1f} (on {worst_input!r})" if worst else "under 1 ms at every size"
        print(f"  {name:28} worst {shown}; slowest {slowest * 1000:.1f} ms{flag}")
    return ok


def main() -> None:
    growth()
    if "--growth" in sys.argv:
        return
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
