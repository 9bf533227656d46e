"""The board's state machine and the root-cause answer, without any I/O."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from handlers.debug.api import decide
from handlers.debug.board import (
    Board,
    Entry,
    Refused,
    Source,
    add_evidence,
    add_hypothesis,
    add_rank,
    add_resume,
    add_verdict,
    escalation_due,
    escalation_entry,
    few_all_failed,
    fold,
    grounds_of,
    log_from_json,
    log_to_json,
    recorded,
    withdraw,
)
from handlers.debug.grounding import MAX_GROUNDS, Ground, merge
from handlers.debug.render import FixAttempt, render_board, render_escalation

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
DAY = timedelta(hours=72)


class Log:
    """A log built command by command, as the commands would record it."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.comment = 100

    def board(self, now: datetime = NOW) -> Board:
        return fold(self.entries, now=now, pending_timeout=DAY)

    def source(self, at: datetime = NOW) -> Source:
        self.comment += 1
        return Source("alice", at.strftime("%Y-%m-%dT%H:%M:%SZ"), self.comment, 0, f"u#{self.comment}")

    def run(self, name: str, text: str, at: datetime = NOW) -> Entry:
        board, args, source = self.board(), tuple(text.split()), self.source(at)
        if name == "hypothesis":
            entry = add_hypothesis(board, text, source, "steward")
        elif name == "evidence":
            entry = add_evidence(board, args, text, source, "steward")
        elif name == "resume-debug":
            entry = add_resume(board, text, source, "steward")
        elif name == "rank":
            entry = add_rank(board, args, text, source, "steward")
        else:
            entry = add_verdict(board, name, args, text, source, "steward")  # type: ignore[arg-type]
        self.entries.append(entry)
        board = self.board()
        if escalation_due(board):
            self.entries.append(escalation_entry(board, "2026-11-30T12:00:00Z"))
        return entry


def test_hypotheses_get_ids_and_locations() -> None:
    log = Log()
    log.run("hypothesis", "Stale cache: src/auth/cache.py:88 keeps the old token")
    log.run("hypothesis", "Clock skew: the expiry is compared in local time")
    board = log.board()
    assert [(h.label, h.title, h.locations, h.status) for h in board.hypotheses] == [
        ("H1", "Stale cache", ("src/auth/cache.py:88",), "pending"),
        ("H2", "Clock skew", (), "pending"),
    ]
    text = render_board(board, author="bob", escalate_to=(), prefix="steward", timeout_hours=72)
    assert "_no location yet_" in text and "aim for 3 to 5" in text and "no root cause yet" in text


def test_commands_are_checked() -> None:
    log = Log()
    with pytest.raises(Refused, match="title, a colon"):
        log.run("hypothesis", "no colon here")
    log.run("hypothesis", "A: b")
    with pytest.raises(Refused, match="no hypothesis H7"):
        log.run("evidence", "H7 for x")
    with pytest.raises(Refused, match="`for` or `against`"):
        log.run("evidence", "H1 maybe x")
    with pytest.raises(Refused, match="points at code"):
        log.run("confirm", "H1 I am sure it is this")
    with pytest.raises(Refused, match="nothing to resume"):
        log.run("resume-debug", "look elsewhere")


def test_confirm_with_a_location_is_the_root_cause() -> None:
    log = Log()
    log.run("hypothesis", "Stale cache: the cache keeps the token")
    log.run("evidence", "H1 for the log shows a cache hit after logout")
    assert decide(log.board(), None).code == "ROOT_CAUSE_NOT_EVIDENCED"
    log.run("confirm", "H1 src/auth/cache.py:88 never evicts on logout")
    board = log.board()
    answer = decide(board, None)
    assert (answer.allowed, answer.hypothesis, answer.locations) == (True, "H1", ("src/auth/cache.py:88",))
    assert [len(h.evidence_for) for h in board.hypotheses] == [2]
    text = render_board(board, author="bob", escalate_to=(), prefix="steward", timeout_hours=72)
    assert "root cause evidenced by H1 (`src/auth/cache.py:88`)" in text


def test_several_confirmed_need_a_choice() -> None:
    log = Log()
    log.run("hypothesis", "A: a")
    log.run("hypothesis", "B: b")
    log.run("confirm", "H1 a.py:1 yes")
    log.run("confirm", "H2 b.py:2 yes")
    assert decide(log.board(), None).outcome == "ambiguous"
    assert decide(log.board(), "H2").hypothesis == "H2"
    log.run("hypothesis", "C: c")
    assert decide(log.board(), "h3").outcome == "not_confirmed"
    assert decide(log.board(), "H9").outcome == "not_confirmed"


def test_three_failed_escalate_once_and_resume_needs_three_new() -> None:
    log = Log()
    for name in ("A", "B"):
        log.run("hypothesis", f"{name}: {name.lower()}")
    log.run("refute", "H1 no")
    log.run("inconclusive", "H2 cannot tell")
    assert few_all_failed(log.board()) and not escalation_due(log.board())
    log.run("hypothesis", "C: c")
    log.run("refute", "H3 no")
    board = log.board()
    assert board.escalated is not None and len(board.escalations) == 1
    assert decide(board, None).outcome == "escalated"
    escalation = render_escalation(
        board, author="bob", escalate_to=("@org/leads", "carol"), prefix="s", board_url=""
    )
    assert escalation.startswith("@bob, @org/leads, @carol:") and "**H1** A — refuted: no" in escalation
    log.run("resume-debug", "the cache is per process; look at the load balancer")
    board = log.board()
    assert board.escalated is None and board.epoch == 1
    assert decide(board, None).outcome == "not_evidenced"
    for name in ("D", "E"):
        log.run("hypothesis", f"{name}: x")
    log.run("refute", "H4 no")
    log.run("refute", "H5 no")
    assert not escalation_due(log.board()), "two new hypotheses are not enough"
    log.run("hypothesis", "F: x")
    log.run("refute", "H6 no")
    assert len(log.board().escalations) == 2


