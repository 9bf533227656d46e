"""Closing keywords: merging a pull request into the default branch closes the issues its description or
its commits name with a closing keyword.

Sources (kept independent of Steward's own neutraliser on purpose: the sandbox checks it, it must not share
its blind spots):
- GitHub, "Linking a pull request to an issue": the keywords close, closes, closed, fix, fixes, fixed,
  resolve, resolves, resolved (any case, optionally followed by a colon), then ``#N``, ``OWNER/REPO#N`` or
  the issue's URL, in the pull request's description or a commit message; only when the pull request
  targets the default branch.
- Gitea, ``modules/references/references.go`` (``makeKeywordsPat``: ``(?i)(?:\\s|^|\\(|\\[)(keywords):? $``
  before the reference; ``issueNumericPattern`` ``[#!][0-9]+``; ``crossReferenceIssueNumericPattern``
  ``owner/repo#N``) with the default ``CloseKeywords`` (the same nine words), resolved when the pull
  request is merged (``services/pull/merge.go`` → ``ResolveCrossReferences``).
"""

from __future__ import annotations

import re

_KEYWORDS = "close|closes|closed|fix|fixes|fixed|resolve|resolves|resolved"
_REFERENCE = re.compile(
    rf"(?:^|[\s(\[*_])(?:{_KEYWORDS})[*_]*:?[*_]*[ \t]+[*_]*"
    r"(?:(?P<owner>[\w.-]+)/(?P<name>[\w.-]+)[#!]|https?://[^\s/]+/(?P<uowner>[\w.-]+)/(?P<uname>[\w.-]+)"
    r"/(?:issues|pull|pulls)/|[#!])(?P<number>\d+)",
    re.IGNORECASE,
)


def closed_by(text: str, owner: str, name: str) -> list[int]:
    """The numbers of this repository's issues that ``text`` closes, in order, without repeats."""
    found: list[int] = []
    for match in _REFERENCE.finditer(text or ""):
        ref_owner = match.group("owner") or match.group("uowner")
        ref_name = match.group("name") or match.group("uname")
        if ref_owner and (ref_owner.casefold(), ref_name.casefold()) != (owner.casefold(), name.casefold()):
            continue
        number = int(match.group("number"))
        if number not in found:
            found.append(number)
    return found
