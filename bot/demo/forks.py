"""The decision-provenance scene of `steward demo`: an issue lists design forks; one is decided in the
thread, one is recorded from a comment on another issue, an outsider's `/decide` changes nothing, and the
labels follow."""

from __future__ import annotations

from bot.demo.stage import Stage

FORKS_ITEM = (
    "Orders are kept for seven years; we need a store for them.\n\n"
    "## Open forks\n\n"
    "- [ ] F1: Postgres or SQLite?\n"
    "- [ ] F2: Keep deleted orders (soft delete) or drop them?\n"
)


def _say(text: str) -> None:
    print(text, flush=True)


def forks_scene(stage: Stage) -> None:
    _say("\n▶ Decision provenance: design forks settled with a checked record")
    number = stage.issue(stage.maintainer, "Store orders", FORKS_ITEM)
    notes = stage.issue(stage.maintainer, "Design meeting, 12 March")
    said = stage.maintainer(
        "POST",
        f"/repos/{stage.repo}/issues/{notes}/comments",
        {"body": "We keep deleted orders: soft delete."},
    )
    _say(
        f"  @maintainer listed two design forks on #{number}; in #{notes} the meeting settled F2 in a "
        "comment."
    )
    stage.settle()
    stage.show(number, max_lines=6)
    stage.comment(stage.outsider, number, "/decide F1 MongoDB")
    stage.comment(stage.maintainer, number, "/decide F1 Postgres\n\nWe already run it, and JSONB fits.")
    stage.comment(stage.maintainer, number, f"/decide F2 soft delete --source {said['html_url']}")
    _say(
        "\n  @outsider tried `/decide F1 MongoDB` (no write access); @maintainer decided F1 here and "
        f"recorded F2 from the comment in #{notes}."
    )
    stage.settle()
    stage.show(number, max_lines=12)
    stage.maintainer(
        "PATCH", f"/repos/{stage.repo}/issues/comments/{said['id']}", {"body": "We drop deleted orders."}
    )
    _say(f"\n  Someone edited the deciding comment in #{notes} afterwards: F2's record no longer holds.")
    stage.settle()
    stage.show(number, max_lines=8)
