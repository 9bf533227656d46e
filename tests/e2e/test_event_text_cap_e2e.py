"""A comment longer than a queued job keeps is answered, and read whole by the worker (issue 40 item 5), end
to end on both forges (GitHub holds a comment to 65,536 characters, so there nothing is cut: the same
answer)."""

from __future__ import annotations

from tests.e2e.conftest import Steward
from tests.e2e.stack import wait_for


def test_a_huge_comment_with_a_command_is_answered(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "a question")
    filler = 60_000 if steward.forge == "github" else 400 * 1024
    steward.clear_requests()
    comment = steward.maintainer.comment(repo, number, "/steward ping\n\n" + "x" * filler)
    wait_for(
        lambda: any("pong" in c["body"] for c in steward.bot_comments(repo, number)),
        timeout=60,
        what="the answer to the ping in a huge comment",
    )
    reads = [
        r for r in steward.bot_requests(repo) if r["method"] == "GET" and r["path"].endswith(f"/{comment}")
    ]
    if steward.forge == "gitea":
        assert reads, "the cut comment was read whole from the forge before the job ran"
    else:
        assert not reads, "nothing cut, nothing read again"
