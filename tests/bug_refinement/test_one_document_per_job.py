"""One document per job (issue 34 §1, DESIGN §2): a refinement job reads its report once, and every reader —
the verdict, the reading of the reporter's items, the pasteable template, the bugfix's slot and recipe —
is given the document instead of parsing the text again. Nothing keeps parses between jobs."""

from __future__ import annotations

from typing import Any

import pytest

import handlers.bug_refinement.document as document
from handlers.bug_refinement.reading import Reply
from handlers.bug_refinement.render import template
from handlers.bug_refinement.report import report_of
from handlers.bug_refinement.rules import apply_verdict, blockers_for, read_verdict_block, refine_bug
from handlers.bugfix.other_capabilities import hypothesis_of
from handlers.bugfix.regression_slot import bug_document, parse_slot, recipe_part

DEFAULT_TEMPLATE = """**Describe the bug**
The cart total is wrong after removing an item.

**To Reproduce**
1. Add two items
2. Remove one

**Expected behavior**
The total drops.

<!-- the reporter left this comment -->
"""
AT = "2026-12-02T00:00:00Z"


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many texts were parsed (the block scanner's runs)."""
    count = [0]
    real = document.scan

    def counting(*args: Any) -> Any:
        count[0] += 1
        return real(*args)

    monkeypatch.setattr(document, "scan", counting)
    return count


def test_parse_document_keeps_nothing_between_calls() -> None:
    assert not hasattr(document.parse_document, "cache_info")
    assert document.parse_document("# a\n") is not document.parse_document("# a\n")


def test_a_refinement_job_parses_each_text_once(scans: list[int]) -> None:
    reply = Reply(1, "reporter", "https://forge.example/o/r/issues/1#issuecomment-1", "Version: 2.4.1")
    report = report_of(DEFAULT_TEMPLATE)
    read = scans[0]
    # the report: its text, then the RA9 document its common format spells
    assert read == 2
    verdict = refine_bug(report, bug_id="o/r#1", refined_at=AT, replies=(reply,))
    assert blockers_for(verdict, "reporter")  # asked again with more replies, as the job does
    refine_bug(report, bug_id="o/r#1", refined_at=AT, replies=(reply,))
    template(report, "Cart total")
    # the reply once, the report without its HTML comment once; the report never again
    assert scans[0] - read == 2


def test_the_bugfix_reads_the_bug_once(scans: list[int]) -> None:
    bug = bug_document(DEFAULT_TEMPLATE)
    read = scans[0]
    parse_slot(bug), recipe_part(bug, "5.2"), recipe_part(bug, "5.3"), hypothesis_of(bug)
    assert scans[0] == read
    assert "Remove one" in recipe_part(bug, "5.2")


RA9 = """**Status:** Pending

## 1. Vision

Checkout users see a wrong total.
"""


def test_steward_refine_reads_its_file_once(scans: list[int]) -> None:
    doc = document.parse_document(RA9)
    read = scans[0]
    assert read_verdict_block(doc) is None
    verdict = refine_bug(report_of(RA9, parsed=doc), bug_id="o/r#1", refined_at=AT)
    new_text, _ = apply_verdict(doc, verdict)
    assert scans[0] == read, "the rules, the verdict block and the new text read the one parse"
    assert "## Refinement Verdict" in new_text
