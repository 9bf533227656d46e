"""The GitHub adapter's edit history of an issue's body, through GraphQL (GitHub's REST API has none).

What GitHub gives (sources in ``bot/sandbox/github/graphql.py``): ``issue { includesCreatedEdit
userContentEdits { totalCount nodes { editedAt editor { login } diff } } }``. Documented are the editor, the
time and the count; that ``diff`` is the whole body of that version, and that the creation's version is
among the nodes once the body was edited, is observed, not promised. So the versions are sorted by
``editedAt`` here (GitHub's newest-first order kept within one second), a null ``diff`` is a version whose
text is unknown, and where the oldest versions are not listed (past one page, or no creation's version) an
unknown version stands first: a reader that needs to go back that far learns that it cannot know.
"""

from __future__ import annotations

from typing import Any

from bot.forge import BodyVersion, NotFound, NotSupported, RepoRef
from bot.forge.github_transport import GitHubCalls

EDITS = """query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    issue(number: $number) {
      includesCreatedEdit
      userContentEdits(first: 100) { totalCount nodes { editedAt diff editor { login } } }
    }
  }
}"""
UNKNOWN = BodyVersion(editor="", edited_at="", body=None)


def _version(node: dict[str, Any]) -> BodyVersion:
    editor = node.get("editor")
    login = editor.get("login") if isinstance(editor, dict) else None
    diff = node.get("diff")
    return BodyVersion(
        editor=login if isinstance(login, str) else "",  # a deleted account: GitHub answers null
        edited_at=str(node.get("editedAt") or ""),
        body=diff if isinstance(diff, str) else None,
    )


class GitHubEdits(GitHubCalls):
    async def body_versions(self, repo: RepoRef, number: int) -> list[BodyVersion] | None:
        what = f"edit history of {repo}#{number}"
        try:
            data = await self._graphql(EDITS, what, owner=repo.owner, name=repo.name, number=number)
        except NotSupported:  # a GitHub Enterprise Server without the field
            return None
        issue = ((data or {}).get("repository") or {}).get("issue")
        if not isinstance(issue, dict):
            raise NotFound(f"issue {repo}#{number}")
        edits = issue.get("userContentEdits") or {}
        nodes = [node for node in edits.get("nodes") or [] if isinstance(node, dict)]
        # GitHub lists the newest first and its times are to the second: two versions in one second keep the
        # order GitHub gave them.
        versions = sorted((_version(node) for node in reversed(nodes)), key=lambda v: v.edited_at)
        total = edits.get("totalCount")
        cut = isinstance(total, int) and total > len(versions)
        if versions and (cut or issue.get("includesCreatedEdit") is False):
            versions.insert(0, UNKNOWN)
        return versions