def test_a_long_pending_hypothesis_counts_as_inconclusive() -> None:
    log = Log()
    log.run("hypothesis", "A: a", at=NOW - timedelta(hours=100))
    log.run("hypothesis", "B: b")
    log.run("hypothesis", "C: c")
    log.run("refute", "H2 no")
    log.run("refute", "H3 no")
    assert log.board(NOW).escalated is not None
    assert log.board(NOW).hypotheses[0].timed_out


def test_withdrawn_evidence_stops_counting_but_stays_in_the_log() -> None:
    log = Log()
    log.run("hypothesis", "A: a")
    confirm = log.run("confirm", "H1 a.py:3 it is")
    assert decide(log.board(), None).allowed
    changed = withdraw(log.entries, gone=set(), still_there={confirm.comment: set()})
    board = fold(changed, now=NOW, pending_timeout=DAY)
    assert board.hypotheses[0].status == "pending" and board.log[-1].withdrawn
    text = render_board(board, author="bob", escalate_to=(), prefix="steward", timeout_hours=72)
    assert "~~**confirmed** H1: a.py:3 it is~~ _(withdrawn" in text
    assert withdraw(changed, gone=set(), still_there={confirm.comment: {(0, confirm.digest)}})[-1].withdrawn


def test_replays_are_recognised_and_the_log_round_trips() -> None:
    log = Log()
    entry = log.run("hypothesis", "A: a.py:1")
    source = Source("alice", entry.at, entry.comment, 0, entry.url)
    assert recorded(log.board(), "hypothesis", "A: a.py:1", source) == entry
    assert recorded(log.board(), "hypothesis", "A: a.py:2", source) is None
    assert log_from_json(log_to_json(log.entries)) == tuple(log.entries)


def test_the_board_stays_bounded() -> None:
    log = Log()
    for i in range(30):
        log.run("hypothesis", f"Title {i}: " + "x" * 400 + f" src/m{i}.py:{i + 1}")
    with pytest.raises(Refused, match="30 hypotheses"):
        log.run("hypothesis", "one more: x")
    for i in range(70):
        log.run("evidence", f"H{i % 30 + 1} against " + "y" * 400)
    with pytest.raises(Refused, match="100 entries"):
        log.run("evidence", "H1 for z")
    board = log.board()
    fixes = [FixAttempt(9, "https://x/pull/9", 1, "pending")]
    # The most grounded places the record keeps, each as long as it may be.
    deep = "src/" + "d" * 80
    line = "@x " * 40
    many = [Ground(f"{deep}/m{i}.py:{i + 1}", f"{deep}/m{i}.py", "b" * 40, "c" * 40, line) for i in range(60)]
    grounds = merge({}, [check_ground(g) for g in many])
    assert len(grounds) == MAX_GROUNDS
    text = render_board(
        board, author="bob", escalate_to=(), prefix="steward", timeout_hours=72, fixes=fixes, grounds=grounds
    )
    from bot.records import sticky

    body = sticky.fit("debug-board", "1", text, log_to_json(board.log, grounds))
    assert len(body) < 60_000 and "earlier entries folded" in text and "| FIX-H1 |" in text
    assert grounds_of(sticky.unverified_data(body)) == grounds


def check_ground(g: Ground) -> Ground:
    """``g`` as the record keeps it (shas and the line cut to their kept length)."""
    return Ground.from_json(g.location, g.to_json()) or g


def test_the_escalation_mentions_only_who_it_means_to() -> None:
    log = Log()
    for i in (1, 2, 3):
        log.run("hypothesis", f"T{i}: ping @org/everyone")
        log.run("refute", f"H{i} cc @someone")
    text = render_escalation(log.board(), author="bob", escalate_to=(), prefix="s", board_url="")
    assert text.startswith("@bob:") and "@org/everyone" not in text and "@someone" not in text


def test_a_hypothesis_ranked_moves_and_the_others_shift() -> None:
    log = Log()
    for name in ("A", "B", "C"):
        log.run("hypothesis", f"{name}: x")
    assert [h.rank for h in log.board().hypotheses] == [1, 2, 3], "by default, the order they were added"
    log.run("rank", "H3 1")
    board = log.board()
    assert [h.label for h in board.ranked] == ["H3", "H1", "H2"]
    assert log_from_json(log_to_json(log.entries)) == tuple(log.entries), "the place is kept in the record"
    with pytest.raises(Refused, match="a place from 1 \\(most likely\\) to 3"):
        log.run("rank", "H1 4")
    with pytest.raises(Refused, match="there is no hypothesis H9"):
        log.run("rank", "H9 1")
    text = render_board(board, author="b", escalate_to=(), prefix="s", timeout_hours=72)
    rows = [line for line in text.splitlines() if line.startswith("| [H")]
    assert [r.split("|")[2].strip() for r in rows] == ["1", "2", "3"] and rows[0].startswith("| [H3]")
    assert "ranked H3 **#1**" in text
