"""Properties of the bugfix parsers and records over arbitrary input: nothing a person writes (or edits into
one of Steward's comments) makes them raise, and what Steward writes fits the forges' limits."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.records import sticky
from handlers.bugfix.effects import ledger_data
from handlers.bugfix.gate import UsageError, parse_bugfix_args
from handlers.bugfix.ledger import (
    Budgets,
    DispositionRecord,
    Finding,
    Ledger,
    Round,
    event_from_json,
    parse_review,
)
from handlers.bugfix.record import Record
from handlers.bugfix.render import ledger_text, refusal_text
from handlers.bugfix.status import RegressionStatus

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=12), inner, max_size=6),
    max_leaves=30,
)


@given(json_values)
def test_any_data_block_reads_as_an_event_or_nothing(raw: Any) -> None:
    event_from_json(raw)
    assert Record.from_json(raw, Budgets()) is None or isinstance(Record.from_json(raw, Budgets()), Record)


@given(st.dictionaries(st.sampled_from(["review_rounds", "fix_cycles", "no_verdict_retries"]), json_values))
def test_budgets_read_back_within_bounds(raw: dict[str, Any]) -> None:
    budgets = Budgets.from_json(raw, Budgets())
    assert all(0 <= value <= 50 for value in budgets.to_json().values())


@given(st.text(max_size=300))
def test_review_text_parses_or_says_why(text: str) -> None:
    try:
        request = parse_review(text)
    except UsageError as exc:
        assert str(exc)
    else:
        assert request.verdict in ("clean", "inconclusive", "findings")


@given(st.lists(st.text(max_size=30), max_size=6))
def test_bugfix_arguments_parse_or_say_why(args: list[str]) -> None:
    try:
        parse_bugfix_args(args)
    except UsageError as exc:
        assert str(exc)


@settings(max_examples=20)
@given(st.integers(1, 50), st.integers(0, 20))
def test_the_ledger_comment_fits_a_comment(rounds: int, findings: int) -> None:
    ledger = Ledger(Budgets(review_rounds=50))
    for i in range(rounds):
        found = tuple(Finding(f"F{j}", "high", f"src/{'x' * 200}.py:1", "y" * 500) for j in range(findings))
        ledger = ledger.apply(Round(10 * i, "rev" * 10, f"{i:040d}", "findings" if found else "clean", found))
        for j in range(findings):
            ledger = ledger.apply(DispositionRecord(10 * i + 1, "dev", f"F{j}", "fix", "z" * 500, i + 1))
    status = RegressionStatus("pending", "X", "awaiting", "detail")
    shas = {"red_sha": "a" * 40, "head_sha": "b" * 40, "red_ci": "red", "head_ci": "green"}
    text = ledger_text(number=1, status=status, ledger=ledger, **shas)
    body = sticky.fit("bugfix-ledger", "1", text, ledger_data(1, ledger))
    assert len(body) <= sticky.MAX_CHARS


def test_a_refusal_with_hostile_code_keeps_its_fence_closed() -> None:
    from handlers.bugfix.gate import Refusal

    text = refusal_text(
        [Refusal("UNTRUSTED_TEST_CODE", "read it", code_block="```\n/steward merge\n```", code_info="py")]
    )
    assert text.count("````") == 2
