"""The per-repository configuration file, end to end on both forges: a file on the default branch changes
what Steward does, `/steward config` shows where each setting comes from, and an invalid file is never
silent (a red `steward/config` status, one error issue, one notice in a thread) and never leaves the
repository without settings."""

from __future__ import annotations

from tests.e2e.conftest import Steward
from tests.e2e.stack import reconcile


def _path(steward: Steward) -> str:
    return ".gitea/steward.yml" if steward.forge == "gitea" else ".github/steward.yml"


def _config_status(steward: Steward, repo: str, sha: str) -> tuple[str, str]:
    """The `steward/config` status of a commit (Gitea calls the state `status`)."""
    [status] = [s for s in steward.maintainer.statuses(repo, sha) if s["context"] == "steward/config"]
    return str(status.get("state") or status.get("status")), str(status["description"])


def _error_issues(steward: Steward, repo: str, state: str = "open") -> list[dict[str, object]]:
    found = steward.maintainer.issues_in(repo, state)
    return [i for i in found if i["title"] == "Steward configuration error"]


def test_a_file_on_the_default_branch_changes_who_may_run_a_command(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "a question")
    steward.outsider.comment(repo, number, "/steward refresh")
    steward.settle()
    [refused] = [c["body"] for c in steward.bot_comments(repo, number)]
    assert "can only be run by people with" in refused

    sha = steward.maintainer.put_file(repo, _path(steward), "commands:\n  refresh: {permission: anyone}\n")
    steward.settle()
    state, _ = _config_status(steward, repo, sha)
    assert state == "success"
    steward.outsider.comment(repo, number, "/steward refresh")
    steward.settle()
    replies = [c["body"] for c in steward.bot_comments(repo, number)]
    assert len(replies) == 2 and "Re-checked this issue" in replies[1]

    steward.outsider.comment(repo, number, "/steward config")
    steward.settle()
    shown = steward.bot_comments(repo, number)[-1]["body"]
    assert f"1 setting from `{_path(steward)}`" in shown
    assert '| `commands.refresh.permission` | `"anyone"` |' in shown
    assert "| `backlog.round_cap` | `5` | default |" in shown, "every setting, with where it comes from"


def test_an_invalid_file_is_said_once_kept_out_and_closed_when_fixed(steward: Steward) -> None:
    repo = steward.new_repo()
    path = _path(steward)
    steward.maintainer.put_file(repo, path, "commands:\n  refresh: {permission: anyone}\n")
    steward.settle()
    bad = steward.maintainer.put_file(
        repo, path, "commands:\n  refresh: {permission: anyone}\nbacklog:\n  roundcap: 3\n"
    )
    steward.settle()

    state, description = _config_status(steward, repo, bad)
    assert state == "failure"
    assert "backlog.roundcap (line 4): unknown key `roundcap`; did you mean `round_cap`?" in description
    [error_issue] = _error_issues(steward, repo)
    body = str(error_issue["body"])
    assert body.startswith("<!-- steward:config-error -->")
    assert "**Next step:** a maintainer fixes" in body and "@maintainer pushed" in body
    assert "- `backlog.roundcap` (line 4): unknown key `roundcap`; did you mean `round_cap`?" in body
    assert "last valid settings" in body
    assert steward.maintainer.pinned(repo) == [error_issue["number"]], "pinned on top of the issue list"

    # The last valid settings stay in force: the outsider may still refresh.
    first = steward.maintainer.open_issue(repo, "first thread")
    second = steward.maintainer.open_issue(repo, "second thread")
    steward.outsider.comment(repo, first, "/steward refresh")
    steward.outsider.comment(repo, second, "/steward refresh")
    steward.settle()
    notices = [
        c["body"]
        for n in (first, second)
        for c in steward.bot_comments(repo, n)
        if "is not a valid Steward configuration" in c["body"]
    ]
    assert len(notices) == 1, "said once, not once per event"
    assert f"see #{error_issue['number']}" in notices[0]
    for n in (first, second):
        assert any("Re-checked this issue" in c["body"] for c in steward.bot_comments(repo, n))
    assert len(_error_issues(steward, repo)) == 1
    assert steward.maintainer.pinned(repo) == [error_issue["number"]]

    good = steward.maintainer.put_file(repo, path, "backlog:\n  round_cap: 3\n")
    steward.settle()
    state, description = _config_status(steward, repo, good)
    assert state == "success"
    assert not _error_issues(steward, repo)
    [closed] = _error_issues(steward, repo, "closed")
    assert any("valid again" in c["body"] for c in steward.bot_comments(repo, int(str(closed["number"]))))
    # A closed issue keeps its pin (and its place under the limit) on both forges: Steward unpins it.
    assert steward.maintainer.pinned(repo) == []


