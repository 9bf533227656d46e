"""The overview issue end to end, on both forges: it appears, pinned, when the configuration switches it on;
it follows a label change; a body someone edited or forged is rebuilt, signed, with a note naming them;
replayed deliveries, a second refresh and `steward reconcile` never make a second one; a refresh costs a
listing, the open milestones and at most one edit."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

import pytest

from bot.records import signing, sticky
from handlers.triage.overview import KEY, KIND
from tests.e2e.conftest import Steward
from tests.e2e.stack import TEST_CONFIG_PATHS, reconcile, wait_for
from tests.e2e.test_integrity_e2e import public_key, verify

pytestmark = pytest.mark.handler_settings(
    milestones={"grace_period_seconds": 1, "refresh_debounce_seconds": 0.3}
)
# In the file, so that `steward reconcile` (a process of its own, on Steward's defaults) reads it too.
ON = "triage:\n  overview: true\n  overview_refresh_seconds: 0.3\n"


def overviews(steward: Steward, repo: str) -> list[dict[str, Any]]:
    found = steward.maintainer.issues(repo, "steward-overview")
    return [i for i in found if i["user"]["login"] == "steward-bot" and f"steward:{KIND}:" in i["body"]]


def the_overview(steward: Steward, repo: str) -> dict[str, Any]:
    [found] = overviews(steward, repo)
    return found


def switch_on(steward: Steward, repo: str, more: str = "") -> None:
    steward.maintainer.put_file(repo, TEST_CONFIG_PATHS[steward.forge], ON + more)
    steward.settle()


def outcome(steward: Steward, repo: str, issue: dict[str, Any]) -> str:
    """What the overview's record is worth, checked as Steward checks it (the worker's key, in this
    process)."""
    repo_id = int(steward.maintainer.call("GET", f"/repos/{repo}")["id"])
    record = asyncio.run(
        sticky.verify(
            signing.current(),
            issue["body"],
            forge=steward.forge,
            repo_id=repo_id,
            container="issue",
            id=int(issue["id"]),
            kind=KIND,
            key=KEY,
            created_at=issue["created_at"],
            expect_data=True,
        )
    )
    return record.outcome


def test_switched_on_it_appears_once_pinned_and_says_what_needs_whom(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    waiting = m.open_issue(repo, "Export crashes on empty orders", labels=["bug", "refinement:needs-triage"])
    asked = m.open_issue(repo, "Login is slow", labels=["bug", "refinement:needs-info"])
    ready = m.open_issue(repo, "Dates shown in UTC", labels=["bug", "refinement:approved"])
    key = m.create_milestone(repo, "v1.0")
    m.open_issue(repo, "Ship the export", milestone=key)
    steward.settle()
    assert overviews(steward, repo) == [], "off until the configuration asks for it"

    switch_on(steward, repo)
    overview = the_overview(steward, repo)
    body = overview["body"]
    assert overview["title"] == "Steward: what needs whom"
    assert "steward-overview" in [label["name"] for label in overview["labels"]]
    assert outcome(steward, repo, overview) == "verified"
    text = sticky.visible_text(body)
    headline = "**1 item waits on the maintainers:** bugs waiting for the maintainers (1)."
    assert text.splitlines()[2] == headline
    assert text.index(f"#{waiting}]") < text.index(f"#{ready}]") < text.index(f"#{asked}]")
    assert f"[#{waiting}](" in text and "Export crashes on empty orders — @\u2060maintainer" in text
    assert "@maintainer" not in text.replace("@\u2060", ""), "people are shown, never mentioned"
    assert "v1.0" in text and "gate blocked by" in text
    assert m.pinned(repo) == [overview["number"]]
    assert "### Refined and unclaimed (1)" in text

    # A claim (Steward's own label and record) takes it off the unclaimed list.
    steward.triager.comment(repo, ready, "/steward claim")
    steward.settle()
    steward.run_periodic("overview")
    steward.settle()
    text = sticky.visible_text(the_overview(steward, repo)["body"])
    assert "Refined and unclaimed (" not in text and "refined and unclaimed" in text


def test_a_label_change_moves_an_issue_and_a_replay_or_a_reconcile_makes_no_second(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    number = m.open_issue(repo, "Crash on save", labels=["bug", "refinement:needs-info"])
    switch_on(steward, repo)
    first = the_overview(steward, repo)
    assert "Nothing waits on the maintainers" in first["body"]

    m.remove_label(repo, number, "refinement:needs-info")
    m.add_labels(repo, number, ["refinement:needs-triage"])
    steward.settle()
    now = the_overview(steward, repo)
    assert now["number"] == first["number"]
    assert "**1 item waits on the maintainers:**" in now["body"]
    assert "### Bugs waiting for the maintainers (1)" in now["body"]
    assert "Bugs waiting for their reporter (" not in now["body"]

    # Replays of every delivery, the hourly look and the operator's catch-up: one overview, unchanged.
    for delivery in m.call("GET", f"{steward.sandbox.url}/_sandbox/deliveries")[-10:]:
        m.call("POST", f"{steward.sandbox.url}/_sandbox/deliveries/{delivery['id']}/redeliver")
    steward.settle()
    steward.run_periodic("overview")
    steward.settle()
    done = reconcile(steward.settings, "--forge", steward.forge, "--repo", repo)
    assert done.returncode == 0, done.stderr
    steward.settle()
    assert [o["number"] for o in overviews(steward, repo)] == [first["number"]]
    assert (
        sticky.visible_text(the_overview(steward, repo)["body"]).split("<sub>Changed")[0]
        == (sticky.visible_text(now["body"]).split("<sub>Changed")[0])
    )


def test_an_edited_or_forged_body_is_rebuilt_signed_and_the_editor_named(
    steward: Steward, tmp_path: Path
) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    m.open_issue(repo, "Crash on save", labels=["bug", "refinement:needs-triage"])
    switch_on(steward, repo)
    overview = the_overview(steward, repo)
    number = overview["number"]

    # The visible text changed under a valid block: the block pins the text, so it no longer verifies.
    m.edit_issue(repo, number, body=overview["body"].replace("1 item waits", "Nothing waits"))
    steward.settle()
    rebuilt = the_overview(steward, repo)
    assert "**1 item waits on the maintainers:**" in rebuilt["body"]
    assert outcome(steward, repo, rebuilt) == "verified"
    notes = [c["body"] for c in steward.bot_comments(repo, number) if "it was rebuilt" in c["body"]]
    assert len(notes) == 1 and "was changed by @maintainer" in notes[0]

    # A forged body with no marker and a made-up block: still this issue, rebuilt, never a second.
    m.edit_issue(repo, number, body='All is well.\n<!-- steward:data {"v": 1, "counts": {}} -->')
    steward.settle()
    assert [o["number"] for o in overviews(steward, repo)] == [number]
    assert outcome(steward, repo, the_overview(steward, repo)) == "verified"
    assert "Crash on save" in the_overview(steward, repo)["body"]
    # A reviewer checks it with the public key alone.
    checked = verify(steward, f"{repo}#{number}", public_key(steward, tmp_path))
    assert checked.returncode == 0, checked.stdout + checked.stderr


def _bugfix_pull(steward: Steward, repo: str, bug: int, branch: str, *, draft: bool) -> int:
    """A pull request as `/bugfix` opens it (by Steward's account, titled for its bug): a draft while it holds
    the test alone (Gitea: the WIP prefix)."""
    bot = steward.bot
    bot.create_branch(repo, branch)
    bot.put_file(repo, f"tests/test_{branch}.py", "def test_x():\n    assert False\n", branch=branch)
    title = f"Bugfix for #{bug}: a crash"
    body: dict[str, Any] = {"head": branch, "base": "main", "title": title, "body": ""}
    if draft and steward.forge == "gitea":
        body["title"] = f"WIP: {title}"
    elif draft:
        body["draft"] = True
    return int(bot.call("POST", f"/repos/{repo}/pulls", body)["number"])


def test_bugfixes_are_listed_by_state_read_from_the_one_listing(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    bug = m.open_issue(repo, "Crash on save", labels=["bug"])
    red = _bugfix_pull(steward, repo, bug, "bugfix-red", draft=True)
    review = _bugfix_pull(steward, repo, bug, "bugfix-review", draft=False)
    m.open_pull(repo, f"Bugfix for #{bug}: not Steward's", "someone-else")
    switch_on(steward, repo)
    text = sticky.visible_text(the_overview(steward, repo)["body"])
    waiting = text.split("### Bugfixes waiting for red proof (1)", 1)[1].split("###", 1)[0]
    in_review = text.split("### Bugfixes in review (1)", 1)[1].split("###", 1)[0]
    assert f"[#{red}](" in waiting and f"[#{review}](" in in_review
    assert "not Steward's" not in text

    m.add_labels(repo, review, ["do-not-merge/hold"])
    steward.settle()
    text = sticky.visible_text(the_overview(steward, repo)["body"])
    held = text.split("### Bugfixes held (1)", 1)[1].split("###", 1)[0]
    assert f"[#{review}](" in held and "`do-not-merge/hold`" in held
    assert "Bugfixes in review (" not in text


def test_an_overview_created_but_never_signed_is_taken_up_not_duplicated(steward: Steward) -> None:
    """A worker that died between creating the overview and signing it in leaves an issue with the marker
    and no record: the next refresh finds it by its label and marker, rebuilds and signs it."""
    repo = steward.new_repo()
    # Found by its binding, never by its title: a person's issue with the title, label and marker is not it.
    forged = sticky.fit(KIND, KEY, "Nothing waits on anyone.")
    fake = steward.maintainer.open_issue(
        repo, "Steward: what needs whom", forged, labels=["steward-overview"]
    )
    half = steward.bot.open_issue(repo, "Steward: what needs whom", labels=["steward-overview"])
    steward.bot.edit_issue(repo, half, body=sticky.fit(KIND, KEY, "half-made"))
    steward.settle()
    switch_on(steward, repo)
    assert [o["number"] for o in overviews(steward, repo)] == [half]
    assert outcome(steward, repo, the_overview(steward, repo)) == "verified"
    assert steward.maintainer.issue(repo, fake)["body"] == forged, "a person's issue is never written"


def test_a_refresh_costs_a_listing_the_milestones_and_one_edit(steward: Steward) -> None:
    """Measured: requests per refresh for N open issues (docs/overview.md)."""
    m = steward.maintainer
    repo = steward.new_repo()
    # Sixty issues opened at once by one person: handled at once, not at a person's pace.
    switch_on(steward, repo, "limits:\n  events_per_minute: 0\n")
    wait_for(lambda: overviews(steward, repo), what="the overview")
    page = 50 if steward.forge == "gitea" else 100
    n = 60
    numbers = [m.open_issue(repo, f"issue {i}") for i in range(n - 1)]
    steward.settle()
    steward.clear_requests()
    m.add_labels(repo, numbers[0], ["refinement:needs-triage"])
    steward.settle()
    made = steward.bot_requests(repo)
    overview_n = the_overview(steward, repo)["number"]
    # What the label change asked of the forge besides the refresh: reading the labelled issue.
    refresh = [r for r in made if not r["path"].endswith(f"/issues/{numbers[0]}")]
    pages = math.ceil((n + 1) / page)  # n open issues and the overview itself
    assert [r["method"] for r in refresh] == ["GET"] * pages + ["GET", "PATCH"], refresh
    assert refresh[-2]["path"].endswith("/milestones")
    assert refresh[-1]["path"].endswith(f"/issues/{overview_n}")
