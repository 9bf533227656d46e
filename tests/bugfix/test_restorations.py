"""The ledger's entries for Steward's own results someone else set (issue 35 item 7): kept once per forgery,
the last few only, read back from a data block without trusting its shape, shown inert."""

from __future__ import annotations

from bot.records import neutralise
from handlers.bugfix.restorations import MAX_KEPT, Restoration, from_data, lines, merged


def entry(n: int, who: str = "outsider", context: str = "steward/regression-first") -> Restoration:
    return Restoration(who, context, "success", f"{n:040x}", f"2026-12-03T10:{n:02d}:00Z")


def test_the_last_few_are_kept_oldest_first_and_a_replayed_forgery_adds_nothing() -> None:
    many = [entry(n) for n in range(MAX_KEPT + 3)]
    kept = merged(many[:4], many[4:], [entry(1)])
    assert kept == tuple(many[-MAX_KEPT:])
    later = Restoration(
        "outsider", "steward/regression-first", "success", f"{1:040x}", "2026-12-03T11:00:00Z"
    )
    assert merged([entry(1)], [later]) == (entry(1),), "the first record of a forgery stands"


def test_a_data_block_round_trips_and_malformed_entries_are_dropped() -> None:
    raw = [entry(1).to_json(), {"who": 3}, "x", {**entry(2).to_json(), "kind": "anything"}]
    assert from_data(raw) == [entry(1), entry(2)]
    assert from_data({"who": "x"}) == []
    check = Restoration(
        "app[bot]", "steward/config", "success", "a" * 40, "2026-12-03T10:00:00Z", "check run"
    )
    assert Restoration.from_json(check.to_json()) == check


def test_names_are_shown_inert() -> None:
    context = "steward/@maintainer <img src=x> | col"
    [row] = [r for r in lines([entry(1, who="@someone <b>", context=context)]) if r.startswith("| 2026")]
    assert neutralise.code(context, 100, in_table=True) in row
    assert "@maintainer" not in row and "<img" not in row and "@someone" not in row
    shown = "\n".join(lines([entry(1)]))
    assert (
        f"| {neutralise.name('outsider')} | `steward/regression-first` (status) | success | `{'0' * 10}` |"
        in shown
    )
    assert "@outsider" not in shown, "the person who set it is named, not mentioned: nobody is asked to act"
    assert lines([]) == []