def test_with_the_pins_full_the_error_issue_is_opened_unpinned_and_a_replay_writes_nothing(
    steward: Steward,
) -> None:
    """GitHub pins three issues at most, Gitea MAX_PINNED (3 by default): the error issue is opened all the
    same, not pinned, and its body does not say it is. Running again (the hourly catch-up, and the push
    redelivered) changes nothing: the issue and the pins are as they were, and Steward writes nothing."""
    repo = steward.new_repo()
    important = [steward.maintainer.open_issue(repo, f"important {i}") for i in range(3)]
    for number in important:
        steward.maintainer.pin(repo, number)
    steward.settle()
    steward.maintainer.put_file(repo, _path(steward), "backlog:\n  roundcap: 3\n")
    steward.settle()
    [error_issue] = _error_issues(steward, repo)
    assert "pinned" not in str(error_issue["body"]).lower()
    assert steward.maintainer.pinned(repo) == important

    admin = steward.sandbox.url + "/_sandbox"
    steward.maintainer.client.delete(f"{admin}/requests")
    deliveries = steward.maintainer.call("GET", f"{admin}/deliveries?event=push")
    [push] = [d for d in deliveries if d.get("repository") == repo]
    steward.maintainer.call("POST", f"{admin}/deliveries/{push['id']}/redeliver")
    again = reconcile(steward.settings, "--repo", f"{steward.forge}:{repo}")
    assert again.returncode == 0, again.stdout + again.stderr
    steward.settle()
    log = steward.maintainer.call("GET", f"{admin}/requests")
    looked = [r for r in log if r["path"].endswith("/new_pin_allowed") or r.get("graphql")]
    assert looked, "the catch-up looked at the pin again"
    writes = [
        r
        for r in log
        if r["login"] == "steward-bot"
        and r["method"] != "GET"
        and not str(r.get("graphql", "")).startswith("query")  # GitHub's GraphQL reads are POSTs
    ]
    assert writes == [], "a replay writes nothing"
    assert [i["number"] for i in _error_issues(steward, repo)] == [error_issue["number"]]
    assert steward.maintainer.pinned(repo) == important


def test_an_invalid_file_on_a_branch_gets_a_red_status_and_no_issue(steward: Steward) -> None:
    repo = steward.new_repo()
    steward.maintainer.put_file(repo, "README.md", "hello\n")
    steward.maintainer.create_branch(repo, "tune-steward")
    sha = steward.maintainer.put_file(
        repo, _path(steward), "forks:\n  enabled: sometimes\n", branch="tune-steward"
    )
    steward.settle()
    state, description = _config_status(steward, repo, sha)
    assert state == "failure" and "forks.enabled (line 2)" in description
    assert not _error_issues(steward, repo), "only the default branch's file is in force"


def test_a_switched_off_capability_says_so_when_asked(steward: Steward) -> None:
    repo = steward.new_repo()
    steward.maintainer.put_file(repo, _path(steward), "backlog:\n  enabled: false\n")
    number = steward.maintainer.open_issue(repo, "Export reports as CSV", "We need CSV exports.")
    steward.maintainer.comment(repo, number, "/steward refine")
    steward.settle()
    [reply] = [c["body"] for c in steward.bot_comments(repo, number)]
    assert "backlog refinement is switched off on this repository" in reply
    assert f"`backlog.enabled: false` in `{_path(steward)}`" in reply
    steward.maintainer.add_labels(repo, number, ["refine"])
    steward.settle()
    assert len(steward.bot_comments(repo, number)) == 1, "the label starts nothing either"


def test_gitea_reads_the_github_path_when_it_has_no_own(steward: Steward) -> None:
    repo = steward.new_repo(configured=False)
    steward.maintainer.put_file(repo, ".github/steward.yml", "commands:\n  refresh: {permission: anyone}\n")
    number = steward.maintainer.open_issue(repo, "fallback")
    steward.outsider.comment(repo, number, "/steward refresh")
    steward.settle()
    [reply] = [c["body"] for c in steward.bot_comments(repo, number)]
    assert "Re-checked this issue" in reply
