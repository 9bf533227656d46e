"""One contract for every Forge adapter: each test runs against GitHubForge (gidgethub) and GiteaForge
(py-gitea), both talking to the sandbox forge over HTTP. What a handler may rely on holds on both."""

from __future__ import annotations

import asyncio
import time

import pytest
from redis.asyncio import Redis

from bot.forge import PERMISSION_ORDER, Forge, ForgeUnavailable, NotFound, PermissionDenied, RepoRef
from bot.forge.write_budget import WriteBudget
from tests.contract.conftest import MakeForge, Site


def test_the_protocol_is_implemented_in_full(forge: Forge) -> None:
    assert isinstance(forge, Forge)
    wanted = {name for name in dir(Forge) if not name.startswith("_") and callable(getattr(Forge, name))}
    missing = {name for name in wanted if not callable(getattr(forge, name, None))}
    assert not missing


async def test_identity_and_repository(forge: Forge, site: Site) -> None:
    repo = site.new_repo()
    me = await forge.whoami()
    assert me.login == "steward-bot" and me.id > 0
    found = await forge.get_repo(repo)
    assert found.ref == repo and found.default_branch == "main" and not found.private
    assert found.html_url.endswith(f"/{repo}")


async def test_an_issue_reads_back(forge: Forge, site: Site) -> None:
    repo = site.new_repo()
    number = site.open_issue(repo, "Crash on start", "It crashes.")
    issue = await forge.get_issue(repo, number)
    assert (issue.number, issue.title, issue.body, issue.state, issue.author) == (
        number,
        "Crash on start",
        "It crashes.",
        "open",
        "owner",
    )
    assert issue.id > 0 and not issue.is_pull_request and issue.labels == () and issue.milestone is None
    site.close_issue(repo, number)
    assert (await forge.get_issue(repo, number)).state == "closed"


async def test_comments_are_created_edited_and_listed(forge: Forge, site: Site) -> None:
    repo = site.new_repo()
    number = site.open_issue(repo, "talk")
    theirs = site.comment(repo, number, "first")
    mine = await forge.create_comment(repo, number, "second")
    assert mine.author == "steward-bot" and mine.body == "second" and mine.id > 0
    edited = await forge.edit_comment(repo, mine.id, "second, edited")
    assert edited.id == mine.id and edited.body == "second, edited"
    listed = await forge.list_comments(repo, number)
    assert [(c.id, c.author, c.body) for c in listed] == [
        (theirs, "owner", "first"),
        (mine.id, "steward-bot", "second, edited"),
    ]


async def test_comments_are_listed_past_one_page(forge: Forge, site: Site) -> None:
    repo = site.new_repo()
    number = site.open_issue(repo, "busy")
    ids = [site.comment(repo, number, f"comment {i}") for i in range(120)]
    listed = await forge.list_comments(repo, number)
    assert [c.id for c in listed] == ids


async def test_reactions_are_added_once(forge: Forge, site: Site) -> None:
    repo = site.new_repo()
    number = site.open_issue(repo, "react")
    comment = site.comment(repo, number, "/steward ping")
    await forge.add_reaction(repo, comment, "eyes")
    await forge.add_reaction(repo, comment, "eyes")
    await forge.add_reaction(repo, comment, "+1")
    assert sorted(site.reactions(repo, comment)) == ["+1", "eyes"]


async def test_labels_are_created_when_missing(forge: Forge, site: Site) -> None:
    repo = site.new_repo()
    made = await forge.ensure_label(repo, "needs-info", color="fbca04", description="waiting on the reporter")
    assert (made.name, made.color, made.description) == ("needs-info", "fbca04", "waiting on the reporter")
    again = await forge.ensure_label(repo, "needs-info", color="000000")
    assert again == made, "an existing label is returned as it is, not changed"
    labels = site.repo_labels(repo)
    assert sorted(labels) == sorted([*site.default_labels, "needs-info"])
    assert labels["needs-info"]["color"].lstrip("#") == "fbca04"


async def test_a_labels_description_is_changed(forge: Forge, site: Site) -> None:
    repo = site.new_repo()
    await forge.ensure_label(repo, "needs-info", color="fbca04", description="waiting on the reporter")
    changed = await forge.set_label_description(repo, "needs-info", "aguardando o autor")
    assert (changed.name, changed.description) == ("needs-info", "aguardando o autor")
    assert site.repo_labels(repo)["needs-info"]["description"] == "aguardando o autor"
    known = await forge.ensure_label(repo, "needs-info")
    assert known.description == "aguardando o autor", "the adapter knows it as changed"
    with pytest.raises(NotFound):
        await forge.set_label_description(repo, "never-existed", "x")


