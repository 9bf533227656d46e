"""Root-cause discipline end to end, on both forges: commands refused on an unrefined bug; hypotheses and
evidence on the board; a confirmation without a location refused and one with a location accepted; the
labels; a replay writing nothing; escalation after three refuted and `/resume-debug` lifting it; an edited or
deleted evidence comment shown as withdrawn; the FIX row of a bugfix pull request and its verification."""

from __future__ import annotations

import asyncio
import json
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
import structlog

import handlers
from bot.commands.context import EventContext
from bot.config.settings import HandlerSettings
from bot.events.event import Event
from bot.forge import RepoRef
from bot.queue.jobs import make_redis
from bot.records import neutralise, sticky
from bot.worker.jobs import build_runtime
from handlers.debug.api import RootCauseAnswer, root_cause
from tests.e2e.conftest import Steward
from tests.e2e.stack import steward_in_process, wait_for

REGISTRY = handlers.build_registry()

APPROVED = (Path(__file__).parent / "data" / "bug-approved.md").read_text()
pytestmark = pytest.mark.handler_settings(debug={"escalate_to": ["triager"]})


# The code the tests' evidence points at: every `path:line` of `/evidence` and `/confirm` must exist.
CACHE_LINE = "return self.store.get(token)  # never evicted on logout, cc @admin"
CODE = {
    "src/auth/cache.py": "\n".join([*(f"# cache line {i}" for i in range(1, 88)), CACHE_LINE, "", "# end"]),
    "src/auth/session.py": "\n".join(f"# session line {i}" for i in range(1, 21)),
}


def repo_with_code(steward: Steward) -> str:
    """A repository whose default branch holds the files the tests' evidence cites (``CODE``)."""
    repo = steward.new_repo()
    for path, text in CODE.items():
        steward.maintainer.put_file(repo, path, text + "\n")
    steward.settle()
    return repo


def refined_bug(steward: Steward, repo: str) -> int:
    labels = ["bug", "refine"]
    number = steward.maintainer.open_issue(repo, "Session survives logout", APPROVED, labels=labels)
    steward.settle()
    assert "refinement:approved" in steward.maintainer.labels_of(repo, number)
    return number


def board(steward: Steward, repo: str, number: int) -> dict[str, Any]:
    [found] = [c for c in steward.bot_comments(repo, number) if "<!-- steward:debug-board:" in c["body"]]
    return found


def replies(steward: Steward, repo: str, number: int) -> list[str]:
    return [str(c["body"]) for c in steward.bot_comments(repo, number) if "<!-- steward:reply:" in c["body"]]


def escalations(steward: Steward, repo: str, number: int) -> list[str]:
    mine = steward.bot_comments(repo, number)
    return [str(c["body"]) for c in mine if "steward:debug-escalation:" in c["body"]]


def debug_labels(steward: Steward, repo: str, number: int) -> list[str]:
    labels = steward.maintainer.labels_of(repo, number)
    return [label for label in labels if label.startswith("debug:") or label == "needs-human"]


def ask(steward: Steward, repo: str, number: int, chosen: str | None = None) -> RootCauseAnswer:
    """What `/bugfix` would be told (``handlers.debug.api.root_cause``), through the real adapter."""

    async def run() -> RootCauseAnswer:
        redis = make_redis(steward.redis_url)
        runtime = build_runtime(steward.settings, redis, REGISTRY)
        try:
            ref = RepoRef.parse(repo)
            forge = await runtime.forge("github" if steward.forge == "github" else "gitea", ref)
            event = Event(forge=forge.kind, delivery_id="t", name="reconcile", action="", sender="", repo=ref)
            ctx = EventContext(
                event=event,
                forge=forge,
                me=await forge.whoami(),
                settings=HandlerSettings.model_validate({"debug": {"escalate_to": ["triager"]}}),
                registry=REGISTRY,
                log=structlog.get_logger(),
            )
            return await root_cause(ctx, ref, number, chosen)
        finally:
            await runtime.aclose()
            await redis.aclose()

    return asyncio.run(run())


