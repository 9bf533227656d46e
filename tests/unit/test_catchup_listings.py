"""Where the catch-up's `since` listings start (``bot.catchup.comments.listing_since``) and what of them it
keeps."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.catchup.comments import LISTING_GRID_SECONDS, listing_since, updated_since


def test_github_listings_start_on_a_six_hour_grid_so_runs_in_one_slot_ask_for_the_same_url() -> None:
    assert LISTING_GRID_SECONDS == 6 * 3600
    one, two = datetime(2026, 12, 1, 13, 5, 7, tzinfo=UTC), datetime(2026, 12, 1, 17, 59, 59, tzinfo=UTC)
    assert (
        listing_since("github", one) == listing_since("github", two) == datetime(2026, 12, 1, 12, tzinfo=UTC)
    )
    assert listing_since("github", datetime(2026, 12, 1, 18, tzinfo=UTC)) == datetime(
        2026, 12, 1, 18, tzinfo=UTC
    )
    assert listing_since("gitea", one) == one, "Gitea answers no conditional request: the window as it is"


def test_what_the_wider_listing_holds_before_the_window_is_dropped_to_the_second() -> None:
    since = datetime(2026, 12, 1, 13, 5, 7, 600_000, tzinfo=UTC)
    assert not updated_since("2026-12-01T13:05:06Z", since)
    assert updated_since("2026-12-01T13:05:07Z", since), "the forges compare `since` to the second"
    assert updated_since("2026-12-01T14:00:00+00:00", since)
    assert updated_since("", since), "an item without a readable time is kept"
