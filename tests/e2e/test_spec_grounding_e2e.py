"""Seed 003's grounding check before sign-off (issue 36 §1), end to end on both forges: `/approve-spec`
refuses a spec that cites code the repository does not have — a path or a `path:line` — naming each,
until the spec is fixed or the approver says why (`--ungrounded <reason>`); a spec whose places exist is
approved."""

from __future__ import annotations

from tests.e2e.conftest import Steward
from tests.e2e.test_fail_closed_e2e import COMPLETE, levels


def spec_citing(where: str) -> str:
    return COMPLETE.replace("Dependencies: none", f"The session is kept in {where}.\n\nDependencies: none")


def test_approve_spec_checks_the_code_the_spec_cites(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    m.put_file(repo, "src/auth/session.py", "".join(f"# line {i}\n" for i in range(1, 21)))
    steward.settle()

    number = m.open_issue(repo, "Sign in", spec_citing("src/auth/sesion.py and src/auth/session.py:40"),
                          labels=["refine"])  # fmt: skip
    steward.settle()
    steward.triager.comment(repo, number, "/approve-spec")
    steward.settle()
    [reply] = [c["body"] for c in steward.bot_comments(repo, number) if "<!-- steward:reply:" in c["body"]]
    assert "the spec cites code that does not exist" in reply
    assert "`src/auth/session.py` has 20 lines at `main`" in reply and "`src/auth/session.py:20`" in reply
    assert "there is no file `src/auth/sesion.py` at `main`" in reply and "--ungrounded <reason>" in reply
    assert "refinement:approved" not in levels(steward, repo, number)

    steward.triager.comment(
        repo, number, "/approve-spec --ungrounded the session module is written by this work"
    )
    steward.settle()
    assert "refinement:approved" in levels(steward, repo, number)

    grounded = m.open_issue(repo, "Sign in again", spec_citing("src/auth/session.py:12"), labels=["refine"])
    steward.settle()
    steward.triager.comment(repo, grounded, "/approve-spec")
    steward.settle()
    assert "refinement:approved" in levels(steward, repo, grounded)


def test_a_design_decision_s_codebase_facts_are_checked_too(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    body = COMPLETE + "\n## Open forks\n\n- [ ] F1: Where is the session kept?\n"
    number = m.open_issue(repo, "Sign in", body, labels=["refine"])
    steward.settle()
    m.comment(repo, number, "/decide F1 in the existing store, src/auth/store.py")
    steward.settle()
    steward.triager.comment(repo, number, "/approve-spec")
    steward.settle()
    replies = [c["body"] for c in steward.bot_comments(repo, number) if "<!-- steward:reply:" in c["body"]]
    assert any("there is no file `src/auth/store.py` at `main`" in r for r in replies), replies
    assert "refinement:approved" not in levels(steward, repo, number)
