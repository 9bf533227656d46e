"""Property tests: the parsers never crash, whatever text or JSON they are given."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from handlers.backlog import interview as iv
from handlers.backlog.cli import main
from handlers.backlog.gaps import scan
from handlers.backlog.ledger import LedgerError, parse_ledger
from handlers.backlog.probe import probe_answer
from handlers.backlog.spec import to_ac
from handlers.core.refine import is_bug_report

# Markdown made of pieces the rules look for, so the interesting paths are reached.
PIECES = [
    *"abc #*-_`~<>!:[]()/\n\t 0123456789ÃãéÉ",
    *["## Why\n", "```\n", "<!--", "-->", "so that ", "WHEN ", " THE SYSTEM SHALL ", "Given ", "When "],
    *["Then ", "Blocked by #", "In scope: ", "- [ ] ", "**", "SSO", "fast", "etc", "Dado ", "Então "],
    *["## 1. Vision\n", "## 4. Critérios de Aceite\n"],
]
MARKDOWNISH = st.lists(st.sampled_from(PIECES), max_size=120).map("".join)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)
ROW = st.fixed_dictionaries(
    {
        "id": st.text(max_size=5),
        "dimension": st.sampled_from(["WHAT", "why", "SCOPE", "EDGE", "nope", 3]),
        "status": st.sampled_from(["OPEN", "resolved", "DONE", None]),
    }
)


@settings(max_examples=300)
@given(title=st.text(max_size=50), body=MARKDOWNISH)
def test_scan_never_crashes(title: str, body: str) -> None:
    found = scan(title, body)
    assert set(found.present) | set(found.missing) == {e.dimension for e in found.evidence} | set(
        found.missing
    )


@settings(max_examples=300)
@given(st.text(max_size=300), st.text(max_size=300))
def test_probe_never_crashes(answer: str, context: str) -> None:
    for finding in probe_answer("g1", answer, context):
        assert finding.terms and finding.question


@settings(max_examples=200)
@given(st.text(max_size=200))
def test_answers_and_ac_lines_never_crash(text: str) -> None:
    parsed = iv.parse_answer(text)
    assert parsed is None or (parsed[0] and parsed[1])
    assert to_ac(text).startswith("AC: WHEN ")


@settings(max_examples=200)
@given(st.lists(st.text(max_size=10), max_size=3), MARKDOWNISH)
def test_bug_detection_never_crashes(labels: list[str], body: str) -> None:
    assert isinstance(is_bug_report(labels, body), bool)


@settings(max_examples=300)
@given(JSON | st.lists(ROW, max_size=5))
def test_ledger_parsing_never_crashes(data: Any) -> None:
    try:
        parse_ledger(data)
    except LedgerError as exc:
        assert str(exc)


@settings(max_examples=150)
@given(st.text(max_size=200) | (JSON | st.lists(ROW, max_size=4)).map(json.dumps), st.integers(-2, 8))
def test_the_cli_always_answers_with_a_known_exit_code(stdin: str, round_: int) -> None:
    code = main(["verdict", "--round", str(round_), "--last-probe", "new_gaps"], stdin=io.StringIO(stdin))
    assert code in (0, 1, 2, 3, 64, 65)


@settings(max_examples=100)
@given(JSON)
def test_interview_state_from_any_json_validates_or_is_refused(data: Any) -> None:
    from pydantic import ValidationError

    with contextlib.suppress(ValidationError):
        iv.Interview.model_validate(data)
