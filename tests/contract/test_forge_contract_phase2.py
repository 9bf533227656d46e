"""The Forge port, phase 2 — issues and milestones, git, pull requests, CI, webhook deliveries — as one
contract both adapters keep (each test runs against GitHubForge and GiteaForge over HTTP to the sandbox).

"Apply, then 502" tests pin FORGE-FACTS "Writes that fail": a write the forge applied but did not confirm is
never sent again blindly; the method looks, and either finds its own write or fails, and exactly one thing
exists afterwards — and calling it again makes nothing more.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from bot.forge import (
    KEEP,
    FileChange,
    Forge,
    ForgeUnavailable,
    NotFound,
    NotSupported,
    RepoRef,
    TooManyItems,
    ValidationFailed,
)
from bot.forge.ci import latest_statuses
from tests.contract.conftest import MakeForge, Site

# --- issues ------------------------------------------------------------------------------------------------


async def test_issues_are_listed_past_one_page_by_state_kind_milestone_and_labels(
    forge: Forge, site: Site
) -> None:
    """GitHub pages by 100, Gitea by 50 (its MAX_RESPONSE_ITEMS): 120 issues take more than a page on both."""
    repo = site.new_repo()
    numbers = [site.open_issue(repo, f"issue {i}") for i in range(120)]
    ms = site.milestone(repo, "v1")
    for number in numbers[:3]:
        site.set_milestone(repo, number, ms)
    site.create_label(repo, "bug")
    site.create_label(repo, "ui")
    site.call("PUT", f"/repos/{repo}/issues/{numbers[0]}/labels", {"labels": ["bug", "ui"]})
    site.call("PUT", f"/repos/{repo}/issues/{numbers[1]}/labels", {"labels": ["bug"]})
    site.close_issue(repo, numbers[2])
    site.branch(repo, "feature", {"f.txt": b"f"})
    pr = site.pull(repo, "feature")
    site.set_milestone(repo, pr, ms)

    open_issues = await forge.list_issues(repo)
    assert sorted(i.number for i in open_issues) == sorted(numbers[:2] + numbers[3:])
    assert not any(i.is_pull_request for i in open_issues)
    in_milestone = await forge.list_issues(repo, milestone=ms, state="all", kind="all")
    assert sorted(i.number for i in in_milestone) == sorted([*numbers[:3], pr])
    assert [i.number for i in await forge.list_issues(repo, milestone=ms, kind="pulls")] == [pr]
    assert [i.number for i in await forge.list_issues(repo, milestone=ms, state="closed")] == [numbers[2]]
    assert [i.number for i in await forge.list_issues(repo, labels=["bug", "ui"])] == [numbers[0]]
    assert sorted(i.number for i in await forge.list_issues(repo, labels=["bug"])) == sorted(numbers[:2])
    assert all(i.milestone == ms for i in in_milestone)


async def test_a_listing_says_who_is_assigned_and_which_pull_requests_are_drafts(
    forge: Forge, site: Site
) -> None:
    """One listing is enough for the overview (docs/overview.md): each issue's assignees, and whether a pull
    request is a draft (GitHub's `draft`, Gitea's `pull_request.draft`: the WIP prefix)."""
    repo = site.new_repo()
    number = site.open_issue(repo, "assigned")
    site.call("PATCH", f"/repos/{repo}/issues/{number}", {"assignees": ["steward-bot"]})
    site.branch(repo, "draft", {"d.txt": b"d"})
    site.branch(repo, "ready", {"r.txt": b"r"})
    if site.kind == "gitea":
        draft = site.pull(repo, "draft", title="WIP: a test only")
    else:
        draft = int(
            site.call(
                "POST", f"/repos/{repo}/pulls", {"head": "draft", "base": "main", "title": "t", "draft": True}
            )["number"]
        )
    ready = site.pull(repo, "ready")
    listed = {i.number: i for i in await forge.list_issues(repo, kind="all")}
    assert listed[number].assignees == ("steward-bot",)
    assert (listed[draft].draft, listed[ready].draft, listed[number].draft) == (True, False, False)


async def test_a_list_longer_than_the_bound_is_refused_not_cut_short(
    make_forge: MakeForge, site: Site
) -> None:
    """STEWARD_MAX_LIST_ITEMS: past the bound list_issues raises TooManyItems, so no decision is taken on
    part of a list (is every issue of the milestone closed?)."""
    forge = await make_forge(max_items=55)
    repo = site.new_repo()
    for i in range(60):
        site.open_issue(repo, f"issue {i}")
    with pytest.raises(TooManyItems) as raised:
        await forge.list_issues(repo)
    assert raised.value.limit == 55
    assert len(await forge.list_issues(repo, state="closed")) == 0


async def test_an_issue_is_created_with_labels_and_milestone_and_not_twice(forge: Forge, site: Site) -> None:
    repo = site.new_repo()
    ms = site.milestone(repo, "v1")
    made = await forge.create_issue(repo, "Milestone v1", "The gate.", labels=["steward:gate"], milestone=ms)
    assert (made.title, made.body, made.labels, made.milestone, made.author) == (
        "Milestone v1",
        "The gate.",
        ("steward:gate",),
        ms,
        "steward-bot",
    )
    again = await forge.create_issue(repo, "Milestone v1", "The gate.", labels=["steward:gate"], milestone=ms)
    assert again.number == made.number, "a job that runs again finds its own issue"
    other = await forge.create_issue(repo, "Milestone v1", "Another body.")
    assert other.number != made.number


@pytest.mark.parametrize(
    "fault", [{"status": 502}, {"drop": True}], ids=["apply-then-502", "apply-then-drop"]
)
async def test_an_issue_the_forge_applied_but_did_not_confirm_exists_once(
    make_forge: MakeForge, site: Site, fault: dict[str, object]
) -> None:
    forge = await make_forge(attempts=4)
    repo = site.new_repo()
    path = site.api_path(repo, "/issues")
    site.fault(method="POST", path=f"{path}$", apply=True, times=1, **fault)
    made = await forge.create_issue(repo, "Once", "only once")
    assert len(site.requests_to("POST", path)) == 1, "the POST was not sent again"
    assert [i.number for i in await forge.list_issues(repo)] == [made.number]
    await forge.create_issue(repo, "Once", "only once")
    assert len(await forge.list_issues(repo)) == 1


async def test_an_issue_is_edited_field_by_field(forge: Forge, site: Site) -> None:
    repo = site.new_repo()
    ms = site.milestone(repo, "v1")
    number = site.open_issue(repo, "old title", "old body")
    edited = await forge.edit_issue(repo, number, title="new title", milestone=ms)
    assert (edited.title, edited.body, edited.milestone) == ("new title", "old body", ms)
    kept = await forge.edit_issue(repo, number, body="new body", milestone=KEEP)
    assert (kept.body, kept.milestone) == ("new body", ms)
    closed = await forge.edit_issue(repo, number, state="closed", milestone=None)
    assert (closed.state, closed.milestone) == ("closed", None)
    with pytest.raises(NotFound):
        await forge.edit_issue(repo, 999, title="x")


async def test_a_comment_is_read_by_id_and_by_its_link(forge: Forge, site: Site) -> None:
    """FORGE-FACTS "Links": GitHub …/issues/N#issuecomment-ID and …/pull/N#…; Gitea …/issues/N#… and
    …/pulls/N#…."""
    repo = site.new_repo()
    number = site.open_issue(repo, "talk")
    comment_id = site.comment(repo, number, "decided: yes")
    comment = await forge.get_comment(repo, comment_id)
    assert (comment.id, comment.body, comment.issue_number) == (comment_id, "decided: yes", number)
    link = await forge.resolve_comment_url(comment.html_url)
    assert (link.repo, link.number, link.comment.id) == (repo, number, comment_id)
    assert comment.html_url == f"{site.web_url()}/{repo}/issues/{number}#issuecomment-{comment_id}"

    site.branch(repo, "feature", {"f.txt": b"f"})
    pr = site.pull(repo, "feature")
    on_pr = site.comment(repo, pr, "on the pull request")
    segment = "pulls" if site.kind == "gitea" else "pull"
    pr_url = f"{site.web_url()}/{repo}/{segment}/{pr}#issuecomment-{on_pr}"
    assert (await forge.get_comment(repo, on_pr)).html_url == pr_url
    resolved = await forge.resolve_comment_url(pr_url)
    assert (resolved.number, resolved.comment.body) == (pr, "on the pull request")


