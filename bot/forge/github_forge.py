"""``GitHubForge``: the Forge port for one GitHub token or one App installation, made of its parts —
issues (``github_issues``), pins (``github_pins``, GraphQL), git, pull requests and CI (``github_code``),
webhook deliveries (``github_deliveries``), records (``github_records``). ``github_apps.GitHubForges``
builds one per token or installation; ``bot.forge.github`` offers both."""

from __future__ import annotations

from urllib.parse import quote

from bot.forge import ForgeKind, NotFound, PermissionLevel, Repo, RepoRef, User
from bot.forge.github_code import GitHubCode
from bot.forge.github_deliveries import GitHubDeliveries
from bot.forge.github_issues import GitHubIssues
from bot.forge.github_pins import GitHubPins
from bot.forge.github_records import GitHubRecords
from bot.forge.github_transport import AppAccess, RetryingAPI

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


class GitHubForge(GitHubIssues, GitHubPins, GitHubCode, GitHubDeliveries, GitHubRecords):
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
    ) -> None:
        super().__init__(api, web_base=web_base, max_items=max_items, app=app, identity=identity)

    async def get_repo(self, repo: RepoRef) -> Repo:
        raw = await self._get(f"/repos/{repo.full_name}", f"repository {repo}")
        return Repo(
            ref=RepoRef.parse(raw["full_name"]),
            default_branch=raw.get("default_branch") or "main",
            private=bool(raw.get("private")),
            html_url=raw.get("html_url") or "",
            id=int(raw.get("id") or 0),
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
