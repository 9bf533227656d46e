"""Seed 002's "patch only what changed" (issue 36 §7, third item), end to end on both forges: when the
interview renamed the item (a `Title:` line in an answer) or scored its level on an issue without a level
label, the approval applies it — the issue's title and `level:*` label, nothing else — and the spec's history
says why each earlier version left: edited (with `/edit-spec`, by whom), redirected (the title went from one
to another), or cancelled (`/cancel-refine`, by whom)."""

from __future__ import annotations

from tests.e2e.conftest import Steward
from tests.e2e.test_backlog_e2e import FEATURE, data_of, rows, sticky_of


def _what(steward: Steward, repo: str, number: int) -> str:
    return next(r["id"] for r in rows(steward, repo, number).values() if r["dimension"] == "WHAT")


def test_the_approval_applies_the_interviews_title_and_level_and_the_history_says_why(
    steward: Steward,
) -> None:
    repo = steward.new_repo()
    m = steward.maintainer
    number = m.open_issue(repo, "Add login", FEATURE)
    m.comment(repo, number, "/refine")
    steward.settle()
    what = _what(steward, repo, number)
    m.comment(
        repo, number, f"/answer {what} Title: Sign in with email\nShoppers sign in with email and password."
    )
    steward.settle()
    m.comment(repo, number, "/enough")
    steward.settle()
    draft = sticky_of(steward, repo, number, "backlog-spec")
    assert draft is not None
    assert "The interview renamed the item: approval sets the title to “Sign in with email”." in draft["body"]
    assert "The issue has no `level:*` label; approval also sets `level:" in draft["body"]

    # An edit, then a redirect: the second cycle renames the item again.
    m.comment(repo, number, "/edit-spec")
    steward.settle()
    m.comment(repo, number, f"/answer {what} Title: Sign in with a magic link\nShoppers get a link by email.")
    steward.settle()
    m.comment(repo, number, "/enough")
    steward.settle()
    record = data_of(steward, repo, number, "backlog-spec")
    [v1] = record["history"]
    assert v1["note"] == (
        "edited: @maintainer reopened the interview (`/steward edit-spec`); "
        "redirected: the title went from “Sign in with email” to “Sign in with a magic link”"
    )
    body = sticky_of(steward, repo, number, "backlog-spec")["body"].replace("\u2060", "")  # no pings
    assert "#### Spec v1 (superseded — edited: @maintainer reopened the interview" in body

    steward.triager.comment(repo, number, "/approve-spec")
    steward.settle()
    issue = m.call("GET", f"/repos/{repo}/issues/{number}")
    assert issue["title"] == "Sign in with a magic link", "the approval applies the interview's title"
    assert issue["body"] == FEATURE, "and nothing else of the author's"
    spec = data_of(steward, repo, number, "backlog-spec")["current"]
    assert spec["status"] == "approved" and "Title:" not in spec["goal"] + "".join(spec["requirements"])
    assert [x["name"] for x in issue["labels"] if x["name"].startswith("level:")] == [
        f"level:{spec['level']}"
    ]
    approved = sticky_of(steward, repo, number, "backlog-spec")["body"].replace("\u2060", "")
    assert "Title: changed from “Add login” to “Sign in with a magic link”." in approved
    assert "## Spec v2 — Sign in with a magic link (approved)" in approved


def test_a_cancelled_draft_is_noted_as_cancelled(steward: Steward) -> None:
    repo = steward.new_repo()
    m = steward.maintainer
    number = m.open_issue(repo, "Add login", FEATURE)
    m.comment(repo, number, "/refine")
    steward.settle()
    m.comment(repo, number, "/enough")
    steward.settle()
    m.comment(repo, number, "/cancel-refine")
    steward.settle()
    [v1] = data_of(steward, repo, number, "backlog-spec")["history"]
    assert v1["status"] == "discarded"
    assert v1["note"] == "cancelled: @maintainer discarded the draft (`/steward cancel-refine`)"
    body = sticky_of(steward, repo, number, "backlog-spec")["body"].replace("\u2060", "")  # no pings
    assert "#### Spec v1 (discarded — cancelled: @maintainer discarded the draft" in body
    assert m.call("GET", f"/repos/{repo}/issues/{number}")["title"] == "Add login"
