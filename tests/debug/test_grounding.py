"""Whether evidence points at code that exists (``handlers.debug.grounding``), without any I/O."""

from __future__ import annotations

from handlers.debug.board import fold, grounds_of, log_to_json
from handlers.debug.grounding import (
    LINE_CHARS,
    MAX_GROUNDS,
    Ground,
    Problem,
    check,
    merge,
    moved_to,
    named_commit,
    refusal,
)
from handlers.debug.locations import find_locations
from handlers.debug.render import render_board
from tests.debug.test_board import DAY, NOW, Log

CODE = b"first\n\n    return cache[token]  # cc @admin\n"
WHERE = "`main` (`1a2b3c4`)"


def one(text: str):  # type: ignore[no-untyped-def]
    [location] = find_locations(text)
    return location


def test_a_place_in_the_file_is_grounded_with_its_line() -> None:
    found = check(one("a/cache.py:3"), CODE, blob="b" * 40, commit="c" * 40, where=WHERE)
    line = "return cache[token] # cc @admin"
    assert found == Ground("a/cache.py:3", "a/cache.py", "b" * 12, "c" * 12, line)
    empty = check(one("a/cache.py:2"), CODE, blob="b", commit="c", where=WHERE)
    assert isinstance(empty, Ground) and empty.text == ""
    ranged = check(one("a/cache.py:1-3"), CODE, blob="b", commit="c", where=WHERE)
    assert isinstance(ranged, Ground) and ranged.text == "first"


def test_a_missing_file_or_a_line_past_the_end_is_refused_with_the_nearest() -> None:
    missing = check(one("a/cach.py:3"), None, blob="", commit="c", where=WHERE)
    assert missing == Problem("a/cach.py:3", f"there is no file `a/cach.py` at {WHERE}")
    past = check(one("a/cache.py:9"), CODE, blob="b", commit="c", where=WHERE)
    assert past == Problem("a/cache.py:9", f"`a/cache.py` has 3 lines at {WHERE}", "a/cache.py:3")
    range_past = check(one("a/cache.py:2-4"), CODE, blob="b", commit="c", where=WHERE)
    assert isinstance(range_past, Problem) and range_past.nearest == "a/cache.py:3"
    empty = check(one("a/empty.py:1"), b"", blob="b", commit="c", where=WHERE)
    assert empty == Problem("a/empty.py:1", f"`a/empty.py` is empty at {WHERE}")
    said = refusal([missing, past], "steward")
    assert said.startswith("your evidence points at code that does not exist — `a/cach.py:3`: there is no")
    assert "the nearest is `a/cache.py:3`" in said and "--at <sha>" in said


def test_a_moved_file_is_named_as_the_nearest_match() -> None:
    """Issue 36 §1: a cited file that is not there, when a file of its name is elsewhere in the tree."""
    files = ["README.md", "src/auth/cache.py", "lib/cache.py", "src/other/auth/cache.py", "cache.pyc"]
    assert moved_to("auth/cache.py", files) == "src/auth/cache.py", "the most folders in common"
    assert moved_to("old/cache.py", files) == "lib/cache.py", "then the shortest path"
    assert moved_to("a/session.py", files) is None
    moved = check(
        one("auth/cache.py:9"), None, blob="", commit="c", where=WHERE, moved=("src/auth/cache.py", 3)
    )
    assert moved == Problem(
        "auth/cache.py:9",
        f"there is no file `auth/cache.py` at {WHERE} — was it moved? `src/auth/cache.py` has the same name",
        "src/auth/cache.py:3",
    )


def test_a_long_line_is_cut() -> None:
    found = check(one("a.py:1"), b"x = " + b"1" * 300, blob="b", commit="c", where=WHERE)
    assert isinstance(found, Ground) and len(found.text) == LINE_CHARS and found.text.endswith("…")


def test_the_commit_a_person_names() -> None:
    assert named_commit("H1 for --at 1A2B3C4D src/a.py:3 x") == ("1a2b3c4d", "H1 for src/a.py:3 x")
    assert named_commit("H1 for --at=1a2b3c4 a.py:1") == ("1a2b3c4", "H1 for a.py:1")
    assert named_commit("H1 for --at main a.py:1")[0] is None, "a commit sha, not a branch"
    assert named_commit("H1 for --at 12345 a.py:1")[0] is None, "at least 7 hex digits"
    assert named_commit("H1 for x--at 1a2b3c4 a.py:1")[0] is None


def test_a_link_keeps_its_repository_and_ref() -> None:
    link = one("https://github.com/o/r/blob/v1.2/src/a.py#L3")
    assert (link.repo, link.ref, str(link)) == ("o/r", "v1.2", "src/a.py:3")
    gitea = one("https://gitea.example/o/r/src/commit/1a2b3c4/src/a.py#L3-L4")
    assert (gitea.repo, gitea.ref, str(gitea)) == ("o/r", "1a2b3c4", "src/a.py:3-4")


def test_the_record_keeps_the_newest_grounds_and_the_board_shows_them() -> None:
    grounds = merge({}, [Ground(f"a{i}.py:1", f"a{i}.py", "b", "c", "x") for i in range(MAX_GROUNDS + 5)])
    assert len(grounds) == MAX_GROUNDS and "a0.py:1" not in grounds and f"a{MAX_GROUNDS + 4}.py:1" in grounds
    again = merge(grounds, [Ground("a5.py:1", "a5.py", "new", "c", "y")])
    assert list(again)[-1] == "a5.py:1" and again["a5.py:1"].blob == "new"
    assert grounds_of(log_to_json((), again)) == again
    assert grounds_of({"grounds": {"a.py:1": ["a.py", "b"]}}) == {}, "a malformed ground is dropped"

    log = Log()
    log.run("hypothesis", "Cache: the cache keeps the token")
    log.run("confirm", "H1 a/cache.py:3 never evicts")
    kept = {"a/cache.py:3": Ground("a/cache.py:3", "a/cache.py", "b", "1a2b3c4d", "return x # cc @admin | y")}
    board = fold(log.entries, now=NOW, pending_timeout=DAY)
    text = render_board(board, author="bob", escalate_to=(), prefix="s", timeout_hours=72, grounds=kept)
    row = next(line for line in text.splitlines() if line.startswith("| [H1]"))
    assert "`a/cache.py:3` → “return x # cc" in row and "@admin" not in row and "\\| y”" in row
    assert "file changed since" not in row
    changed = render_board(
        board, author="bob", escalate_to=(), prefix="s", timeout_hours=72, grounds=kept, changed={*kept}
    )
    assert "_(file changed since `1a2b3c4`)_" in changed
