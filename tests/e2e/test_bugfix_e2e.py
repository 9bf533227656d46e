"""Regression-first bugfix branches end to end, on both forges, CI played through the sandbox (issue 13):
`/bugfix`'s refusals; an accepted run (branch, one test-only commit, draft pull request, issue link and
label);
`--trust-test` with a right and a stale digest; a repeated run and a re-run after a job killed between writes
writing nothing new; the `steward/regression-first` status through the whole sequence and each failure; the
review ledger's budget; merging closes the bug with the summary."""

from __future__ import annotations

import base64
import re
from typing import Any

import pytest

from handlers.bugfix.regression_slot import code_digest
from tests.bugfix.bodies import APPROVED, BUG, TEST_CODE, as_issue_form, python_slot, with_slot
from tests.e2e.conftest import Steward
from tests.e2e.stack import SECRET

CONTEXT = "steward/regression-first"
BRANCH_RE = re.compile(r"bugfix/\d+-[a-z0-9-]+")
TITLE = "Cart total ignores the discount code after the currency is switched"


def repo_with_ci(steward: Steward) -> str:
    repo = steward.new_repo()
    if steward.forge == "gitea":
        # Current Gitea sends `status` webhooks (services/webhook/notifier.go): subscribe to them.
        config = {"url": f"{steward.receiver.url}/webhooks/gitea", "content_type": "json", "secret": SECRET}
        steward.maintainer.call(
            "POST",
            f"/repos/{repo}/hooks",
            {"type": "gitea", "config": config, "events": ["status"], "active": True},
        )
    return repo


CART_TOTAL = "".join(f"# total line {i}\n" for i in range(1, 42)) + "    return rebuild(prices)\n# end\n"
HYPOTHESIS = "/hypothesis Switch drops the code: src/cart/total.py:42 recomputes the total, no discount"
CONFIRM = "/confirm H1 the trace shows src/cart/total.py:42 rebuilding the cart from the price list only"


def refined_bug(
    steward: Steward, repo: str, body: str = BUG, *, by: str = "maintainer", investigate: bool = True
) -> int:
    """A bug labelled for refinement and, when ``investigate``, with its root cause evidenced on the
    hypotheses board (H1 confirmed with a `path:line`), as `/bugfix` requires."""
    user = getattr(steward, by)
    number = int(user.open_issue(repo, TITLE, body))
    steward.maintainer.add_labels(repo, number, ["refine"])
    steward.settle()
    # The confirmation's evidence must point at code the repository has (`src/cart/total.py:42`).
    if steward.maintainer.file_sha(repo, "src/cart/total.py") is None:
        steward.maintainer.put_file(repo, "src/cart/total.py", CART_TOTAL)
    if investigate:
        steward.maintainer.comment(repo, number, HYPOTHESIS)
        steward.settle()
        steward.maintainer.comment(repo, number, CONFIRM)
        steward.settle()
    return number


def run(steward: Steward, repo: str, number: int, text: str, *, by: str = "maintainer") -> str:
    """Write a command as ``by`` and return Steward's reply to it."""
    user = getattr(steward, by)
    comment_id = user.comment(repo, number, text)
    steward.settle()
    return reply_to(steward, repo, number, comment_id)


def reply_to(steward: Steward, repo: str, number: int, comment_id: int) -> str:
    found = [
        c["body"] for c in steward.bot_comments(repo, number) if f"steward:reply:{comment_id}-" in c["body"]
    ]
    assert found, f"no reply to comment {comment_id}"
    return str(found[-1])


def sticky_of(steward: Steward, repo: str, number: int, kind: str) -> dict[str, Any] | None:
    found = [c for c in steward.bot_comments(repo, number) if f"<!-- steward:{kind}:" in c["body"]]
    assert len(found) <= 1, f"{len(found)} {kind} comments"
    return found[0] if found else None


def pulls(steward: Steward, repo: str, state: str = "all") -> list[dict[str, Any]]:
    return list(steward.maintainer.call("GET", f"/repos/{repo}/pulls?state={state}"))


def pull(steward: Steward, repo: str, number: int) -> dict[str, Any]:
    return dict(steward.maintainer.call("GET", f"/repos/{repo}/pulls/{number}"))


def pr_commits(steward: Steward, repo: str, number: int) -> list[dict[str, Any]]:
    return list(steward.maintainer.call("GET", f"/repos/{repo}/pulls/{number}/commits"))


def branches(steward: Steward, repo: str) -> list[str]:
    state = steward.maintainer.call("GET", f"{steward.sandbox.url}/_sandbox/state")
    refs = state["repos"][repo.lower()]["refs"]
    return sorted(r.removeprefix("refs/heads/") for r in refs if r.startswith("refs/heads/"))


def status(steward: Steward, repo: str, sha: str) -> tuple[str, str] | None:
    mine = [s for s in steward.maintainer.statuses(repo, sha) if s["context"] == CONTEXT]
    return (mine[0].get("state") or mine[0]["status"], mine[0]["description"]) if mine else None


