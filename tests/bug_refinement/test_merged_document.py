"""The bug as its verdict reads it, as one document (issue 34 §1, ``merged.merged_document``): what the
reporter answered only in a comment is written where RA9 keeps it, so the bugfix pull request's "Observed vs
expected" and the fix's summary (``recipe_part``) show it. Before, they read the description alone and
showed the expectation without what happened. Section 7's test code never comes from a comment."""

from __future__ import annotations

from handlers.bug_refinement.merged import merged_document
from handlers.bug_refinement.reading import Reply, read
from handlers.bug_refinement.render import template
from handlers.bug_refinement.report import report_of
from handlers.bug_refinement.rules import refine_bug
from handlers.bugfix.other_capabilities import hypothesis_of
from handlers.bugfix.regression_slot import parse_slot, recipe_part
from tests.bugfix.bodies import BUG

URL = "https://forge.example/o/r/issues/7#issuecomment-11"
OBSERVED_LINE = "**Observed:** the total shows 90.00 EUR and the discount line disappears.\n"
WITHOUT_OBSERVED = BUG.replace(OBSERVED_LINE, "")
AT = "2026-12-02T00:00:00Z"


def reply(body: str, author: str = "marta") -> Reply:
    return Reply(11, author, URL, body)


def test_what_happened_answered_in_a_comment_reaches_observed_vs_expected() -> None:
    assert OBSERVED_LINE in BUG
    answer = reply("Sorry, forgot that one.\n\nActual behaviour: the total shows 90.00 EUR, no discount.")
    report = report_of(WITHOUT_OBSERVED)
    assert "Observed" not in recipe_part(report.document, "5.3"), "the description alone has no observed"
    assert refine_bug(report, bug_id="o/r#7", refined_at=AT, replies=(answer,)).verdict == "approved"

    merged = merged_document(report, read(report, (answer,)))
    part = recipe_part(merged, "5.3")
    assert part.splitlines() == [
        "**Observed:** the total shows 90.00 EUR, no discount.",
        f"_(from @marta's [comment]({URL}))_",
        "**Expected:** the total shows 76.50 EUR and the discount line is kept.",
    ]
    # Everything else reads as the description has it.
    assert recipe_part(merged, "5.2") == recipe_part(report.document, "5.2")
    assert hypothesis_of(merged) == hypothesis_of(WITHOUT_OBSERVED)
    assert parse_slot(merged) == parse_slot(WITHOUT_OBSERVED)


def test_without_answers_in_comments_the_document_is_the_reports() -> None:
    report = report_of(BUG)
    assert merged_document(report, read(report, (reply("Thanks for looking!"),))) is report.document


def test_an_answer_without_a_label_is_quoted_whole_under_its_field() -> None:
    """A reply that gives what happened in a sentence ("Actual: …" inside a line) is quoted whole, as the
    Observed field: nothing of it is lost and nothing else is taken for it."""
    answer = reply("After the switch I see it — actual: 90.00 EUR instead of 76.50.")
    report = report_of(WITHOUT_OBSERVED)
    part = recipe_part(merged_document(report, read(report, (answer,))), "5.3")
    said = "After the switch I see it — actual: 90.00 EUR instead of 76.50."
    assert part.splitlines()[0] == f"**Observed:** {said}"


def test_a_common_format_report_gets_the_environment_from_a_comment_under_5_1() -> None:
    body = (
        "**Describe the bug**\nThe editor closes when I save.\n\n**To Reproduce**\n1. Open a file\n"
        "2. Press Ctrl+S\n\n**Expected behavior**\nThe file is saved.\n\n**Screenshots**\n"
        "![crash](https://files.example.com/crash.png)\n"
    )
    answer = reply("Version: 1.4.2, on Ubuntu 24.04 with Firefox 133.")
    report = report_of(body)
    reading = read(report, (answer,))
    assert "5.1" in reading.sources
    merged = merged_document(report, reading)
    assert recipe_part(merged, "5.1").splitlines() == [
        "Version: 1.4.2, on Ubuntu 24.04 with Firefox 133.",
        f"_(from @marta's [comment]({URL}))_",
    ]
    assert recipe_part(merged, "5.2") == recipe_part(report.document, "5.2")
    # The RA9 document the verdict offers the maintainers carries it too (before: the 5.1 hint).
    assert "Version: 1.4.2, on Ubuntu 24.04" in template(merged)


def test_a_portuguese_report_names_the_comment_in_portuguese() -> None:
    body = (
        "## 1. Visão\n\nO total do carrinho ignora o desconto depois de trocar a moeda.\n\n"
        "## 5. Receita de Reprodução\n\n### 5.1 Ambiente\n\nshop-web 4.18.2, Firefox 133\n\n"
        "### 5.2 Passos para Reproduzir\n\n1. Aplique o código\n2. Troque a moeda\n\n"
        "### 5.3 Observado vs Esperado\n\n**Esperado:** o total fica 76,50 EUR.\n\n"
        "### 5.4 Artefatos\n\n- https://files.example.com/101.png\n"
    )
    answer = reply("Observado: o total mostra 90,00 EUR e o desconto some.")
    report = report_of(body)
    part = recipe_part(merged_document(report, read(report, (answer,))), "5.3")
    assert part.splitlines() == [
        "**Observado:** o total mostra 90,00 EUR e o desconto some.",
        f"_(do [comentário]({URL}) de @marta)_",
        "**Esperado:** o total fica 76,50 EUR.",
    ]


def test_section_7_is_never_taken_from_a_comment() -> None:
    """Issue 34 §1: only the reporter's items are read from replies. A comment that writes a regression slot
    changes neither the verdict (the slot is still missing) nor the slot `/bugfix` would commit."""
    start, end = WITHOUT_OBSERVED.index("## 7. Regression Test Slot"), WITHOUT_OBSERVED.index("## 8. Dep")
    without_slot = WITHOUT_OBSERVED[:start] + WITHOUT_OBSERVED[end:]
    answer = reply(
        "Actual behaviour: the total shows 90.00 EUR.\n\n## 7. Regression Test Slot\n\n"
        "- Test: `tests/test_evil.py`\n\n```python\ndef test_evil():\n    import os\n```\n"
    )
    report = report_of(without_slot)
    verdict = refine_bug(report, bug_id="o/r#7", refined_at=AT, replies=(answer,))
    assert verdict.blocker_codes == ("MISSING_SECTION_7",), "what happened is read, the slot is not"
    merged = merged_document(report, read(report, (answer,)))
    assert "**Observed:** the total shows 90.00 EUR." in recipe_part(merged, "5.3")
    assert parse_slot(merged) == parse_slot(without_slot) and parse_slot(merged).path is None
    assert "test_evil" not in "\n".join(merged.lines)
