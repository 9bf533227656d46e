"""A writer's own `steward/*` status does not stand (issue 35 item 7), on both forges.

Before: Steward ignored every `steward/*` status event, whoever posted it, so a writer who posted
`steward/regression-first` = success on a bugfix pull request's head made a required status check pass (the
forge keeps the latest status of a context, whoever set it). Now Steward posts its own state again at once and
its ledger records who set which context to what, on which commit (an entry of the ledger's signed record: it
outlives the ledger's re-renders); on a commit it never judged, a forged `steward/*` status is answered with
a failure.
"""

from __future__ import annotations

import pytest

from bot.records import neutralise
from tests.e2e.conftest import Steward
from tests.e2e.stack import wait_for
from tests.e2e.test_bugfix_e2e import CONTEXT, head_of, opened, repo_with_ci, state_of, sticky_of


def ledger_of(steward: Steward, repo: str, pr: int) -> str:
    ledger = sticky_of(steward, repo, pr, "bugfix-ledger")
    assert ledger is not None, "no ledger on the pull request"
    return str(ledger["body"])


def test_a_writer_s_steward_status_is_overwritten_with_steward_s_own(steward: Steward) -> None:
    repo = repo_with_ci(steward)
    steward.maintainer.add_collaborator(repo, "outsider", "push" if steward.forge == "github" else "write")
    _, pr, _, red = opened(steward, repo)
    head = head_of(steward, repo, pr)
    before = state_of(steward, repo, pr)
    assert before[0] == "pending"
    forged = {"state": "success", "context": CONTEXT, "description": "all good"}
    steward.outsider.call("POST", f"/repos/{repo}/statuses/{head}", forged)
    steward.settle()
    wait_for(lambda: state_of(steward, repo, pr) == before or None, what="Steward's own state again")
    entry = f"| {neutralise.name('outsider')} | `{CONTEXT}` (status) | success | `{head[:10]}` |"
    wait_for(lambda: entry in ledger_of(steward, repo, pr) or None, what="the forgery in the ledger")
    assert "Steward's own results set by someone else" in ledger_of(steward, repo, pr)
    assert not any("status-restored" in c["body"] for c in steward.bot_comments(repo, pr)), "no second note"
    # The entry is in the ledger's signed record: the ledger edited to drop it is rewritten with it, once.
    ledger = sticky_of(steward, repo, pr, "bugfix-ledger")
    assert ledger is not None
    steward.maintainer.edit_comment(repo, int(ledger["id"]), ledger["body"].replace(entry, "| |"))
    steward.settle()
    wait_for(
        lambda: entry in ledger_of(steward, repo, pr) or None, what="the ledger rewritten with the entry"
    )
    assert ledger_of(steward, repo, pr).count(entry) == 1
    # A context that names someone is quoted inert in the ledger: no live mention, no markup.
    named = "steward/@maintainer <b>x</b>"
    steward.outsider.call("POST", f"/repos/{repo}/statuses/{head}", {"state": "success", "context": named})
    steward.settle()
    shown = neutralise.code(named, 100, in_table=True)
    wait_for(lambda: shown in ledger_of(steward, repo, pr) or None, what="the named context in the ledger")
    assert "@maintainer" not in ledger_of(steward, repo, pr) and "<b>" not in ledger_of(steward, repo, pr)
    # A steward/* context on a commit Steward never judged: answered with a failure.
    other = {"state": "success", "context": "steward/config", "description": "valid"}
    steward.outsider.call("POST", f"/repos/{repo}/statuses/{red}", other)
    steward.settle()
    latest = next(s for s in steward.maintainer.statuses(repo, red) if s["context"] == "steward/config")
    assert (latest.get("state") or latest["status"]) == "failure"
    assert latest["creator"]["login"] == "steward-bot"


@pytest.mark.parametrize("steward", ["github"], indirect=True)  # Gitea has no check runs
def test_another_app_s_check_run_named_like_steward_s_is_in_the_ledger(steward: Steward) -> None:
    """GitHub: a check run of Steward's name from another app (here the sandbox's CI app; Steward runs with a
    token and posts none) is answered — Steward's own status stands on the head — and the ledger records it.
    Gitea has no check runs."""
    repo = repo_with_ci(steward)
    _, pr, _, _ = opened(steward, repo)
    head = head_of(steward, repo, pr)
    before = state_of(steward, repo, pr)
    body = {"repo": repo, "sha": head, "kind": "check_run", "context": CONTEXT, "conclusion": "success"}
    steward.maintainer.client.post(f"{steward.sandbox.url}/_sandbox/ci", json=body).raise_for_status()
    steward.settle()
    entry = f"`{CONTEXT}` (check run) | success | `{head[:10]}` |"
    wait_for(lambda: entry in ledger_of(steward, repo, pr) or None, what="the check run in the ledger")
    assert state_of(steward, repo, pr) == before, "Steward's own status is unchanged"
    assert ledger_of(steward, repo, pr).count(entry) == 1, "its created and completed webhooks: one entry"