async def test_links_that_are_not_comment_links_on_this_forge_are_refused_clearly(
    forge: Forge, site: Site
) -> None:
    repo = site.new_repo()
    number = site.open_issue(repo, "talk")
    comment_id = site.comment(repo, number, "x")
    base = f"{site.web_url()}/{repo}"
    other_host = f"https://elsewhere.example/{repo}/issues/{number}#issuecomment-{comment_id}"
    wrong_segment = "pull" if site.kind == "gitea" else "pulls"
    for url, why in [
        (other_host, "not a link on this forge"),
        (f"{base}/pull/{number}#discussion_r{comment_id}", "review comment"),
        (f"{base}/issues/{number}", "not a link to a comment"),
        (f"{base}/{wrong_segment}/{number}#issuecomment-{comment_id}", "not a link to an issue"),
    ]:
        with pytest.raises(NotSupported, match=why):
            await forge.resolve_comment_url(url)
    with pytest.raises(NotFound):
        await forge.resolve_comment_url(f"{base}/issues/{number + 1}#issuecomment-{comment_id}")
    with pytest.raises(NotFound):
        await forge.get_comment(repo, 999_999_999)


# --- milestones --------------------------------------------------------------------------------------------


async def test_milestones_by_key_with_state_description_and_closed_at(forge: Forge, site: Site) -> None:
    """FORGE-FACTS "Milestones": GitHub addresses them by number, Gitea by id; one Milestone.key hides it."""
    repo = site.new_repo()
    first = site.milestone(repo, "v1")
    second = site.milestone(repo, "v2")
    site.call(
        "PATCH",
        f"/repos/{repo}/milestones/{first}",
        {"description": "the first", "due_on": "2030-01-01T00:00:00Z"},
    )
    number = site.open_issue(repo, "in v1")
    site.set_milestone(repo, number, first)
    found = await forge.get_milestone(repo, first)
    assert (found.key, found.title, found.state, found.description, found.open_issues) == (
        first,
        "v1",
        "open",
        "the first",
        1,
    )
    assert found.due_on and found.due_on.startswith("2030-01-01") and found.closed_at is None
    assert found.html_url
    closed = await forge.set_milestone_state(repo, first, "closed")
    assert closed.state == "closed" and closed.closed_at
    assert [m.key for m in await forge.list_milestones(repo)] == [second]
    assert [m.key for m in await forge.list_milestones(repo, "closed")] == [first]
    assert sorted(m.key for m in await forge.list_milestones(repo, "all")) == sorted([first, second])
    assert (await forge.set_milestone_state(repo, first, "open")).closed_at is None
    with pytest.raises(NotFound):
        await forge.get_milestone(repo, 999_999)


