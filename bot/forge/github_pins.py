"""The GitHub adapter's pins, through GraphQL (GitHub has no REST endpoint for them).

What GitHub does (sources in ``bot/sandbox/github_graphql.py``): ``pinIssue(input: {issueId})`` takes the
issue's node id; it needs write access (FORBIDDEN otherwise) and pins at most 3 issues per repository, closed
ones included. A fourth is refused UNPROCESSABLE "Maximum 3 pinned issues per repository" — a check made
*before* whether the issue is pinned already, so the adapter reads ``isPinned`` first (one query, which also
gives the node id), and reads again after any refusal or unconfirmed answer before it decides.
"""

from __future__ import annotations

import re

from bot.forge import ForgeUnavailable, NotFound, NotSupported, RepoRef, ValidationFailed
from bot.forge.github_transport import GitHubCalls
from bot.forge.pins import GITHUB_FULL, GITHUB_NO_PINS, not_pinned

PIN_STATE = """query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) { issue(number: $number) { id isPinned } }
}"""
PIN = "mutation($issueId: ID!) { pinIssue(input: {issueId: $issueId}) { issue { isPinned } } }"
UNPIN = "mutation($issueId: ID!) { unpinIssue(input: {issueId: $issueId}) { issue { isPinned } } }"
# GitHub's refusal when the repository's pins are full.
FULL = re.compile(r"maximum \d+ pinned issues", re.IGNORECASE)


class GitHubPins(GitHubCalls):
    async def _pin_state(self, repo: RepoRef, number: int) -> tuple[str, bool]:
        """The issue's node id, and whether it is pinned."""
        data = await self._graphql(
            PIN_STATE, f"pin of {repo}#{number}", owner=repo.owner, name=repo.name, number=number
        )
        issue = ((data or {}).get("repository") or {}).get("issue")
        if not isinstance(issue, dict) or not issue.get("id"):
            raise NotFound(f"issue {repo}#{number}")
        return str(issue["id"]), bool(issue.get("isPinned"))

    async def pin_issue(self, repo: RepoRef, number: int) -> bool:
        try:
            node, pinned = await self._pin_state(repo, number)
            if pinned:
                return True
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
            node, pinned = await self._pin_state(repo, number)
            if not pinned:
                return
            await self._graphql(UNPIN, f"unpin {repo}#{number}", mutation="unpinIssue", issueId=node)
        except NotSupported:
            return
        except (ValidationFailed, ForgeUnavailable):
            if (await self._pin_state(repo, number))[1]:
                raise
