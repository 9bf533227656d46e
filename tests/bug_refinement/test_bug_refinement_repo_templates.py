"""The repository's own issue templates say which field is which and what is unfilled (issue 34 §1):
``handlers.bug_refinement.repo_templates`` and ``refine_bug(templates=…)``."""

from __future__ import annotations

from handlers.bug_refinement.repo_templates import RepoTemplates, could_be_template, parse_templates
from handlers.bug_refinement.rules import refine_bug

FORM = """\
name: Bug
description: Something broke
body:
  - type: textarea
    id: what
    attributes:
      label: What went wrong?
      placeholder: Tell us in a sentence.
  - type: input
    id: version
    attributes:
      label: Which build?
      placeholder: e.g. 3.2.0 on Linux
  - type: textarea
    id: steps
    attributes:
      label: How can we see it?
      value: |
        1. Open the app
        2. ...
  - type: textarea
    id: result
    attributes:
      label: What did you expect, and what did you get?
      description: Both, please.
  - type: textarea
    id: logs
    attributes:
      label: Output
      render: text
"""


def body(steps: str) -> str:
    return (
        "### What went wrong?\n\nSaving a draft closes the editor.\n\n"
        "### Which build?\n\n3.2.1 on Windows 11\n\n"
        f"### How can we see it?\n\n{steps}\n\n"
        "### What did you expect, and what did you get?\n\n"
        "Expected: the draft is saved\nActual: the editor closes\n\n"
        "### Output\n\n```text\nTraceback (most recent call last):\n  File x\n  File y\nValueError\n```\n"
    )


TEMPLATES = parse_templates([(".github/ISSUE_TEMPLATE/bug.yml", FORM)])
FILLED = body("Open a draft and press Ctrl+S.")
DEFAULT = body("1. Open the app\n2. ...")


def test_the_forms_fields_are_read_by_their_id_and_words() -> None:
    targets = {f.label: f.target for f in TEMPLATES.fields}
    assert targets["How can we see it?"] == "5.2"
    assert targets["Which build?"] == "5.1"
    assert targets["What went wrong?"] == "1"
    assert targets["Output"] == "5.4"
    assert RepoTemplates.from_json(TEMPLATES.to_json()) == TEMPLATES


def test_a_renamed_steps_field_filled_in_is_read_and_left_at_its_default_is_asked_by_its_name() -> None:
    filled = refine_bug(FILLED, bug_id="b", refined_at="2026-01-01T00:00:00Z", templates=TEMPLATES)
    assert "5.2" not in filled.asks
    without = refine_bug(FILLED, bug_id="b", refined_at="2026-01-01T00:00:00Z")
    assert "5.2" in without.asks, "without the templates the renamed field is not read (the test means it)"
    default = refine_bug(DEFAULT, bug_id="b", refined_at="2026-01-01T00:00:00Z", templates=TEMPLATES)
    assert "5.2" in default.asks, "the form's default value is not an answer"
    assert "5.2" not in refine_bug(DEFAULT, bug_id="b", refined_at="2026-01-01T00:00:00Z").asks, (
        "without the templates the default reads as two numbered steps"
    )
    assert ("5.2", "How can we see it?") in default.labels


def test_a_placeholder_left_in_a_markdown_template_is_empty() -> None:
    md = "---\nname: Bug\nabout: x\n---\n**Platform**\nWhich OS and version?\n\n**To Reproduce**\n1. Go\n"
    templates = parse_templates([("ISSUE_TEMPLATE/bug.md", md)])
    report = "**Platform**\nWhich OS and version?\n\n**To Reproduce**\n1. Go to x\n2. Click\n"
    text, _ = templates.apply(report)
    assert "Which OS" not in text and "1. Go to x" in text


def test_template_files() -> None:
    assert could_be_template("bug.yml") and could_be_template("Bug.MD") and could_be_template("x.yaml")
    assert not could_be_template("config.yml") and not could_be_template("README.txt")


def test_the_reading_is_capped() -> None:
    many = [(f".github/ISSUE_TEMPLATE/{i}.md", "**Steps**\nx\n" * 5_000) for i in range(50)]
    templates = parse_templates(many)
    assert len(templates.sources) == 20 and len(templates.fields) <= 200


def test_stewards_own_forms_leave_an_ra9_report_as_it_is() -> None:
    from handlers.onboarding.templates import bug_form, bug_markdown
    from tests.e2e.test_bug_refinement_e2e import APPROVED

    for language in ("en", "pt"):
        templates = parse_templates([("a.yml", bug_form(language)), ("b.md", bug_markdown(language))])
        assert all(f.target is None for f in templates.fields if f.label[:1].isdigit())
        approved = refine_bug(APPROVED, bug_id="b", refined_at="2026-01-01T00:00:00Z", templates=templates)
        assert approved.verdict == "approved"
        form = "### 1. Vision\n\nSaving closes the editor.\n\n### 5.1 Environment\n\n3.2.1, Windows 11\n"
        assert templates.apply(form)[0] == form