async def test_milestones_are_listed_past_one_page(forge: Forge, site: Site) -> None:
    repo = site.new_repo()
    keys = [site.milestone(repo, f"m{i:03}") for i in range(110)]
    assert sorted(m.key for m in await forge.list_milestones(repo, "all")) == sorted(keys)


# --- git -------------------------------------------------------------------------------------------------


async def test_branches_and_commits_read_back(forge: Forge, site: Site) -> None:
    repo = site.new_repo()
    main = site.head(repo, "main")
    assert await forge.get_branch(repo, "main") == main
    assert await forge.get_branch(repo, "no-such-branch") is None
    head = site.branch(repo, "feature", {"docs/a.md": b"a"})
    commit = await forge.get_commit(repo, head)
    assert commit.sha == head and commit.parents == (main,) and commit.message.strip() == "add docs/a.md"
    assert [(f.path, f.status) for f in commit.files] == [("docs/a.md", "added")]
    with pytest.raises(NotFound):
        await forge.get_commit(repo, "0" * 40)


async def test_commit_files_makes_a_branch_with_exactly_one_commit_and_never_a_second(
    forge: Forge, site: Site
) -> None:
    """GitHub through the git data API; Gitea through POST /contents with new_branch (FORGE-FACTS)."""
    repo = site.new_repo()
    site.put_file(repo, "src/app.py", b"print('bug')\n")
    site.put_file(repo, "old.txt", b"old\n")
    main = site.head(repo, "main")
    assert main is not None
    files = [
        FileChange("tests/test_regression.py", b"def test_it():\n    assert False\n"),
        FileChange("src/app.py", b"print('fixed')\n"),
        FileChange("old.txt", None),
        FileChange("never-there.txt", None),
    ]
    made = await forge.commit_files(repo, base="main", branch="fix/12", files=files, message="Fix #12")
    assert made.parents == (main,) and made.message.strip() == "Fix #12"
    assert sorted((f.path, f.status) for f in made.files) == [
        ("old.txt", "removed"),
        ("src/app.py", "modified"),
        ("tests/test_regression.py", "added"),
    ]
    assert await forge.get_branch(repo, "fix/12") == made.sha
    assert site.head(repo, "main") == main, "the base is untouched"
    again = await forge.commit_files(repo, base="main", branch="fix/12", files=files, message="Fix #12")
    assert again.sha == made.sha
    assert site.commits_between(repo, main, "fix/12") == [made.sha]

    more = [FileChange("src/app.py", b"print('fixed better')\n")]
    second = await forge.commit_files(repo, base="main", branch="fix/12", files=more, message="Polish")
    assert second.parents == (made.sha,), "an existing branch is fast-forwarded by one commit"
    assert (
        await forge.commit_files(repo, base="main", branch="fix/12", files=files, message="Fix #12") == made
    )
    assert site.commits_between(repo, main, "fix/12") == [second.sha, made.sha]
    content = await forge.read_file(repo, "src/app.py", ref="fix/12")
    assert content is not None and content.content == b"print('fixed better')\n"


