"""Backlog specs know what came before (issue 36 §7, seed 002), end to end on both forges: a spec that
stopped degraded (the round cap reached with a core question open) is refused by `/approve-spec` with its
recommendation (split the card, or explore first) until the approver says why with `--accept-degraded
<reason>`; a closed blocker shows what it delivered."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Steward
from tests.e2e.test_backlog_e2e import FEATURE, data_of, replies
from tests.e2e.test_fail_closed_e2e import levels


@pytest.mark.handler_settings(backlog={"round_cap": 1})
def test_a_degraded_spec_needs_an_explicit_acceptance(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "Add login", FEATURE, labels=["refine"])
    steward.settle()
    steward.maintainer.comment(repo, number, "/answer g6 none")
    steward.settle()
    spec = data_of(steward, repo, number, "backlog-spec")["current"]
    assert spec is not None and spec["verdict"] == "STOP-DEGRADED", spec

    steward.triager.comment(repo, number, "/approve-spec")
    steward.settle()
    reply = replies(steward, repo, number)[-1]
    assert "this spec stopped degraded" in reply and "split the card into smaller items" in reply
    assert "--accept-degraded <reason>" in reply
    assert "refinement:approved" not in levels(steward, repo, number)

    steward.triager.comment(repo, number, "/approve-spec --accept-degraded the login page is a known pattern")
    steward.settle()
    assert "refinement:approved" in levels(steward, repo, number)


def test_a_closed_blocker_shows_what_it_delivered(steward: Steward) -> None:
    """Seed 002's prior context (issue 36 §7): an item blocked by closed work shows, in the interview, the
    merged pull request that delivered it — its title, the start of its description and the files it
    changed."""
    m = steward.maintainer
    repo = steward.new_repo()
    blocker = m.open_issue(repo, "Session storage", "Keep sessions server side.")
    pr = m.open_pull(repo, f"Session store for #{blocker}", "session-store")
    m.merge_pull(repo, pr)
    m.edit_issue(repo, blocker, state="closed")
    steward.settle()
    number = m.open_issue(repo, "Add login", FEATURE + f"\nBlocked by #{blocker}\n", labels=["refine"])
    steward.settle()
    interview = [
        c["body"] for c in steward.bot_comments(repo, number) if "backlog-interview" in c["body"][:60]
    ]
    line = next(x for x in interview[0].splitlines() if x.startswith("**Blocked by:**"))
    assert f"#{blocker} (declared as blocking this issue)" in line or f"#{blocker} (listed here" in line
    assert f"prior work: closed; delivered by #{pr} “Session store for #{blocker}”" in line
    assert "files: `session-store.txt`" in line
    steward.maintainer.comment(repo, number, "/enough")
    steward.settle()
    spec = next(c["body"] for c in steward.bot_comments(repo, number) if "backlog-spec" in c["body"][:60])
    assert "**Prior work** (what the closed blockers delivered):" in spec
    assert f"- #{blocker}: closed; delivered by #{pr}" in spec


def test_a_blocker_linked_only_on_the_forge_shows_what_it_delivered(steward: Steward) -> None:
    """The forge's own dependency links count as declared dependencies (issue 36 §7): a blocker linked in the
    issue's sidebar, named in no text, is read like one the description names — the merged pull request
    that delivered it, the start of its description and the files it changed, in the interview and the
    spec."""
    m = steward.maintainer
    repo = steward.new_repo()
    blocker = m.open_issue(repo, "Session storage", "Keep sessions server side.")
    said = "Sessions live in Redis, keyed by a signed cookie; they expire after a day."
    pr = m.open_pull(repo, "Session store", "session-store", body=f"{said}\n\nPart of #{blocker}.")
    m.merge_pull(repo, pr)
    m.edit_issue(repo, blocker, state="closed")
    number = m.open_issue(repo, "Add login", FEATURE)
    m.link_blocker(repo, number, blocker)
    steward.settle()
    m.add_labels(repo, number, ["refine"])
    steward.settle()
    interview = next(
        c["body"] for c in steward.bot_comments(repo, number) if "backlog-interview" in c["body"][:60]
    )
    line = next(x for x in interview.splitlines() if x.startswith("**Blocked by:**"))
    assert f"#{blocker} (linked on the forge as blocking this issue)" in line
    assert f"prior work: closed; delivered by #{pr} “Session store”: {said}" in line
    assert "files: `session-store.txt`" in line
    steward.maintainer.comment(repo, number, "/enough")
    steward.settle()
    spec_comment = next(
        c["body"] for c in steward.bot_comments(repo, number) if "backlog-spec" in c["body"][:60]
    )
    assert "**Prior work** (what the closed blockers delivered):" in spec_comment
    assert f"- #{blocker}: closed; delivered by #{pr} “Session store”: {said}" in spec_comment
    assert "files: `session-store.txt`" in spec_comment
    assert data_of(steward, repo, number, "backlog-spec")["current"]["blocked_by"] == [blocker]