def play_ci(
    steward: Steward, repo: str, sha: str, outcome: str, context: str = "ci/test", says: str = ""
) -> None:
    """CI reports on ``sha``: a check run on GitHub (``says``: its output's summary), a commit status on
    Gitea (``says``: its description)."""
    kind = "check_run" if steward.forge == "github" else "status"
    key = "conclusion" if kind == "check_run" else "state"
    body = {"repo": repo, "sha": sha, "kind": kind, "context": context, key: outcome}
    if says:
        body["summary" if kind == "check_run" else "description"] = says
    steward.maintainer.client.post(f"{steward.sandbox.url}/_sandbox/ci", json=body).raise_for_status()
    steward.settle()


def file_text(steward: Steward, repo: str, path: str, ref: str) -> str | None:
    response = steward.maintainer.client.get(f"/repos/{repo}/contents/{path}", params={"ref": ref})
    if response.status_code != 200:
        return None
    return base64.b64decode(response.json()["content"]).decode()


# --- /bugfix ------------------------------------------------------------------------------------------------


def test_refusals_each_with_its_code_and_what_to_do(steward: Steward) -> None:
    repo = repo_with_ci(steward)
    unrefined = int(steward.maintainer.open_issue(repo, TITLE, BUG))
    steward.settle()
    reply = run(steward, repo, unrefined, "/bugfix")
    assert "BUG_NOT_REFINED" in reply and "/steward refine" in reply

    no_test = refined_bug(steward, repo, APPROVED)
    reply = run(steward, repo, no_test, "/bugfix")
    assert "REGRESSION_TEST_MISSING" in reply and "```ts" in reply, "an example in the path's language"

    not_a_test = refined_bug(steward, repo, python_slot(path="src/cart_check.py"))
    reply = run(steward, repo, not_a_test, "/bugfix")
    assert "REGRESSION_PATH_NOT_A_TEST" in reply and "`bugfix.test_globs`" in reply

    refined = refined_bug(steward, repo)
    reply = run(steward, repo, refined, "/bugfix", by="outsider")
    assert "can only be run by" in reply, "write access or more"
    assert branches(steward, repo) == ["main"] and pulls(steward, repo) == []

    taken = f"bugfix/{refined}-cart-total-ignores-the-discount-code"
    steward.maintainer.create_branch(repo, taken)
    reply = run(steward, repo, refined, "/bugfix")
    assert f"a branch `{taken}` exists already and is not a bugfix branch Steward opened" in reply
    assert pulls(steward, repo) == []


def test_no_branch_while_a_fork_is_open_or_the_root_cause_is_not_evidenced(steward: Steward) -> None:
    repo = repo_with_ci(steward)
    body = BUG + "\n## Open forks\n\n- [ ] F1: Round the discount before or after the conversion?\n"
    number = refined_bug(steward, repo, body, investigate=False)
    reply = run(steward, repo, number, "/bugfix")
    assert "FORKS_OPEN" in reply and "`F1`" in reply
    assert "ROOT_CAUSE_NOT_EVIDENCED" in reply
    assert branches(steward, repo) == ["main"] and pulls(steward, repo) == []

    for text in ("/decide F1 after the conversion", HYPOTHESIS):
        steward.maintainer.comment(repo, number, text)
        steward.settle()
    reply = run(steward, repo, number, "/bugfix")
    assert "FORKS_OPEN" not in reply and "ROOT_CAUSE_NOT_EVIDENCED" in reply, "H1 is only pending"
    assert pulls(steward, repo) == []

    steward.maintainer.comment(repo, number, CONFIRM)
    steward.settle()
    steward.maintainer.comment(repo, number, "/bugfix")
    steward.settle()
    opened_pulls = pulls(steward, repo)
    assert len(opened_pulls) == 1 and BRANCH_RE.fullmatch(opened_pulls[0]["head"]["ref"])
    assert "src/cart/total.py:42" in opened_pulls[0]["body"], "the PR quotes the confirmed hypothesis"


def test_bugfix_opens_a_branch_with_one_test_only_commit_and_a_draft_pull_request(steward: Steward) -> None:
    repo = repo_with_ci(steward)
    steward.maintainer.put_file(repo, "tests/test_currency_switch.py", "def test_old():\n    assert True\n")
    number = refined_bug(steward, repo)
    before_bugfix = len(steward.bot_comments(repo, number))
    command = steward.maintainer.comment(repo, number, "/bugfix")
    steward.settle()
    # One comment, not two near-identical ones: the record says what was opened and what comes next.
    new = steward.bot_comments(repo, number)[before_bugfix:]
    assert len(new) == 1 and "**Bugfix in progress:**" in new[0]["body"], new
    assert "+1" in steward.maintainer.reactions(repo, command)

    [branch] = [b for b in branches(steward, repo) if b != "main"]
    assert branch == "bugfix/" + str(number) + "-cart-total-ignores-the-discount-code"
    [pr] = pulls(steward, repo)
    expected_title = f"Bugfix for #{number}: {TITLE}"
    if steward.forge == "gitea":
        assert pr["title"] == "WIP: " + expected_title
    else:
        assert pr["title"] == expected_title and pr["draft"] is True
    assert f"#{number}" in pr["body"] and "Observed" in pr["body"]
    assert "src/cart/total.py:42" in pr["body"], "the PR quotes the confirmed hypothesis"
    [red] = pr_commits(steward, repo, pr["number"])
    message = red["commit"]["message"]
    assert message.startswith(f"test: regression test for #{number} (red)") and f"Refs #{number}" in message
    assert "H1: Switch drops the code" in message, "the confirmed root-cause hypothesis"
    text = file_text(steward, repo, "tests/test_currency_switch.py", branch)
    assert text is not None and text.startswith("def test_old():") and text.endswith(TEST_CODE), "appended"

    record = sticky_of(steward, repo, number, "bugfix")
    assert record is not None and branch in record["body"] and f"#{pr['number']}" in record["body"]
    assert "bugfix:open" in steward.maintainer.labels_of(repo, number)
    assert status(steward, repo, red["sha"])[0] == "pending"  # type: ignore[index]

    # Again: nothing new.
    before = (branches(steward, repo), pulls(steward, repo), pr_commits(steward, repo, pr["number"]))
    steward.clear_requests()
    reply = run(steward, repo, number, "/steward bugfix")
    assert "exist already: nothing new was written" in reply
    assert (branches(steward, repo), pulls(steward, repo), pr_commits(steward, repo, pr["number"])) == before
    writes = [r for r in steward.bot_requests(repo) if r["method"] in ("POST", "PUT", "PATCH", "DELETE")]
    assert all("/comments" in r["path"] or "/reactions" in r["path"] for r in writes), writes


