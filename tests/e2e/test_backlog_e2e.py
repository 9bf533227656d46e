"""Backlog refinement end to end: the sandbox forge, a real receiver and worker, gidgethub over HTTP.

Each test reads what a person would see in the thread: the bot's sticky comments (and their data
blocks), its replies, the issue's labels and its declared dependencies."""

from __future__ import annotations

from typing import Any

from bot.records import sticky
from tests.e2e.conftest import Steward

FEATURE = """We need people to log in.

## Why
Shoppers lose their carts when they close the browser.
"""


def sticky_of(
    steward: Steward, repo: str, number: int, kind: str, key: str = "issue"
) -> dict[str, Any] | None:
    head = sticky.marker(kind, key)
    for comment in steward.bot_comments(repo, number):
        if comment["body"].startswith(head):
            return comment
    return None


def data_of(steward: Steward, repo: str, number: int, kind: str) -> Any:
    comment = sticky_of(steward, repo, number, kind)
    assert comment is not None, f"no {kind} comment"
    return sticky.unverified_data(comment["body"])


def replies(steward: Steward, repo: str, number: int) -> list[str]:
    return [
        c["body"] for c in steward.bot_comments(repo, number) if c["body"].startswith("<!-- steward:reply:")
    ]


def labels_of(steward: Steward, repo: str, number: int) -> list[str]:
    issue = steward.maintainer.call("GET", f"/repos/{repo}/issues/{number}")
    return [label["name"] for label in issue["labels"]]


def rows(steward: Steward, repo: str, number: int) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in data_of(steward, repo, number, "backlog-interview")["ledger"]["rows"]}


