"""A bug filed through Steward's own RA9 issue form is read as RA9 read it when /bugfix opens its pull
request (issue 37 §3): the form writes each section as a `###` field, so section 5.3 and the regression slot
were not found in the raw body — the pull request said "Observed vs expected _(see the bug)_", and the slot
was missing, although the refinement had read both."""

from __future__ import annotations

from handlers.bug_refinement.api import refine_bug
from handlers.bugfix.regression_slot import parse_slot, recipe_part
from handlers.bugfix.render import pull_body
from tests.bugfix.bodies import BUG, TEST_CODE, as_issue_form

FORM_BUG = as_issue_form(BUG)


def test_the_form_bug_is_approved_and_its_slot_and_recipe_are_read_as_refinement_read_them() -> None:
    assert "### 5.3 Observed vs Expected" in FORM_BUG and "\n## 5." not in FORM_BUG
    assert refine_bug(FORM_BUG, bug_id="o/r#1", refined_at="2026-01-01T00:00:00Z").verdict == "approved"
    slot = parse_slot(FORM_BUG)
    assert (slot.found, slot.path, slot.code) == (True, "tests/test_currency_switch.py", TEST_CODE)
    assert recipe_part(FORM_BUG, "5.3") == recipe_part(BUG, "5.3") != ""


def test_the_pull_request_shows_observed_and_expected() -> None:
    body = pull_body(7, recipe_part(FORM_BUG, "5.3"), "", "tests/test_currency_switch.py")
    assert (
        "**Observed:** the total shows 90.00 EUR" in body
        and "**Expected:** the total shows 76.50 EUR" in body
    )
    assert "_(see the bug)_" not in body.split("### Root-cause hypothesis")[0]
