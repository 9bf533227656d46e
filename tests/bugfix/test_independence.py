"""Independent review as pure rules (issue 24 §4): who is excluded from reviewing and why, the rounds a later
push voids, and the lease of a `/review` to the head it was written on."""

from __future__ import annotations

from bot.forge import ChangedFile, Push
from handlers.bugfix.independence import modifiers, moved_after, unaccounted, void_rounds
from handlers.bugfix.ledger import Budgets, Ledger, Round
from handlers.bugfix.status import BranchCommit


def commit(sha: str, author: str, committer: str = "", parents: int = 1) -> BranchCommit:
    files = (ChangedFile("src/a.py", "modified"),)
    return BranchCommit(sha, tuple(f"p{i}" for i in range(parents)), files, author, committer)


def test_the_bug_s_runner_every_author_committer_and_pusher_is_excluded_with_why() -> None:
    commits = [
        commit("a" * 40, "steward-bot"),
        commit("b" * 40, "alice", "carol"),
        commit("m" * 40, "zed", "", 2),
    ]
    pushes = [
        Push("dave", "2026-01-01T10:00:02Z", "b" * 40),
        Push("steward-bot", "2026-01-01T10:00:00Z", "a" * 40, kind="branch_creation"),
        Push("erin", "2026-01-01T10:00:03Z", "", kind="branch_deletion"),
    ]
    found = modifiers(commits, pushes, "Maintainer", "steward-bot")
    assert found == {
        "maintainer": "ran `/bugfix`",
        "alice": f"authored commit `{'b' * 10}`",
        "carol": f"committed `{'b' * 10}`",
        "dave": f"pushed `{'b' * 10}` to the branch",
    }, "Steward itself, a merge commit's author and a branch deletion exclude no one"


def test_a_round_of_someone_who_made_or_moved_the_branch_is_void_and_settles_nothing() -> None:
    ledger = Ledger(Budgets(), (Round(1, "Dave", "h1", "clean"), Round(2, "frank", "h2", "clean")))
    voided = void_rounds(ledger, {"dave": "pushed `h2` to the branch"})
    assert [r.void for r in voided.rounds] == ["@Dave pushed `h2` to the branch", ""]
    assert voided.review_state("h2") == "complete"
    last_void = void_rounds(ledger, {"frank": "pushed `h3` to the branch"})
    assert last_void.review_state("h2").startswith("awaiting a review round on the head: round 2 is void")
    assert last_void.rounds_used == 2, "a void round still counts against the budget"
    # The head of a void round may be reviewed by someone else (it was never reviewed independently).
    assert last_void.check_review(head="h2", actor="gina", committers=()) is None


def test_a_review_is_leased_to_the_head_when_it_was_written() -> None:
    pushes = [
        Push("dave", "2026-01-01T10:00:00Z", "a" * 40),
        Push("erin", "2026-01-01T10:00:05Z", "b" * 40),
        Push("erin", "2026-01-01T10:00:09+00:00", "c" * 40),
    ]
    assert moved_after(pushes, "2026-01-01T10:00:05Z") == pushes[2]
    assert moved_after(pushes, "2026-01-01T10:00:01Z") == pushes[2], "the latest push after it"
    assert moved_after(pushes, "2026-01-01T10:00:09Z") is None, "a push in the comment's second is not after"
    assert moved_after(pushes, "") is None


def test_the_push_history_must_account_for_the_head_back_to_steward_s_own_push() -> None:
    """Issue 35 ("Also"): Gitea's feed leaves out people who keep their activity private, so a move it does
    not show is named (the commit moved to) and nobody can be shown independent."""
    red, fix, hidden, later = "r" * 40, "f" * 40, "h" * 40, "l" * 40
    shown = [
        Push("maintainer", "2026-01-01T10:00:02Z", fix, red),
        Push("steward-bot", "2026-01-01T10:00:00Z", red, "b" * 40),
    ]
    assert unaccounted(shown, fix, "steward-bot") is None
    assert unaccounted(shown, hidden, "steward-bot") == hidden, "the head's own move is not shown"
    after_hidden = [Push("maintainer", "2026-01-01T10:00:09Z", later, hidden), *shown]
    assert unaccounted(after_hidden, later, "steward-bot") == hidden, "a move in the middle is not shown"
    made = [Push("maintainer", "2026-01-01T10:00:02Z", fix, ""), *shown[1:]]
    assert unaccounted(made, fix, "steward-bot") is None, "a push that made the branch ends the walk"
    assert unaccounted([], fix, "steward-bot") == fix
