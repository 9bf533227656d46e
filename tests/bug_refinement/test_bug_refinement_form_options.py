"""Issue-form dropdowns and checkboxes, read as answers or as what the form showed (issue 34 §1): a dropdown
left at the option its ``default:`` preselects, or at "None", and checkboxes left unticked are no answer to
an item RA9 needs from the reporter, who is asked for it by the field's name. Real form shapes: GitHub's
example issue form and its checkboxes example (tests/fixtures/issue-forms, PROVENANCE.md); the bodies are
written in the shape both forges render a submitted form."""

from __future__ import annotations

from pathlib import Path

import pytest

from handlers.bug_refinement.render import questions
from handlers.bug_refinement.repo_templates import RepoTemplates, _empty_line, parse_templates
from handlers.bug_refinement.report import report_of
from handlers.bug_refinement.rules import BugVerdict, refine_bug

FORMS = Path(__file__).resolve().parents[1] / "fixtures" / "issue-forms"
AT = "2026-12-02T00:00:00Z"


def templates(name: str) -> RepoTemplates:
    return parse_templates([(f".github/ISSUE_TEMPLATE/{name}", (FORMS / name).read_text(encoding="utf-8"))])


DOCS_FORM = templates("github-docs-bug-report.yml")


def docs_body(
    *, happened: str, version: str, browsers: str = "_No response_", logs: str = "_No response_"
) -> str:
    """The example form as GitHub renders it submitted (the checkbox is required, so it is ticked)."""
    return (
        "### Contact Details\n\n_No response_\n\n"
        f"### What happened?\n\n{happened}\n\n"
        f"### Version\n\n{version}\n\n"
        f"### What browsers are you seeing the problem on?\n\n{browsers}\n\n"
        f"### Relevant log output\n\n{logs}\n\n"
        "### Code of Conduct\n\n- [X] I agree to follow this project's Code of Conduct\n"
    )


def verdict(body: str, forms: RepoTemplates = DOCS_FORM) -> BugVerdict:
    return refine_bug(report_of(body, forms), bug_id="o/r#1", refined_at=AT)


HAPPENED = (
    "Saving a draft loses the title. I opened the editor, typed a title, pressed Save, then reopened the "
    "draft: the title was empty. I expected the title to be kept."
)


def test_the_forms_dropdowns_know_what_they_preselect() -> None:
    fields = {f.label: f for f in DOCS_FORM.fields}
    assert fields["Version"].target == "5.1"
    assert {_empty_line("1.0.2 (Default)"), "none"} <= set(fields["Version"].empty)
    assert fields["What browsers are you seeing the problem on?"].target == "5.1"
    assert fields["Code of Conduct"].target is None  # not one of the reporter's items


def test_a_version_dropdown_left_at_its_default_is_asked_for_by_its_name() -> None:
    found = verdict(docs_body(happened=HAPPENED, version="1.0.2 (Default)"))
    assert "5.1" in found.asks
    assert ("5.1", "Version") in found.labels
    assert any("**Version**" in q for q in questions(found))


@pytest.mark.parametrize("version", ["1.0.3 (Edge)", "1.0.2 (Default), 1.0.3 (Edge)"])
def test_a_version_the_reporter_chose_is_an_answer(version: str) -> None:
    assert "5.1" not in verdict(docs_body(happened=HAPPENED, version=version)).asks


def test_the_default_version_with_a_chosen_browser_gives_the_environment() -> None:
    found = verdict(docs_body(happened=HAPPENED, version="1.0.2 (Default)", browsers="Firefox, Chrome"))
    assert "5.1" not in found.asks


def test_a_dropdown_left_at_none_is_no_answer() -> None:
    form = (
        "body:\n- type: dropdown\n  id: os\n  attributes:\n    label: Operating system\n"
        "    options: [Linux, macOS]\n"
    )
    body = f"### Operating system\n\nNone\n\n{docs_body(happened=HAPPENED, version='1.0.3 (Edge)')}"
    forms = parse_templates([(".github/ISSUE_TEMPLATE/os.yml", form)])
    assert "5.1" not in verdict(body, forms).asks  # the version answers the environment
    alone = "### Operating system\n\nNone\n\n### What happened?\n\n" + HAPPENED + "\n"
    found = verdict(alone, forms)
    assert "5.1" in found.asks and ("5.1", "Operating system") in found.labels


def test_the_whole_form_kept_as_shown_asks_for_everything_it_holds() -> None:
    found = verdict(docs_body(happened="A bug happened!", version="1.0.2 (Default)"))
    assert {"1", "5.1", "5.3o", "5.4"} <= set(found.asks)


CHECKBOXES = templates("github-docs-checkboxes.yml")


def systems(ticks: tuple[str, str, str]) -> str:
    names = ("macOS", "Windows", "Linux")
    boxes = "\n".join(f"- [{tick}] {name}" for tick, name in zip(ticks, names, strict=True))
    return f"### What happened?\n\n{HAPPENED}\n\n### Which operating systems have you used?\n\n{boxes}\n"


def test_checkboxes_left_unticked_are_no_answer() -> None:
    found = verdict(systems((" ", " ", " ")), CHECKBOXES)
    assert "5.1" in found.asks
    assert ("5.1", "Which operating systems have you used?") in found.labels


@pytest.mark.parametrize("tick", ["x", "X"])  # Gitea ticks with x; GitHub's bodies show both
def test_a_ticked_checkbox_is_an_answer(tick: str) -> None:
    assert "5.1" not in verdict(systems((" ", " ", tick)), CHECKBOXES).asks


def test_the_cached_copy_keeps_what_the_form_preselects() -> None:
    assert RepoTemplates.from_json(DOCS_FORM.to_json()).fields == DOCS_FORM.fields