def test_a_bug_filed_through_the_issue_form_gets_its_pull_request_with_observed_and_expected(
    steward: Steward,
) -> None:
    """Issue 37 §3: the form writes each section as a `###` field; /bugfix read the raw body and wrote
    "Observed vs expected _(see the bug)_" (and found no regression slot), though refinement had read both."""
    repo = repo_with_ci(steward)
    number = refined_bug(steward, repo, as_issue_form(BUG))
    assert "refinement:approved" in steward.maintainer.labels_of(repo, number)
    steward.maintainer.comment(repo, number, "/bugfix")
    steward.settle()
    [pr] = pulls(steward, repo)
    observed = pr["body"].split("### Observed vs expected", 1)[1].split("###", 1)[0]
    assert (
        "**Observed:** the total shows 90.00 EUR" in observed
        and "**Expected:** the total shows 76.50" in observed
    )
    [red] = pr_commits(steward, repo, pr["number"])
    assert file_text(steward, repo, "tests/test_currency_switch.py", red["sha"]) == TEST_CODE


OBSERVED_LINE = "**Observed:** the total shows 90.00 EUR and the discount line disappears.\n"


def test_what_happened_answered_only_in_a_comment_is_in_the_pull_request(steward: Steward) -> None:
    """Issue 34 §1: the bugfix pull request reads the bug as its verdict read it. The report gives what was
    expected but not what happened; its reporter answers that in a comment, the verdict reads the answer and
    approves. Before: the pull request read the description alone, and its "Observed vs expected" had the
    expectation only — the answer the verdict approved on never reached it."""
    repo = repo_with_ci(steward)
    assert OBSERVED_LINE in BUG
    number = refined_bug(steward, repo, BUG.replace(OBSERVED_LINE, ""), investigate=False)
    assert "refinement:needs-info" in steward.maintainer.labels_of(repo, number), "what happened is asked"
    answer = steward.maintainer.comment(
        repo, number, "Sorry, forgot that.\n\nActual behaviour: the total shows 90.00 EUR, no discount line."
    )
    steward.settle()
    assert "refinement:approved" in steward.maintainer.labels_of(repo, number)
    for command in (HYPOTHESIS, CONFIRM, "/bugfix"):
        steward.maintainer.comment(repo, number, command)
        steward.settle()
    [pr] = pulls(steward, repo)
    observed = pr["body"].split("### Observed vs expected", 1)[1].split("###", 1)[0]
    assert "**Observed:** the total shows 90.00 EUR, no discount line." in observed, observed
    assert "**Expected:** the total shows 76.50 EUR and the discount line is kept." in observed
    assert "comment](" in observed and f"#issuecomment-{answer})" in observed, "linked to the answer"
    assert "Sorry, forgot that" not in observed, "the answer, not the whole comment"


@pytest.mark.parametrize("steward", ["github"], indirect=True)  # Gitea's drafts are a title prefix already
def test_without_draft_pull_requests_the_title_says_wip(steward: Steward) -> None:
    """GitHub refuses drafts where the plan has none (FORGE-FACTS "Draft PRs"): a `[WIP] ` title instead."""
    repo = repo_with_ci(steward)
    steward.maintainer.client.patch(f"{steward.sandbox.url}/_sandbox/repos/{repo}", json={"drafts": False})
    number = refined_bug(steward, repo)
    steward.maintainer.comment(repo, number, "/bugfix")
    steward.settle()
    [pr] = pulls(steward, repo)
    assert pr["title"] == f"[WIP] Bugfix for #{number}: {TITLE}" and pr["draft"] is False


SLOT_PATH = "tests/test_currency_switch.py"
# Another test with the same case name: what an outsider swaps in after the refusal showed the first one.
SWAPPED = "def test_discount_survives_currency_switch():\n    import os\n    assert os.environ\n"


