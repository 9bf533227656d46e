"""Common bug-report formats read into RA9's sections, and who is asked for what is missing.

Samples in `tests/fixtures/bug-reports/` are real reports (see `tests/fixtures/PROVENANCE.md`): GitHub's
default template as submitted, a filled-in report written in it, and a `### Heading` template."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from handlers.bug_refinement import apply_verdict, refine_bug
from handlers.bug_refinement.bug_kind import is_bug_report
from handlers.bug_refinement.document import (
    BUG_SECTION_NAMES,
    RECIPE_SUBSECTION_NAMES,
    find_sections,
    find_subsections,
    parse_document,
)
from handlers.bug_refinement.formats import from_common_format, read_report
from handlers.bug_refinement.placeholders import strip_placeholders
from handlers.bug_refinement.render import render_bug_comment, template
from handlers.bug_refinement.rules import audience, blockers_for

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "bug-reports"
DEFAULT_TEMPLATE = (SAMPLES / "github-default-template.md").read_text(encoding="utf-8")
LMCACHE = (SAMPLES / "lmcache-5350.md").read_text(encoding="utf-8")
DESKTOP = (SAMPLES / "github-desktop-8630.md").read_text(encoding="utf-8")
AT = "2026-01-02T03:04:05Z"

# A good report in GitHub's usual format, as issue 27 describes it.
GOOD = """**Describe the bug**
Saving a file with a non-ASCII name closes the editor.

**To Reproduce**
Steps to reproduce the behavior:
1. Create a file named `café.txt`
2. Open it and press Ctrl+S

**Expected behavior**
The file is saved.

**Actual behavior**
The editor closes without saving.

**Screenshots**
https://example.com/crash.png

**Desktop (please complete the following information):**
 - OS: Ubuntu 24.04
 - Version 1.4.2

