"""Bug bodies for the bugfix tests: the approved RA9 bug of the e2e data, with section 7 rewritten."""

from __future__ import annotations

from pathlib import Path

APPROVED = (Path(__file__).parent.parent / "e2e" / "data" / "bug-approved.md").read_text()
_SLOT_START = APPROVED.index("## 7. Regression Test Slot")
_SLOT_END = APPROVED.index("## 8. Dependencies")

TEST_CODE = "def test_discount_survives_currency_switch():\n    assert total_after_switch() == 76.5\n"


def with_slot(slot: str) -> str:
    """The approved bug with ``slot`` as the body of section 7."""
    return (
        APPROVED[:_SLOT_START]
        + "## 7. Regression Test Slot\n\n"
        + slot.strip()
        + "\n\n---\n\n"
        + APPROVED[_SLOT_END:]
    )


def python_slot(path: str = "tests/test_currency_switch.py", code: str = TEST_CODE) -> str:
    return with_slot(f"- Test: `{path}`\n\n```python\n{code.rstrip()}\n```\n")


BUG = python_slot()


def as_issue_form(body: str = BUG) -> str:
    """``body``'s sections as GitHub writes them when the bug is filed through Steward's RA9 issue form
    (``### 1. Vision`` and so on, one heading per field: tests/onboarding/forms.py). The form asks the
    reporter only for sections 1 and 5 (issue 34 §4); the maintainers' sections and the status line follow
    as they add them, below the form's answers, at level 2."""
    from handlers.bug_refinement.api import (
        BUG_SECTION_NAMES,
        RECIPE_SUBSECTION_NAMES,
        find_sections,
        find_subsections,
        parse_document,
    )
    from handlers.onboarding.templates import bug_form
    from tests.onboarding.forms import render_form

    doc = parse_document(body)
    sections = find_sections(doc, BUG_SECTION_NAMES)
    answers = {f"section-{n}": doc.section_text(sections[n]).strip("-\n ") for n in (1, 2, 3, 4, 6, 7, 8, 9)}
    recipe = find_subsections(doc, sections[5], RECIPE_SUBSECTION_NAMES)
    for key, part in recipe.items():
        answers["section-" + key.replace(".", "-")] = doc.section_text(part).strip("-\n ")
    reporter = render_form(bug_form("en"), answers)[0]
    theirs = [doc.text(sections[n].heading_line, sections[n].end).rstrip() for n in (2, 3, 4, 6, 7, 8, 9)]
    status = next((line for line in doc.lines if line.startswith("**Status:**")), "**Status:** Pending")
    return "\n\n".join([reporter.rstrip(), status, *theirs]) + "\n"