def test_an_outsider_s_test_is_committed_only_as_it_was_shown_and_vouched_for(steward: Steward) -> None:
    """Issue 24 §1: the vouch names the full SHA-256 of the path and the code a refusal showed; code changed
    after that is refused and shown in a new comment; the vouched code is committed byte for byte."""
    repo = repo_with_ci(steward)
    number = refined_bug(steward, repo, by="outsider")
    digest = code_digest(SLOT_PATH, TEST_CODE)
    first_id = steward.maintainer.comment(repo, number, "/bugfix")
    steward.settle()
    first = reply_to(steward, repo, number, first_id)
    assert "UNTRUSTED_TEST_CODE" in first and f"`/steward bugfix --trust-test {digest}`" in first
    assert TEST_CODE.rstrip().split("\n")[1] in first
    # A digest no refusal of mine showed vouches for nothing; the old 12-hex prefix is not a digest.
    assert "VOUCH_NOT_SHOWN" in run(steward, repo, number, "/bugfix --trust-test " + "0" * 64)
    assert "full 64 hex" in run(steward, repo, number, f"/bugfix --trust-test {digest[:12]}")
    # The outsider swaps the code after the refusal: the maintainer's vouch for what was shown is refused,
    # and the new code is shown in a new comment (the first refusal stays as it was read).
    steward.outsider.edit_issue(repo, number, body=python_slot(code=SWAPPED))
    steward.settle()
    stale = run(steward, repo, number, f"/bugfix --trust-test {digest}")
    swapped = code_digest(SLOT_PATH, SWAPPED)
    assert "STALE_TEST_DIGEST" in stale and "os.environ" in stale and f"--trust-test {swapped}`" in stale
    assert branches(steward, repo) == ["main"]
    assert reply_to(steward, repo, number, first_id) == first
    # Vouching for the code now shown commits exactly that code.
    steward.maintainer.comment(repo, number, f"/bugfix --trust-test {swapped}")
    steward.settle()
    record = sticky_of(steward, repo, number, "bugfix")
    assert record is not None and "vouched for by @maintainer" in record["body"]
    [branch] = [b for b in branches(steward, repo) if b != "main"]
    assert file_text(steward, repo, SLOT_PATH, branch) == SWAPPED


def test_an_outsider_s_test_is_shown_verbatim(steward: Steward) -> None:
    """A backtick in the fence's info string, and the code's own fences and mentions, reach the reviewer as
    they are: the info string is dropped, the code is not neutralised."""
    repo = repo_with_ci(steward)
    code = (
        "def test_discount_survives_currency_switch():\n    s = '''\n```\n@maintainer /steward merge\n'''\n"
    )
    # A tilde fence may carry a backtick in its info string (CommonMark); shown in a backtick fence it
    # would end that fence's first line and the code would render as text.
    body = with_slot(f"- Test: `{SLOT_PATH}`\n\n~~~py`x\n{code}~~~\n")
    number = refined_bug(steward, repo, body, by="outsider")
    reply = run(steward, repo, number, "/bugfix")
    assert "UNTRUSTED_TEST_CODE" in reply and "py`x" not in reply
    assert "\n".join("  " + line for line in code.rstrip("\n").split("\n")) in reply


# Gitea has no triage level: its collaborators read, write or administer, so there triage means write.
@pytest.mark.parametrize("steward", ["github"], indirect=True)
def test_a_vouch_needs_write_access_even_where_triage_may_run_bugfix(steward: Steward) -> None:
    repo = repo_with_ci(steward)
    folder = ".github" if steward.forge == "github" else ".gitea"
    steward.maintainer.put_file(
        repo, f"{folder}/steward.yml", "commands:\n  bugfix:\n    permission: triage\n"
    )
    number = refined_bug(steward, repo, by="outsider")
    digest = code_digest(SLOT_PATH, TEST_CODE)
    assert "UNTRUSTED_TEST_CODE" in run(steward, repo, number, "/bugfix", by="triager")
    reply = run(steward, repo, number, f"/bugfix --trust-test {digest}", by="triager")
    assert "VOUCHER_CANNOT_WRITE" in reply and branches(steward, repo) == ["main"]


# Two runs of the failing job, not five: each later try only waits its backoff (1, 2, 4, 8 s) and fails the
# same way before the job is parked.
@pytest.mark.settings(job_tries=2)
def test_a_run_killed_between_its_writes_is_finished_by_the_next_without_duplicates(steward: Steward) -> None:
    repo = repo_with_ci(steward)
    number = refined_bug(steward, repo)
    # The forge fails every try to open the pull request: the job dies after the branch and its commit.
    fault = {
        "method": "POST",
        "path": rf"/repos/{repo}/pulls$",
        "status": 502,
        "times": 200,
        "login": "steward-bot",
    }
    steward.faults(fault)
    steward.maintainer.comment(repo, number, "/bugfix")
    steward.settle(timeout=60)
    steward.maintainer.client.delete(f"{steward.sandbox.url}/_sandbox/faults")
    assert pulls(steward, repo) == [] and len(branches(steward, repo)) == 2
    # The pull request is made but its answer is lost (the connection drops): the next run finds it.
    steward.faults({**fault, "times": 1, "apply": True, "drop": True})
    reply = run(steward, repo, number, "/bugfix")
    assert "I opened the draft pull request" in reply, reply
    assert len([b for b in branches(steward, repo) if b != "main"]) == 1
    assert len(pulls(steward, repo)) == 1
    [pr] = pulls(steward, repo)
    assert len(pr_commits(steward, repo, pr["number"])) == 1
    assert sticky_of(steward, repo, number, "bugfix") is not None


