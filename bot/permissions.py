"""Who may run which command.

``anyone``; ``author`` — the issue's or pull request's author, or anyone with triage access
or more (maintainers can always act for an author); or a repository permission level.
Per-repository settings may override a command's default.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.forge import Forge, PermissionLevel, RepoRef, permission_at_least
from bot.settings import Permission

_WHO = {
    "anyone": "anyone",
    "author": "the author of this issue or pull request, or anyone with triage access or more",
    "triage": "people with triage access or more",
    "write": "people with write access or more",
    "maintain": "people with maintain access or admins",
    "admin": "repository admins",
}


_WHO_SHORT = {
    "anyone": "anyone",
    "author": "the author, or triage+",
    "triage": "triage+",
    "write": "write+",
    "maintain": "maintain+",
    "admin": "admins",
}


def who_may(permission: Permission, *, short: bool = False) -> str:
    """Who may run a command needing ``permission``: a sentence, or a table cell when ``short``."""
    return (_WHO_SHORT if short else _WHO)[permission]


@dataclass(frozen=True)
class Decision:
    allowed: bool
    actor_level: PermissionLevel


def decide(permission: Permission, *, actor: str, author: str, actor_level: PermissionLevel) -> Decision:
    """The pure rule: may ``actor`` (with ``actor_level``) run a command needing ``permission``?"""
    if permission == "anyone":
        return Decision(True, actor_level)
    if permission == "author":
        is_author = bool(author) and actor.casefold() == author.casefold()
        return Decision(is_author or permission_at_least(actor_level, "triage"), actor_level)
    return Decision(permission_at_least(actor_level, permission), actor_level)


async def check(forge: Forge, repo: RepoRef, permission: Permission, *, actor: str, author: str) -> Decision:
    if permission == "anyone":
        return Decision(True, "none")
    if permission == "author" and author and actor.casefold() == author.casefold():
        return Decision(True, "none")
    level = await forge.permission_of(repo, actor)
    return decide(permission, actor=actor, author=author, actor_level=level)