def test_an_interview_from_label_to_an_approved_spec(steward: Steward) -> None:
    repo = steward.new_repo()
    blocker = steward.maintainer.open_issue(repo, "Session storage")
    number = steward.maintainer.open_issue(repo, "Add login", FEATURE)
    steward.maintainer.add_labels(repo, number, ["refine"])
    steward.settle()

    # Round 1: one row per missing dimension, the core ones asked first.
    state = data_of(steward, repo, number, "backlog-interview")
    assert state["status"] == "interviewing"
    ledger = rows(steward, repo, number)
    assert {r["dimension"] for r in ledger.values()} == {
        "WHAT",
        "SCOPE",
        "ACCEPTANCE",
        "CONSTRAINTS",
        "EDGE",
        "DEPS",
    }
    assert all(r["status"] == "OPEN" and r["source"] == "original" for r in ledger.values())
    by_dim = {r["dimension"]: r["id"] for r in ledger.values()}
    assert [ledger[i]["dimension"] for i in state["asking"]] == ["WHAT", "SCOPE", "ACCEPTANCE", "DEPS"]
    interview = sticky_of(steward, repo, number, "backlog-interview")
    assert interview is not None and "round 1 of at most 5" in interview["body"]
    assert "round 0" not in interview["body"], "one round counter, the same everywhere"
    shown = [ln for ln in interview["body"].split("<details>")[0].splitlines() if not ln.startswith("<!--")]
    assert not [ln for ln in shown if "CONTINUE" in ln or "STOP-" in ln], "the stop gate's codes are folded"
    assert shown[2].startswith("**Next step:** answer the questions below")
    assert "| id | dimension | status | source | question | answer |" in interview["body"]
    assert "Ledger JSON" in interview["body"]

    # An outsider may not answer.
    denied = steward.outsider.comment(repo, number, f"/answer {by_dim['WHAT']} I think it's about login")
    steward.settle()
    assert any(
        "@outsider" in r and "can only be run by the author" in r for r in replies(steward, repo, number)
    )
    assert "confused" in steward.maintainer.reactions(repo, denied)
    assert rows(steward, repo, number)[by_dim["WHAT"]]["status"] == "OPEN"

    # Round 1 answers: one vague ("fast"), a scope split over lines, a dependency.
    steward.maintainer.comment(
        repo,
        number,
        f"/answer {by_dim['WHAT']} Shoppers sign in with email and password; it should be fast.\n"
        f"/answer {by_dim['SCOPE']} In: email and password login\nOut: social login\n"
        f"/answer {by_dim['DEPS']} Blocked by #{blocker}",
    )
    steward.settle()
    state = data_of(steward, repo, number, "backlog-interview")
    ledger = rows(steward, repo, number)
    raised = [r for r in ledger.values() if r["source"] == "raised-by-answer-R1"]
    assert len(raised) == 1 and raised[0]["dimension"] == "WHAT" and "“fast”" in raised[0]["question"]
    assert state["probes"][-1]["raised"] == [raised[0]["id"]]
    assert state["round"] == 2 and state["status"] == "interviewing"
    assert state["asking"][0] == raised[0]["id"]  # raised by the last answer, asked first
    assert steward.maintainer.blocked_by(repo, number) == [blocker]
    assert (
        f"#{blocker} (declared as blocking this issue)"
        in sticky_of(steward, repo, number, "backlog-interview")["body"]
    )

    # Round 2: answers without vague terms → an explicit "No new gaps".
    second = steward.maintainer.comment(
        repo,
        number,
        f"/answer {raised[0]['id']} Sign-in completes within 2 seconds for 95% of attempts.\n"
        f"/answer {by_dim['ACCEPTANCE']} WHEN a shopper submits valid credentials THE SYSTEM SHALL sign them "
        "in and restore their cart",
    )
    steward.settle()
    state = data_of(steward, repo, number, "backlog-interview")
    assert state["probes"][-1]["raised"] == []
    assert state["probes"][-1]["reason"].startswith("No new gaps:")
    assert "No new gaps:" in sticky_of(steward, repo, number, "backlog-interview")["body"]

    # The same answer redelivered is recorded once: nothing the bot wrote changes.
    before = [(c["id"], c["body"], c["updated_at"]) for c in steward.bot_comments(repo, number)]
    deliveries = steward.maintainer.call(
        "GET", f"{steward.sandbox.url}/_sandbox/deliveries?event=issue_comment"
    )
    mine = [d for d in deliveries if d["action"] == "created" and d.get("repo") in (repo, None)]
    target = next(
        d
        for d in reversed(mine)
        if steward.maintainer.call("GET", f"{steward.sandbox.url}/_sandbox/deliveries/{d['id']}")["payload"][
            "comment"
        ]["id"]
        == second
    )
    for _ in range(3):
        steward.maintainer.call("POST", f"{steward.sandbox.url}/_sandbox/deliveries/{target['id']}/redeliver")
    steward.settle()
    assert [(c["id"], c["body"], c["updated_at"]) for c in steward.bot_comments(repo, number)] == before

    # /enough: Spec v1 with the unanswered rows as Open Questions.
    steward.maintainer.comment(repo, number, "/enough")
    steward.settle()
    spec_comment = sticky_of(steward, repo, number, "backlog-spec")
    assert spec_comment is not None
    body = spec_comment["body"]
    assert "## Spec v1" in body and "## Open Questions" in body
    assert f"**{by_dim['CONSTRAINTS']}**" in body and f"**{by_dim['EDGE']}**" in body
    spec = data_of(steward, repo, number, "backlog-spec")["current"]
    assert spec["version"] == 1 and spec["verdict"] == "STOP-ENOUGH" and spec["status"] == "draft"
    assert (
        "AC: WHEN a shopper submits valid credentials THE SYSTEM SHALL sign them in and restore their cart"
        in spec["requirements"]
    )
    assert "SCOPE(IN): email and password login" in spec["requirements"]
    assert "SCOPE(OUT): social login" in spec["requirements"]
    assert spec["blocked_by"] == [blocker]
    asked = {q["id"]: q["answer"] for q in spec["qa"]}
    assert asked[by_dim["SCOPE"]] is not None and asked[by_dim["CONSTRAINTS"]] is None
    assert {q["id"] for q in spec["open_questions"]} == {by_dim["CONSTRAINTS"], by_dim["EDGE"]}

    # /approve-spec: the label, and the lock.
    steward.maintainer.comment(repo, number, "/approve-spec")
    steward.settle()
    labels = labels_of(steward, repo, number)
    assert "refinement:approved" in labels and "refine" not in labels
    assert data_of(steward, repo, number, "backlog-spec")["current"]["status"] == "approved"
    assert data_of(steward, repo, number, "backlog-interview")["status"] == "approved"
    late = steward.maintainer.comment(repo, number, f"/answer {by_dim['EDGE']} Locked accounts get a message")
    steward.settle()
    assert any("approved and locked" in r for r in replies(steward, repo, number))
    assert "confused" in steward.maintainer.reactions(repo, late)

    # The author's description was never edited.
    assert steward.maintainer.call("GET", f"/repos/{repo}/issues/{number}")["body"] == FEATURE


def test_refine_again_after_approval_starts_a_new_spec_version(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "Export CSV", FEATURE)
    steward.maintainer.comment(repo, number, "/refine")
    steward.settle()
    assert "refine" in labels_of(steward, repo, number)
    steward.maintainer.comment(repo, number, "/enough")
    steward.settle()
    steward.maintainer.comment(repo, number, "/approve-spec")
    steward.settle()
    steward.triager.comment(repo, number, "/refine")
    steward.settle()
    assert data_of(steward, repo, number, "backlog-interview")["status"] == "interviewing"
    steward.maintainer.comment(repo, number, "/enough")
    steward.settle()
    record = data_of(steward, repo, number, "backlog-spec")
    assert record["current"]["version"] == 2 and [s["version"] for s in record["history"]] == [1]
    assert "Earlier versions" in sticky_of(steward, repo, number, "backlog-spec")["body"]


