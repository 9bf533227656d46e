"""The README and docs as a newcomer reads them (issue 37 §5): the first command on the first screen, no
column that says nothing, the performance dev-log in its own document, every word of Steward's own defined in
one glossary that every document links to, no citation of a document the reader cannot open, and the two
reference documents opening with who they are for, their dated history at the end."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
DOCS = sorted((ROOT / "docs").glob("*.md"))
SCREEN = 40  # lines of a README a first screen shows


def test_the_first_command_is_on_the_first_screen() -> None:
    assert "make demo" in "\n".join(README.splitlines()[:SCREEN])


def test_no_capability_table_column_says_available_on_every_row() -> None:
    assert "| Status |" not in README and "**available**" not in README


def test_the_readme_keeps_current_figures_and_leaves_the_dev_log_to_docs_performance() -> None:
    performance = README.split("## Performance", 1)[1].split("\n## ", 1)[0]
    assert "docs/performance.md" in performance
    assert "Round two" not in performance and "Round three" not in performance
    assert performance.count("\n| ") <= 10  # one short table


def test_ra9_is_defined_where_it_first_appears() -> None:
    first = README.index("RA9")
    assert "nine-section" in README[first : first + 200]


@pytest.mark.parametrize("document", [ROOT / "README.md", *DOCS], ids=lambda p: p.name)
def test_every_document_links_the_glossary_and_cites_nothing_the_reader_cannot_open(document: Path) -> None:
    text = document.read_text()
    if document.name != "glossary.md":
        assert re.search(r"\]\((docs/)?glossary\.md\)", text), "no link to the glossary"
    assert not re.search(r"DESIGN (rule|§)|FORGE-FACTS", text)


def test_the_glossary_defines_every_word_the_issue_named() -> None:
    glossary = (ROOT / "docs/glossary.md").read_text()
    words = ("RA9", "Gap ledger", "Decision provenance", "Juror", "Iron law", "Field test", "`cycle` items")
    words += ("Vouch",)
    for word in words:
        assert f"**{word}**" in glossary, word


@pytest.mark.parametrize("name", ["forge-port.md", "performance.md"])
def test_the_reference_documents_say_who_they_are_for_and_keep_history_at_the_end(name: str) -> None:
    text = (ROOT / "docs" / name).read_text()
    assert "**Who this is for:**" in "\n".join(text.splitlines()[:5])
    headings = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
    assert headings[-1].startswith("History"), headings[-1]
    before_history = text.split("\n## History", 1)[0]
    if name == "performance.md":  # every dated round is in the history
        dated = r"^##+ .*(Round|\d{1,2} (November|December) 2026)"
        assert not re.search(dated, before_history, flags=re.MULTILINE)
    else:
        assert "not done, or done differently" not in before_history


def test_the_readme_says_steward_never_merges() -> None:
    assert "**never merges**" in README and "no auto-merge and no merge queue" in README


def test_the_hand_driven_steps_promise_only_what_steward_writes() -> None:
    by_hand = README.split("## Try it by hand", 1)[1].split("\n## ", 1)[0]
    assert "a short comment telling @outsider" not in by_hand
    assert "first line mentions @outsider" in by_hand
