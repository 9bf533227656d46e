"""The catch-up never runs an edited comment as its author (issue 35 item 2), end to end on both forges.

Live, a command added by editing someone else's comment is refused (``bot.commands.dispatch``). The catch-up
lists the comments *updated* since its window, and used to queue each one with a command as if it had just
been written — its author as the sender, today's body: a writer who edited a maintainer's old comment (one
whose handled mark had expired, or written before Steward was installed) while Steward was not listening ran
its commands as the maintainer. Now only a comment never edited after it was written runs; an edited one is
answered once, within the write budget, "not run: edited after it was written", and a second catch-up says
nothing more.
"""

from __future__ import annotations

from datetime import UTC, datetime

import redis

from bot.catchup.comments import comment_done_key
from bot.forge import RepoRef
from tests.e2e.conftest import Steward
from tests.e2e.stack import reconcile, wait_for
from tests.e2e.test_reconcile_e2e import _steward_down

NOT_RUN = "not run: edited after it was written"


def _delivered(steward: Steward) -> None:
    wait_for(
        lambda: steward.maintainer.call("GET", f"{steward.sandbox.url}/_sandbox/deliveries/idle").get("idle"),
        what="the sandbox's deliveries",
    )


def _pongs(steward: Steward, repo: str, number: int) -> list[str]:
    return [c["body"] for c in steward.bot_comments(repo, number) if "pong" in c["body"]]


def _not_run(steward: Steward, repo: str, number: int) -> list[str]:
    return [c["body"] for c in steward.bot_comments(repo, number) if NOT_RUN in c["body"]]


def test_catch_up_answers_an_edited_comment_once_and_never_runs_it(steward: Steward) -> None:
    m, writer = steward.maintainer, steward.outsider
    repo = steward.new_repo()
    m.add_collaborator(repo, "outsider", "push")  # a writer: may edit anyone's comment
    number = m.open_issue(repo, "a question")
    old = m.comment(repo, number, "Thanks, I will look at this.")
    steward.settle()
    # The maintainer's comment is older than the mark that says it was handled (seven days).
    ref = RepoRef(*repo.split("/"), id=int(m.call("GET", f"/repos/{repo}")["id"]))
    assert redis.Redis.from_url(steward.redis_url).delete(comment_done_key(steward.forge, ref, old)) == 1
    made = m.call("GET", f"/repos/{repo}/issues/comments/{old}")["created_at"]
    wait_for(
        lambda: datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") > made,
        what="a later second than the comment's (the forges' times have whole seconds)",
    )
    with _steward_down(steward):
        writer.edit_comment(repo, old, "Thanks, I will look at this.\n\n/steward ping")
        fresh = m.open_issue(repo, "another question")
        m.comment(repo, fresh, "/steward ping")  # never edited: runs
        _delivered(steward)

    target = f"{steward.forge}:{repo}"
    first = reconcile(steward.settings, "--repo", target, "--since", "1h")
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    wait_for(lambda: _pongs(steward, repo, fresh), timeout=60, what="the answer to the unedited ping")
    wait_for(lambda: _not_run(steward, repo, number), timeout=60, what="the answer to the edited comment")
    steward.settle(60)
    assert not _pongs(steward, repo, number), "the edited comment's command did not run as its author"
    [answer] = _not_run(steward, repo, number)
    assert "\n@maintainer: to run a command, write it in a new comment" in answer, answer
    assert f"#issuecomment-{old}" in answer

    again = reconcile(steward.settings, "--repo", target, "--since", "1h")
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    steward.settle(60)
    assert len(_not_run(steward, repo, number)) == 1, "answered once"
    assert not _pongs(steward, repo, number)
    assert len(_pongs(steward, repo, fresh)) == 1
