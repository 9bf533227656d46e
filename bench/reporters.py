"""How well Steward reads bug reports as people write them (issue 34 §5).

    .venv/bin/python bench/reporters.py

Reads the corpus in ``tests/bug_refinement/data/reporters/corpus.yaml`` (reports in the shapes public
trackers use, each with the reporter items it gives) and prints, for the reports used in tuning and for the
ones kept out of it:

- **false asks**: the reporter is asked for an item the report has, over all items given;
- **missed asks**: an item the report does not give (an unfilled template, a form default, a placeholder)
  that the reporter is not asked for, over all items not given;
- **wrong-language** verdicts: the verdict's language is not the report's;
- verdicts that tell a reporter to **edit markdown structure** (headings, front matter, numbered-list
  syntax) in what they see unfolded.

What the reporter is asked is read from the verdict the way a reporter reads it: ``asked_items``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from handlers.bug_refinement.document import parse_document  # noqa: E402
from handlers.bug_refinement.formats import read_report  # noqa: E402
from handlers.bug_refinement.render import render_bug_comment, template, verdict_notice_line  # noqa: E402
from handlers.bug_refinement.rules import BugVerdict, blockers_for, document_language, refine_bug  # noqa: E402

CORPUS = ROOT / "tests" / "bug_refinement" / "data" / "reporters" / "corpus.yaml"
ITEMS = ("1", "5.1", "5.2", "5.3o", "5.3e", "5.4")
# What each reporter blocker asks for, by item.
_BY_CODE = {
    "MISSING_SECTION_1": {"1"},
    "VISION_EMPTY": {"1"},
    "MISSING_SECTION_5": {"5.1", "5.2", "5.3o", "5.3e", "5.4"},
    "RECIPE_MISSING_ENV": {"5.1"},
    "RECIPE_MISSING_STEPS": {"5.2"},
    "RECIPE_MISSING_OBSERVED_EXPECTED": {"5.3o", "5.3e"},
    "RECIPE_MISSING_ARTIFACTS": {"5.4"},
}
_MARKDOWN_STRUCTURE = re.compile(
    r"heading|front matter|`#|numbered list|`1\.`|level-\d|`\*\*|`[A-Za-z ]+:`", re.IGNORECASE
)
_FOLD = re.compile(r"<details>.*?</details>", re.DOTALL)


@dataclass(frozen=True)
class Report:
    id: str
    shape: str
    language: str
    body: str
    given: frozenset[str]
    held_out: bool


def load() -> list[Report]:
    data = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
    return [
        Report(r["id"], r["shape"], r["language"], r["body"], frozenset(r["given"]), bool(r["held_out"]))
        for r in data
    ]


def verdict_of(report: Report) -> BugVerdict:
    return refine_bug(report.body, bug_id=report.id, refined_at="2026-12-02T00:00:00Z")


def asked_items(verdict: BugVerdict) -> set[str]:
    """The items the verdict asks the reporter for: its questions (``asks``), one per missing item."""
    if hasattr(verdict, "asks"):
        return set(verdict.asks) if verdict.verdict == "rejected" else set()
    asked: set[str] = set()  # before issue 34: what each reporter blocker asked for
    for blocker in blockers_for(verdict, "reporter"):
        asked |= _BY_CODE.get(blocker.code, set())
    return asked


def language_of(report: Report) -> str:
    verdict = verdict_of(report)
    if hasattr(verdict, "language"):
        return str(verdict.language)
    return document_language(parse_document(read_report(report.body)))


def visible_text(report: Report, verdict: BugVerdict) -> str:
    """What a reporter sees unfolded in the verdict comment (with the line that asks them)."""
    text = render_bug_comment(
        verdict,
        language=language_of(report),  # type: ignore[arg-type]
        template_text=template(report.body) if verdict.verdict == "rejected" else None,
    )
    return _FOLD.sub("", f"{verdict_notice_line('reporter', verdict)}\n\n{text}")


@dataclass
class Figures:
    reports: int = 0
    given: int = 0
    false_asks: int = 0
    not_given: int = 0
    missed: int = 0
    wrong_language: int = 0
    markdown: int = 0

    def line(self, name: str) -> str:
        def pct(a: int, b: int) -> str:
            return f"{a}/{b} = {100 * a / b:.1f} %" if b else "0/0"

        return (
            f"{name}: {self.reports} reports; false asks {pct(self.false_asks, self.given)}; "
            f"missed asks {pct(self.missed, self.not_given)}; wrong language {self.wrong_language}; "
            f"markdown instructions {self.markdown}"
        )


def measure(reports: Iterable[Report], *, show: bool = False) -> Figures:
    f = Figures()
    for report in reports:
        verdict = verdict_of(report)
        asked = asked_items(verdict)
        f.reports += 1
        f.given += len(report.given)
        false = asked & report.given
        f.false_asks += len(false)
        missing = set(ITEMS) - report.given
        f.not_given += len(missing)
        missed = missing - asked
        f.missed += len(missed)
        wrong = language_of(report) != report.language
        f.wrong_language += wrong
        markdown = bool(_MARKDOWN_STRUCTURE.search(visible_text(report, verdict)))
        f.markdown += markdown
        if show and (false or missed or wrong or markdown):
            print(
                f"  {report.id} {report.shape}: false {sorted(false)} missed {sorted(missed)}"
                f"{' wrong-language' if wrong else ''}{' markdown' if markdown else ''}"
            )
    return f


def main() -> None:
    reports = load()
    show = "-v" in sys.argv
    tuning = [r for r in reports if not r.held_out]
    kept = [r for r in reports if r.held_out]
    print(measure(tuning, show=show).line("tuning set"))
    print(measure(kept).line("kept out  "))  # never listed: these reports are kept out of tuning
    print(measure(reports).line("all       "))


if __name__ == "__main__":
    main()
