"""Seed 004's confidence per hypothesis, the board's counts line and its next step by fix row — pure."""

from __future__ import annotations

from handlers.debug.confidence import confidence, counts
from handlers.debug.render import FixAttempt, next_action, render_board
from tests.debug.test_board import Log


def board_with(*commands: tuple[str, str]) -> Log:
    log = Log()
    for name, text in commands:
        log.run(name, text)
    return log


def test_each_input_counts_with_its_weight() -> None:
    log = board_with(
        ("hypothesis", "Cache: a/cache.py:3 keeps the token"),
        ("evidence", "H1 for a/cache.py:3 hit after logout"),
        ("evidence", "H1 for the log shows it"),
        ("confirm", "H1 a/cache.py:3 never evicts"),
    )
    [h] = log.board().hypotheses
    # depth 3/3, strength 3/3, coverage 1/1 (checked), reproduction ½ (recipe), consistency 1.
    sure = confidence(h, {"a/cache.py:3"}, verified=False)
    assert (sure.depth, sure.strength, sure.coverage, sure.reproduction, sure.consistency) == (
        1,
        1,
        1,
        0.5,
        1,
    )
    assert (sure.percent, sure.level, str(sure)) == (93, "high", "93 % high")
    assert confidence(h, {"a/cache.py:3"}, verified=True).percent == 100
    assert confidence(h, set(), verified=False).percent == 73, "its place not checked: coverage 0"


def test_evidence_against_lowers_strength_and_consistency() -> None:
    log = board_with(
        ("hypothesis", "Clock: the expiry is local time"),
        ("evidence", "H1 for the clock is off"),
        ("evidence", "H1 against it happens in UTC too"),
        ("hypothesis", "Never: nothing"),
        ("refute", "H2 nothing at all"),
    )
    first, refuted = log.board().hypotheses
    sure = confidence(first, set(), verified=False)
    # depth 1/3 · 0.30 + strength ½ · 0.25 + 0 + ½ · 0.15 + 0 = 0.30
    assert (sure.percent, sure.level) == (30, "low")
    assert confidence(refuted, set(), verified=False).level == "low"


def test_counts_and_the_next_step_follow_the_fix_rows() -> None:
    log = board_with(("hypothesis", "Cache: a/cache.py:3"), ("confirm", "H1 a/cache.py:3 never evicts"))
    board = log.board()
    assert counts(board.hypotheses, {}) == "1 hypothesis · 1 confirmed · 0 fixed · 0 verified"
    planned = next_action(board, author="bob", escalate_to=(), prefix="s")
    assert "no fix yet: plan it — `/s bugfix`" in planned
    pending = FixAttempt(9, "https://x/pull/9", 1, "pending")
    applied = next_action(board, author="bob", escalate_to=(), prefix="s", fixes=[pending])
    assert applied.startswith("**A fix is applied but not verified yet**: FIX-H1 ([#9](https://x/pull/9))")
    assert "Re-run CI" in applied
    done = FixAttempt(9, "https://x/pull/9", 1, "success")
    assert "**The fix is verified**" in next_action(
        board, author="b", escalate_to=(), prefix="s", fixes=[done]
    )
    text = render_board(board, author="b", escalate_to=(), prefix="s", timeout_hours=72, fixes=[done])
    assert "**Counts:** 1 hypothesis · 1 confirmed · 1 fixed · 1 verified" in text
    row = next(line for line in text.splitlines() if line.startswith("| [H1]"))
    # depth ⅓ · 0.30 + strength 1 · 0.25 + coverage 0 (not checked here) + reproduction 1 · 0.15 + 0.10
    assert "| ✅ confirmed | 60 % medium |" in row