# --- the status and the review ledger -----------------------------------------------------------------------


def opened(
    steward: Steward, repo: str, body: str = BUG, *, by: str = "maintainer"
) -> tuple[int, int, str, str]:
    """A refined bug with its bugfix branch opened: (bug, pull request, branch, red commit)."""
    number = refined_bug(steward, repo, body, by=by)
    steward.maintainer.comment(repo, number, "/bugfix")
    steward.settle()
    [pr] = pulls(steward, repo, "open")
    [red] = pr_commits(steward, repo, pr["number"])
    return number, int(pr["number"]), str(pr["head"]["ref"]), str(red["sha"])


def head_of(steward: Steward, repo: str, pr: int) -> str:
    return str(pull(steward, repo, pr)["head"]["sha"])


def state_of(steward: Steward, repo: str, pr: int) -> tuple[str, str]:
    found = status(steward, repo, head_of(steward, repo, pr))
    assert found is not None, "no regression-first status on the head"
    return found


def push(steward: Steward, repo: str, branch: str, path: str, text: str) -> str:
    sha = steward.maintainer.put_file(repo, path, text, branch=branch)
    steward.settle()
    return sha


FIX = "def total_after_switch():\n    return 76.5\n"
CASE = "test_discount_survives_currency_switch"
RED_SAYS = f"FAILED tests/test_currency_switch.py::{CASE} - assert 100.0 == 76.5"
FINDINGS = "/review findings\nF1 high src/cart.py:1 the rate is hard-coded\nF2 low src/cart.py:2 naming"


def test_the_status_through_the_whole_sequence_then_merge_closes_the_bug(steward: Steward) -> None:
    repo = repo_with_ci(steward)
    steward.maintainer.add_collaborator(repo, "outsider", "push")
    number, pr, branch, red = opened(steward, repo)
    assert state_of(steward, repo, pr) == (
        "pending",
        "no CI reported on the first commit — is CI set up for this branch?",
    )

    # Issue 24 §2: a failure that names no test is not yet red proof; a writer confirms it from CI's log.
    play_ci(steward, repo, red, "failure")
    assert state_of(steward, repo, pr) == ("pending", "red, but CI did not say which test failed")
    reply = run(steward, repo, pr, "/red-proof ok")
    assert f"@maintainer confirmed that CI's failure on the first commit `{red[:10]}`" in reply
    assert state_of(steward, repo, pr) == ("pending", "awaiting the fix: push a commit that changes the code")

    fix = push(steward, repo, branch, "src/cart/total.py", FIX)
    assert head_of(steward, repo, pr) == fix
    assert state_of(steward, repo, pr)[1].startswith("awaiting green CI on the head")
    play_ci(steward, repo, fix, "success")
    assert state_of(steward, repo, pr)[1].startswith("awaiting a review round on the head")

    reply = run(steward, repo, pr, "/review clean")
    assert "REVIEWER_COMMITTED" in reply, "whoever fixes does not judge the fix"
    reply = run(steward, repo, pr, FINDINGS, by="outsider")
    assert "Recorded review round 1 of 5" in reply and "findings" in reply
    assert state_of(steward, repo, pr) == ("pending", "awaiting dispositions of F1, F2")
    reply = run(steward, repo, pr, "/review clean", by="outsider")
    assert "DISPOSITIONS_MISSING" in reply
    reply = run(steward, repo, pr, "/disposition F1 low it is fine")
    assert "SEVERITY_LOWERED" in reply
    run(steward, repo, pr, "/disposition F1 fix read the rate from the store")
    run(steward, repo, pr, "/disposition F2 low cosmetic, left for later")
    assert state_of(steward, repo, pr) == ("pending", "awaiting the fix of F1: push a new head")
    reply = run(steward, repo, pr, "/review clean", by="outsider")
    assert "SAME_HEAD_REVIEWED" in reply, "the same head is never reviewed twice"

    second = push(steward, repo, branch, "src/cart/total.py", FIX + "RATE = 0.9\n")
    play_ci(steward, repo, second, "success")
    reply = run(steward, repo, pr, "/review clean", by="outsider")
    assert "Recorded review round 2 of 5" in reply
    silent = (
        "proof in order, review clean, with accepted residuals; CI did not report the regression test's "
        "result at the head"
    )
    assert state_of(steward, repo, pr) == ("success", silent)
    play_ci(steward, repo, second, "success", says=f"{CASE} PASSED")
    assert state_of(steward, repo, pr) == ("success", "proof in order, review clean, with accepted residuals")

    ledger = sticky_of(steward, repo, pr, "bugfix-ledger")
    assert ledger is not None and "review rounds 2/5" in ledger["body"] and "fix cycles 1/4" in ledger["body"]
    statuses = [s for s in steward.maintainer.statuses(repo, second) if s["context"] == CONTEXT]
    assert statuses[0]["target_url"].endswith(f"#issuecomment-{ledger['id']}"), "the status links the ledger"

    steward.maintainer.merge_pull(repo, pr)
    steward.settle()
    bug = steward.maintainer.issue(repo, number)
    assert bug["state"] == "closed"
    labels = steward.maintainer.labels_of(repo, number)
    assert "bugfix:merged" in labels and "bugfix:open" not in labels
    record = sticky_of(steward, repo, number, "bugfix")
    assert record is not None and f"**Fixed** in #{pr} (merged)" in record["body"]
    assert "what is missing next" not in record["body"], "once merged, the record says it is done, no more"
    reply = run(steward, repo, number, "/bugfix")
    assert f"merged already in #{pr}" in reply
    summary = sticky_of(steward, repo, number, "bugfix-summary")
    assert summary is not None
    parts = ("### Reproduction", "### Root cause", "### Regression test", "### Review", "### Verification",
             "2 rounds; completion **CLEAN_WITH_RESIDUALS** — the review is complete; the findings not fixed "
             "were accepted", "### Accepted residuals", "cosmetic, left for later")  # fmt: skip
    for part in parts:
        assert part in summary["body"], part


