"""Steward across a rename (issue 38), end to end on both forges: a repository with a refined bug, a
milestone dashboard, a design fork decided from a comment and a bugfix in progress is renamed (on GitHub
then transferred to an organisation, as GitHub does it: the old name answers 301/307 to
`/repositories/{id}`, and a `repository` webhook says so; Gitea answers 307 to the new path and sends no
webhook). Afterwards the next events are handled, the decision's source (linked by the old name) is still
this repository's, `steward verify` passes on the new name (and on the old, redirected), the dashboard is
found, a person's command budget follows the repository, the catch-up covers it once (the seen
repositories are kept by id) and runs no command twice (its marks are kept by id), and nothing is posted
twice."""

from __future__ import annotations

import json
import re
import time
import uuid
from pathlib import Path

import httpx2
import pytest

from tests.e2e.conftest import Steward
from tests.e2e.stack import reconcile, wait_for
from tests.e2e.test_bugfix_e2e import branches, pulls, refined_bug, reply_to, repo_with_ci, sticky_of
from tests.e2e.test_integrity_e2e import FORKS, dashboard, public_key, verify

# Commands a person may run in a minute: the maintainer runs seven here (the board, /bugfix, /decide, …).
LIMIT = 7
FAST = {"grace_period_seconds": 1, "refresh_debounce_seconds": 0.3, "notify": ["maintainer"]}
pytestmark = pytest.mark.handler_settings(milestones=FAST, limits={"commands_per_minute": LIMIT})


def _move(steward: Steward, repo: str) -> str:
    """Rename ``repo`` as its admin does (on GitHub then transfer it to an organisation); its new name."""
    m = steward.maintainer
    owner, name = repo.split("/")
    new_name = f"{name}-renamed"
    m.call("PATCH", f"/repos/{repo}", {"name": new_name})
    if steward.forge == "gitea":
        return f"{owner}/{new_name}"
    org = f"org-{uuid.uuid4().hex[:6]}"
    made = httpx2.post(
        f"{steward.sandbox.url}/_sandbox/orgs", json={"login": org, "members": {"maintainer": "admin"}}
    )
    assert made.status_code == 201, made.text
    m.call("POST", f"/repos/{owner}/{new_name}/transfer", {"new_owner": org})
    return f"{org}/{new_name}"


def _bot_comments(steward: Steward, repo: str, numbers: list[int]) -> dict[int, list[tuple[int, str]]]:
    return {n: [(c["id"], c["body"]) for c in steward.bot_comments(repo, n)] for n in numbers}


def _markers(bodies: list[tuple[int, str]]) -> list[str]:
    """The kinds of Steward's sticky comments in a thread (one each, however often it wrote); replies to
    commands (one per command) left out."""
    found = [m for _, body in bodies for m in re.findall(r"<!-- steward:([a-z0-9-]+):", body)]
    return [m for m in found if m != "reply"]


def _pings(steward: Steward, repo: str, number: int) -> list[str]:
    return [c["body"] for c in steward.bot_comments(repo, number) if "pong" in c["body"]]


