"""The Gitea adapter's pins (Gitea 1.21 and later; py-gitea has no method for them: raw calls).

What Gitea does (sources in ``bot/sandbox/gitea/pins.py``): ``POST /repos/{o}/{r}/issues/{index}/pin`` needs
repository admin (403 otherwise) and answers 204; it answers **500** both when the pins are full
(``[repository.issue] MAX_PINNED``, default 3, 0 = off) and, on current Gitea, when the issue is pinned
already. So the adapter reads before it writes — ``GET /issues/pinned`` (is it pinned?) and
``GET /new_pin_allowed`` (is there room?) — and after a 500 reads again to tell which it was. Before 1.21
there are no pin routes: ``/issues/pinned`` is read as the issue numbered "pinned", 404.
"""

from __future__ import annotations

from bot.forge import ForgeUnavailable, NotFound, RepoRef
from bot.forge.gitea_transport import GiteaCalls
from bot.forge.pins import GITEA_NO_PINS, GITEA_PINS_OFF, gitea_full, not_pinned


class GiteaPins(GiteaCalls):
    async def _pinned(self, repo: RepoRef, number: int) -> list[int] | None:
        """The numbers of the pinned issues; None where this Gitea has no pins (NotFound when the issue or
        the repository does not exist)."""
        try:
            raw = await self._get(f"{self._r(repo)}/issues/pinned", f"pinned issues of {repo}")
        except NotFound:
            # A missing repository, or a Gitea without pins: the issue itself tells which.
            await self._get(f"{self._r(repo)}/issues/{number}", f"issue {repo}#{number}")
            return None
        return [int(item["number"]) for item in raw or []]

    async def _no_room(self, repo: RepoRef, number: int, pinned: list[int]) -> str | None:
        """Why no issue can be pinned now, or None when one can (NotFound, as Gitea would answer, when
        the issue does not exist)."""
        allowed = await self._get(f"{self._r(repo)}/new_pin_allowed", f"whether {repo} may pin more")
        if not isinstance(allowed, dict) or allowed.get("issues", True):
            return None
        await self._get(f"{self._r(repo)}/issues/{number}", f"issue {repo}#{number}")
        return gitea_full(len(pinned)) if pinned else GITEA_PINS_OFF

    async def pin_issue(self, repo: RepoRef, number: int) -> bool:
        pinned = await self._pinned(repo, number)
        if pinned is None:
            return not_pinned("gitea", repo, number, GITEA_NO_PINS)
        if number in pinned:
            return True
        refusal = await self._no_room(repo, number, pinned)
        if refusal is not None:
            return not_pinned("gitea", repo, number, refusal)
        try:
            await self._post_empty(f"{self._r(repo)}/issues/{number}/pin", f"pin {repo}#{number}")
        except ForgeUnavailable:
            # Gitea's 500 for "full" and for "pinned already" (another run got there first): look again.
            pinned = await self._pinned(repo, number) or []
            if number in pinned:
                return True
            refusal = await self._no_room(repo, number, pinned)
            if refusal is not None:
                return not_pinned("gitea", repo, number, refusal)
            raise
        return True

    async def unpin_issue(self, repo: RepoRef, number: int) -> None:
        pinned = await self._pinned(repo, number)
        if pinned is None or number not in pinned:
            return
        await self._delete(f"{self._r(repo)}/issues/{number}/pin", f"unpin {repo}#{number}")