async def test_repo_labels_are_listed_past_one_page(forge: Forge, site: Site) -> None:
    repo = site.new_repo()
    names = [f"label-{i:03}" for i in range(120)]
    for name in names:
        site.create_label(repo, name)
    listed = await forge.list_repo_labels(repo)
    assert sorted(label.name for label in listed) == sorted([*site.default_labels, *names])
    # GitHub links the next pages by the repository's id (`/repositories/{id}/labels`).
    pages = [r for r in site.admin.get("/_sandbox/requests").json() if r["path"].endswith("/labels")]
    assert len([r for r in pages if r["method"] == "GET"]) >= 2


async def test_issue_labels_are_set_added_and_removed(forge: Forge, site: Site) -> None:
    repo = site.new_repo()
    number = site.open_issue(repo, "labels")
    site.create_label(repo, "bug")
    assert sorted(await forge.set_labels(repo, number, ["bug", "new-one"])) == ["bug", "new-one"]
    assert site.labels_of(repo, number) == ["bug", "new-one"]
    assert "new-one" in site.repo_labels(repo), "a missing label is created"
    assert sorted(await forge.add_labels(repo, number, ["triaged", "bug"])) == ["bug", "new-one", "triaged"]
    await forge.remove_label(repo, number, "new-one")
    await forge.remove_label(repo, number, "never-existed")
    assert site.labels_of(repo, number) == ["bug", "triaged"]
    assert (await forge.get_issue(repo, number)).has_label("TRIAGED")
    assert await forge.set_labels(repo, number, []) == ()
    assert site.labels_of(repo, number) == []


async def test_a_label_deleted_behind_the_adapters_back_is_recreated(forge: Forge, site: Site) -> None:
    repo = site.new_repo()
    number = site.open_issue(repo, "stale")
    await forge.set_labels(repo, number, ["flaky"])
    label = site.repo_labels(repo)["flaky"]
    site.call("DELETE", f"/repos/{repo}/labels/{label['id'] if site.kind == 'gitea' else 'flaky'}")
    assert await forge.add_labels(repo, number, ["flaky"]) == ("flaky",)


async def test_permissions(forge: Forge, site: Site) -> None:
    """The bot reads others' permissions with the access the README asks for: write on GitHub, and
    Administrator on Gitea (where a write collaborator may read only its own)."""
    repo = site.new_repo()
    if site.kind == "gitea":
        site.add_collaborator(repo, "steward-bot", "admin")
    assert await forge.permission_of(repo, "owner") == "admin"
    assert await forge.permission_of(repo, "steward-bot") == ("admin" if site.kind == "gitea" else "write")
    assert await forge.permission_of(repo, "reader") == "read"
    assert await forge.permission_of(repo, "outsider") == "read", "anyone may read a public repository"
    assert await forge.permission_of(repo, "nobody-at-all") == "none"
    assert all(level in PERMISSION_ORDER for level in ["admin", "write", "read", "none"])


async def test_with_write_access_only_gitea_refuses_and_the_adapter_says_so(forge: Forge, site: Site) -> None:
    """FORGE-FACTS: GitHub lets a collaborator with push access read every permission; Gitea lets a Write
    collaborator read only its own (403). The adapter raises PermissionDenied rather than answering "none",
    so a command is never refused or allowed on a guess."""
    repo = site.new_repo()
    if site.kind == "github":
        assert await forge.permission_of(repo, "owner") == "admin"
    else:
        with pytest.raises(PermissionDenied):
            await forge.permission_of(repo, "owner")
    assert await forge.permission_of(repo, "steward-bot") == "write"


async def test_files_are_read_at_a_ref(forge: Forge, site: Site) -> None:
    repo = site.new_repo()
    site.put_file(repo, ".steward/config.yml", b"labels:\n  bug: red\n")
    found = await forge.read_file(repo, ".steward/config.yml")
    assert found is not None and found.content == b"labels:\n  bug: red\n" and found.sha
    assert (await forge.read_file(repo, "README.md", ref="main")) is not None
    assert await forge.read_file(repo, "missing.txt") is None
    assert await forge.read_file(repo, ".steward") is None, "a directory is not a file"
    files = await forge.list_files(repo, "main")
    assert files is not None and {".steward/config.yml", "README.md"} <= set(files), files
    assert ".steward" not in files, "only files, not folders"
    assert await forge.list_files(repo, "0" * 40) is None