**Additional context**
Started with 1.4.0.
"""


def sections_of(text: str) -> tuple[set[int], set[str]]:
    doc = parse_document(text)
    found = find_sections(doc, BUG_SECTION_NAMES)
    subs = find_subsections(doc, found[5], RECIPE_SUBSECTION_NAMES) if 5 in found else {}
    return set(found), set(subs)


def section_body(text: str, key: str) -> str:
    doc = parse_document(text)
    found = find_sections(doc, BUG_SECTION_NAMES)
    if "." not in key:
        return doc.section_text(found[int(key)])
    return doc.section_text(find_subsections(doc, found[5], RECIPE_SUBSECTION_NAMES)[key])


# --- the mapping ------------------------------------------------------------------------------------------


def test_githubs_default_template_maps_each_section_where_ra9_keeps_it() -> None:
    mapped = from_common_format(GOOD)
    assert sections_of(mapped) == ({1, 5}, {"5.1", "5.2", "5.3", "5.4"})
    assert "Saving a file with a non-ASCII name closes the editor." in section_body(mapped, "1")
    assert "Started with 1.4.0." in section_body(mapped, "1"), "additional context stays with the description"
    assert "1. Create a file named `café.txt`" in section_body(mapped, "5.2")
    observed = section_body(mapped, "5.3")
    assert "**Observed:**\nThe editor closes without saving." in observed
    assert "**Expected:**\nThe file is saved." in observed
    assert "- OS: Ubuntu 24.04" in section_body(mapped, "5.1")
    assert "https://example.com/crash.png" in section_body(mapped, "5.4")


def test_a_good_report_in_githubs_format_lacks_nothing_its_reporter_can_supply() -> None:
    verdict = refine_bug(GOOD, bug_id="o/r#1", refined_at=AT)
    assert verdict.verdict == "rejected", "the rule does not change: RA9 is not complete"
    assert blockers_for(verdict, "reporter") == ()
    assert {b.code for b in blockers_for(verdict, "maintainers")} == {
        *(f"MISSING_SECTION_{n}" for n in (2, 3, 4, 6, 7, 8, 9)),
        "STATUS_LINE_MISSING",
    }


def test_the_maintainers_sections_added_below_the_report_keep_the_report_readable() -> None:
    cause = "## 6. Root-Cause Hypothesis\n\nThe file name is encoded twice before the write.\n"
    added = GOOD + "\n## 2. Persona & Usage Scenario\n\nA writer saving notes.\n\n" + cause
    mapped = from_common_format(added)
    assert sections_of(mapped)[0] == {1, 2, 5, 6}
    assert mapped.endswith(cause)
    verdict = refine_bug(added, bug_id="o/r#1", refined_at=AT)
    assert blockers_for(verdict, "reporter") == ()
    assert not {"MISSING_SECTION_2", "MISSING_SECTION_6"} & set(verdict.blocker_codes)


def test_a_real_report_is_asked_only_for_what_its_reproduction_lacks() -> None:
    """LMCache#5350 describes its steps in prose and its observation without an `Observed:` field: a
    maintainer reads both as given (issue 34 §1). Its **Screenshots** field says `N/A (… log evidence
    included above)`: not a reference, so since issue 36 §4 that one item — an artifact — is asked for."""
    verdict = refine_bug(LMCACHE, bug_id="o/r#1", refined_at=AT)
    assert [b.code for b in blockers_for(verdict, "reporter")] == ["RECIPE_MISSING_ARTIFACTS"]
    assert verdict.asks == ("5.4",)
    text = render_bug_comment(verdict, template_text=template(LMCACHE))
    assert "Can you add a screenshot, a log or a link that shows it?" in text
    assert "**Screenshots**" in text
    for n in (2, 3, 4, 6, 7, 9):
        assert f"MISSING_SECTION_{n}" in text[text.index("For the maintainers") :]


def test_the_maintainers_are_shown_the_ra9_document_built_from_the_report() -> None:
    verdict = refine_bug(LMCACHE, bug_id="o/r#1", refined_at=AT)
    text = render_bug_comment(verdict, template_text=template(LMCACHE))
    summary = "<details><summary>An RA9 document built from the report, for the maintainers to paste"
    folded = text[text.index(summary) :]
    desktop = "**Desktop (please complete the following information):**"
    assert f"### 5.1 Environment\n{desktop}\nOS: Linux" in folded
    assert "**Expected:**\nOnce a chunk is computed" in folded
    assert "**Status:** Pending" in folded and "Pendente" not in folded


def test_headings_of_an_issue_form_or_a_heading_template_map_too() -> None:
    mapped = from_common_format(DESKTOP)
    assert sections_of(mapped) == ({1, 5}, {"5.1", "5.2", "5.3", "5.4"})
    assert "Open 'About GitHub Desktop' menu" in section_body(mapped, "5.1")
    assert "**Logs:**" in section_body(mapped, "5.4")
    form = "### What happened?\n\nIt crashed.\n\n### Version\n\n1.2\n\n"
    form += "### Relevant log output\n\n_No response_\n"
    mapped = from_common_format(form)
    assert "**Observed:**\nIt crashed." in section_body(mapped, "5.3")
    assert "_No response_" not in mapped, "an empty form field says nothing"


def test_plain_steps_expected_actual_prose() -> None:
    prose = (
        "The app crashes on save.\n\nSteps to reproduce:\n1. Open a file\n2. Press Ctrl+S\n\n"
        "Expected: the file is saved\nActual: the app closes\n"
    )
    mapped = from_common_format(prose)
    assert "The app crashes on save." in section_body(mapped, "1")
    assert "1. Open a file\n2. Press Ctrl+S" in section_body(mapped, "5.2")
    verdict = refine_bug(prose, bug_id="o/r#1", refined_at=AT)
    assert [b.code for b in blockers_for(verdict, "reporter")] == [
        "RECIPE_MISSING_ENV",
        "RECIPE_MISSING_ARTIFACTS",
    ]
    assert verdict.asks == ("5.1", "5.4")


def test_portuguese_labels_give_a_portuguese_document() -> None:
    relato = "**Descrição**\nO app fecha.\n\n**Passos para reproduzir**\n1. Abrir\n2. Salvar\n"
    mapped = from_common_format(relato)
    assert "## 1. Visão" in mapped and "### 5.2 Passos para Reproduzir" in mapped


def test_an_ra9_document_and_a_casual_report_are_left_as_they_are() -> None:
    ra9 = "## 1. Vision\n\n**Describe the bug**\nText.\n"
    assert from_common_format(ra9) == ra9
    recipe = "**Describe the bug**\nText.\n\n## 5. Reproduction Recipe\n\n### 5.2 Steps to Reproduce\n"
    assert from_common_format(recipe) == recipe
    assert from_common_format("App crashes when I open it") == "App crashes when I open it"


def test_headings_the_mapping_does_not_know_are_kept_one_level_down() -> None:
    mapped = from_common_format("### What happened?\nIt broke\n===\n### Unknown head\n# Elsewhere\nx\n")
    assert "#### It broke\n#### Unknown head\n#### Elsewhere\nx" in mapped, "found by hypothesis"


def test_labels_in_code_are_not_labels() -> None:
    text = "```\n**To Reproduce**\n1. a\n2. b\n```\n"
    assert from_common_format(text) == text


def test_who_is_asked_for_what() -> None:
    for code in ("VISION_EMPTY", "MISSING_SECTION_1", "MISSING_SECTION_5", "RECIPE_MISSING_STEPS"):
        assert audience(code) == "reporter"
    for code in ("MISSING_SECTION_2", "AC_MISSING_GHERKIN", "ROOT_CAUSE_TOO_SHORT", "STATUS_LINE_MISSING"):
        assert audience(code) == "maintainers"


def test_when_only_the_maintainers_part_is_missing_the_reporter_is_told_so() -> None:
    verdict = refine_bug(GOOD, bug_id="o/r#1", refined_at=AT)
    text = render_bug_comment(verdict, template_text=template(GOOD))
    lines = text.splitlines()
    assert lines[0] == "## Reporter's part complete — waiting for the maintainers"
    assert lines[2].startswith("Thank you: nothing more is needed from the reporter.")
    assert "<details><summary>For the maintainers: 8 things to add before work on this bug starts" in text
    assert "@" not in text.split("<details>")[0], "nobody is mentioned in the verdict"


def test_a_report_in_a_common_format_is_a_bug_report_without_the_bug_label() -> None:
    from handlers.onboarding.templates import backlog_markdown

    prose = "Steps to reproduce:\n1. a\n2. b\nExpected: c\n"
    for report in (GOOD, LMCACHE, DESKTOP, DEFAULT_TEMPLATE, prose):
        assert is_bug_report((), report)
    for other in ("App crashes when I open it", "**Describe the bug**\nIt crashes.", backlog_markdown("en")):
        assert not is_bug_report((), other)


# --- the status line, in the file's language --------------------------------------------------------------


def test_pending_becomes_refined_and_pendente_becomes_refinada() -> None:
    from tests.e2e.test_bug_refinement_e2e import APPROVED

    for before, after in (("Pendente", "Refinada"), ("Pending", "Refined")):
        text = APPROVED.replace("**Status:** Pendente", f"**Status:** {before}")
        verdict = refine_bug(text, bug_id="o/r#1", refined_at=AT)
        assert verdict.verdict == "approved", "either spelling is the status line"
        new, transition = apply_verdict(text, verdict)
        assert transition == f"{before}→{after}"
        assert f"**Status:** {after}" in new and f"**Status:** {before}" not in new


# --- properties -------------------------------------------------------------------------------------------

LABELS = [
    "**Describe the bug**", "**To Reproduce**", "**Expected behavior**", "**Actual behavior**",
    "**Screenshots**", "**Desktop (please complete the following information):**", "**Additional context**",
    "### What happened?", "### Steps to reproduce", "## Environment", "Steps to reproduce:", "Expected:",
    "Observed:", "### Logs", "# Notes", "Description",
]  # fmt: skip
CONTENT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=40
).filter(lambda s: s.strip() and s == s.strip() and not s.startswith(tuple("#*_->=`~")))
# (a template's placeholder, such as "Click on '...'", is never kept: it is not content)
CONTENT = CONTENT.filter(lambda s: strip_placeholders(s) == s)


@st.composite
def reports(draw: st.DrawFn) -> tuple[str, list[str]]:
    parts: list[str] = []
    content: list[str] = []
    for _ in range(draw(st.integers(1, 8))):
        parts.append(draw(st.sampled_from(LABELS)))
        for line in draw(st.lists(CONTENT, max_size=3)):
            parts.append(line)
            content.append(line)
        parts.append("")
    return "\n".join(parts), content


@settings(max_examples=300)
@given(reports())
def test_mapping_never_loses_a_line_and_is_idempotent(report: tuple[str, list[str]]) -> None:
    text, content = report
    mapped = from_common_format(text)
    for line in content:
        assert line in mapped
    assert from_common_format(mapped) == mapped
    assert read_report(mapped) == mapped


@settings(max_examples=300)
@given(st.text())
def test_mapping_never_crashes_and_a_second_reading_changes_nothing(text: str) -> None:
    mapped = read_report(text)
    assert read_report(mapped) == mapped
    refine_bug(text, bug_id="o/r#1", refined_at=AT)
    template(text)


@settings(max_examples=200)
@given(st.lists(st.sampled_from([*LABELS, "## 5. Reproduction Recipe", "text", ""]), max_size=12))
def test_an_ra9_document_is_left_as_it_is(parts: list[str]) -> None:
    text = "## 1. Vision\n\nWho is affected.\n\n" + "\n".join(parts)
    assert from_common_format(text) == text


def test_a_reply_answers_what_it_says_outright_and_nothing_else() -> None:
    """Issue 34 §1: the reporter's comment is read for the verdict's questions; its plain words are not taken
    for the description, and a field their template left empty is answered by a sentence in a reply."""
    from handlers.bug_refinement.reading import Reply

    unfilled = GOOD.replace(
        " - OS: Ubuntu 24.04\n - Version 1.4.2", " - OS: [e.g. iOS]\n - Version [e.g. 22]"
    )
    asked = refine_bug(unfilled, bug_id="o/r#1", refined_at=AT)
    assert asked.asks == ("5.1",)
    thanks = Reply(7, "ann", "https://forge/o/r/issues/1#c7", "Thanks, will do!")
    assert refine_bug(unfilled, bug_id="o/r#1", refined_at=AT, replies=(thanks,)).asks == ("5.1",)
    answer = Reply(8, "ann", "https://forge/o/r/issues/1#c8", "I'm on version 1.4.2, Ubuntu 24.04.")
    answered = refine_bug(unfilled, bug_id="o/r#1", refined_at=AT, replies=(thanks, answer))
    assert answered.asks == () and blockers_for(answered, "reporter") == ()
    assert answered.sources == (("5.1", "ann", "https://forge/o/r/issues/1#c8"),)
    text = render_bug_comment(answered)
    assert "Read from @ann's [comment](https://forge/o/r/issues/1#c8): the version and system." in text
    one_liner = refine_bug("", bug_id="o/r#1", refined_at=AT, replies=(thanks,))
    assert "1" in one_liner.asks, "a reply's words are not the description"
