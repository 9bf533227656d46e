"""``GitHubForge``: the Forge port for one GitHub token or one App installation, made of its parts —
issues (``github_issues``), pins (``github_pins``, GraphQL), an issue's edit history (``github_edits``,
GraphQL), git, pull requests and CI (``github_code``),
webhook deliveries (``github_deliveries``), records (``github_records``). ``github_apps.GitHubForges``
builds one per token or installation; ``bot.forge.github`` offers both."""

from __future__ import annotations

from urllib.parse import quote

from bot.forge import ForgeKind, NotFound, PermissionLevel, Repo, RepoRef, User
from bot.forge.github_code import GitHubCode
from bot.forge.github_deliveries import GitHubDeliveries
from bot.forge.github_edits import GitHubEdits
from bot.forge.github_issues import GitHubIssues
from bot.forge.github_pins import GitHubPins
from bot.forge.github_records import GitHubRecords
from bot.forge.github_transport import AppAccess, RetryingAPI
from bot.forge.known_labels import KnownLabels

_ROLE_TO_LEVEL: dict[str, PermissionLevel] = {
    "admin": "admin",
    "maintain": "maintain",
    "write": "write",
    "push": "write",
    "triage": "triage",
    "read": "read",
    "pull": "read",
    "none": "none",
}


class GitHubForge(GitHubIssues, GitHubPins, GitHubEdits, GitHubCode, GitHubDeliveries, GitHubRecords):
    """The Forge port for one token or one installation."""

    kind: ForgeKind = "github"

    def __init__(
        self,
        api: RetryingAPI,
        *,
        identity: User | None = None,
        web_base: str = "https://github.com",
        max_items: int = 1000,
        app: AppAccess | None = None,
        known_labels: KnownLabels | None = None,
    ) -> None:
        super().__init__(
            api, web_base=web_base, max_items=max_items, app=app, identity=identity, known_labels=known_labels
        )

    async def get_repo(self, repo: RepoRef) -> Repo:
        raw = await self._get(f"/repos/{repo.full_name}", f"repository {repo}")
        named, ident = RepoRef.parse(raw["full_name"]), int(raw.get("id") or 0)
        return Repo(
            ref=RepoRef(named.owner, named.name, ident),
            default_branch=raw.get("default_branch") or "main",
            private=bool(raw.get("private")),
            html_url=raw.get("html_url") or "",
            id=ident,
        )

    async def permission_of(self, repo: RepoRef, login: str) -> PermissionLevel:
        try:
            raw = await self._get(
                f"/repos/{repo.full_name}/collaborators/{quote(login, safe='')}/permission",
                f"permission of {login} on {repo}",
            )
        except NotFound:
            return "none"
        role = raw.get("role_name") or raw.get("permission") or "none"
        return _ROLE_TO_LEVEL.get(str(role), _ROLE_TO_LEVEL.get(str(raw.get("permission")), "none"))

    async def team_members(self, org: str, team: str) -> tuple[str, ...]:
        # docs.github.com REST "List team members" (GET /orgs/{org}/teams/{team_slug}/members): the team must
        # be visible to the caller (an organisation member; an App needs the organisation's "members" read
        # permission), else 404 — as for a team that does not exist.
        slug = team.strip().casefold().replace(" ", "-")
        items = await self._iter(
            f"/orgs/{quote(org, safe='')}/teams/{quote(slug, safe='')}/members?per_page=100",
            f"members of team {org}/{team}",
        )
        return tuple(str(item["login"]) for item in items if isinstance(item, dict) and item.get("login"))

    async def repo_admins(self, repo: RepoRef) -> tuple[str, ...]:
        # GitHub REST "List repository collaborators" (`permission=admin`, `affiliation=all`): outside
        # collaborators, members through teams and the organization's owners; the caller needs write.
        found = await self._iter(
            f"/repos/{repo.full_name}/collaborators?affiliation=all&permission=admin",
            f"admins of {repo}",
        )
        return tuple(dict.fromkeys(str(u["login"]) for u in found if isinstance(u, dict) and u.get("login")))
