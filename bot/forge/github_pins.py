"""The GitHub adapter's pins, through GraphQL (GitHub has no REST endpoint for them).

What GitHub does (sources in ``bot/sandbox/github/graphql.py``): ``pinIssue(input: {issueId})`` takes the
issue's node id; it needs write access (FORBIDDEN otherwise) and pins at most 3 issues per repository, closed
ones included. A fourth is refused UNPROCESSABLE "Maximum 3 pinned issues per repository" — a check made
*before* whether the issue is pinned already. So the adapter reads first, in one query: the node id,
``isPinned`` and how many issues are pinned; it writes only when the issue is not pinned and there is room
(a refused mutation still counts against GitHub's secondary limits, and a re-run must write nothing), and
reads again after any refusal or unconfirmed answer before it decides.
"""

from __future__ import annotations

import re

from bot.forge import ForgeUnavailable, NotFound, NotSupported, RepoRef, ValidationFailed
from bot.forge.github_transport import GitHubCalls
from bot.forge.pins import GITHUB_FULL, GITHUB_NO_PINS, not_pinned

PIN_STATE = """query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    issue(number: $number) { id isPinned }
    pinnedIssues(first: 10) { totalCount }
  }
}"""
# "You can pin up to three important issues above the issues list in your repository" (GitHub docs).
PIN_LIMIT = 3
PIN = "mutation($issueId: ID!) { pinIssue(input: {issueId: $issueId}) { issue { isPinned } } }"
UNPIN = "mutation($issueId: ID!) { unpinIssue(input: {issueId: $issueId}) { issue { isPinned } } }"
# GitHub's refusal when the repository's pins are full.
FULL = re.compile(r"maximum \d+ pinned issues", re.IGNORECASE)


class GitHubPins(GitHubCalls):
    async def _pin_state(self, repo: RepoRef, number: int) -> tuple[str, bool, int]:
        """The issue's node id, whether it is pinned, and how many issues of the repository are."""
        data = await self._graphql(
            PIN_STATE, f"pin of {repo}#{number}", owner=repo.owner, name=repo.name, number=number
        )
        found = (data or {}).get("repository") or {}
        issue = found.get("issue")
        if not isinstance(issue, dict) or not issue.get("id"):
            raise NotFound(f"issue {repo}#{number}")
        count = (found.get("pinnedIssues") or {}).get("totalCount")
        return str(issue["id"]), bool(issue.get("isPinned")), count if isinstance(count, int) else 0

    async def pin_issue(self, repo: RepoRef, number: int) -> bool:
        try:
            node, pinned, count = await self._pin_state(repo, number)
            if pinned:
                return True
            if count >= PIN_LIMIT:
                return not_pinned("github", repo, number, GITHUB_FULL)
            await self._graphql(PIN, f"pin {repo}#{number}", mutation="pinIssue", issueId=node)
        except NotSupported:
            return not_pinned("github", repo, number, GITHUB_NO_PINS)
        except (ValidationFailed, ForgeUnavailable) as exc:
            # Refused (full, or pinned meanwhile by someone else) or unconfirmed: look again.
            if (await self._pin_state(repo, number))[1]:
                return True
            if isinstance(exc, ValidationFailed) and FULL.search(str(exc)):
                return not_pinned("github", repo, number, GITHUB_FULL)
            raise
        return True

    async def unpin_issue(self, repo: RepoRef, number: int) -> None:
        try:
            node, pinned, _ = await self._pin_state(repo, number)
            if not pinned:
                return
            await self._graphql(UNPIN, f"unpin {repo}#{number}", mutation="unpinIssue", issueId=node)
        except NotSupported:
            return
        except (ValidationFailed, ForgeUnavailable):
            if (await self._pin_state(repo, number))[1]:
                raise
