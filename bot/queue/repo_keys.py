"""How a repository is named inside Steward's per-repository Redis keys, in one place (so that naming it by
its id — which survives a rename or a transfer — is one change here)."""

from __future__ import annotations

from bot.forge import RepoRef


def repo_slot(kind: str, repo: RepoRef) -> str:
    """``forge:owner/name`` (case-folded, as both forges compare names)."""
    return f"{kind}:{repo.full_name.casefold()}"
