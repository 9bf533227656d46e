"""Issue 25 §1 end to end, on both forges: what Steward quotes of someone's text does not act. The bug's
title, its recipe (5.2, 5.3) and its hypothesis carry mentions, closing keywords, raw HTML and an image; the
bugfix draft pull request, its red commit and the merge summary quote them, and merging the fix closes only
the bug Steward closes itself — not the issues the text named — and nobody the text names is mentioned."""

from __future__ import annotations

import re
from typing import Any

from bot.records.neutralise import live_parts
from tests.bugfix.bodies import BUG
from tests.e2e.conftest import Steward
from tests.e2e.test_bugfix_e2e import opened, pr_commits, pull, repo_with_ci, sticky_of

HOSTILE = "ask @maint2 @acme/everyone — Closes #1, fixes #3 <img src=https://tracker.example/p.png> ![p](u)"
OBSERVED = "**Observed:** the total shows 90.00 EUR and the discount line disappears."
HYPOTHESIS = "`CurrencyStore.switch()` rebuilds the cart from the product prices"


def hostile_bug() -> str:
    body = BUG.replace(OBSERVED, f"{OBSERVED}\n{HOSTILE}")
    body = body.replace("4. Look at the cart total.", f"4. Look at the cart total. {HOSTILE}")
    body = body.replace(HYPOTHESIS, f"{HYPOTHESIS} (Resolves #2, cc @maint2)")
    assert body.count(HOSTILE) == 2 and "Resolves #2" in body
    return body


def acting(text: str) -> dict[str, list[str]]:
    """What in ``text`` acts and comes from the hostile text: Steward's own mentions are of real logins, and
    its only reference is to the bug it fixes (#4, "Bugfix for #4: <title>", which closes nothing)."""
    found = live_parts(text)
    return {
        "mention": [m for m in found["mention"] if m.lower() in ("@maint2", "@acme/everyone")],
        "closing": [c for c in found["closing"] if not c.endswith("#4")],
        "image": found["image"],
        "html": re.findall(r"<img", text, re.IGNORECASE),
    }


def assert_inert(where: str, text: str) -> None:
    acts = {kind: found for kind, found in acting(text).items() if found}
    assert not acts, f"{where}: {acts}"


def test_merging_the_bugfix_closes_nothing_the_text_named_and_mentions_nobody(steward: Steward) -> None:
    repo = repo_with_ci(steward)
    for n in (1, 2, 3):
        assert int(steward.maintainer.open_issue(repo, f"unrelated {n}", "")) == n
    number, pr, _branch, _red = opened(steward, repo, hostile_bug())
    assert number == 4
    made: dict[str, Any] = pull(steward, repo, pr)
    assert "@\u2060maint2" in made["body"], "the hostile text is quoted, inertly"
    assert_inert("pull request body", made["body"])
    assert_inert("pull request title", made["title"])
    for commit in pr_commits(steward, repo, pr):
        assert_inert("commit message", commit["commit"]["message"])

    steward.maintainer.merge_pull(repo, pr)
    steward.settle()
    # Merged without its proof (no CI was played): Steward leaves the bug open (issue 24 §6), and nothing the
    # bug's text or Steward's own title says closes it either.
    assert steward.maintainer.issue(repo, number)["state"] == "open"
    assert "bugfix:merged-unproven" in steward.maintainer.labels_of(repo, number)
    states = {n: steward.maintainer.issue(repo, n)["state"] for n in (1, 2, 3)}
    assert states == {1: "open", 2: "open", 3: "open"}, "the outsider's closing keywords did nothing"
    summary = sticky_of(steward, repo, number, "bugfix-summary")
    assert summary is not None and "@\u2060acme/everyone" in summary["body"]
    for comment in steward.bot_comments(repo, number) + steward.bot_comments(repo, pr):
        assert_inert(f"comment {comment['id']}", comment["body"])


def test_the_forks_table_quotes_a_fork_s_text_inertly(steward: Steward) -> None:
    repo = steward.new_repo()
    body = f"What we store.\n\n## Open forks\n\n- [ ] F1: {HOSTILE}\n- [ ] F2: REST or gRPC?\n"
    number = steward.outsider.open_issue(repo, "Storage", body)
    steward.settle()
    [table] = [c["body"] for c in steward.bot_comments(repo, number) if "steward:forks:" in c["body"]]
    assert "@\u2060maint2" in table and "| **F1** |" in table, "the question is shown"
    assert_inert("forks table", table)


def test_the_onboarding_preview_quotes_the_newest_bug_s_title_inertly(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo(configured=False)  # the onboarding pull request is for an unconfigured repository
    m.open_issue(repo, f"App crashes on start — {HOSTILE}", "It crashes when I open it.", labels=["bug"])
    here = m.open_issue(repo, "Set Steward up")
    m.comment(repo, here, "/steward init")
    steward.settle()
    [pull] = [
        p for p in m.call("GET", f"/repos/{repo}/pulls?state=all") if p["head"]["ref"] == "steward/configure"
    ]
    assert "App crashes on start — ask @\u2060maint2" in pull["body"]
    assert_inert("onboarding pull request", pull["body"])


def test_a_command_s_error_reply_quotes_its_arguments_inertly(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "A bug", "text")
    steward.maintainer.comment(repo, number, "/steward bugfix `@maint2")
    steward.settle()
    [reply] = [c["body"] for c in steward.bot_comments(repo, number) if "steward:reply:" in c["body"]]
    assert "@maintainer" in reply and "understand" in reply and "@\u2060maint2" in reply
    assert_inert("error reply", reply)
