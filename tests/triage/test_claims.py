"""The claims' pure rules: who a command names, a record's data, and which claims went stale."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from handlers.triage.claims import Claim, from_data, parse_logins, stale, to_data, with_claim, without

DAY = 86_400.0


def test_people_are_named_as_logins_and_me_is_the_actor() -> None:
    assert parse_logins(["@Octo-cat", "me", "@octo-cat"], "dave") == (["Octo-cat", "dave"], [])
    assert parse_logins([], "dave") == (["dave"], [])
    assert parse_logins(["@a,@b"], "dave") == (["a", "b"], [])
    assert parse_logins(["@not/a/login", "<b>"], "dave") == ([], ["@not/a/login", "<b>"])


@given(st.lists(st.text(max_size=50), max_size=12))
def test_any_words_split_into_logins_and_the_rest(words: list[str]) -> None:
    logins, bad = parse_logins(words, "dave")
    assert len({x.casefold() for x in logins}) == len(logins)
    assert all(1 <= len(x) <= 39 and "@" not in x and "/" not in x for x in logins)
    assert logins or bad


def test_a_record_round_trips_and_malformed_entries_are_left_out() -> None:
    claims = [Claim("dave", "2026-01-01T00:00:00Z", "dave", False, 7)]
    assert from_data(to_data(claims)) == claims
    assert from_data({"claims": [{"login": "x"}, "junk", {"since": "y"}]}) == []
    assert from_data("not a record") == []


def test_a_claim_held_already_keeps_its_start() -> None:
    first = Claim("dave", "2026-01-01T00:00:00Z", "dave", False, 1)
    again = with_claim([first], Claim("Dave", "2026-02-01T00:00:00Z", "carol", True, 2))
    assert again == [Claim("dave", "2026-01-01T00:00:00Z", "dave", True, 1)]
    assert without(again, ["DAVE"]) == []


def test_a_claim_goes_stale_after_the_days_without_its_holders_activity() -> None:
    start = 1_767_225_600.0  # 2026-01-01
    claim = Claim("dave", "2026-01-01T00:00:00Z", "dave", True, 1)
    assert stale([claim], {}, start + 29 * DAY, 30) == []
    assert stale([claim], {}, start + 30 * DAY, 30) == [claim]
    assert stale([claim], {"dave": "2026-01-20T00:00:00Z"}, start + 30 * DAY, 30) == []
    assert stale([claim], {}, start + 300 * DAY, None) == []
