"""The Forge port's records of who did what, what guards a branch and what CI said — ``label_events``,
``list_reviews``, ``read_branch``, ``ci_reports``, ``branch_pushes`` and the fork fields of ``PullRequest`` —
as one contract both adapters keep (each test runs against GitHubForge and GiteaForge over HTTP to the
sandbox)."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from bot.forge import (
    Annotation,
    Branch,
    CIReport,
    Forge,
    LabelEvent,
    PermissionDenied,
    Push,
    RepoRef,
    TooManyItems,
    ValidationFailed,
)
from bot.forge.github_transport import API_VERSION
from bot.sandbox.server import SandboxServer
from tests.contract.conftest import USERS, MakeForge, Site


@pytest.fixture
def reader(site: Site, sandbox: SandboxServer) -> Iterator[Site]:
    """The same forge's API, as the user `reader` (read access on every repository `site.new_repo` makes)."""
    found = Site(site.kind, sandbox.url, USERS["reader"])
    yield found
    found.client.close()
    found.admin.close()


async def test_label_events_name_who_added_and_removed_each_label(forge: Forge, site: Site) -> None:
    """GitHub's issue events, Gitea's timeline: the owner's label and the bot's removal, in order."""
    repo = site.new_repo()
    site.create_label(repo, "bug")
    site.create_label(repo, "ui")
    number = site.open_issue(repo, "Crash")
    site.call("PUT", f"/repos/{repo}/issues/{number}/labels", {"labels": ["bug", "ui"]})
    site.comment(repo, number, "a comment is no label event")
    await forge.remove_label(repo, number, "ui")

    events = await forge.label_events(repo, number)
    assert [(e.label, e.added, e.actor) for e in events] == [
        ("bug", True, "owner"),
        ("ui", True, "owner"),
        ("ui", False, "steward-bot"),
    ]
    assert all(isinstance(e, LabelEvent) and e.at for e in events)
    assert await forge.label_events(repo, site.open_issue(repo, "quiet")) == []


async def test_reviews_are_listed_with_their_verdict_and_commit(
    forge: Forge, site: Site, reader: Site
) -> None:
    """Both forges' review states in the port's three words, each with the commit it was made on; a
    pending review is not listed."""
    repo = site.new_repo()
    first = site.branch(repo, "feature", {"a.txt": b"a"})
    number = site.pull(repo, "feature")
    approve = "APPROVE" if site.kind == "github" else "APPROVED"
    reader.call("POST", f"/repos/{repo}/pulls/{number}/reviews", {"event": approve})
    site.put_file(repo, "b.txt", b"b", branch="feature")
    second = site.head(repo, "feature")
    reader.call(
        "POST", f"/repos/{repo}/pulls/{number}/reviews", {"event": "REQUEST_CHANGES", "body": "tests?"}
    )
    site.call("POST", f"/repos/{repo}/pulls/{number}/reviews", {"event": "COMMENT", "body": "on it"})
    pending = {} if site.kind == "github" else {"event": "PENDING"}
    site.call("POST", f"/repos/{repo}/pulls/{number}/reviews", {"body": "draft", **pending})

    reviews = await forge.list_reviews(repo, number)
    assert [(r.user, r.state, r.commit_id) for r in reviews] == [
        ("reader", "approved", first),
        ("reader", "changes_requested", second),
        ("owner", "commented", second),
    ]
    assert reviews[1].body == "tests?" and all(r.id and r.submitted_at for r in reviews)


async def test_read_branch_says_whether_it_is_protected_and_which_checks_it_requires(
    forge: Forge, site: Site
) -> None:
    """Read access is enough on both forges (GitHub: the branch's protection summary and the branch rules;
    Gitea: the branch's status_check_contexts); a missing branch is None."""
    repo = site.new_repo()
    head = site.head(repo, "main")
    assert await forge.read_branch(repo, "main") == Branch("main", str(head), False, ())
    assert await forge.read_branch(repo, "nope") is None
    site.admin.put(
        f"/_sandbox/repos/{repo}/protections/main", json={"required_contexts": ["ci/test", "lint"]}
    ).raise_for_status()
    assert await forge.read_branch(repo, "main") == Branch("main", str(head), True, ("ci/test", "lint"))
    release = site.branch(repo, "release", {"r.txt": b"r"})
    site.admin.put(
        f"/_sandbox/repos/{repo}/protections/release", json={"required_contexts": ["build"], "ruleset": True}
    ).raise_for_status()
    assert await forge.read_branch(repo, "release") == Branch("release", release, True, ("build",))
    slashed = site.branch(repo, "steward/configure", {"s.txt": b"s"})
    site.admin.put(
        f"/_sandbox/repos/{repo}/protections/steward/configure", json={"required_contexts": ["ci"]}
    ).raise_for_status()
    assert await forge.read_branch(repo, "steward/configure") == Branch(
        "steward/configure", slashed, True, ("ci",)
    )