def test_a_green_first_commit_fails_until_a_maintainer_discloses_the_gap(steward: Steward) -> None:
    repo = repo_with_ci(steward)
    number, pr, _, red = opened(steward, repo)
    play_ci(steward, repo, red, "success")
    assert state_of(steward, repo, pr) == (
        "failure",
        "the test passes before the fix — it does not reproduce the bug",
    )
    reply = run(steward, repo, pr, "/accept-gap the race needs two browsers; CI has one", by="triager")
    assert "can only be run by" in reply
    run(steward, repo, pr, "/accept-gap the race needs two browsers; CI has one")
    assert "bugfix:disclosed-gap" in steward.maintainer.labels_of(repo, number)
    assert state_of(steward, repo, pr)[1].startswith("awaiting the fix")


def test_inconclusive_ci_on_the_red_commit_asks_for_a_rerun(steward: Steward) -> None:
    repo = repo_with_ci(steward)
    _, pr, _, red = opened(steward, repo)
    play_ci(steward, repo, red, "cancelled" if steward.forge == "github" else "error")
    assert state_of(steward, repo, pr) == (
        "pending",
        "awaiting red proof: CI on the first commit is inconclusive: re-run CI on it",
    )


def test_a_removed_test_case_and_too_many_commits_fail(steward: Steward) -> None:
    repo = repo_with_ci(steward)
    _, pr, branch, red = opened(steward, repo)
    play_ci(steward, repo, red, "failure", says=RED_SAYS)
    push(steward, repo, branch, "src/cart/total.py", FIX)
    push(steward, repo, branch, "tests/test_currency_switch.py", "def test_other():\n    assert True\n")
    state, description = state_of(steward, repo, pr)
    assert state == "failure" and "removes test cases: test_discount_survives_currency_switch" in description
    push(
        steward, repo, branch, "tests/test_currency_switch.py", TEST_CODE + "\n\ndef test_more():\n    pass\n"
    )
    assert (
        state_of(steward, repo, pr)[0] == "failure"
        and "3 commits follow the red one" in state_of(steward, repo, pr)[1]
    )


@pytest.mark.parametrize("steward", ["github"], indirect=True)  # Gitea's API cannot rewrite history
def test_a_red_commit_that_touches_code_fails(steward: Steward) -> None:
    """A force-push that makes the first commit carry code (GitHub's git data API; Gitea has no API that
    rewrites a branch's history)."""
    repo = repo_with_ci(steward)
    _, pr, branch, red = opened(steward, repo)
    m = steward.maintainer
    base = m.call("GET", f"/repos/{repo}/git/commits/{red}")
    blob = m.call("POST", f"/repos/{repo}/git/blobs", {"content": FIX, "encoding": "utf-8"})
    tree = m.call(
        "POST",
        f"/repos/{repo}/git/trees",
        {
            "base_tree": base["tree"]["sha"],
            "tree": [{"path": "src/cart.py", "mode": "100644", "type": "blob", "sha": blob["sha"]}],
        },
    )
    parent = base["parents"][0]["sha"]
    commit = m.call(
        "POST",
        f"/repos/{repo}/git/commits",
        {"message": "test + fix", "tree": tree["sha"], "parents": [parent]},
    )
    m.call("PATCH", f"/repos/{repo}/git/refs/heads/{branch}", {"sha": commit["sha"], "force": True})
    steward.settle()
    state, description = state_of(steward, repo, pr)
    assert (
        state == "failure"
        and description.startswith("the first commit must change only tests")
        and "src/cart.py" in description
    )


