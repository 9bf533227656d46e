"""The catch-up covers a renamed repository once, under the name the forge gives it now: the repositories
heard from lately and those the forge lists are one list by id (``bot.forge.repo_key``), not by name — Gitea
sends no webhook for a rename, so the list of repositories seen may still hold the old name."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from bot.catchup.installed import repos_to_catch_up
from bot.forge import ForgeKind, PermissionLevel, RepoRef, listed_repo


class _Seen:
    def __init__(self, repos: list[RepoRef]) -> None:
        self._repos = repos

    async def recent(self, kind: ForgeKind) -> list[RepoRef]:
        return list(self._repos)


class _Forge:
    def __init__(self, items: list[dict[str, Any]]) -> None:
        self._items = items

    async def installed_repos(self) -> list[tuple[RepoRef, PermissionLevel]]:
        return [(listed_repo(item), "admin") for item in self._items]


async def test_a_renamed_repository_is_caught_up_once_under_its_new_name() -> None:
    seen = [RepoRef("acme", "old-name", 7), RepoRef("acme", "other", 8)]
    listed = [
        {"id": 7, "full_name": "acme/new-name"},  # renamed since its last event
        {"id": 8, "full_name": "acme/other"},
        {"id": 9, "full_name": "acme/old-name"},  # a new repository that took the old name
    ]
    runtime = SimpleNamespace(
        seen=_Seen(seen),
        settings=SimpleNamespace(reconcile_installed=True),
        gitea=_Forge(listed),
        github=None,
    )
    found = await repos_to_catch_up(runtime, ["gitea"])
    assert [(k, r.full_name, r.id) for k, r in found] == [
        ("gitea", "acme/new-name", 7),
        ("gitea", "acme/other", 8),
        ("gitea", "acme/old-name", 9),
    ]


def test_a_listed_repository_carries_its_id() -> None:
    ref = listed_repo({"id": 41, "full_name": "o/r"})
    assert (ref, ref.id) == (RepoRef("o", "r"), 41)
    assert listed_repo({"full_name": "o/r"}).id == 0 and listed_repo({"id": True, "full_name": "o/r"}).id == 0
