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


def test_without_sensitive_paths_the_independent_review_suffices(steward: Steward) -> None:
    repo, _, pr, _, _ = ready_for_review(steward)
    run(steward, repo, pr, "/review clean", by="outsider")
    assert state_of(steward, repo, pr)[0] == "success"
