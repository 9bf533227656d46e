"""How well the root-cause board finds related earlier bugs by their symptom (seed 004's related sessions).

    .venv/bin/python bench/related.py [--show]

Reads the corpus in ``tests/debug/data/related/corpus.yaml`` (bug reports in the shapes public trackers use,
grouped by the bug they describe, with reports about other things that share everyday words with them) and
asks, for each report, which of the others the board would list as related (``handlers.debug.related``: a
shared cited file, or a symptom sharing at least two words). It prints, for the reports used in tuning and
for the ones kept out of it:

- **found**: reports of a group with at least one other report of their group listed, over all reports in a
  group (what a maintainer would want: the earlier report of the same bug);
- **false links**: listed reports that describe another bug, over every report listed;
- the reports with a false link, over all reports.

Each set is measured within itself: its reports are each other's candidates, as a repository's closed bugs
are. ``--show`` prints each report's links.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.forge import Issue  # noqa: E402
from handlers.debug.effects import observed_of  # noqa: E402
from handlers.debug.related import related  # noqa: E402

CORPUS = ROOT / "tests" / "debug" / "data" / "related" / "corpus.yaml"


@dataclass(frozen=True)
class Case:
    id: str
    group: str | None
    held_out: bool
    language: str
    issue: Issue


def load() -> list[Case]:
    data = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
    return [
        Case(
            r["id"],
            r.get("group"),
            bool(r.get("held_out")),
            r["language"],
            Issue(number, r["title"], r["body"], "closed", "reporter", labels=("bug",)),
        )
        for number, r in enumerate(data, start=1)
    ]


@dataclass
class Figures:
    reports: int = 0
    grouped: int = 0
    found: int = 0
    links: int = 0
    false_links: int = 0
    with_false: int = 0

    def line(self, name: str) -> str:
        def pct(a: int, b: int) -> str:
            return f"{a}/{b} = {100 * a / b:.1f} %" if b else "0/0"

        return (
            f"{name}: {self.reports} reports; found {pct(self.found, self.grouped)}; "
            f"false links {pct(self.false_links, self.links)}; "
            f"reports with a false link {pct(self.with_false, self.reports)}"
        )


def measure(cases: Sequence[Case], *, show: bool = False) -> Figures:
    f = Figures()
    by_number = {c.issue.number: c for c in cases}
    pool = [c.issue for c in cases]
    for case in cases:
        listed = [by_number[r.number] for r in related(case.issue, (), pool, observed_of)]
        right = [c for c in listed if case.group is not None and c.group == case.group]
        wrong = [c for c in listed if c not in right]
        f.reports += 1
        f.grouped += case.group is not None
        f.found += bool(right)
        f.links += len(listed)
        f.false_links += len(wrong)
        f.with_false += bool(wrong)
        if show:
            print(f"{case.id} ({case.group or '-'}): {[c.id for c in right]} wrong {[c.id for c in wrong]}")
    return f


def main() -> None:
    cases = load()
    show = "--show" in sys.argv
    for name, held_out in (("tuning set", False), ("kept out", True)):
        print(measure([c for c in cases if c.held_out == held_out], show=show).line(name))


if __name__ == "__main__":
    main()