def test_steward_follows_a_renamed_and_transferred_repository(steward: Steward, tmp_path: Path) -> None:
    m, outsider = steward.maintainer, steward.outsider
    started = time.time()
    repo = repo_with_ci(steward)
    # A refined bug with its root cause evidenced, and a bugfix in progress on it.
    bug = refined_bug(steward, repo)
    m.comment(repo, bug, "/bugfix")
    steward.settle()
    [pr] = pulls(steward, repo)
    assert sticky_of(steward, repo, bug, "bugfix") is not None
    # A milestone with its dashboard, and a design fork.
    milestone = m.create_milestone(repo, "v1")
    m.set_milestone(repo, bug, milestone)
    forks = m.open_issue(repo, "Storage", body=FORKS)
    meeting = m.open_issue(repo, "Design meeting notes")
    said = m.comment(repo, meeting, "After the call we go with **Postgres**, final.")
    [source] = [c["html_url"] for c in m.comments(repo, meeting) if c["id"] == said]
    m.comment(repo, forks, f"/decide F1 postgres --source {source}")
    steward.settle()
    if steward.forge == "gitea":
        steward.run_periodic("milestones")
        steward.settle()
    board = wait_for(lambda: dashboard(steward, repo), what="the milestone's dashboard")
    # Someone asks all but once of what a person may in a minute.
    questions = m.open_issue(repo, "Questions")
    for _ in range(LIMIT - 1):
        outsider.comment(repo, questions, "/steward ping")
        steward.settle()
    assert len(_pings(steward, repo, questions)) == LIMIT - 1
    threads = [bug, forks, board["number"], questions]
    before = _bot_comments(steward, repo, threads)

    new = _move(steward, repo)
    steward.settle()
    assert m.client.get(f"/repos/{repo}", follow_redirects=False).status_code in (301, 307)

    # The next events are handled on the new name.
    later = m.open_issue(new, "Export to CSV", milestone=milestone)
    m.edit_issue(new, forks, body=FORKS + "- [ ] F2: Keep history or not?\n")
    steward.settle()
    if steward.forge == "gitea":
        steward.run_periodic("milestones")
        steward.settle()
    found = wait_for(
        lambda: (b := dashboard(steward, new)) and f"#{later}" in b["body"] and b,
        what="the dashboard (found, not made again) to list the new issue",
    )
    assert found["number"] == board["number"]
    [record] = [c for c in steward.bot_comments(new, forks) if "steward:forks:reconciliation" in c["body"]]
    assert "F2" in record["body"], "the forks record is updated in place"
    [decided] = [line for line in record["body"].splitlines() if line.startswith("| **F1** |")]
    assert "✅ resolved | postgres" in decided, "a source linked by the old name is still this repository's"
    # The same person's budget: the last command of the minute is taken, the next refused.
    outsider.comment(new, questions, "/steward ping")
    steward.settle()
    assert len(_pings(steward, new, questions)) == LIMIT
    over = outsider.comment(new, questions, "/steward ping")
    steward.settle()
    assert f"you have run {LIMIT} commands here in the last minute" in reply_to(steward, new, questions, over)
    assert len(_pings(steward, new, questions)) == LIMIT
    # Evidence linked by the old name points at this repository's code (the forge redirects the name).
    owner, name = repo.split("/")
    blob = "blob/main" if steward.forge == "github" else "src/branch/main"
    link = f"{steward.sandbox.url}/{owner}/{name}/{blob}/src/cart/total.py#L42"
    m.comment(new, bug, "/hypothesis Rounding: the total is rounded twice")
    m.comment(new, bug, f"/evidence H2 for {link} rounds before the discount")
    steward.settle()
    investigation = sticky_of(steward, new, bug, "debug-board")
    assert investigation is not None and "evidence **for** H2" in investigation["body"]
    assert not [c for c in steward.bot_comments(new, bug) if "another repository" in c["body"]]
    # A bugfix asked for again finds its branch and pull request under the new name.
    again = m.comment(new, bug, "/steward bugfix")
    steward.settle()
    assert "exist already: nothing new was written" in reply_to(steward, new, bug, again)
    assert [p["number"] for p in pulls(steward, new)] == [pr["number"]]
    assert [b for b in branches(steward, new) if b != "main"] == [pr["head"]["ref"]]

    # Every record verifies on the new name, with only the public key.
    key_file = public_key(steward, tmp_path)
    for number in (bug, forks, board["number"]):
        done = verify(steward, f"{new}#{number}", key_file)
        assert done.returncode == 0, done.stdout + done.stderr
        assert json.loads(done.stdout)["all_verified"] is True
    by_old_name = verify(steward, f"{repo}#{forks}", key_file)
    assert by_old_name.returncode == 0, by_old_name.stdout + by_old_name.stderr

    # The catch-up covers the repository once, under its new name, and runs no command twice.
    after = _bot_comments(steward, new, threads)
    since = f"{int(time.time() - started) + 60}s"
    caught = reconcile(steward.settings, "--since", since)
    assert caught.returncode == 0, caught.stdout + caught.stderr
    assert "Reconciling 1 repository" in caught.stdout and "Done: 1 repository" in caught.stdout, (
        caught.stdout
    )
    assert "with commands" not in caught.stdout, "every command ran once, before or after the rename"
    by_old_name = reconcile(steward.settings, "--repo", f"{steward.forge}:{repo}", "--since", since)
    assert by_old_name.returncode == 0, by_old_name.stdout + by_old_name.stderr
    assert "Done: 1 repository" in by_old_name.stdout, by_old_name.stdout
    steward.settle()
    now = _bot_comments(steward, new, threads)
    # Its records may be brought up to date (edited in place); nothing is posted again.
    assert {n: [i for i, _ in c] for n, c in now.items()} == {n: [i for i, _ in c] for n, c in after.items()}
    for number in threads:
        kinds = _markers(after[number])
        assert sorted(set(kinds)) == sorted(kinds), (number, kinds)
        assert set(_markers(before[number])) <= set(kinds), "what was there before is still there"
