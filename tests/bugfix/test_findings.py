"""Review findings carry a category and an impact when the reviewer gives them (issue 36 §5); the old form
is still read, and old records too."""

from __future__ import annotations

import pytest

from handlers.bugfix.gate import UsageError
from handlers.bugfix.ledger import Finding, Round, event_from_json, event_to_json, parse_review


def test_category_and_impact_are_optional_words_before_the_place() -> None:
    request = parse_review(
        "findings\nF1 high category=security impact=data-loss src/a.py:3 the token leaks\n"
        "- F2 low src/a.py:4 naming\nF3 medium impact=slow src/b.py:1 a loop"
    )
    first, second, third = request.findings
    assert first == Finding("F1", "high", "src/a.py:3", "the token leaks", "security", "data-loss")
    assert first.kind == "high · security · data-loss"
    assert second == Finding("F2", "low", "src/a.py:4", "naming") and second.kind == "low"
    assert (third.category, third.impact) == ("", "slow")
    with pytest.raises(UsageError, match="category=<c>"):
        parse_review("findings\nF1 high category=security src/a.py:3")


def test_a_round_with_categories_round_trips_and_old_records_still_read() -> None:
    found = (
        Finding("F1", "high", "a.py:1", "x", "security", "data-loss"),
        Finding("F2", "low", "a.py:2", "y"),
    )
    event = Round(5, "rev", "abc", "findings", found)
    assert event_from_json(event_to_json(event)) == event
    old = {"type": "review", "comment": 5, "actor": "rev", "head": "abc", "verdict": "findings",
           "findings": [["F1", "high", "a.py:1", "x"]]}  # fmt: skip
    parsed = event_from_json(old)
    assert isinstance(parsed, Round) and parsed.findings == (Finding("F1", "high", "a.py:1", "x"),)
