"""Nudges, as a stale bot does them (issue 34 §3), on both forges: a bug waiting for its reporter gets one
reminder after `bug_refinement.remind_after_days`, is closed with a kind note `close_after_days` later, and
reopens when its reporter answers; an exempt label keeps a bug out of it, and without the settings nothing
happens. Time passes through the sandbox's `/_sandbox/repos/{repo}/issues/{n}/age` control (the thread's
times move into the past); the periodic job runs at once."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import Steward
from tests.e2e.stack import TEST_CONFIG_PATHS

REJECTED = (Path(__file__).parent / "data" / "bug-rejected.md").read_text()
NUDGES = "bug_refinement:\n  remind_after_days: 7\n  close_after_days: 14\n"


def age(steward: Steward, repo: str, number: int, days: float) -> None:
    steward.maintainer.call(
        "POST", f"{steward.sandbox.url}/_sandbox/repos/{repo}/issues/{number}/age", {"days": days}
    )


def nudges(steward: Steward, repo: str, number: int) -> list[str]:
    return [
        str(c["body"]) for c in steward.bot_comments(repo, number) if "steward:ra9-nudge:" in str(c["body"])
    ]


def state(steward: Steward, repo: str, number: int) -> str:
    return str(steward.maintainer.call("GET", f"/repos/{repo}/issues/{number}")["state"])


def waiting_bug(steward: Steward, repo: str, title: str, labels: list[str]) -> int:
    number = steward.outsider.open_issue(repo, title, REJECTED)
    steward.maintainer.add_labels(repo, number, ["refine", *labels])
    steward.settle()
    assert "refinement:needs-info" in steward.maintainer.labels_of(repo, number)
    return number


def run_nudges(steward: Steward) -> None:
    steward.run_periodic("bug-nudges")
    steward.settle()


def test_a_waiting_bug_is_reminded_once_closed_later_and_reopened_by_its_reporters_answer(
    steward: Steward,
) -> None:
    repo = steward.new_repo()
    steward.maintainer.put_file(repo, TEST_CONFIG_PATHS[steward.forge], NUDGES)
    steward.settle()
    number = waiting_bug(steward, repo, "Login button does nothing on Safari", [])
    exempt = waiting_bug(steward, repo, "Session token shows in the logs", ["security"])

    for bug in (number, exempt):
        age(steward, repo, bug, 6)
    run_nudges(steward)
    assert nudges(steward, repo, number) == [], "6 days of waiting: not yet"

    for bug in (number, exempt):
        age(steward, repo, bug, 2)
    run_nudges(steward)
    run_nudges(steward)
    [reminder] = nudges(steward, repo, number)
    assert "@outsider, this bug report is still waiting for your answers" in reminder, (
        "once, however many runs"
    )
    assert "If no answer comes in 14 days, Steward closes it for now; answering reopens it." in reminder
    assert state(steward, repo, number) == "open"
    assert nudges(steward, repo, exempt) == [], "an exempt label keeps a bug out of the nudges"

    age(steward, repo, number, 13)
    run_nudges(steward)
    assert state(steward, repo, number) == "open", "13 days after the reminder: not yet"
    for bug in (number, exempt):
        age(steward, repo, bug, 2)
    run_nudges(steward)
    run_nudges(steward)
    [closing] = nudges(steward, repo, number)
    assert closing.splitlines()[-1].startswith("Closed for now: the questions in [Steward's verdict]("), (
        closing
    )
    assert "@outsider, nothing is lost" in closing
    assert state(steward, repo, number) == "closed"
    assert state(steward, repo, exempt) == "open" and nudges(steward, repo, exempt) == []

    steward.outsider.comment(repo, number, "Safari 17.2 on macOS 14, version 2.4.1.")
    steward.settle()
    assert state(steward, repo, number) == "open", "the reporter's answer reopens the bug Steward closed"
    run_nudges(steward)
    assert len(nudges(steward, repo, number)) == 1, "a new wait begins with the answer: nothing is due yet"


def test_without_the_settings_a_waiting_bug_is_never_nudged(steward: Steward) -> None:
    repo = steward.new_repo()
    number = waiting_bug(steward, repo, "Login button does nothing on Safari", [])
    age(steward, repo, number, 400)
    run_nudges(steward)
    assert nudges(steward, repo, number) == []
    assert state(steward, repo, number) == "open"


def test_a_run_reads_one_comment_listing_per_repository_not_each_bugs_thread(steward: Steward) -> None:
    repo = steward.new_repo()
    steward.maintainer.put_file(repo, TEST_CONFIG_PATHS[steward.forge], NUDGES)
    steward.settle()
    bugs = [waiting_bug(steward, repo, f"Crash number {n}", []) for n in range(3)]
    age(steward, repo, bugs[0], 8)
    steward.clear_requests()
    run_nudges(steward)
    paths = [str(r["path"]).split("?")[0] for r in steward.bot_requests(repo) if r["method"] == "GET"]
    assert sum(p.endswith(f"/repos/{repo}/issues/comments") for p in paths) == 1, paths
    threads = [p for p in paths if p.endswith("/comments") and not p.endswith("/issues/comments")]
    assert threads == [f"/repos/{repo}/issues/{bugs[0]}/comments"] or threads == [
        f"/api/v1/repos/{repo}/issues/{bugs[0]}/comments"
    ], "only the bug that is due has its thread read"
    assert len(nudges(steward, repo, bugs[0])) == 1
    assert [nudges(steward, repo, n) for n in bugs[1:]] == [[], []]
