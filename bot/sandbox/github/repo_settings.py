"""A GitHub repository's settings: what `PATCH /repos/{o}/{r}` may change besides its name, description,
visibility and default branch, with the values a new repository has.

The keys and their types are those of the request body GitHub's description gives for "Update a repository"
(tests/fixtures/github/openapi-2026-subset.json); the defaults are a new repository's as GitHub answers it
(octokit/fixtures `get-repository`: merge options, `allow_update_branch` and `use_squash_pr_title_as_default`
false, `temp_clone_token` ""), and for the merge-message settings the defaults GitHub's description names.
The sandbox shows them back; it does not act on them (a repository with `has_issues` false still serves its
issues, an archived one still takes writes).
"""

from __future__ import annotations

from typing import Any

from bot.sandbox.shared.state import Repo

DEFAULTS: dict[str, bool | str | None] = {
    "homepage": None,
    "has_issues": True,
    "has_projects": True,
    "has_wiki": True,
    "has_discussions": False,
    "has_pull_requests": True,
    "is_template": False,
    "archived": False,
    "allow_forking": True,
    "web_commit_signoff_required": False,
    "allow_squash_merge": True,
    "allow_merge_commit": True,
    "allow_rebase_merge": True,
    "allow_auto_merge": False,
    "delete_branch_on_merge": False,
    "allow_update_branch": False,
    "use_squash_pr_title_as_default": False,
    "squash_merge_commit_title": "COMMIT_OR_PR_TITLE",
    "squash_merge_commit_message": "COMMIT_MESSAGES",
    "merge_commit_title": "MERGE_MESSAGE",
    "merge_commit_message": "PR_TITLE",
    "pull_request_creation_policy": "all",
}

# The values a string setting may take (the request body's enums).
CHOICES: dict[str, tuple[str, ...]] = {
    "squash_merge_commit_title": ("PR_TITLE", "COMMIT_OR_PR_TITLE"),
    "squash_merge_commit_message": ("PR_BODY", "COMMIT_MESSAGES", "BLANK"),
    "merge_commit_title": ("PR_TITLE", "MERGE_MESSAGE"),
    "merge_commit_message": ("PR_BODY", "PR_TITLE", "BLANK"),
    "pull_request_creation_policy": ("all", "collaborators_only"),
}


def setting(repo: Repo, key: str) -> Any:
    return repo.settings.get(key, DEFAULTS[key])


def invalid(key: str, value: Any) -> bool:
    """Whether GitHub would refuse `value` for setting `key` (a wrong type, a value outside its enum)."""
    if key == "homepage":
        return value is not None and not isinstance(value, str)
    if key in CHOICES:
        return value not in CHOICES[key]
    return not isinstance(value, bool)
