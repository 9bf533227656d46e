"""GitHub authentication: a token, or a GitHub App (JWT) and its installations' tokens, each cached
until shortly before ``expires_at``; builds the ``GitHubForge`` for an event."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import gidgethub
from gidgethub import apps as gh_apps

from bot.forge import ForgeError, PermissionLevel, RepoRef, User, listed_repo
from bot.forge.etag_store import EtagStore
from bot.forge.github_forge import GitHubForge
from bot.forge.github_transport import AppAccess, LRUCache, RetryingAPI, SharedSession, translate
from bot.forge.known_labels import KnownLabels
from bot.forge.links import github_web_base
from bot.forge.retry import RetryPolicy
from bot.forge.shapes import budget_key
from bot.forge.write_budget import WriteBudget


class GitHubForges:
    """Builds the GitHubForge for an event: one per token, or one per App installation."""

    def __init__(
        self,
        client: SharedSession,
        *,
        base_url: str,
        policy: RetryPolicy,
        budget: WriteBudget | None,
        token: str | None = None,
        app_id: str | None = None,
        private_key: str | None = None,
        max_items: int = 1000,
        etags: EtagStore | None = None,
    ) -> None:
        if not token and not (app_id and private_key):
            raise ValueError("GitHub needs STEWARD_GITHUB_TOKEN, or STEWARD_GITHUB_APP_ID with a private key")
        self._client = client
        self._base_url = base_url.rstrip("/")
        self._policy = policy
        self._budget = budget
        self._token = token
        self._app_id = app_id
        self._private_key = private_key
        self._caches: dict[str, LRUCache] = {}
        self._etags = etags
        # Labels known to exist, shared by every forge this builds (one per event for an App).
        self._known_labels = KnownLabels()
        self._installation_tokens: dict[int, tuple[str, float]] = {}
        self._installation_of_repo: dict[str, int] = {}
        self._app_identity: User | None = None
        self._token_forge: GitHubForge | None = None
        self._lock = asyncio.Lock()
        self._max_items = max_items
        self._web_base = github_web_base(self._base_url)

    @classmethod
    def from_settings(
        cls,
        settings: Any,
        client: SharedSession,
        budget: WriteBudget | None,
        etags: EtagStore | None = None,
    ) -> GitHubForges:
        key: str | None = None
        if settings.github_private_key_path is not None:
            key = Path(settings.github_private_key_path).read_text()
        return cls(
            client,
            base_url=settings.github_api_url,
            policy=RetryPolicy(settings.retry_attempts, settings.retry_base_delay, settings.retry_max_delay),
            budget=budget,
            token=settings.github_token.get_secret_value() if settings.github_token else None,
            app_id=settings.github_app_id,
            private_key=key,
            max_items=settings.max_list_items,
            etags=etags,
        )

    @property
    def is_app(self) -> bool:
        """Authenticated as a GitHub App (installation tokens), not with one token."""
        return not self._token

    def _api(self, *, token: str | None, budget_key: str) -> RetryingAPI:
        cache = self._caches.setdefault(budget_key, LRUCache())
        return RetryingAPI(
            self._client,
            policy=self._policy,
            budget=self._budget,
            budget_key=budget_key,
            base_url=self._base_url,
            oauth_token=token,
            cache=cache,
            etags=self._etags,
        )

    def _app_jwt(self) -> str:
        assert self._app_id and self._private_key
        return gh_apps.get_jwt(app_id=self._app_id, private_key=self._private_key)

    async def app_identity(self) -> User:
        if self._app_identity is None:
            api = self._api(token=None, budget_key=f"app:{self._app_id}")
            try:
                raw = await api.getitem("/app", jwt=self._app_jwt())
            except gidgethub.GitHubException as exc:
                raise translate(exc, "the GitHub App") from None
            self._app_identity = User(f"{raw['slug']}[bot]", int(raw.get("id") or 0), True)
        return self._app_identity

    async def _installation_token(self, installation_id: int) -> str:
        async with self._lock:
            cached = self._installation_tokens.get(installation_id)
            if cached is not None and cached[1] > time.time():
                return cached[0]
            api = self._api(token=None, budget_key=f"app:{self._app_id}")
            try:
                raw = await api.post(
                    f"/app/installations/{installation_id}/access_tokens", data=b"", jwt=self._app_jwt()
                )
            except gidgethub.GitHubException as exc:
                raise translate(exc, f"a token for installation {installation_id}") from None
            expires = datetime.fromisoformat(str(raw["expires_at"]).replace("Z", "+00:00")).timestamp()
            # Renew five minutes early so a token never expires in the middle of a job.
            self._installation_tokens[installation_id] = (raw["token"], expires - 300)
            return cast(str, raw["token"])

    async def _installation_for(self, repo: RepoRef) -> int:
        if repo.full_name not in self._installation_of_repo:
            api = self._api(token=None, budget_key=f"app:{self._app_id}")
            try:
                raw = await api.getitem(f"/repos/{repo.full_name}/installation", jwt=self._app_jwt())
            except gidgethub.GitHubException as exc:
                raise translate(exc, f"the installation on {repo}") from None
            self._installation_of_repo[repo.full_name] = int(raw["id"])
        return self._installation_of_repo[repo.full_name]

    async def installed_repos(self, *, limit: int = 10_000) -> list[tuple[RepoRef, PermissionLevel]]:
        """Every repository Steward is installed on, with the access it has there: with a token, the
        repositories it has explicit access to (``GET /user/repos``: owned, collaborated on, or through an
        organisation; its ``permissions``); as an App, each installation's repositories (``GET
        /app/installations`` with the App's JWT, then ``GET /installation/repositories`` with the
        installation's token), where the App has the permissions it was installed with (write). Read in
        the catch-up (``etag_store.catching_up``), each page keeps its ETag: an unchanged one is a 304."""
        if self._token:
            forge = await self.for_event(None, None)
            items = await forge._iter("/user/repos?per_page=100", "the token's repositories", limit=limit)
            return [(listed_repo(i), _level(i.get("permissions"))) for i in items]
        app = self._api(token=None, budget_key=f"app:{self._app_id}")
        found: list[tuple[RepoRef, PermissionLevel]] = []
        try:
            installations = [
                i async for i in app.getiter("/app/installations?per_page=100", jwt=self._app_jwt())
            ]
            for inst in installations:
                if inst.get("suspended_at"):
                    continue
                inst_id = int(inst["id"])
                token = await self._installation_token(inst_id)
                api = self._api(token=token, budget_key=f"github:installation:{inst_id}")
                async for item in api.getiter(
                    "/installation/repositories?per_page=100", iterable_key="repositories"
                ):
                    self._installation_of_repo[str(item["full_name"])] = inst_id
                    found.append((listed_repo(item), "write"))
                    if len(found) > limit:
                        return found
        except gidgethub.GitHubException as exc:
            raise translate(exc, "the App's installations") from None
        return found

    async def for_event(self, installation_id: int | None, repo: RepoRef | None) -> GitHubForge:
        if self._token:
            if self._token_forge is None:
                self._token_forge = GitHubForge(
                    self._api(token=self._token, budget_key=budget_key("github", self._token)),
                    web_base=self._web_base,
                    max_items=self._max_items,
                    known_labels=self._known_labels,
                )
            return self._token_forge
        if installation_id is None:
            if repo is None:
                raise ForgeError("an App event without an installation or a repository")
            installation_id = await self._installation_for(repo)
        token = await self._installation_token(installation_id)
        api = self._api(token=token, budget_key=f"github:installation:{installation_id}")
        app = AppAccess(self._api(token=None, budget_key=f"app:{self._app_id}"), self._app_jwt)
        return GitHubForge(
            api,
            identity=await self.app_identity(),
            web_base=self._web_base,
            max_items=self._max_items,
            app=app,
            known_labels=self._known_labels,
        )


def _level(permissions: Any) -> PermissionLevel:
    """The highest of GitHub's repository ``permissions`` flags (admin, maintain, push, triage, pull)."""
    flags = permissions if isinstance(permissions, dict) else {}
    for flag, level in (
        ("admin", "admin"),
        ("maintain", "maintain"),
        ("push", "write"),
        ("triage", "triage"),
        ("pull", "read"),
    ):
        if flags.get(flag):
            return cast(PermissionLevel, level)
    return "none"