async def test_commit_files_from_a_missing_base_is_not_found(forge: Forge, site: Site) -> None:
    repo = site.new_repo()
    with pytest.raises(NotFound):
        await forge.commit_files(
            repo, base="no-such-base", branch="x", files=[FileChange("a", b"a")], message="m"
        )


@pytest.mark.parametrize(
    "fault", [{"status": 502}, {"drop": True}], ids=["apply-then-502", "apply-then-drop"]
)
async def test_a_commit_the_forge_applied_but_did_not_confirm_is_made_once(
    make_forge: MakeForge, site: Site, fault: dict[str, object]
) -> None:
    """The write that makes the branch (GitHub: POST /git/refs; Gitea: POST /contents) is applied, then the
    answer is lost; the method looks, finds its own commit, and a second call makes nothing more."""
    forge = await make_forge(attempts=4)
    repo = site.new_repo()
    main = site.head(repo, "main")
    assert main is not None
    path = site.api_path(repo, "/contents" if site.kind == "gitea" else "/git/refs")
    site.fault(method="POST", path=f"{path}$", apply=True, times=1, **fault)
    files = [FileChange("tests/test_it.py", b"assert False\n")]
    made = await forge.commit_files(repo, base="main", branch="fix/1", files=files, message="Regression test")
    assert len(site.requests_to("POST", path)) == 1, "the write was not sent again"
    assert site.commits_between(repo, main, "fix/1") == [made.sha]
    await forge.commit_files(repo, base="main", branch="fix/1", files=files, message="Regression test")
    assert site.commits_between(repo, main, "fix/1") == [made.sha]


