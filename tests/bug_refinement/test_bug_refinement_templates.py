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


def test_the_form_requires_only_the_reporters_sections() -> None:
    for language in ("en", "pt"):
        fields = {f.get("id"): f for f in yaml.safe_load(bug_form(language))["body"] if "id" in f}  # type: ignore[arg-type]
        required = {key for key, f in fields.items() if f.get("validations", {}).get("required")}
        assert required == {"status", *REPORTER}
        for key in ("section-2", "section-3", "section-4", "section-6", "section-7", "section-9"):
            assert fields[key]["attributes"]["description"].startswith(
                "For the maintainers" if language == "en" else "Para os mantenedores"
            )


def test_the_status_dropdown_speaks_the_forms_language() -> None:
    english = yaml.safe_load(bug_form("en"))["body"]
    [status] = [f for f in english if f.get("id") == "status"]
    assert status["attributes"]["options"] == ["Pending"]
    assert "Pendente" not in bug_form("en")
    [status_pt] = [f for f in yaml.safe_load(bug_form("pt"))["body"] if f.get("id") == "status"]
    assert status_pt["attributes"]["options"] == ["Pendente"]
    body, _ = markdown_template(bug_markdown("en"))
    assert "- **Status:** Pending" in body and "Pendente" not in body


def test_a_report_from_the_form_with_the_reporters_part_asks_only_the_maintainers() -> None:
    body, _ = render_form(bug_form("en"), REPORTER)
    assert "**Status:** Pending" in body or "### Status\n\nPending" in body
    verdict = refine_bug(body, bug_id="o/r#1", refined_at=AT)
    assert verdict.verdict == "rejected", "RA9 still needs the maintainers' sections"
    assert blockers_for(verdict, "reporter") == ()
    assert {b.code for b in blockers_for(verdict, "maintainers")} >= {
        "AC_MISSING_GHERKIN",
        "ROOT_CAUSE_TOO_SHORT",
        "REGRESSION_SLOT_MISSING",
    }
