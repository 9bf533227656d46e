"""The Gitea/Forgejo adapter: the Forge port over py-gitea 0.3.x.

py-gitea is synchronous and is confined to this module and ``gitea_transport``. Every call runs on a
dedicated, bounded ``ThreadPoolExecutor`` (never the loop's default one), py-gitea speaking HTTP through
``gitea_transport._Transport`` (a requests-like shim over ``http.client``: one keep-alive connection per
pool thread, connect/read timeouts on every request, which py-gitea passes none of). Calls go through
the same retry policy as GitHub's (``bot.forge.retry``) and writes
through the same Redis write budget (``gitea_transport.GiteaCalls``).

Where py-gitea's object model is used, and where it is not: ``Gitea.get_user`` (identity) and
``Repository.request`` (repository) are used as they are; issues, comments and labels (``gitea_issues``),
pins (``gitea_pins``) and git, pull requests and statuses (``gitea_code``) go through the raw helpers, as
py-gitea's object model is missing or costly there (see each module).

Gitea has no sub-issues (``list_sub_issues`` answers ``[]``) and no triage/maintain roles: its
``/collaborators/{user}/permission`` answers none, read, write, admin or owner (owner → admin).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gitea import Repository

from bot.forge import (
    ForgeError,
    ForgeKind,
    HookDelivery,
    NotFound,
    NotSupported,
    PermissionLevel,
    Repo,
    RepoRef,
    listed_repo,
)
from bot.forge.gitea_code import GiteaCode
from bot.forge.gitea_issues import GiteaIssues
from bot.forge.gitea_pins import GiteaPins
from bot.forge.gitea_records import GiteaRecords
from bot.forge.gitea_transport import seg
from bot.forge.retry import RetryPolicy
from bot.forge.write_budget import WriteBudget

_ACCESS_TO_LEVEL: dict[str, PermissionLevel] = {
    "owner": "admin",
    "admin": "admin",
    "write": "write",
    "read": "read",
    "none": "none",
}


class GiteaForge(GiteaIssues, GiteaPins, GiteaCode, GiteaRecords):
    """The Forge port for one Gitea or Forgejo instance and one token."""

    kind: ForgeKind = "gitea"

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        policy: RetryPolicy | None = None,
        budget: WriteBudget | None = None,
        timeout: float = 10.0,
        connect_timeout: float | None = None,
        max_threads: int = 8,
        max_items: int = 1000,
    ) -> None:
        super().__init__(
            base_url,
            token,
            policy=policy,
            budget=budget,
            timeout=timeout,
            connect_timeout=connect_timeout,
            max_threads=max_threads,
            max_items=max_items,
        )

    @classmethod
    def from_settings(cls, settings: Any, budget: WriteBudget | None) -> GiteaForge:
        if not settings.gitea_url:
            raise ValueError("Gitea needs STEWARD_GITEA_URL")
        return cls(
            settings.gitea_url,
            settings.gitea_token.get_secret_value() if settings.gitea_token else "",
            policy=RetryPolicy(settings.retry_attempts, settings.retry_base_delay, settings.retry_max_delay),
            budget=budget,
            timeout=settings.http_timeout_seconds,
            max_threads=max(4, int(settings.max_jobs)),
            max_items=settings.max_list_items,
        )

    async def get_repo(self, repo: RepoRef) -> Repo:
        found = await self._call(
            "GET", f"repository {repo}", lambda: Repository.request(self._gitea, repo.owner, repo.name)
        )
        named, ident = RepoRef.parse(str(found.full_name)), int(found.id or 0)
        return Repo(
            ref=RepoRef(named.owner, named.name, ident),
            default_branch=str(found.default_branch or "main"),
            private=bool(found.private),
            html_url=str(found.html_url or ""),
            id=ident,
        )

    async def installed_repos(self, *, limit: int = 10_000) -> list[tuple[RepoRef, PermissionLevel]]:
        """Every repository the token may reach, with its access there: ``GET /user/repos`` (routers/api/v1/
        user/repo.go ``ListMyRepos``: the token's own repositories and those it collaborates on, each with
        ``permissions`` admin/push/pull), paged by ``page``/``limit``. Gitea answers no conditional request
        here: each catch-up reads it whole (a page per 50 repositories)."""
        items = await self._pages("/user/repos", "the token's repositories", limit=limit)
        found: list[tuple[RepoRef, PermissionLevel]] = []
        for item in items:
            flags = item.get("permissions") or {}
            level: PermissionLevel = (
                "admin"
                if flags.get("admin")
                else "write"
                if flags.get("push")
                else "read"
                if flags.get("pull")
                else "none"
            )
            found.append((listed_repo(item), level))
        return found

    async def permission_of(self, repo: RepoRef, login: str) -> PermissionLevel:
        try:
            raw = await self._get(
                f"{self._r(repo)}/collaborators/{seg(login)}/permission", f"permission of {login} on {repo}"
            )
        except NotFound:
            return "none"
        return _ACCESS_TO_LEVEL.get(str(raw.get("permission") or "none"), "none")

    async def team_members(self, org: str, team: str) -> tuple[str, ...]:
        # routers/api/v1/org/team.go SearchTeam (`/orgs/{org}/teams/search?q=`, {"ok", "data"}) finds the
        # team's id by name, GetTeamMembers (`/teams/{id}/members`) lists its users; both need membership of
        # the organisation (routers/api/v1/api.go reqOrgMembership: 403 otherwise).
        found = await self._get(
            f"/orgs/{seg(org)}/teams/search", f"teams of {org}", {"q": team, "include_desc": "false"}
        )
        data = found.get("data") if isinstance(found, dict) else None
        ids = [
            t["id"]
            for t in data or ()
            if isinstance(t, dict) and str(t.get("name", "")).casefold() == team.strip().casefold()
        ]
        if not ids:
            raise NotFound(f"team {org}/{team}: no such team", status=404)
        users = await self._pages(f"/teams/{seg(ids[0])}/members", f"members of team {org}/{team}")
        return tuple(str(u["login"]) for u in users if isinstance(u, dict) and u.get("login"))

    async def repo_admins(self, repo: RepoRef) -> tuple[str, ...]:
        # Gitea `routers/api/v1/repo/teams.go` ListTeams (reqAnyRepoReader): 405 "repo is not owned by an
        # organization" for a user's repository, whose owner administers it; `ListCollaborators`
        # (reqAnyRepoReader) lists users without their access, and `GetRepoPermissions` answers 403 unless
        # the caller is an admin of the repository (`routers/api/v1/repo/collaborators.go`).
        admins: list[str] = []
        try:
            teams = await self._pages(f"{self._r(repo)}/teams", f"teams of {repo}")
        except ForgeError as exc:
            if exc.status != 405:
                raise
            admins.append(repo.owner)
        else:
            admins += [
                f"{repo.owner}/{team['name']}"
                for team in teams
                if isinstance(team, dict)
                and team.get("name")
                and team.get("permission") in ("admin", "owner")
            ]
        users = await self._pages(f"{self._r(repo)}/collaborators", f"collaborators of {repo}")
        for user in users:
            login = str(user.get("login") or "") if isinstance(user, dict) else ""
            if login and await self.permission_of(repo, login) == "admin":
                admins.append(login)
        return tuple(dict.fromkeys(admins))

    # --- webhook deliveries ----------------------------------------------------------------------------

    async def list_hook_deliveries(
        self, repo: RepoRef | None, since: datetime | None = None
    ) -> list[HookDelivery]:
        raise NotSupported(
            "Gitea's API has no webhook deliveries to list (only the web UI shows them): "
            "what was missed is found by the periodic jobs"
        )

    async def redeliver(self, repo: RepoRef | None, delivery: HookDelivery) -> None:
        raise NotSupported("Gitea's API cannot redeliver a webhook")
