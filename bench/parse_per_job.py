"""Parses and time per refinement job (issue 34 §1, "one document per job").

    .venv/bin/python bench/parse_per_job.py [--rounds 5]

A job is the pure work ``effects.refine_issue`` does for one bug: the verdict (read with one reply from the
reporter and the repository's templates, twice when the reporter's part still lacks something, as the job
reads the comments of people with triage access too), and the pasteable template of a report that waits.
Run over the reporter corpus (``tests/bug_refinement/data/reporters/corpus.yaml``), it prints per job:

- **parse calls**: calls of ``document.parse_document``, and how many of them scanned a text (before: a
  four-entry cache answered the rest; after: every call scans, and there are fewer);
- **time**: the job's CPU time over the **same-run baseline**, one parse of the report's body measured in the
  same process just before (so the ratio does not depend on how busy the shared machine is).

The figures before and after are in docs/performance.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import handlers.bug_refinement.document as document  # noqa: E402
from bench.reporters import load  # noqa: E402
from handlers.bug_refinement import render, rules  # noqa: E402
from handlers.bug_refinement.reading import Reply  # noqa: E402
from handlers.bug_refinement.repo_templates import parse_templates  # noqa: E402

TEMPLATES = parse_templates(
    [
        (
            ".github/ISSUE_TEMPLATE/bug.yml",
            "name: Bug\nbody:\n  - type: textarea\n    id: repro\n    attributes:\n"
            "      label: How can we see it?\n      placeholder: Tell us the steps\n"
            "  - type: input\n    id: version\n    attributes:\n"
            "      label: Version\n      placeholder: e.g. 2.4.1\n",
        )
    ]
)
REPLY = (1, "reporter", "https://forge.example/o/r/issues/1#issuecomment-1", "Version: 2.4.1 on Windows 11")
# A report with a long log pasted in (people paste whole traces): its parse is most of its reading.
LOG = "\n".join(f"  at com.example.cart.Total.compute(Total.java:{n})" for n in range(900))

_scans = 0
_real_scan = document.scan


def _counting_scan(*args: Any) -> Any:
    global _scans
    _scans += 1
    return _real_scan(*args)


document.scan = _counting_scan  # type: ignore[assignment]


def job(body: str, title: str) -> None:
    """What ``effects.refine_issue`` computes for one bug, without the forge."""
    at = "2026-12-02T00:00:00Z"
    replies = (Reply(*REPLY),)  # a new comment each job: nothing read in another job is kept
    more = (*replies, Reply(2, "maintainer", REPLY[2], "Steps: open the cart, then press Pay"))
    if hasattr(rules, "report_of"):  # one document per job: the report read once, passed down
        report = rules.report_of(body, TEMPLATES)
        verdict = rules.refine_bug(report, bug_id="b", refined_at=at, replies=replies)
        if rules.blockers_for(verdict, "reporter"):
            verdict = rules.refine_bug(report, bug_id="b", refined_at=at, replies=more)
        if verdict.verdict == "rejected":
            render.template(report, title)
        return
    verdict = rules.refine_bug(body, bug_id="b", refined_at=at, replies=replies, templates=TEMPLATES)
    if rules.blockers_for(verdict, "reporter"):
        verdict = rules.refine_bug(body, bug_id="b", refined_at=at, replies=more, templates=TEMPLATES)
    if verdict.verdict == "rejected":
        render.template(body, title)


def _calls() -> int:
    info = getattr(document.parse_document, "cache_info", None)
    return info().hits + info().misses if info is not None else _scans


def _clear() -> None:
    clear: Callable[[], None] | None = getattr(document.parse_document, "cache_clear", None)
    if clear is not None:
        clear()


def one_parse(body: str) -> None:
    parse = getattr(document.parse_document, "__wrapped__", document.parse_document)
    parse(body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    corpus = [(r.body, r.id) for r in load()]
    long = [(f"{body}\n\n**Logs**\n\n```\n{LOG}\n```\n", title) for body, title in corpus[:20]]
    measure("corpus", corpus, args.rounds)
    measure("corpus reports with a 45 KB log", long, args.rounds)


def measure(name: str, reports: list[tuple[str, str]], rounds: int) -> None:
    _clear()
    calls0, scans0 = _calls(), _scans
    for body, title in reports:
        job(body, title)
    calls, scans = _calls() - calls0, _scans - scans0
    n = len(reports)
    print(f"{name}, {n} jobs: parse calls {calls / n:.1f} per job, texts scanned {scans / n:.1f} per job")
    ratios = []
    for _ in range(rounds):
        t0 = time.process_time()
        for body, _title in reports:
            one_parse(body)
        base = time.process_time() - t0
        _clear()
        t0 = time.process_time()
        for body, title in reports:
            job(body, title)
        spent = time.process_time() - t0
        ratios.append(spent / base)
        print(f"  baseline (one parse of the report) {base * 1000 / n:.2f} ms, job {spent * 1000 / n:.2f} ms")
    median, low, high = statistics.median(ratios), min(ratios), max(ratios)
    print(f"  job / one parse: median x{median:.1f} (min {low:.1f}, max {high:.1f})")


if __name__ == "__main__":
    main()
