"""A spec that stopped degraded cannot be approved as it is (issue 36 §7, seed 002), end to end on both
forges: the interview reached its round cap with a core question open; `/approve-spec` is refused with the
spec's recommendation (split the card, or explore first) until the approver says why with
`--accept-degraded <reason>`."""

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
