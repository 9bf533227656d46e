"""``Forge.repo_admins``: who administers a repository, as both adapters read it over HTTP from the sandbox —
the people a milestone's reopen notice mentions when nobody is known to have closed it."""

from __future__ import annotations

import pytest

from bot.forge import Forge, PermissionDenied
from tests.contract.conftest import Site


async def test_the_admins_of_a_repository_are_its_owner_and_its_admin_collaborators(
    forge: Forge, site: Site
) -> None:
    """GitHub: `GET /collaborators?permission=admin` (a user's repository lists its owner); Gitea: the owner
    of a user's repository (`GET /teams` answers 405 "repo is not owned by an organization") and each
    collaborator whose permission is admin, readable because the bot is a repository admin there."""
    repo = site.new_repo()
    site.add_collaborator(repo, "outsider", "admin")
    expected = {"owner", "outsider"}
    if site.kind == "gitea":
        site.add_collaborator(repo, "steward-bot", "admin")
        expected.add("steward-bot")
    admins = await forge.repo_admins(repo)
    assert set(admins) == expected and len(admins) == len(expected)
    assert "reader" not in admins


async def test_with_write_access_gitea_will_not_say_who_the_admins_are(forge: Forge, site: Site) -> None:
    """FORGE-FACTS "Permissions": Gitea answers 403 to a Write collaborator asking another user's permission
    (`GetRepoPermissions`), so the adapter raises PermissionDenied instead of answering a partial list;
    GitHub lets write access list the admins."""
    repo = site.new_repo()
    site.add_collaborator(repo, "outsider", "admin")
    if site.kind == "gitea":
        with pytest.raises(PermissionDenied):
            await forge.repo_admins(repo)
    else:
        assert set(await forge.repo_admins(repo)) == {"owner", "outsider"}
