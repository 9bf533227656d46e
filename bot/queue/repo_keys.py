"""How a repository is named inside Steward's per-repository Redis keys: ``bot.forge.repo_key``, by its id
(which survives a rename or a transfer), under the name the catch-up's keys use."""

from __future__ import annotations

from bot.forge import RepoRef, repo_key


def repo_slot(kind: str, repo: RepoRef) -> str:
    """``forge:#id`` (``forge:owner/name`` case-folded while the id is not known): ``repo_key``."""
    return repo_key(kind, repo)
