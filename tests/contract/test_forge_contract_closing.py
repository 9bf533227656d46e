"""The Forge port's closing and first-contribution reads — ``close_issue`` (with GitHub's state reasons),
``Issue.closed_by``/``state_reason``/``author_association`` and ``opened_before`` — as one contract both
adapters keep (each test runs against GitHubForge and GiteaForge over HTTP to the sandbox)."""

from __future__ import annotations

from bot.forge import Forge
from bot.sandbox.server import SandboxServer
from tests.contract.conftest import USERS, Site


async def test_an_issue_is_closed_with_its_reason_where_the_forge_keeps_one(forge: Forge, site: Site) -> None:
    """GitHub keeps `state_reason` (a duplicate names its canonical issue by global id) and says who closed
    it; Gitea keeps no reason: the issue is only closed."""
    repo = site.new_repo()
    first = site.open_issue(repo, "the original")
    again = site.open_issue(repo, "the same again")
    wontfix = site.open_issue(repo, "not for us")
    closed = await forge.close_issue(repo, again, reason="duplicate", duplicate_of=site.issue_id(repo, first))
    assert closed.state == "closed"
    await forge.close_issue(repo, wontfix, reason="not_planned")
    read = await forge.get_issue(repo, again)
    if site.kind == "github":
        assert (read.state_reason, read.closed_by) == ("duplicate", "steward-bot")
        assert (await forge.get_issue(repo, wontfix)).state_reason == "not_planned"
        assert (await forge.get_issue(repo, first)).author_association == "OWNER"
    else:
        assert (read.state, read.state_reason, read.author_association) == ("closed", "", "")


async def test_opened_before_reads_the_forges_listing_by_creator(
    forge: Forge, site: Site, sandbox: SandboxServer
) -> None:
    """Whether a person opened an issue or pull request here before a given number: the forge's own listing
    (GitHub `creator=`, Gitea `created_by=`), every state, issues and pull requests alike."""
    repo = site.new_repo()
    outsider = Site(site.kind, sandbox.url, USERS["outsider"])
    try:
        site.open_issue(repo, "the owner's")
        first = outsider.open_issue(repo, "first")
        assert not await forge.opened_before(repo, "outsider", first)
        second = outsider.open_issue(repo, "second")
        outsider.close_issue(repo, first)
        assert await forge.opened_before(repo, "outsider", second)
        assert not await forge.opened_before(repo, "outsider", first)
    finally:
        outsider.client.close()
        outsider.admin.close()