async def test_read_branch_says_why_it_could_not_read_the_required_checks(forge: Forge, site: Site) -> None:
    """GitHub: a refused ruleset listing leaves the required checks unknown (None), with the forge's reason;
    a refused branch is PermissionDenied on both forges (never an empty list of checks)."""
    repo = site.new_repo()
    if site.kind == "github":
        site.fault(method="GET", path=rf"/repos/{repo}/rules/branches/main", status=403, times=1)
        found = await forge.read_branch(repo, "main")
        assert found is not None and found.required_contexts is None
        assert found.unread.startswith("the forge refused to list the rulesets") and "403" in found.unread
    site.fault(method="GET", path=rf"/repos/{repo}/branches/main$", status=403, times=1)
    with pytest.raises(PermissionDenied):
        await forge.read_branch(repo, "main")


async def test_ci_reports_say_why_a_check_is_red(forge: Forge, site: Site) -> None:
    """GitHub: a check run's output and its annotations, then the statuses; Gitea: its statuses, the
    description as the title. Both: the latest report of each context only."""
    repo = site.new_repo()
    sha = str(site.head(repo, "main"))
    site.play_ci(repo, sha, kind="status", context="lint", state="pending", description="running")
    site.play_ci(repo, sha, kind="status", context="lint", state="failure", description="E501 in a.py")
    if site.kind == "github":
        failing = {
            "path": "tests/test_api.py",
            "start_line": 12,
            "end_line": 14,
            "annotation_level": "failure",
            "message": "assert 500 == 200",
            "title": "test_get_user",
        }
        site.play_ci(
            repo,
            sha,
            kind="check_run",
            context="pytest",
            conclusion="failure",
            title="1 failed",
            summary="test_get_user failed",
            text="FAILED tests/test_api.py",
            annotations=[failing],
        )
    reports = await forge.ci_reports(repo, sha)
    lint = CIReport("lint", "status", "failure", title="E501 in a.py")
    if site.kind == "gitea":
        assert reports == [lint]
        return
    assert reports == [
        CIReport(
            "pytest",
            "check_run",
            "failure",
            title="1 failed",
            summary="test_get_user failed",
            text="FAILED tests/test_api.py",
            annotations=(
                Annotation("tests/test_api.py", 12, 14, "failure", "assert 500 == 200", "test_get_user"),
            ),
            url=reports[0].url,
        ),
        lint,
    ]
    assert reports[0].url


async def test_pull_requests_of_one_repository_are_not_from_forks(forge: Forge, site: Site) -> None:
    repo = site.new_repo()
    site.branch(repo, "feature", {"a.txt": b"a"})
    pull = await forge.get_pull_request(repo, site.pull(repo, "feature"))
    assert pull.head_repo_id == pull.base_repo_id != 0 and not pull.from_fork


async def test_pull_requests_from_a_fork_and_from_a_deleted_fork(
    forge: Forge, site: Site, sandbox: SandboxServer
) -> None:
    """A fork owned by another user: the pull request's head repository is the fork; once the fork is
    deleted both forges answer no head repository (GitHub `head.repo` null; Gitea `repo_id` -1, `repo`
    null) — `from_fork` stays true, and the commits are still there."""
    repo = site.new_repo()
    outsider = Site(site.kind, sandbox.url, USERS["outsider"])
    try:
        made = outsider.call("POST", f"/repos/{repo}/forks", {})
        fork = RepoRef.parse(made["full_name"])
        outsider.branch(fork, "fix", {"fix.txt": b"fix"})
        number = outsider.pull(repo, "outsider:fix")
        pull = await forge.get_pull_request(repo, number)
        assert (pull.head_repo_id, pull.from_fork, pull.head_ref) == (made["id"], True, "fix")
        assert pull.base_repo_id != made["id"]
        assert outsider.client.delete(f"/repos/{fork}").status_code == 204
        gone = await forge.get_pull_request(repo, number)
        assert (gone.head_repo_id, gone.from_fork, gone.head_sha) == (None, True, pull.head_sha)
        assert [c.message.strip() for c in await forge.list_pr_commits(repo, number)] == ["add fix.txt"]
    finally:
        outsider.client.close()
        outsider.admin.close()


async def test_find_pull_request_never_answers_a_forks_branch(
    forge: Forge, site: Site, sandbox: SandboxServer
) -> None:
    """`find_pull_request(repo, branch)` is this repository's branch only: a fork's branch of the same
    name is not it, nor is a deleted fork's (`head.repo` null, issue 24 §6). Both adapters now decide by
    `PullRequest.from_fork` (head repository id); Gitea's used to read a null `head.repo` as this
    repository, which went unseen only because Gitea also answers such a head's `ref` as
    `refs/pull/N/head` (services/convert/pull.go `ToAPIPullRequest`), as the sandbox does."""
    repo = site.new_repo()
    outsider = Site(site.kind, sandbox.url, USERS["outsider"])
    try:
        fork = RepoRef.parse(outsider.call("POST", f"/repos/{repo}/forks", {})["full_name"])
        outsider.branch(fork, "bugfix/1-x", {"fix.txt": b"fix"})
        foreign = outsider.pull(repo, "outsider:bugfix/1-x")
        assert await forge.find_pull_request(repo, "bugfix/1-x", state="all") is None
        assert outsider.client.delete(f"/repos/{fork}").status_code == 204
        assert (await forge.get_pull_request(repo, foreign)).head_repo_id is None
        assert await forge.find_pull_request(repo, "bugfix/1-x", state="all") is None
        assert await forge.find_pull_request(repo, "bugfix/1-x") is None
        site.branch(repo, "bugfix/1-x", {"own.txt": b"own"})
        own = site.pull(repo, "bugfix/1-x")
        found = await forge.find_pull_request(repo, "bugfix/1-x", state="all")
        assert found is not None and (found.number, found.from_fork) == (own, False)
    finally:
        outsider.client.close()
        outsider.admin.close()