async def test_concurrent_commits_to_one_new_branch_make_one_commit(forge: Forge, site: Site) -> None:
    """Two runs racing to make the same branch: the loser's write is refused (GitHub 422 "Reference already
    exists", Gitea 422 "branch already exists") and it finds the winner's commit instead."""
    repo = site.new_repo()
    main = site.head(repo, "main")
    files = [FileChange("tests/test_race.py", b"assert False\n")]
    made = await asyncio.gather(
        *(forge.commit_files(repo, base="main", branch="race", files=files, message="Race") for _ in range(3))
    )
    assert main is not None and site.commits_between(repo, main, "race") == [made[0].sha]
    assert {m.sha for m in made} == {made[0].sha}


# --- pull requests --------------------------------------------------------------------------------------


async def test_a_pull_request_is_opened_once_and_read_back(forge: Forge, site: Site) -> None:
    repo = site.new_repo()
    head = site.branch(repo, "fix/1", {"tests/test_it.py": b"assert False\n"})
    assert await forge.find_pull_request(repo, "fix/1") is None
    pr = await forge.open_pull_request(repo, head="fix/1", base="main", title="Fix #1", body="Fixes #1")
    assert (pr.title, pr.body, pr.state, pr.draft, pr.merged) == ("Fix #1", "Fixes #1", "open", False, False)
    assert (pr.head_ref, pr.head_sha, pr.base_ref, pr.author) == ("fix/1", head, "main", "steward-bot")
    again = await forge.open_pull_request(repo, head="fix/1", base="main", title="Fix #1", body="Fixes #1")
    assert again.number == pr.number and len(site.pulls(repo)) == 1
    assert (await forge.get_pull_request(repo, pr.number)).head_sha == head
    found = await forge.find_pull_request(repo, "fix/1")
    assert found is not None and found.number == pr.number
    with pytest.raises(NotFound):
        await forge.get_pull_request(repo, 999)


async def test_a_closed_pull_request_is_found_by_state(forge: Forge, site: Site) -> None:
    """``find_pull_request(state=…)``: a closed pull request is not the open one, but ``closed`` and ``all``
    find it (the newest of its branch), merged or not."""
    repo = site.new_repo()
    site.branch(repo, "try/1", {"a.txt": b"a"})
    number = site.pull(repo, "try/1")
    site.close_issue(repo, number)  # both forges close a pull request through its issue
    assert await forge.find_pull_request(repo, "try/1") is None
    for state in ("closed", "all"):
        found = await forge.find_pull_request(repo, "try/1", state=state)  # type: ignore[arg-type]
        assert found is not None and (found.number, found.state, found.merged) == (number, "closed", False)
    again = site.pull(repo, "try/1")
    newest = await forge.find_pull_request(repo, "try/1", state="all")
    assert newest is not None and (newest.number, newest.state) == (again, "open")


async def test_a_draft_is_githubs_flag_and_giteas_wip_title(forge: Forge, site: Site) -> None:
    """FORGE-FACTS "Draft PRs": GitHub takes draft: true; Gitea derives draft from a WIP: title prefix."""
    repo = site.new_repo()
    site.branch(repo, "fix/2", {"a.txt": b"a"})
    pr = await forge.open_pull_request(repo, head="fix/2", base="main", title="Fix #2", body="", draft=True)
    assert pr.draft
    assert pr.title == ("WIP: Fix #2" if site.kind == "gitea" else "Fix #2")


async def test_without_drafts_github_falls_back_to_a_wip_title(forge: Forge, site: Site) -> None:
    """FORGE-FACTS: where the plan has no drafts GitHub answers 422 "Draft pull requests are not supported
    in this repository"; the adapter opens a ready pull request titled [WIP] instead."""
    repo = site.new_repo()
    site.repo_settings(repo, drafts=False)
    site.branch(repo, "fix/3", {"a.txt": b"a"})
    pr = await forge.open_pull_request(repo, head="fix/3", base="main", title="Fix #3", body="", draft=True)
    if site.kind == "github":
        assert (pr.title, pr.draft) == ("[WIP] Fix #3", False)
    else:
        assert (pr.title, pr.draft) == ("WIP: Fix #3", True)
    assert len(site.pulls(repo)) == 1