@pytest.mark.handler_settings(bugfix={"budgets": {"review_rounds": 1}})
def test_an_exhausted_budget_fails_and_a_new_pull_request_does_not_reset_it(steward: Steward) -> None:
    repo = repo_with_ci(steward)
    steward.maintainer.add_collaborator(repo, "outsider", "push")
    number, pr, branch, red = opened(
        steward, repo, by="triager" if steward.forge == "gitea" else "maintainer"
    )
    steward.maintainer.call("PATCH", f"/repos/{repo}/issues/{pr}", {"assignees": ["maintainer"]})
    play_ci(steward, repo, red, "failure", says=RED_SAYS)
    fix = push(steward, repo, branch, "src/cart/total.py", FIX)
    play_ci(steward, repo, fix, "success")
    run(steward, repo, pr, FINDINGS, by="outsider")
    assert state_of(steward, repo, pr) == (
        "failure",
        "the review budget is exhausted: a person must decide how this bug goes on",
    )
    assert "bugfix:budget-exhausted" in steward.maintainer.labels_of(repo, number)
    note = sticky_of(steward, repo, pr, "bugfix-exhausted")
    assert note is not None and note["body"].startswith("<!--") and "@maintainer" in note["body"]
    author = steward.maintainer.call("GET", f"/repos/{repo}/issues/{number}")["user"]["login"]
    assert f"@{author}" in note["body"], "the bug's author and the pull request's assignee are mentioned"
    assert "must decide" in note["body"]

    # Editing Steward's ledger changes nothing: it is re-derived from the command replies.
    ledger = sticky_of(steward, repo, pr, "bugfix-ledger")
    assert ledger is not None and "review rounds 1/1" in ledger["body"]
    forged = ledger["body"].replace("review rounds 1/1", "review rounds 0/9")
    steward.maintainer.edit_comment(repo, int(ledger["id"]), forged)
    # Nor does deleting the reply that recorded the round: the ledger's data block holds it too.
    [recorded] = [c for c in steward.bot_comments(repo, pr) if "Recorded review round 1" in c["body"]]
    steward.maintainer.call("DELETE", f"/repos/{repo}/issues/comments/{recorded['id']}")
    steward.settle()
    reply = run(steward, repo, pr, "/review clean", by="outsider")
    assert "BUDGET_EXHAUSTED" in reply
    ledger = sticky_of(steward, repo, pr, "bugfix-ledger")
    assert ledger is not None and "review rounds 1/1" in ledger["body"], "re-derived and rewritten"

    # A new pull request for the bug keeps the bug's ledger and budget.
    steward.maintainer.edit_issue(repo, pr, state="closed")
    steward.settle()
    reply = run(steward, repo, number, "/bugfix")
    assert "I opened the draft pull request" in reply
    [again] = pulls(steward, repo, "open")
    assert again["number"] != pr
    assert state_of(steward, repo, int(again["number"]))[0] == "failure"
    reply = run(steward, repo, int(again["number"]), "/review clean", by="outsider")
    assert "BUDGET_EXHAUSTED" in reply

    # Deleting every one of Steward's comments on both pull requests resets nothing either (issue 24 §5):
    # the bug keeps a signed copy of the ledger's events and budgets.
    assert sticky_of(steward, repo, number, "bugfix-ledger") is not None
    for where in (pr, int(again["number"])):
        for comment in steward.bot_comments(repo, where):
            steward.maintainer.call("DELETE", f"/repos/{repo}/issues/comments/{comment['id']}")
    steward.settle()
    reply = run(steward, repo, int(again["number"]), "/review clean", by="outsider")
    assert "BUDGET_EXHAUSTED" in reply


def test_without_status_webhooks_the_periodic_job_notices_ci(steward: Steward) -> None:
    """Gitea and Forgejo versions that send no `status` webhook: the one-minute job looks (run here at once).
    On GitHub, `steward reconcile` does the same catch-up."""
    repo = steward.new_repo()  # its hook does not subscribe to `status`
    _, pr, _, red = opened(steward, repo)
    body = {"repo": repo, "sha": red, "kind": "status", "context": "ci/test", "state": "failure"}
    body["description"] = RED_SAYS
    steward.maintainer.client.post(f"{steward.sandbox.url}/_sandbox/ci", json=body).raise_for_status()
    steward.settle()
    if steward.forge == "github":
        assert state_of(steward, repo, pr)[1].startswith("awaiting the fix"), "GitHub sends `status`"
        return
    assert state_of(steward, repo, pr)[1].startswith("no CI reported on the first commit"), "no webhook came"
    steward.run_periodic("bugfix-ci")
    steward.settle()
    assert state_of(steward, repo, pr)[1].startswith("awaiting the fix")


def test_a_fork_s_branch_named_like_the_bug_s_never_joins_the_bug(steward: Steward) -> None:
    """Issue 24 §6: pull requests are matched by head repository id, not branch name."""
    repo = repo_with_ci(steward)
    number, pr, branch, _ = opened(steward, repo)
    name = repo.rsplit("/", 1)[1]
    made = steward.outsider.client.post(f"/repos/{repo}/forks", json={})
    assert made.status_code == 202, made.text
    fork = f"outsider/{name}"
    if branch not in [b["name"] for b in steward.outsider.call("GET", f"/repos/{fork}/branches")]:
        steward.outsider.create_branch(fork, branch)
    steward.outsider.put_file(fork, "src/cart/total.py", FIX, branch=branch)
    opened_fork = steward.outsider.client.post(
        f"/repos/{repo}/pulls", json={"title": "Fix", "head": f"outsider:{branch}", "base": "main"}
    )
    assert opened_fork.status_code == 201, opened_fork.text
    foreign = int(opened_fork.json()["number"])
    steward.settle()
    record = sticky_of(steward, repo, number, "bugfix")
    assert record is not None and f'"pulls":[{pr}]' in record["body"]
    assert status(steward, repo, str(opened_fork.json()["head"]["sha"])) is None
    assert sticky_of(steward, repo, foreign, "bugfix-ledger") is None
    reply = run(steward, repo, foreign, "/review clean")
    assert "not a bugfix branch Steward opened" in reply


