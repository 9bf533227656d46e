"""Hostile markdown and huge bodies get a clear, bounded answer and lose nothing."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Steward


def test_hostile_markdown_runs_only_the_real_command(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "hostile")
    body = (
        "> > > /steward ping\n\n"
        "<details><summary>/steward ping</summary>\n\n```\n/steward ping\n```\n</details>\n\n"
        "`` /steward ping ``\n\n"
        "<!-- \n/steward ping\n -->\n\n"
        "/steward help\n\n"
        "```unclosed fence\n/steward ping\n"
    )
    comment = steward.maintainer.comment(repo, number, body)
    steward.settle()
    bodies = [c["body"] for c in steward.bot_comments(repo, number)]
    assert len(bodies) == 1 and "Steward commands" in bodies[0]
    assert "eyes" in steward.maintainer.reactions(repo, comment)


@pytest.mark.parametrize("steward", ["gitea"], indirect=True)
def test_commands_past_the_scan_limit_are_not_read(steward: Steward) -> None:
    """Only Gitea takes a comment past the 128 KiB scan limit: GitHub refuses bodies over 65,536 characters
    (FORGE-FACTS "Sizes and limits"), so there no comment can reach the limit."""
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "huge")
    filler = ("lorem ipsum " * 10 + "\n") * 2000  # ~240 KiB of prose
    steward.maintainer.comment(repo, number, "/steward ping\n\n" + filler + "\n/steward help\n")
    steward.settle()
    bodies = [c["body"] for c in steward.bot_comments(repo, number)]
    assert len(bodies) == 1 and "pong" in bodies[0]


@pytest.mark.handler_settings(limits={"commands_per_minute": 100})
def test_at_most_twenty_commands_per_comment(steward: Steward) -> None:
    """The grammar's own cap, with the per-person command budget lifted (it is tested on its own)."""
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "many")
    steward.maintainer.comment(repo, number, "\n\n".join(f"/steward ping {i}" for i in range(40)))
    steward.settle(timeout=60)
    assert len(steward.bot_comments(repo, number)) == 20


_REPORT = (
    "**Describe the bug**\nSaving a draft fails.\n\n**To Reproduce**\n1. Open a draft\n2. Press Save\n\n"
    "**Expected behavior**\nIt saves.\n\n"
)


def _verdict(steward: Steward, repo: str, number: int) -> str:
    bodies = [
        str(c["body"]) for c in steward.bot_comments(repo, number) if "steward:ra9-verdict:" in str(c["body"])
    ]
    assert len(bodies) == 1, bodies
    return bodies[0]


def test_a_report_of_sixty_thousand_brackets_gets_its_verdict_at_once(steward: Steward) -> None:
    """Issue 35 item 4: one line of `[` made the link-reference expression backtrack quadratically — 60,000
    of them cost about 45 s per reading, and a verdict reads a report several times, so this test's deadline
    passed before any verdict came (it fails on the code before the fix). The body stays under GitHub's
    65,536 characters."""
    repo = steward.new_repo()
    body = _REPORT + "[" * 60_000 + "\n"
    number = steward.maintainer.open_issue(repo, "Drafts do not save", body, labels=["bug", "refine"])
    steward.settle(timeout=30)
    verdict = _verdict(steward, repo, number)
    assert "status: rejected" in verdict and "I read only" not in verdict


@pytest.mark.parametrize("steward", ["gitea"], indirect=True)
def test_a_report_past_the_reading_limit_is_read_in_part_and_the_verdict_says_so(steward: Steward) -> None:
    """Only Gitea takes a body over 65,536 characters (GitHub refuses it): Steward reads the first 65,536
    (to a line's end) and says so in the verdict."""
    repo = steward.new_repo()
    body = _REPORT + ("log line " * 10 + "\n") * 2_000  # ~180,000 characters
    number = steward.maintainer.open_issue(repo, "Drafts do not save", body, labels=["bug", "refine"])
    steward.settle(timeout=30)
    verdict = _verdict(steward, repo, number)
    assert f"This report is {len(body):,} characters long: I read only its first " in verdict