async def test_a_pull_request_made_meanwhile_is_found_not_duplicated(forge: Forge, site: Site) -> None:
    """FORGE-FACTS: a second pull request for a head is refused (GitHub 422 "A pull request already exists
    for owner:branch.", Gitea 409); when the first look missed it (another worker opened it meanwhile), the
    refusal is answered by finding it."""
    repo = site.new_repo()
    site.branch(repo, "fix/4", {"a.txt": b"a"})
    theirs = site.pull(repo, "fix/4", title="opened meanwhile")
    # The first look answers "none yet", as it would have a moment before.
    site.fault(method="GET", path=f"{site.api_path(repo, '/pulls')}$", status=200, body=[], times=1)
    pr = await forge.open_pull_request(repo, head="fix/4", base="main", title="Fix #4", body="")
    assert pr.number == theirs and len(site.pulls(repo)) == 1


@pytest.mark.parametrize(
    "fault", [{"status": 502}, {"drop": True}], ids=["apply-then-502", "apply-then-drop"]
)
async def test_a_pull_request_the_forge_applied_but_did_not_confirm_exists_once(
    make_forge: MakeForge, site: Site, fault: dict[str, object]
) -> None:
    forge = await make_forge(attempts=4)
    repo = site.new_repo()
    site.branch(repo, "fix/5", {"a.txt": b"a"})
    path = site.api_path(repo, "/pulls")
    site.fault(method="POST", path=f"{path}$", apply=True, times=1, **fault)
    pr = await forge.open_pull_request(repo, head="fix/5", base="main", title="Fix #5", body="")
    assert len(site.requests_to("POST", path)) == 1
    assert [p["number"] for p in site.pulls(repo)] == [pr.number]
    await forge.open_pull_request(repo, head="fix/5", base="main", title="Fix #5", body="")
    assert len(site.pulls(repo)) == 1


async def test_a_pull_requests_commits_and_files_are_listed_past_one_page(forge: Forge, site: Site) -> None:
    repo = site.new_repo()
    files = {f"tests/test_{i:03}.py": f"# {i}\n".encode() for i in range(110)}
    head = site.branch(repo, "big", files)
    number = site.pull(repo, "big")
    commits = await forge.list_pr_commits(repo, number)
    assert len(commits) == 110 and commits[-1].sha == head
    assert all(len(c.parents) == 1 for c in commits)
    changed = await forge.list_pr_files(repo, number)
    assert sorted(f.path for f in changed) == sorted(files) and {f.status for f in changed} == {"added"}


# --- CI --------------------------------------------------------------------------------------------------


async def test_a_commit_status_is_set_cut_to_140_characters_and_not_written_twice(
    forge: Forge, site: Site
) -> None:
    """FORGE-FACTS: GitHub refuses a description over 140 characters (422), so it is cut."""
    repo = site.new_repo()
    sha = site.head(repo, "main")
    assert sha is not None
    status = await forge.set_commit_status(repo, sha, "steward/bugfix", "pending", "x" * 200, "http://ci/1")
    assert (status.state, len(status.description), status.target_url) == ("pending", 140, "http://ci/1")
    await forge.set_commit_status(repo, sha, "steward/bugfix", "pending", "x" * 200, "http://ci/1")
    assert len(site.statuses(repo, sha)) == 1, "an equal latest status is not written again"
    await forge.set_commit_status(repo, sha, "steward/bugfix", "success", "done")
    assert [s["context"] for s in site.statuses(repo, sha)] == ["steward/bugfix", "steward/bugfix"]
    latest = latest_statuses(await forge.commit_statuses(repo, sha))
    assert latest["steward/bugfix"].state == "success", "Steward's own statuses read back"


@pytest.mark.parametrize(
    "fault", [{"status": 502}, {"drop": True}], ids=["apply-then-502", "apply-then-drop"]
)
async def test_a_status_the_forge_applied_but_did_not_confirm_exists_once(
    make_forge: MakeForge, site: Site, fault: dict[str, object]
) -> None:
    forge = await make_forge(attempts=4)
    repo = site.new_repo()
    sha = site.head(repo, "main")
    assert sha is not None
    path = site.api_path(repo, f"/statuses/{sha}")
    site.fault(method="POST", path=f"{path}$", apply=True, times=1, **fault)
    await forge.set_commit_status(repo, sha, "steward/x", "failure", "red first")
    assert len(site.requests_to("POST", path)) == 1
    await forge.set_commit_status(repo, sha, "steward/x", "failure", "red first")
    assert len(site.statuses(repo, sha)) == 1