async def test_a_teams_members_are_read_when_the_team_is_visible(forge: Forge, site: Site) -> None:
    """Issue 36 §5's `@org/team` reviewer groups: a team's logins, for the organisation's members (GitHub: a
    team not visible is a 404, as one that does not exist; Gitea: 403 outside the organisation)."""
    team = {"login": "acme-c", "members": {"steward-bot": "member"}, "teams": {"Security": ["carol", "dave"]}}
    site.admin.post("/_sandbox/orgs", json=team).raise_for_status()
    assert await forge.team_members("acme-c", "security") == ("carol", "dave")
    with pytest.raises(NotFound):
        await forge.team_members("acme-c", "nobody")
    hidden = {"login": "acme-h", "members": {}, "teams": {"Security": ["carol"]}}
    site.admin.post("/_sandbox/orgs", json=hidden).raise_for_status()
    with pytest.raises(NotFound if site.kind == "github" else PermissionDenied):
        await forge.team_members("acme-h", "Security")


async def test_issue_relations(forge: Forge, site: Site) -> None:
    repo = site.new_repo()
    parent, blocker, other = (site.open_issue(repo, t) for t in ("parent", "blocker", "other"))
    assert await forge.list_sub_issues(repo, parent) == []
    assert await forge.list_blocked_by(repo, parent) == []
    await forge.add_blocked_by(repo, parent, blocker)
    await forge.add_blocked_by(repo, parent, other)
    await forge.add_blocked_by(repo, parent, blocker)
    assert sorted(await forge.list_blocked_by(repo, parent)) == sorted([blocker, other])
    # A blocker in another repository is not a "#N" of this one: it is left out, not mistaken for one here.
    elsewhere = site.new_repo()
    far = site.open_issue(elsewhere, "far away")
    if site.kind == "github":
        body: dict[str, object] = {"issue_id": site.issue_id(elsewhere, far)}
        site.call("POST", f"/repos/{repo}/issues/{parent}/dependencies/blocked_by", body)
    else:
        body = {"owner": elsewhere.owner, "repo": elsewhere.name, "index": far}
        site.call("POST", f"/repos/{repo}/issues/{parent}/dependencies", body)
    assert sorted(await forge.list_blocked_by(repo, parent)) == sorted([blocker, other])
    if site.kind == "github":
        child = site.open_issue(repo, "child")
        site.call(
            "POST", f"/repos/{repo}/issues/{parent}/sub_issues", {"sub_issue_id": site.issue_id(repo, child)}
        )
        assert [i.number for i in await forge.list_sub_issues(repo, parent)] == [child]


async def test_what_does_not_exist_is_not_found(forge: Forge, site: Site) -> None:
    repo = site.new_repo()
    number = site.open_issue(repo, "here")
    for call in (
        forge.get_repo(RepoRef("owner", "no-such-repo")),
        forge.get_issue(repo, 9999),
        forge.list_comments(repo, 9999),
        forge.create_comment(repo, 9999, "hello"),
        forge.edit_comment(repo, 999_999_999, "hello"),
    ):
        with pytest.raises(NotFound):
            await call
    assert (await forge.get_issue(repo, number)).title == "here"


async def test_a_5xx_storm_is_retried_then_surfaces_as_forge_unavailable(
    make_forge: MakeForge, site: Site
) -> None:
    forge = await make_forge(attempts=3)
    repo = site.new_repo()
    number = site.open_issue(repo, "storm")
    path = site.api_path(repo, f"/issues/{number}")
    site.fault(method="GET", path=f"{path}$", status=503, times=100)
    with pytest.raises(ForgeUnavailable) as raised:
        await forge.get_issue(repo, number)
    assert "503" in str(raised.value) and f"{repo}#{number}" in str(raised.value)
    assert [r["status"] for r in site.requests_to("GET", path)] == [503, 503, 503]


async def test_a_short_5xx_burst_on_a_resendable_write_is_retried_into_success(
    make_forge: MakeForge, site: Site
) -> None:
    """Setting an issue's labels sets an absolute value: sending it again after a 502 changes nothing."""
    forge = await make_forge(attempts=4)
    repo = site.new_repo()
    number = site.open_issue(repo, "burst")
    path = site.api_path(repo, f"/issues/{number}/labels")
    site.fault(method="PUT", path=f"{path}$", status=502, times=2)
    assert await forge.set_labels(repo, number, ["triaged"]) == ("triaged",)
    assert [r["status"] for r in site.requests_to("PUT", path)] == [502, 502, 200]


