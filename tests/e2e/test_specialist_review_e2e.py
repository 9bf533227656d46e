"""Risky changes get the specialist seed 001 asks for (issue 36 §5), end to end on both forges: a fix that
touches the paths of a `bugfix.sensitive_paths` group stays pending after the independent review until one of
the group's reviewers gives a clean round or approves the head; the ledger says which group and why."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Steward
from tests.e2e.test_bugfix_e2e import run, state_of, sticky_of
from tests.e2e.test_bugfix_reviews_e2e import native_review, ready_for_review

SECURITY = {"security": {"paths": ["src/cart/**"], "reviewers": ["triager"]}}


@pytest.mark.handler_settings(bugfix={"sensitive_paths": SECURITY})
def test_a_fix_in_a_sensitive_path_waits_for_the_group_s_reviewer(steward: Steward) -> None:
    repo, _, pr, _, _ = ready_for_review(steward)
    run(steward, repo, pr, "/review clean", by="outsider")
    assert state_of(steward, repo, pr) == (
        "pending",
        "awaiting the security group's review of the head (reviewers: triager)",
    )
    ledger = sticky_of(steward, repo, pr, "bugfix-ledger")
    assert ledger is not None and "the `security` reviewer group covers" in ledger["body"]
    assert "`src/cart/total.py`" in ledger["body"]

    native_review(steward, "triager", repo, pr, "approve")
    assert state_of(steward, repo, pr)[0] == "success"


TEAM = {"security": {"paths": ["src/cart/**"], "reviewers": ["@acme/security"]}}


@pytest.mark.handler_settings(bugfix={"sensitive_paths": TEAM})
def test_a_reviewer_group_may_be_an_organisations_team(steward: Steward) -> None:
    """Issue 36 §5: `@org/team` in a group's reviewers stands for the team's members, read from the forge;
    before, only logins counted, so the team's member's approval left the fix pending."""
    org = {"login": "acme", "members": {"steward-bot": "member"}, "teams": {"security": ["triager"]}}
    steward.maintainer.call("POST", f"{steward.sandbox.url}/_sandbox/orgs", org)
    repo, _, pr, _, _ = ready_for_review(steward)
    run(steward, repo, pr, "/review clean", by="outsider")
    assert state_of(steward, repo, pr) == (
        "pending",
        "awaiting the security group's review of the head (reviewers: acme/security)",
    )
    native_review(steward, "triager", repo, pr, "approve")
    assert state_of(steward, repo, pr)[0] == "success"


@pytest.mark.handler_settings(bugfix={"sensitive_paths": TEAM})
def test_a_team_steward_may_not_see_counts_as_nobody(steward: Steward) -> None:
    """Fail closed: a team whose members the forge will not show (Steward is outside the organisation) counts
    as nobody, and the ledger says why."""
    org = {"login": "acme", "members": {}, "teams": {"security": ["triager"]}}
    steward.maintainer.call("POST", f"{steward.sandbox.url}/_sandbox/orgs", org)
    repo, _, pr, _, _ = ready_for_review(steward)
    run(steward, repo, pr, "/review clean", by="outsider")
    native_review(steward, "triager", repo, pr, "approve")
    assert state_of(steward, repo, pr)[0] == "pending"
    ledger = sticky_of(steward, repo, pr, "bugfix-ledger")
    assert ledger is not None and "The members of `acme/security` could not be read" in ledger["body"]


def test_without_sensitive_paths_the_independent_review_suffices(steward: Steward) -> None:
    repo, _, pr, _, _ = ready_for_review(steward)
    run(steward, repo, pr, "/review clean", by="outsider")
    assert state_of(steward, repo, pr)[0] == "success"
