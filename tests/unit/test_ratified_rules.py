"""The pure rules a ratification record is rebuilt by (``handlers.milestones.ratifications``): a `/ratify`
comment is a source only while the forge says it was never edited; a reason is one bounded line."""

from __future__ import annotations

from bot.forge import Comment
from handlers.milestones.ratifications import MAX_REASON, reason_of, unedited


def comment(created: str, updated: str) -> Comment:
    return Comment(id=1, author="maintainer", body="/ratify ok", created_at=created, updated_at=updated)


def test_a_comment_whose_updated_at_is_its_created_at_is_unedited() -> None:
    assert unedited(comment("2026-12-01T20:00:00Z", "2026-12-01T20:00:00Z"))
    assert unedited(comment("2026-12-01T20:00:00Z", ""))


def test_a_later_updated_at_is_an_edit() -> None:
    assert not unedited(comment("2026-12-01T20:00:00Z", "2026-12-01T20:00:01Z"))


def test_times_are_compared_as_instants_whatever_the_offset() -> None:
    assert unedited(comment("2026-12-01T21:00:00+01:00", "2026-12-01T20:00:00Z"))
    assert not unedited(comment("2026-12-01T21:00:00+01:00", "2026-12-01T20:00:05Z"))


def test_unreadable_times_that_differ_count_as_edited() -> None:
    assert not unedited(comment("yesterday", "today"))


def test_a_reason_is_one_bounded_line() -> None:
    assert reason_of("  the extra\nclick   is fine ") == "the extra click is fine"
    assert len(reason_of("x " * MAX_REASON)) == MAX_REASON
