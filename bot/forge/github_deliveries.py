"""The GitHub adapter's webhook deliveries, for catching up after downtime: neither forge retries a failed
delivery, but GitHub keeps them and redelivers on request (FORGE-FACTS "Webhooks").

A repository's hooks are read with a token that administers the repository; the App's own webhook with the
App's JWT (``GET /app/hook/deliveries``), which an installation token cannot do.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import gidgethub

from bot.forge import HookDelivery, NotSupported, RepoRef
from bot.forge.github_transport import GitHubCalls, translate


def _when(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def delivery_from_json(raw: Mapping[str, Any], *, hook_id: int | None, repo: RepoRef | None) -> HookDelivery:
    return HookDelivery(
        id=int(raw["id"]),
        guid=str(raw.get("guid") or ""),
        delivered_at=str(raw.get("delivered_at") or ""),
        status_code=int(raw.get("status_code") or 0),
        event=str(raw.get("event") or ""),
        action=raw.get("action"),
        redelivery=bool(raw.get("redelivery")),
        hook_id=hook_id,
        repo=repo,
    )


class GitHubDeliveries(GitHubCalls):
    async def _deliveries(
        self, url: str, what: str, since: datetime | None, **kwargs: Any
    ) -> list[Mapping[str, Any]]:
        """Newest first, cursor-paged (GitHub's Link header carries the cursor); stops at `since`."""
        found: list[Mapping[str, Any]] = []
        api = self._app.api if "jwt" in kwargs and self._app is not None else self._api
        try:
            async for item in api.getiter(url, **kwargs):
                if since is not None and item.get("delivered_at") and _when(item["delivered_at"]) < since:
                    break
                found.append(item)
        except gidgethub.GitHubException as exc:
            raise translate(exc, what) from None
        return found

    async def list_hook_deliveries(
        self, repo: RepoRef | None, since: datetime | None = None
    ) -> list[HookDelivery]:
        if repo is None:
            if self._app is None:
                raise NotSupported(
                    "the App's webhook deliveries need GitHub App authentication (STEWARD_GITHUB_APP_ID)"
                )
            items = await self._deliveries(
                "/app/hook/deliveries?per_page=100", "the App's deliveries", since, jwt=self._app.jwt()
            )
            return [delivery_from_json(item, hook_id=None, repo=None) for item in items]
        hooks = await self._iter(f"/repos/{repo.full_name}/hooks?per_page=100", f"hooks of {repo}")
        found: list[HookDelivery] = []
        for hook in hooks:
            hook_id = int(hook["id"])
            items = await self._deliveries(
                f"/repos/{repo.full_name}/hooks/{hook_id}/deliveries?per_page=100",
                f"deliveries of hook {hook_id} of {repo}",
                since,
            )
            found += [delivery_from_json(item, hook_id=hook_id, repo=repo) for item in items]
        return sorted(found, key=lambda d: (d.delivered_at, d.id), reverse=True)

    async def redeliver(self, repo: RepoRef | None, delivery: HookDelivery) -> None:
        """Asks GitHub to deliver again (a new attempt of the same event, same guid); the receiver's
        dedupe by guid keeps a delivery that did arrive from running twice."""
        if repo is None:
            if self._app is None:
                raise NotSupported("redelivering the App's webhook needs GitHub App authentication")
            try:
                await self._app.api.post(
                    f"/app/hook/deliveries/{delivery.id}/attempts", data=b"", jwt=self._app.jwt()
                )
            except gidgethub.GitHubException as exc:
                raise translate(exc, f"redelivery of {delivery.guid}") from None
            return
        if delivery.hook_id is None:
            raise NotSupported(f"delivery {delivery.id} names no repository hook")
        await self._write(
            "post",
            f"/repos/{repo.full_name}/hooks/{delivery.hook_id}/deliveries/{delivery.id}/attempts",
            f"redelivery of {delivery.guid}",
        )
