"""Paths that must fail closed (issue 36 §8), end to end on both forges: when the forge will not say what a
gate needs, the gate does not open.

- the branch's push history cannot be read: `/review` is refused (`PUSH_HISTORY_UNREADABLE`) — nobody can be
  shown not to have pushed — and the status stays where it was;
- permissions the forge will not show: a command that needs them is refused and runs nothing (`/bugfix`
  opens no branch);
- the decision juror cannot check a fork (the forge will not say who may decide): the fork counts as
  undecided, and the fix's status stays pending with the code `INFRA_ERROR` in its record;
- no record of Steward's verifies (a writer edited the ledger to raise the budget): the budgets count as
  spent, and `/review` is refused;
- the level choice at approval: a plain `/approve-spec` never changes or accepts a level the spec does not
  score — the approver answers apply, keep or a level; `/cancel-refine` discards the draft (nothing left to
  approve), and an outsider cannot cancel someone else's refinement.
"""

from __future__ import annotations

from typing import Any

from bot.records import sticky
from tests.e2e.conftest import Steward
from tests.e2e.test_bugfix_e2e import (
    FIX,
    RED_SAYS,
    branches,
    opened,
    play_ci,
    pulls,
    push,
    refined_bug,
    repo_with_ci,
    run,
    state_of,
    sticky_of,
)


def refuse(repo: str, what: str) -> dict[str, Any]:
    """The forge answers the bot 403 on ``what`` (a path pattern), as it does to a token without the right."""
    return {"path": rf"/repos/{repo}/{what}", "status": 403, "times": 500, "login": "steward-bot"}


def awaiting_review(steward: Steward) -> tuple[str, int, int]:
    """A bugfix pull request with its red proof and a green fix, awaiting a review: (repo, bug, pr)."""
    repo = repo_with_ci(steward)
    steward.maintainer.add_collaborator(repo, "outsider", "push")
    number, pr, branch, red = opened(steward, repo)
    play_ci(steward, repo, red, "failure", says=RED_SAYS)
    fix = push(steward, repo, branch, "src/cart/total.py", FIX)
    play_ci(steward, repo, fix, "success")
    assert state_of(steward, repo, pr)[1].startswith("awaiting a review round on the head")
    return repo, number, pr


def test_an_unreadable_push_history_refuses_the_review(steward: Steward) -> None:
    repo, _, pr = awaiting_review(steward)
    steward.faults(refuse(repo, "activit"))  # GitHub's /activity, Gitea's /activities/feeds
    reply = run(steward, repo, pr, "/review clean", by="outsider")
    assert "PUSH_HISTORY_UNREADABLE" in reply and "push history could not be read" in reply
    assert "Recorded review round" not in reply
    assert state_of(steward, repo, pr)[1].startswith("awaiting a review round on the head")


def test_permissions_the_forge_will_not_show_run_nothing(steward: Steward) -> None:
    repo = repo_with_ci(steward)
    number = refined_bug(steward, repo)
    steward.faults(refuse(repo, r"collaborators/[^/]+/permission"))
    reply = run(steward, repo, number, "/bugfix")
    assert "Steward cannot read permissions on this repository" in reply
    assert pulls(steward, repo) == [] and branches(steward, repo) == ["main"]


def test_a_juror_that_cannot_check_keeps_the_decision_pending(steward: Steward) -> None:
    m = steward.maintainer
    repo, number, pr = awaiting_review(steward)
    fork = "\n\n## Open forks\n\n- [ ] F1: Round the discount before or after the currency conversion?\n"
    m.edit_issue(repo, number, body=m.issue(repo, number)["body"] + fork)
    steward.settle()
    m.comment(repo, number, "/decide F1 after the conversion")
    steward.settle()
    head = m.call("GET", f"/repos/{repo}/pulls/{pr}")["head"]["sha"]
    play_ci(steward, repo, head, "success")
    assert state_of(steward, repo, pr)[1].startswith("awaiting a review round on the head"), "decided"

    # Now the forge will not say who may decide: the decision cannot be checked, so it is not taken as made.
    # People read what to do; the record (the ledger's data, and its folded status part) says INFRA_ERROR.
    steward.faults(refuse(repo, r"collaborators/[^/]+/permission"))
    play_ci(steward, repo, head, "success", context="ci/other")
    state = state_of(steward, repo, pr)
    assert state[0] == "pending", state
    assert state[1].startswith("pending: a repository admin must let Steward read who may decide"), state
    assert f"decisions on #{number} cannot be checked" in state[1], state
    assert "INFRA_ERROR" not in state[1]
    ledger = sticky_of(steward, repo, pr, "bugfix-ledger")
    assert ledger is not None
    assert sticky.unverified_data(ledger["body"])["status"] == {"state": "pending", "code": "INFRA_ERROR"}
    visible = "\n".join(x for x in ledger["body"].splitlines() if not x.startswith("<!-- steward:"))
    shown, folded = visible.split("<details><summary>Status record</summary>")
    assert "INFRA_ERROR" not in shown and "A repository admin gives Steward's account the access" in shown
    assert "by the rule `INFRA_ERROR` — a check Steward could not make" in folded