def debug_report(steward: Steward, target: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`steward debug-report` as an operator runs it, against the sandbox (in the test's process:
    ``steward_in_process``)."""
    env = {
        "STEWARD_REDIS_URL": steward.redis_url,
        "STEWARD_GITHUB_API_URL": steward.settings.github_api_url,
        "STEWARD_GITHUB_TOKEN": "tok-bot",
        "STEWARD_GITEA_URL": str(steward.settings.gitea_url),
        "STEWARD_GITEA_TOKEN": "tok-bot",
    }
    return steward_in_process(["debug-report", target, "--forge", steward.forge, *args], env)


def say(steward: Steward, repo: str, number: int, body: str) -> int:
    comment = steward.maintainer.comment(repo, number, body)
    steward.settle()
    return comment


def test_from_hypotheses_to_an_evidenced_root_cause(steward: Steward) -> None:
    m = steward.maintainer
    repo = repo_with_code(steward)
    unrefined = m.open_issue(repo, "Not refined", "It breaks.", labels=["bug"])
    say(steward, repo, unrefined, "/hypothesis Cache: src/auth/cache.py:88")
    [refused] = replies(steward, repo, unrefined)
    assert "BUG_NOT_REFINED" in refused and "/steward refine" in refused
    assert not [c for c in steward.bot_comments(repo, unrefined) if "debug-board" in c["body"]]

    number = refined_bug(steward, repo)
    say(
        steward,
        repo,
        number,
        "/hypothesis Stale cache: src/auth/cache.py:88 keeps the old token\n\n"
        "/hypothesis Clock skew: the expiry is compared in local time",
    )
    text = board(steward, repo, number)["body"]
    assert "| Stale cache |" in text and "`src/auth/cache.py:88`" in text
    assert "_no location yet_" in text and "aim for 3 to 5" in text
    assert "**Summary:** no root cause yet." in text
    assert debug_labels(steward, repo, number) == ["debug:investigating"]
    # The log names who added each hypothesis without pinging them (issue 37 §3), as the dashboard does.
    assert "— @\u2060maintainer — added **H1**" in text and neutralise.LIVE_MENTION.findall(text) == []

    say(steward, repo, number, "/evidence H1 for the log shows a cache hit after logout")
    text = board(steward, repo, number)["body"]
    assert "evidence **for** H1: the log shows a cache hit after logout" in text

    refused = ask(steward, repo, number)
    assert (refused.allowed, refused.outcome) == (False, "not_evidenced")
    assert refused.code == "ROOT_CAUSE_NOT_EVIDENCED"
    say(steward, repo, number, "/confirm H1 I am sure it is the cache")
    assert any("needs evidence that points at code" in r for r in replies(steward, repo, number))
    assert "no root cause yet" in board(steward, repo, number)["body"]

    confirm = say(steward, repo, number, "/confirm H1 src/auth/cache.py:88 never evicts on logout")
    text = board(steward, repo, number)["body"]
    assert "**Summary:** root cause evidenced by H1 (`src/auth/cache.py:88`)." in text
    assert "✅ confirmed" in text and "[@\u2060maintainer](" in text
    assert neutralise.LIVE_MENTION.findall(text) == []
    assert debug_labels(steward, repo, number) == ["debug:root-cause"]
    answer = ask(steward, repo, number)
    assert (answer.allowed, answer.hypothesis, answer.locations) == (True, "H1", ("src/auth/cache.py:88",))
    assert ask(steward, repo, number, "H2").outcome == "not_confirmed"
    data = sticky.unverified_data(text)
    assert isinstance(data, dict)
    assert [e["k"] for e in data["log"]] == ["hypothesis", "hypothesis", "evidence", "confirm"]

    # The same delivery again, under a new id (dedupe cannot help): nothing new is written.
    before = [(c["id"], c["body"], c["updated_at"]) for c in steward.bot_comments(repo, number)]
    deliveries = m.call("GET", f"{steward.sandbox.url}/_sandbox/deliveries?event=issue_comment")
    details = [
        m.call("GET", f"{steward.sandbox.url}/_sandbox/deliveries/{d['id']}")
        for d in deliveries
        if d["action"] == "created"
    ]
    [payload] = [d["payload"] for d in details if d["payload"]["comment"]["id"] == confirm]
    steward.clear_requests()
    steward.deliver("issue_comment", json.dumps(payload).encode(), delivery=str(uuid.uuid4()))
    steward.settle()
    after = [(c["id"], c["body"], c["updated_at"]) for c in steward.bot_comments(repo, number)]
    assert after == before
    writes = [r for r in steward.bot_requests(repo) if r["method"] != "GET" and "reactions" not in r["path"]]
    assert writes == [], "a replay writes nothing on the board"


def test_an_outsider_cannot_write_on_the_board(steward: Steward) -> None:
    repo = steward.new_repo()
    number = refined_bug(steward, repo)
    steward.outsider.comment(repo, number, "/confirm H1 src/a.py:1 trust me")
    steward.settle()
    assert any("can only be run by" in r for r in replies(steward, repo, number))
    assert not [c for c in steward.bot_comments(repo, number) if "debug-board" in c["body"]]


def test_three_refuted_escalate_once_and_resume_lifts_the_block(steward: Steward) -> None:
    repo = steward.new_repo()
    number = refined_bug(steward, repo)
    three = "\n\n".join(f"/hypothesis H-{i}: module{i}.py:{i} is wrong" for i in (1, 2, 3))
    say(steward, repo, number, three)
    say(steward, repo, number, "/refute H1 the value is right there\n\n/inconclusive H2 cannot reproduce")
    assert escalations(steward, repo, number) == []
    say(steward, repo, number, "/refute H3 the test passes with it removed")
    [escalation] = escalations(steward, repo, number)
    author = steward.maintainer.issue(repo, number)["user"]["login"]
    assert f"@{author}" in escalation and "@triager" in escalation
    assert "which assumption about the architecture might be wrong?" in escalation
    assert "**H1** H-1 — refuted: the value is right there" in escalation
    assert debug_labels(steward, repo, number) == ["needs-human"]
    assert "**Escalated to a human**" in board(steward, repo, number)["body"]
    assert ask(steward, repo, number).outcome == "escalated"
    printed = debug_report(steward, f"{repo}#{number}", "--json")
    assert printed.returncode == 0, printed.stderr
    report = json.loads(printed.stdout)
    assert report["escalated"] is True and [h["status"] for h in report["hypotheses"]] == [
        "refuted",
        "inconclusive",
        "refuted",
    ]

    say(steward, repo, number, "/evidence H1 against one more thing")
    assert len(escalations(steward, repo, number)) == 1, "one escalation per round"

    say(steward, repo, number, "/resume-debug the cache is per process: look at the load balancer")
    text = board(steward, repo, number)["body"]
    assert "**resumed** the investigation: the cache is per process" in text
    assert "Escalated" not in text.split("###")[0]
    assert debug_labels(steward, repo, number) == ["debug:investigating"]
    assert ask(steward, repo, number).outcome == "not_evidenced", "resumed: the block is lifted"
    text_report = debug_report(steward, f"{repo}#{number}").stdout
    assert "H1 [❌ refuted] H-1: module1.py:1 is wrong" in text_report
    assert "resumed the investigation" in text_report
    say(steward, repo, number, "/resume-debug again")
    assert any("nothing to resume" in r for r in replies(steward, repo, number))


def test_edited_or_deleted_evidence_is_withdrawn_not_lost(steward: Steward) -> None:
    m = steward.maintainer
    repo = repo_with_code(steward)
    number = refined_bug(steward, repo)
    say(steward, repo, number, "/hypothesis Cache: src/auth/cache.py:88")
    confirm = say(steward, repo, number, "/confirm H1 src/auth/cache.py:88 never evicts")
    evidence = say(steward, repo, number, "/evidence H1 against the cache is off in production")
    assert debug_labels(steward, repo, number) == ["debug:root-cause"]

    m.edit_comment(repo, confirm, "Sorry, wrong issue.")
    steward.settle()
    text = board(steward, repo, number)["body"]
    assert "~~**confirmed** H1: src/auth/cache.py:88 never evicts~~ _(withdrawn" in text
    assert "no root cause yet" in text
    assert debug_labels(steward, repo, number) == ["debug:investigating"]

    m.call("DELETE", f"/repos/{repo}/issues/comments/{evidence}")
    steward.settle()
    text = wait_for(
        lambda: t if (t := board(steward, repo, number)["body"]).count("_(withdrawn") == 2 else None,
        what="the deleted evidence withdrawn",
    )
    assert "~~evidence **against** H1: the cache is off in production~~" in text


def test_a_bugfix_pull_request_shows_as_the_fix_row(steward: Steward) -> None:
    m = steward.maintainer
    repo = repo_with_code(steward)
    number = refined_bug(steward, repo)
    say(steward, repo, number, "/hypothesis Cache: src/auth/cache.py:88")
    say(steward, repo, number, "/confirm H1 src/auth/cache.py:88 never evicts")
    text = board(steward, repo, number)["body"]
    assert "no fix yet: plan it — `/steward bugfix` opens the branch" in text
    pull = m.open_pull(repo, f"Fix #{number}: session survives logout", f"bugfix/{number}-session-survives")
    steward.settle()

    def fix_row() -> str | None:
        return next((x for x in board(steward, repo, number)["body"].splitlines() if "| FIX-H1 |" in x), None)

    row = wait_for(fix_row, what="the FIX row")
    assert f"#{pull}" in row and "not verified yet" in row
    # The next step follows the fix row; the counts line and seed 004's confidence per hypothesis (issue 36
    # §3): one piece of evidence, its place checked, not yet reproduced by a verified fix.
    text = board(steward, repo, number)["body"]
    assert f"**A fix is applied but not verified yet**: FIX-H1 ([#{pull}]" in text and "Re-run CI" in text
    assert "**Counts:** 1 hypothesis · 1 confirmed · 1 fixed · 0 verified" in text
    assert "| ✅ confirmed | 73 % high |" in text
    head = m.call("GET", f"/repos/{repo}/pulls/{pull}")["head"]["sha"]
    status = {"state": "success", "context": "steward/regression-first"}
    # Steward's own status (a writer's steward/* status does not stand: Steward posts its own again).
    steward.bot.call("POST", f"/repos/{repo}/statuses/{head}", status)
    say(steward, repo, number, "/refresh")
    text = board(steward, repo, number)["body"]
    assert "✅ verified" in text and "**The fix is verified**" in text
    assert "**Counts:** 1 hypothesis · 1 confirmed · 1 fixed · 1 verified" in text
    assert "| ✅ confirmed | 80 % high |" in text


def test_an_edit_that_changes_a_verdict_withdraws_the_old_and_records_the_new(steward: Steward) -> None:
    m = steward.maintainer
    repo = repo_with_code(steward)
    number = refined_bug(steward, repo)
    say(steward, repo, number, "/hypothesis Cache: the cache keeps the token")
    confirm = say(steward, repo, number, "/confirm H1 src/auth/cache.py:88 never evicts")
    m.edit_comment(repo, confirm, "/confirm H1 src/auth/session.py:12 the session outlives the cache")
    steward.settle()
    text = board(steward, repo, number)["body"]
    assert "~~**confirmed** H1: src/auth/cache.py:88 never evicts~~ _(withdrawn" in text
    assert "**Summary:** root cause evidenced by H1 (`src/auth/session.py:12`)." in text
    assert debug_labels(steward, repo, number) == ["debug:root-cause"]


def test_evidence_must_point_at_code_that_exists(steward: Steward) -> None:
    """`/evidence` and `/confirm` check every `path:line` against the repository: a file that is not there
    or a line past its end is refused with the reason and the nearest match; an accepted place shows the
    line it pointed at (inert), and the board says so when the file changes afterwards."""
    m = steward.maintainer
    repo = repo_with_code(steward)
    first = m.put_file(repo, "README.md", "The session service.\n")
    number = refined_bug(steward, repo)
    say(steward, repo, number, "/hypothesis Cache: the session cache keeps the old token")

    say(steward, repo, number, "/confirm H1 src/auth/cach.py:88 never evicts on logout")
    [refused] = replies(steward, repo, number)
    assert "does not exist" in refused and "there is no file `src/auth/cach.py` at `main`" in refused
    text = board(steward, repo, number)["body"]
    assert "no root cause yet" in text and "debug:root-cause" not in m.labels_of(repo, number)

    say(steward, repo, number, "/evidence H1 for src/auth/cache.py:400 evicts nothing")
    refused = replies(steward, repo, number)[-1]
    assert "`src/auth/cache.py` has 90 lines at `main`" in refused
    assert "the nearest is `src/auth/cache.py:90`" in refused
    assert "evidence **for**" not in board(steward, repo, number)["body"]
    # A moved file is named (issue 36 §1): the file of that name elsewhere in the tree is the nearest match.
    say(steward, repo, number, "/evidence H1 for lib/auth/cache.py:12 keeps the token")
    refused = replies(steward, repo, number)[-1]
    assert "there is no file `lib/auth/cache.py` at `main`" in refused, refused
    assert "was it moved? `src/auth/cache.py` has the same name" in refused
    assert "the nearest is `src/auth/cache.py:12`" in refused

    # A place in a file added later is checked at the commit the person names (`--at`), where it is not.
    m.put_file(repo, "src/auth/tokens.py", "def issue():\n    return 1\n")
    steward.settle()
    say(steward, repo, number, f"/evidence H1 for --at {first[:10]} src/auth/tokens.py:2 issues no new token")
    wanted = f"there is no file `src/auth/tokens.py` at commit `{first[:7]}`"
    assert wanted in replies(steward, repo, number)[-1]
    say(steward, repo, number, "/evidence H1 for --at deadbeef1 src/auth/cache.py:88 evicts nothing")
    assert "there is no commit `deadbeef1` in this repository" in replies(steward, repo, number)[-1]
    link = "https://forge.example/other/project/blob/main/src/auth/cache.py#L88"
    say(steward, repo, number, f"/evidence H1 for {link} the same cache elsewhere")
    assert "the link points at another repository (`other/project`)" in replies(steward, repo, number)[-1]
    assert len(replies(steward, repo, number)) == 6

    say(steward, repo, number, "/confirm H1 src/auth/cache.py:88 never evicts on logout")
    text = board(steward, repo, number)["body"]
    assert "**Summary:** root cause evidenced by H1 (`src/auth/cache.py:88`)." in text
    row = next(line for line in text.splitlines() if line.startswith("| [H1]"))
    assert "`src/auth/cache.py:88` → “return self.store.get(token) # never evicted on logout, cc" in row
    assert "@admin" not in text, "the cited line is quoted inert"
    assert "file changed since" not in text
    data = sticky.unverified_data(text)
    assert isinstance(data, dict)
    blob = m.file_sha(repo, "src/auth/cache.py")
    assert blob is not None and data["grounds"]["src/auth/cache.py:88"][1] == blob[:12]

    # The file changes on the default branch: the evidence is marked, the line it pointed at still shown.
    m.put_file(repo, "src/auth/cache.py", CODE["src/auth/cache.py"].replace("# end", "# evicted now") + "\n")
    steward.settle()
    say(steward, repo, number, "/refresh")
    text = board(steward, repo, number)["body"]
    row = next(line for line in text.splitlines() if line.startswith("| [H1]"))
    assert "_(file changed since `" in row and "return self.store.get(token)" in row


def test_hypotheses_are_ranked_in_the_order_people_give(steward: Steward) -> None:
    repo = steward.new_repo()
    number = refined_bug(steward, repo)
    say(steward, repo, number, "\n\n".join(f"/hypothesis T{i}: guess {i}" for i in (1, 2, 3)))
    say(steward, repo, number, "/rank H3 1")
    text = board(steward, repo, number)["body"]
    rows = [line for line in text.splitlines() if line.startswith("| [H")]
    assert [r.split("](")[0].removeprefix("| [") for r in rows] == ["H3", "H1", "H2"]
    assert [r.split("|")[2].strip() for r in rows] == ["1", "2", "3"]
    assert "ranked H3 **#1**" in text
    say(steward, repo, number, "/rank H1 7")
    assert "give H1 a place from 1 (most likely) to 3" in replies(steward, repo, number)[-1]
    data = sticky.unverified_data(board(steward, repo, number)["body"])
    assert isinstance(data, dict) and data["log"][-1] == {**data["log"][-1], "k": "rank", "h": 3, "p": 1}


def test_a_new_board_links_related_bugs(steward: Steward) -> None:
    """Seed 004's related sessions (issue 36 §3): when a board opens, the closed bugs and earlier boards that
    cite the same files or share the symptom's words are linked, once (tests/debug/test_related.py: the
    symptom is the report's observed behaviour, not its title)."""
    m = steward.maintainer
    repo = repo_with_code(steward)
    # The refined bug's report says "the total shows 90.00 EUR and the discount line disappears".
    symptom = "**Actual behavior**\nThe discount line disappears.\n\n**Expected behavior**\nKept."
    same_symptom = m.open_issue(repo, "Receipt drops the promotion", symptom, labels=["bug"])
    m.edit_issue(repo, same_symptom, state="closed")
    other_symptom = "**Actual behavior**\nThe avatar is blurry.\n\n**Expected behavior**\nIt is sharp."
    same_title = m.open_issue(repo, "Session survives logout", other_symptom, labels=["bug"])
    m.edit_issue(repo, same_title, state="closed")
    cites = "The store in src/auth/cache.py:88 never forgets."
    earlier = m.open_issue(repo, "Tokens outlive their user", cites, labels=["bug"])
    m.edit_issue(repo, earlier, state="closed")
    unrelated = m.open_issue(repo, "Wrong colour on the cart page", "CSS.", labels=["bug"])
    m.edit_issue(repo, unrelated, state="closed")
    steward.settle()
    number = refined_bug(steward, repo)
    say(steward, repo, number, "/hypothesis Cache: src/auth/cache.py:88 keeps the old token")
    text = board(steward, repo, number)["body"]
    line = next(x for x in text.splitlines() if x.startswith("**Related earlier investigations and bugs:**"))
    assert f"#{earlier} Tokens outlive their user (cites `src/auth/cache.py`)" in line
    assert f"#{unrelated} " not in line
    assert f"#{same_symptom} Receipt drops the promotion (a similar symptom: " in line, line
    assert f"#{same_title} " not in line, "the same title, another symptom"
    data = sticky.unverified_data(text)
    assert isinstance(data, dict) and data["related"][0][0] == earlier


def test_ci_failures_of_the_regression_test_are_offered_as_symptoms(steward: Steward) -> None:
    """Seed 004 (issue 36 §3): when a board opens, CI failures the forge reports at the default branch's
    head that name the bug's regression test (section 7) are listed as symptoms."""
    from tests.e2e.test_bugfix_e2e import play_ci

    m = steward.maintainer
    repo = steward.new_repo()
    head = m.put_file(repo, "README.md", "The shop.\n")
    steward.settle()
    says = "FAILED web/src/cart/__tests__/currency-switch.spec.ts > keeps the discount after a switch"
    play_ci(steward, repo, head, "failure", context="ci/unit", says=says)
    play_ci(steward, repo, head, "failure", context="ci/lint", says="lint: 3 problems in web/src/app.ts")
    number = refined_bug(steward, repo)
    say(steward, repo, number, "/hypothesis Cache: the session cache keeps the old token")
    text = board(steward, repo, number)["body"]
    assert "**Symptoms from CI** (the bug's regression test):" in text
    assert (
        "CI `ci/unit` reports `web/src/cart/__tests__/currency-switch.spec.ts` failing at `main` "
        f"(`{head[:7]}`): {says}" in text
    )
    assert "ci/lint" not in text, "a failure that does not name the regression test is not a symptom"