@pytest.mark.parametrize(
    "fault", [{"status": 502}, {"drop": True}], ids=["apply-then-502", "apply-then-drop"]
)
async def test_a_comment_the_forge_applied_but_did_not_confirm_is_not_posted_twice(
    make_forge: MakeForge, site: Site, fault: dict[str, object]
) -> None:
    """FORGE-FACTS: a 5xx or a dropped connection after a write does not mean the write did not happen.
    A comment POST is not resent: the call fails (the job re-runs from a fresh read); one comment exists."""
    forge = await make_forge(attempts=4)
    repo = site.new_repo()
    number = site.open_issue(repo, "uncertain write")
    path = site.api_path(repo, f"/issues/{number}/comments")
    site.fault(method="POST", path=f"{path}$", apply=True, times=1, **fault)
    with pytest.raises(ForgeUnavailable):
        await forge.create_comment(repo, number, "exactly once")
    assert len(site.requests_to("POST", path)) == 1, "the write was not sent again"
    assert [c.body for c in await forge.list_comments(repo, number)] == ["exactly once"]


async def test_a_reaction_the_forge_applied_but_answered_502_is_resent_harmlessly(
    make_forge: MakeForge, site: Site
) -> None:
    """A reaction is added once per person and content, so resending it is safe and the call succeeds."""
    forge = await make_forge(attempts=4)
    repo = site.new_repo()
    number = site.open_issue(repo, "react")
    comment = site.comment(repo, number, "/steward ping")
    path = site.api_path(repo, f"/issues/comments/{comment}/reactions")
    site.fault(method="POST", path=f"{path}$", apply=True, status=502, times=1)
    await forge.add_reaction(repo, comment, "eyes")
    assert site.reactions(repo, comment) == ["eyes"]


async def test_429_with_retry_after_waits_then_succeeds(make_forge: MakeForge, site: Site) -> None:
    forge = await make_forge()
    repo = site.new_repo()
    number = site.open_issue(repo, "slow down")
    path = site.api_path(repo, f"/issues/{number}")
    site.fault(method="GET", path=f"{path}$", status=429, times=1, headers={"Retry-After": "1"})
    started = time.monotonic()
    assert (await forge.get_issue(repo, number)).title == "slow down"
    assert time.monotonic() - started >= 0.9


async def test_timeouts_fire_on_a_route_that_never_answers(make_forge: MakeForge, site: Site) -> None:
    forge = await make_forge(http_timeout=0.5, attempts=2)
    repo = site.new_repo()
    number = site.open_issue(repo, "hang")
    path = site.api_path(repo, f"/issues/{number}")
    site.fault(method="GET", path=f"{path}$", hang=True, hang_seconds=30, times=10)
    started = time.monotonic()
    with pytest.raises(ForgeUnavailable):
        await forge.get_issue(repo, number)
    assert time.monotonic() - started < 10, "the read timeout fired; nothing waited for the hang"
    assert len(site.requests_to("GET", path)) == 2, "a read that timed out is retried"


async def test_a_write_that_timed_out_is_not_resent(make_forge: MakeForge, site: Site) -> None:
    """The write may have reached the forge: the job re-runs and re-reads instead of posting twice."""
    forge = await make_forge(http_timeout=0.5, attempts=3)
    repo = site.new_repo()
    number = site.open_issue(repo, "hang on write")
    path = site.api_path(repo, f"/issues/{number}/comments")
    site.fault(method="POST", path=f"{path}$", hang=True, hang_seconds=30, times=1)
    with pytest.raises(ForgeUnavailable):
        await forge.create_comment(repo, number, "once")
    assert len(site.requests_to("POST", path)) == 1


async def test_writes_spend_the_write_budget_and_reads_do_not(
    make_forge: MakeForge, site: Site, redis_url: str
) -> None:
    waits: list[float] = []
    redis = Redis.from_url(redis_url)
    try:
        budget = WriteBudget(redis, [(2, 1.0)], on_wait=waits.append)
        forge = await make_forge(budget=budget)
        repo = site.new_repo()
        number = site.open_issue(repo, "budget")
        for _ in range(5):
            await forge.get_issue(repo, number)
        assert waits == [], "reads are not budgeted"
        started = time.monotonic()
        await asyncio.gather(*(forge.create_comment(repo, number, f"write {i}") for i in range(3)))
        assert waits and time.monotonic() - started >= 0.5, "the third write waited for budget"
        assert len(await forge.list_comments(repo, number)) == 3, "waiting loses nothing"
    finally:
        await redis.aclose()