def test_an_epic_and_a_closed_issue_are_refused(steward: Steward) -> None:
    repo = steward.new_repo()
    epic = steward.maintainer.open_issue(repo, "Checkout revamp", "", labels=["epic"])
    steward.maintainer.add_labels(repo, epic, ["refine"])

    # Sub-issues exist on GitHub only; on Gitea an epic is known by its label.
    has_sub_issues = steward.forge == "github"
    parent = steward.maintainer.open_issue(repo, "Payments")
    child = steward.maintainer.open_issue(repo, "Card payments")
    if has_sub_issues:
        child_id = steward.maintainer.call("GET", f"/repos/{repo}/issues/{child}")["id"]
        steward.maintainer.call(
            "POST", f"/repos/{repo}/issues/{parent}/sub_issues", {"sub_issue_id": child_id}
        )
        steward.maintainer.comment(repo, parent, "/refine")

    closed = steward.maintainer.open_issue(repo, "Old idea", FEATURE)
    steward.maintainer.call("PATCH", f"/repos/{repo}/issues/{closed}", {"state": "closed"})
    steward.maintainer.comment(repo, closed, "/refine")
    steward.settle()

    notice = sticky_of(steward, repo, epic, "backlog-notice", "refusal")
    assert notice is not None and "is an epic" in notice["body"] and "labelled `epic`" in notice["body"]
    if has_sub_issues:
        [listing] = replies(steward, repo, parent)
        assert "is an epic" in listing and f"#{child} Card payments" in listing
    [refused] = replies(steward, repo, closed)
    assert "closed — reopen it before refining" in refused
    for number in (epic, parent, closed):
        assert sticky_of(steward, repo, number, "backlog-interview") is None


def test_a_bug_report_is_left_to_the_bug_engine(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "Crash on save", "It crashes.", labels=["bug", "refine"])
    steward.settle()
    assert sticky_of(steward, repo, number, "backlog-interview") is None


def test_a_complete_description_gets_a_spec_at_once(steward: Steward) -> None:
    body = """As a shopper I want to sign in with email so that my cart is kept.

In scope: email sign-in
Out of scope: social login

## Acceptance criteria
- [ ] WHEN a shopper signs in THE SYSTEM SHALL restore the cart

## Constraints
Sign-in must not take more than 2 seconds.

## Edge cases
Wrong password shows an error.

Dependencies: none
See https://example.com/design for the mock-ups.
"""
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "Sign in", body, labels=["refine"])
    steward.settle()
    state = data_of(steward, repo, number, "backlog-interview")
    assert state["status"] == "stopped" and state["gate"] == "STOP-CLEAN" and state["ledger"]["rows"] == []
    spec = data_of(steward, repo, number, "backlog-spec")["current"]
    assert spec["version"] == 1 and spec["qa"] == []
    assert "SOURCE: https://example.com/design" in spec["requirements"]
    assert "AC: WHEN a shopper signs in THE SYSTEM SHALL restore the cart" in spec["requirements"]


def notices_of(steward: Steward, repo: str, number: int) -> list[str]:
    head = "<!-- steward:backlog-notice:"
    return [c["body"] for c in steward.bot_comments(repo, number) if c["body"].startswith(head)]


def test_only_triage_may_approve_a_spec_and_the_author_is_told_when_to_act(steward: Steward) -> None:
    """An outsider who opens an issue may answer and end the interview, but not stamp the spec approved;
    each new round and each spec ready for approval mentions the author in one short new comment."""
    repo = steward.new_repo()
    number = steward.outsider.open_issue(repo, "Add login", FEATURE)
    steward.maintainer.add_labels(repo, number, ["refine"])
    steward.settle()
    [round_one] = notices_of(steward, repo, number)
    assert "@outsider: round 1 of the refinement — " in round_one
    assert "questions for you in [the interview](" in round_one
    steward.outsider.comment(repo, number, "/enough")
    steward.settle()
    ready = [n for n in notices_of(steward, repo, number) if "Spec v1** is ready" in n]
    assert len(ready) == 1 and ready[0].splitlines()[-1].startswith("@outsider: ")
    floor = "write" if steward.forge == "gitea" else "triage"
    assert f"`/steward approve-spec` ({floor}+) approves it" in ready[0], "the hint matches the permission"
    attempt = steward.outsider.comment(repo, number, "/approve-spec")
    steward.settle()
    assert any(
        "@outsider: `/steward approve-spec` can only be run by" in r and f"{floor} access or more" in r
        for r in replies(steward, repo, number)
    )
    assert "confused" in steward.maintainer.reactions(repo, attempt)
    assert "refinement:approved" not in labels_of(steward, repo, number)
    steward.triager.comment(repo, number, "/approve-spec")
    steward.settle()
    assert "refinement:approved" in labels_of(steward, repo, number)
    assert len(notices_of(steward, repo, number)) == 2, "no notice is written twice"