async def test_the_github_adapter_says_which_api_version_it_speaks(forge: Forge, site: Site) -> None:
    """Every GitHub request carries `X-GitHub-Api-Version: 2022-11-28` (the shapes the adapter reads); Gitea
    has no such header and gets none."""
    repo = site.new_repo()
    await forge.get_repo(repo)
    entries = site.requests_to("GET", site.api_path(repo, ""))
    assert entries
    assert {e.get("api_version") for e in entries} == {API_VERSION if site.kind == "github" else None}


async def test_branch_pushes_name_who_moved_the_branch_whoever_the_commits_say_wrote_them(
    forge: Forge, site: Site, sandbox: SandboxServer
) -> None:
    """GitHub's repository activity, Gitea's activity feed: every move of the branch with its pusher,
    newest first — also a push whose commit names another person as author and committer (the forge links
    that commit to them: ``get_commit``). Another branch's pushes are not listed."""
    repo = site.new_repo()
    site.add_collaborator(repo, "outsider", "push")
    first = site.branch(repo, "bugfix/1-x", {"a.txt": b"a"})
    site.branch(repo, "other", {"b.txt": b"b"})
    writer = Site(site.kind, sandbox.url, USERS["outsider"])
    domain = "noreply.sandbox" if site.kind == "gitea" else "users.noreply.sandbox"
    owner = {"name": "owner", "email": f"owner@{domain}"}
    body = {
        "message": "spoofed",
        "content": base64.b64encode(b"c").decode(),
        "branch": "bugfix/1-x",
        "author": owner,
        "committer": owner,
    }
    writer.call("POST" if site.kind == "gitea" else "PUT", f"/repos/{repo}/contents/c.txt", body)
    writer.client.close()
    writer.admin.close()
    head = site.head(repo, "bugfix/1-x")
    assert head is not None and head != first

    pushes = await forge.branch_pushes(repo, "bugfix/1-x")
    assert [p.actor for p in pushes] == ["outsider", "owner", "owner"]
    assert pushes[0].after == head and pushes[1].after == first
    assert pushes[0].before == first, "where the move started (Gitea: its CompareURL's left side)"
    assert all(isinstance(p, Push) and p.at for p in pushes)
    commit = await forge.get_commit(repo, head)
    assert (commit.author_login, commit.committer_login) == ("owner", "owner")
    assert await forge.branch_pushes(repo, "nothing-here") == []


async def test_request_reviewers_asks_once_and_a_review_ends_the_request(
    forge: Forge, site: Site, reader: Site
) -> None:
    """Both forges list whom a review is requested from on the pull request; asking again asks nobody twice,
    the author is refused (422), and the reviewer leaves the list when their review comes."""
    repo = site.new_repo()
    site.branch(repo, "feature", {"a.txt": b"a"})
    number = site.pull(repo, "feature")
    assert (await forge.get_pull_request(repo, number)).requested_reviewers == ()
    assert await forge.request_reviewers(repo, number, ["reader"]) == ("reader",)
    assert await forge.request_reviewers(repo, number, ["reader", "reader"]) == ("reader",)
    assert (await forge.get_pull_request(repo, number)).requested_reviewers == ("reader",)
    with pytest.raises(ValidationFailed):
        await forge.request_reviewers(repo, number, ["owner"])
    reader.call("POST", f"/repos/{repo}/pulls/{number}/reviews", {"event": "COMMENT", "body": "looked"})
    assert (await forge.get_pull_request(repo, number)).requested_reviewers == ()


async def test_a_push_history_longer_than_the_bound_is_refused_whole_even_a_day_at_a_time(
    make_forge: MakeForge, site: Site
) -> None:
    """STEWARD_MAX_LIST_ITEMS: Gitea's feed is the whole repository's and Gitea does not cap it; past the
    bound it is read a day at a time from the branch's day (``since``), and a day past the bound too is
    refused whole, never cut short (all of the sandbox's pushes are today's). GitHub's activity is the
    branch's own."""
    forge = await make_forge(max_items=2)
    repo = site.new_repo()
    site.branch(repo, "bugfix/1-x", {"a.txt": b"a"})
    for name in ("b", "c", "d"):
        site.branch(repo, f"other-{name}", {f"{name}.txt": b"x"})
    today = datetime.now(UTC).isoformat()
    if site.kind == "gitea":
        with pytest.raises(TooManyItems):
            await forge.branch_pushes(repo, "bugfix/1-x", today)
    else:
        assert len(await forge.branch_pushes(repo, "bugfix/1-x", today)) == 2  # made, then its commit
