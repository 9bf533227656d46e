"""The bug report templates the onboarding pull request proposes ask a reporter only what a reporter can
answer, in the repository's language, with seed 000's status line."""

from __future__ import annotations

import yaml

from handlers.bug_refinement.rules import blockers_for, refine_bug
from handlers.onboarding.templates import bug_form, bug_markdown
from tests.onboarding.forms import markdown_template, render_form

AT = "2026-01-01T00:00:00Z"
REPORTER = {
    "section-1": "The cart loses items when a second one is added.",
    "section-5-1": "v1.2 on Linux, Python 3.13",
    "section-5-2": "1. Open the cart\n2. Add an item",
    "section-5-3": "Observed: one item\nExpected: two items",
    "section-5-4": "logs/cart.log",
}


def test_the_form_asks_only_the_reporters_sections() -> None:
    """Issue 34 §4: Steward's form asks reporters for sections 1 and 5 only (the maintainers add theirs
    later), has no one-option Status dropdown, and does not require 5.4 (the form cannot know whether there
    is an artifact)."""
    for language in ("en", "pt"):
        fields = {f.get("id"): f for f in yaml.safe_load(bug_form(language))["body"] if "id" in f}  # type: ignore[arg-type]
        required = {key for key, f in fields.items() if f.get("validations", {}).get("required")}
        assert required == set(REPORTER) - {"section-5-4"}
        assert "section-5-4" in fields
        for key in ("status", "section-2", "section-3", "section-4", "section-6", "section-7", "section-9"):
            assert key not in fields
        for field in fields.values():
            assert len(field["attributes"].get("options", ["a", "b"])) > 1, "no one-option dropdown"


def test_the_markdown_template_keeps_seed_000s_status_line_in_its_language() -> None:
    body, _ = markdown_template(bug_markdown("en"))
    assert "- **Status:** Pending" in body and "Pendente" not in body
    assert "## 2. " not in body and "## 7. " not in body, "the maintainers' sections are added later"


def test_a_report_from_the_form_with_the_reporters_part_asks_only_the_maintainers() -> None:
    body, _ = render_form(bug_form("en"), REPORTER)
    verdict = refine_bug(body, bug_id="o/r#1", refined_at=AT)
    assert verdict.verdict == "rejected", "RA9 still needs the maintainers' sections"
    assert blockers_for(verdict, "reporter") == ()
    assert {b.code for b in blockers_for(verdict, "maintainers")} >= {
        "MISSING_SECTION_4",
        "MISSING_SECTION_6",
        "MISSING_SECTION_7",
        "STATUS_LINE_MISSING",
    }