def test_a_regression_test_skipped_or_weakened_at_the_head_fails(steward: Steward) -> None:
    """Issue 24 §3, the review's probe: `@pytest.mark.skip` and `assert True` at the head got "success"."""
    repo = repo_with_ci(steward)
    steward.maintainer.add_collaborator(repo, "outsider", "push")
    _, pr, branch, red = opened(steward, repo)
    play_ci(steward, repo, red, "failure", says=RED_SAYS)
    fix = push(steward, repo, branch, "src/cart/total.py", FIX)
    play_ci(steward, repo, fix, "success", says=f"{CASE} PASSED")
    weakened = f"import pytest\n\n\n@pytest.mark.skip\ndef {CASE}():\n    assert True\n"
    head = push(steward, repo, branch, "tests/test_currency_switch.py", weakened)
    play_ci(steward, repo, head, "success")
    assert state_of(steward, repo, pr) == (
        "failure",
        f"the regression test {CASE} is skipped or expected to fail at the head (pytest.mark.skip)",
    )
    ledger = sticky_of(steward, repo, pr, "bugfix-ledger")
    assert ledger is not None and "the fix must make the test pass, not switch it off" in ledger["body"]


def test_merging_without_the_proof_leaves_the_bug_open_as_merged_unproven(steward: Steward) -> None:
    """Issue 24 §6: merging closed the bug with "completion CLEAN" whatever the status said."""
    repo = repo_with_ci(steward)
    number, pr, branch, red = opened(steward, repo)
    play_ci(steward, repo, red, "failure", says=RED_SAYS)
    fix = push(steward, repo, branch, "src/cart/total.py", FIX)
    play_ci(steward, repo, fix, "failure")
    steward.maintainer.merge_pull(repo, pr)
    steward.settle()
    bug = steward.maintainer.issue(repo, number)
    assert bug["state"] == "open"
    labels = steward.maintainer.labels_of(repo, number)
    assert (
        "bugfix:merged-unproven" in labels and "bugfix:merged" not in labels and "bugfix:open" not in labels
    )
    summary = sticky_of(steward, repo, number, "bugfix-summary")
    assert summary is not None
    body = summary["body"]
    assert f"#{pr} was merged without its proof" in body and "CLEAN" not in body
    assert f"`{CONTEXT}` was **pending** at the merged head `{fix[:10]}`" in body
    assert "had not all passed at the merged head (CI: red)" in body
    assert "Budgets used: review rounds 0/5" in body
    # The confirmed hypothesis the branch was opened for, not section 6 of the report.
    assert "src/cart/total.py:42" in body
    record = sticky_of(steward, repo, number, "bugfix")
    assert record is not None and "**Merged without its proof**" in record["body"]


def test_independent_review_leased_to_the_head_stops_on_a_repeated_finding(steward: Steward) -> None:
    """Issue 24 §4: whoever ran `/bugfix` or committed does not review; `/review <sha>` is refused once the
    branch moved; a finding reported again stops the review and says whom to ask."""
    repo = repo_with_ci(steward)
    steward.maintainer.add_collaborator(repo, "outsider", "push")
    steward.maintainer.add_collaborator(repo, "triager", "push")
    number, pr, branch, red = opened(steward, repo)
    play_ci(steward, repo, red, "failure", says=RED_SAYS)
    fix = steward.outsider.put_file(repo, "src/cart/total.py", FIX, branch=branch)
    steward.settle()
    play_ci(steward, repo, fix, "success")
    assert "REVIEWER_COMMITTED" in run(steward, repo, pr, "/review clean"), "whoever ran /bugfix"
    assert "REVIEWER_COMMITTED" in run(steward, repo, pr, "/review clean", by="outsider")
    finding = "F1 high src/cart.py:1 the rate is hard-coded"
    stale = run(steward, repo, pr, f"/review {red[:10]} findings\n{finding}", by="triager")
    assert f"The branch moved after your review: its head is `{fix[:10]}`" in stale
    reply = run(steward, repo, pr, f"/review {fix[:10]} findings\n{finding}", by="triager")
    assert "Recorded review round 1 of 5" in reply
    run(steward, repo, pr, "/disposition F1 fix read the rate from the store")
    second = steward.outsider.put_file(repo, "src/cart/total.py", FIX + "RATE = 0.9\n", branch=branch)
    steward.settle()
    play_ci(steward, repo, second, "success")
    run(steward, repo, pr, f"/review findings\n{finding}", by="triager")
    state, description = state_of(steward, repo, pr)
    assert (state, description) == (
        "failure",
        "the review stopped early: finding F1 at src/cart.py:1 was reported again in round 2 "
        "(first in round 1)",
    )
    ledger = sticky_of(steward, repo, pr, "bugfix-ledger")
    assert ledger is not None and "`debug.escalate_to`" in ledger["body"]
    note = sticky_of(steward, repo, pr, "bugfix-exhausted")
    author = steward.maintainer.issue(repo, number)["user"]["login"]
    assert note is not None and note["body"].split("-->")[-1].lstrip().startswith(f"@{author}")
    assert "stopped early" in note["body"] and "`debug.escalate_to`" in note["body"]