async def test_ci_of_a_commit_that_does_not_exist_is_not_found(forge: Forge, site: Site) -> None:
    repo = site.new_repo()
    with pytest.raises(NotFound):
        await forge.ci_state(repo, "0" * 40)


async def test_ci_state_reads_statuses_and_check_runs(forge: Forge, site: Site) -> None:
    """FORGE-FACTS: GitHub Actions results are check runs, not statuses: "CI is green" reads both (Gitea
    reports CI as statuses only)."""
    repo = site.new_repo()
    sha = site.head(repo, "main")
    assert sha is not None
    assert (await forge.ci_state(repo, sha)).verdict == "pending", "nothing reported yet"
    site.play_ci(repo, sha, kind="status", context="ci/lint", state="success")
    await forge.set_commit_status(repo, sha, "steward/bugfix", "failure", "Steward does not judge itself")
    if site.kind == "github":
        site.play_ci(repo, sha, kind="check_run", context="build", conclusion="failure")
        state = await forge.ci_state(repo, sha, required_contexts=["ci/lint", "build"])
        assert state.contexts == {"ci/lint": "green", "build": "red"} and state.verdict == "red"
        site.play_ci(repo, sha, kind="check_run", context="build", conclusion="success")
    else:
        site.play_ci(repo, sha, kind="status", context="build", state="failure")
        state = await forge.ci_state(repo, sha, required_contexts=["ci/lint", "build"])
        assert state.contexts == {"ci/lint": "green", "build": "red"} and state.verdict == "red"
        site.play_ci(repo, sha, kind="status", context="build", state="success")
    state = await forge.ci_state(repo, sha, required_contexts=["ci/lint", "build", "ci/e2e"])
    assert state.contexts == {"ci/lint": "green", "build": "green", "ci/e2e": "pending"}
    assert state.verdict == "pending"
    assert (await forge.ci_state(repo, sha, required_contexts=["ci/lint", "build"])).verdict == "green"


# --- webhook deliveries -------------------------------------------------------------------------------


async def test_hook_deliveries_are_listed_past_one_page_and_redelivered(forge: Forge, site: Site) -> None:
    """FORGE-FACTS "Webhooks": neither forge retries a failed delivery; GitHub keeps deliveries and
    redelivers on request (GET …/hooks/{id}/deliveries, POST …/attempts), Gitea's API has neither."""
    repo = site.new_repo()
    if site.kind == "gitea":
        with pytest.raises(NotSupported):
            await forge.list_hook_deliveries(repo)
        return
    # Reading a repository's hooks needs admin on it (a GitHub App: the "Webhooks" permission).
    site.add_collaborator(repo, "steward-bot", "admin")
    site.call("POST", f"/repos/{repo}/hooks", {"config": {"url": "http://127.0.0.1:9/h"}, "events": ["*"]})
    started = datetime.now(UTC) - timedelta(seconds=1)
    for i in range(110):
        site.create_label(repo, f"l{i:03}")
    site.admin.get("/_sandbox/deliveries/idle", params={"timeout": 30})
    found = await forge.list_hook_deliveries(repo)
    assert len(found) == 111 and {d.event for d in found} == {"ping", "label"}
    assert all(d.hook_id is not None and d.repo == repo and not d.redelivery for d in found)
    assert [d.id for d in found] == sorted((d.id for d in found), reverse=True), "newest first"
    assert len(await forge.list_hook_deliveries(repo, since=started)) == 111
    later = datetime.now(UTC) + timedelta(hours=1)
    assert await forge.list_hook_deliveries(repo, since=later) == []
    await forge.redeliver(repo, found[0])
    site.admin.get("/_sandbox/deliveries/idle", params={"timeout": 30})
    again = await forge.list_hook_deliveries(repo)
    assert again[0].redelivery and again[0].guid == found[0].guid and again[0].id != found[0].id
    with pytest.raises(NotSupported):
        await forge.list_hook_deliveries(None)