# --- backlog: the level choice at approval and /cancel-refine -----------------------------------------------

COMPLETE = """As a shopper I want to sign in with email so that my cart is kept.

In scope: email sign-in
Out of scope: social login

## Acceptance criteria
- [ ] WHEN a shopper signs in THE SYSTEM SHALL restore the cart

## Constraints
Sign-in must not take more than 2 seconds.

## Edge cases
Wrong password shows an error.

Dependencies: none
"""


def levels(steward: Steward, repo: str, number: int) -> list[str]:
    return sorted(
        x for x in steward.maintainer.labels_of(repo, number) if x.startswith(("level:", "refinement:"))
    )


def test_the_level_never_changes_without_an_answer(steward: Steward) -> None:
    """A spec that scores another level than the issue's label is not approved by a plain `/approve-spec`:
    the approver chooses — apply the scored level, keep the label, or name one."""
    repo = steward.new_repo()
    chosen: dict[str, int] = {}
    for choice in ("", "keep", "apply", "L1"):
        number = steward.maintainer.open_issue(repo, "Sign in", COMPLETE, labels=["refine", "level:L3"])
        steward.settle()
        chosen[choice] = number
        if choice:
            steward.triager.comment(repo, number, f"/approve-spec {choice}")
            steward.settle()
        else:
            reply = run(steward, repo, number, "/approve-spec", by="triager")
            assert "the spec scores **L2** but the issue is labelled `level:L3`. Choose:" in reply
            assert levels(steward, repo, number) == ["level:L3"], "refused: neither approved nor changed"
    assert levels(steward, repo, chosen["keep"]) == ["level:L3", "refinement:approved"]
    assert levels(steward, repo, chosen["apply"]) == ["level:L2", "refinement:approved"]
    assert levels(steward, repo, chosen["L1"]) == ["level:L1", "refinement:approved"]


def test_cancel_refine_discards_the_draft_and_an_outsider_cannot(steward: Steward) -> None:
    from tests.e2e.test_backlog_e2e import FEATURE, data_of

    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "Add login", FEATURE, labels=["refine"])
    steward.settle()
    reply = run(steward, repo, number, "/cancel-refine", by="outsider")
    assert "can only be run by" in reply and "refine" in steward.maintainer.labels_of(repo, number)

    steward.maintainer.comment(repo, number, "/cancel-refine")
    steward.settle()
    assert "refine" not in steward.maintainer.labels_of(repo, number)
    assert data_of(steward, repo, number, "backlog-spec")["current"] is None, "no draft is left"
    steward.triager.comment(repo, number, "/approve-spec")
    steward.settle()
    assert "refinement:approved" not in steward.maintainer.labels_of(repo, number), "nothing to approve"


def test_budgets_count_as_spent_when_no_record_verifies(steward: Steward) -> None:
    """A writer edits Steward's ledger to raise the review budget: the block no longer verifies, and with
    no record of Steward's that verifies the budgets count as spent — the edit cannot buy rounds."""
    repo, _, pr = awaiting_review(steward)
    [ledger] = [c for c in steward.bot_comments(repo, pr) if "<!-- steward:bugfix-ledger:" in c["body"]]
    assert '"review_rounds":5' in ledger["body"]
    steward.maintainer.edit_comment(
        repo, ledger["id"], ledger["body"].replace('"review_rounds":5', '"review_rounds":50')
    )
    steward.settle()
    reply = run(steward, repo, pr, "/review clean", by="outsider")
    assert "BUDGET_EXHAUSTED" in reply and "Recorded review round" not in reply


def test_findings_carry_a_category_and_an_impact_when_given(steward: Steward) -> None:
    """Issue 36 §5: `/review findings` lines may name a category and an impact; the old form still works."""
    repo, _, pr = awaiting_review(steward)
    findings = (
        "/review findings\nF1 high category=security impact=data-loss src/cart/total.py:1 the rate leaks\n"
        "F2 low src/cart/total.py:2 naming"
    )
    reply = run(steward, repo, pr, findings, by="outsider")
    assert "Recorded review round 1 of 5" in reply
    ledger = [c["body"] for c in steward.bot_comments(repo, pr) if "<!-- steward:bugfix-ledger:" in c["body"]]
    assert "| 1 | F1 | high · security · data-loss | `src/cart/total.py:1` |" in ledger[0]
    assert "| 1 | F2 | low | `src/cart/total.py:2` |" in ledger[0]