# --- end to end ------------------------------------------------------------------------------------------


async def test_a_bugfix_branch_and_its_pull_request_run_twice_make_one_of_each(
    forge: Forge, site: Site
) -> None:
    """The bugfix capability's writes, as a job that runs twice (at-least-once delivery) would make them:
    one branch, one commit on it, one pull request."""
    repo = site.new_repo()
    main = site.head(repo, "main")
    files = [FileChange("tests/test_issue_7.py", b"def test_issue_7():\n    assert False\n")]
    for _ in range(2):
        commit = await forge.commit_files(
            repo, base="main", branch="bugfix/7", files=files, message="Test #7"
        )
        pr = await forge.open_pull_request(
            repo, head="bugfix/7", base="main", title="Fix #7", body="Fixes #7", draft=True
        )
        assert pr.head_sha == commit.sha
    assert main is not None and site.commits_between(repo, main, "bugfix/7") == [commit.sha]
    assert len(site.pulls(repo)) == 1
    branches = [b for b in ("bugfix/7",) if site.head(repo, b)]
    assert branches == ["bugfix/7"]


async def test_concurrent_runs_make_one_pull_request(forge: Forge, site: Site) -> None:
    """Two jobs racing: whichever loses finds the winner's pull request (422 / 409 answered by a look)."""
    repo = site.new_repo()
    site.branch(repo, "race", {"a.txt": b"a"})
    results = await asyncio.gather(
        *(forge.open_pull_request(repo, head="race", base="main", title="Race", body="") for _ in range(3)),
        return_exceptions=True,
    )
    numbers = {r.number for r in results if not isinstance(r, BaseException)}
    errors = [r for r in results if isinstance(r, BaseException)]
    assert len(numbers) == 1 and not errors, errors
    assert len(site.pulls(repo)) == 1


def test_validation_failed_is_the_port_s_word_for_refusals() -> None:
    assert issubclass(ValidationFailed, Exception) and issubclass(ForgeUnavailable, Exception)
    assert RepoRef.parse("a/b").full_name == "a/b"


async def test_assignees_are_added_where_the_forge_assigns_them_and_removed(forge: Forge, site: Site) -> None:
    """`add_assignees` assigns those the forge will assign and says who is assigned afterwards, so the caller
    sees who was left out (FORGE-FACTS "Assignees"): a reader who commented is assignable on GitHub, not on
    Gitea (write access only), and Gitea's edit is never sent with someone it would refuse."""
    repo = site.new_repo()
    number = site.open_issue(repo, "claim me")
    site.call("POST", f"/repos/{repo}/issues/{number}/comments", {"body": "mine?"})
    reader = "reader"
    if site.kind == "github":
        # A comment from the reader makes them assignable there.
        reply = site.admin.post(
            f"/repos/{repo}/issues/{number}/comments",
            json={"body": "I'll take it"},
            headers={"Authorization": "token tok-reader"},
        )
        assert reply.status_code == 201, reply.text
    assigned = await forge.add_assignees(repo, number, ["steward-bot", reader, "nobody-at-all"])
    expected = ("steward-bot", reader) if site.kind == "github" else ("steward-bot",)
    assert assigned == expected
    assert (await forge.get_issue(repo, number)).assignees == expected
    assert await forge.add_assignees(repo, number, ["steward-bot"]) == expected  # already: no change
    assert await forge.remove_assignees(repo, number, ["steward-bot"]) == expected[1:]
    assert (await forge.get_issue(repo, number)).assignees == expected[1:]


async def test_whether_an_account_exists(forge: Forge) -> None:
    """`/assign @x` checks the name before it assigns or records anyone (GitHub `GET /users/{login}`, Gitea
    `GET /api/v1/users/{username}`: 404 when there is no such account)."""
    assert await forge.user_exists("reader")
    assert not await forge.user_exists("no-such-person-here")
