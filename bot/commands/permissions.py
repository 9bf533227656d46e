"""Who may run which command.

``anyone``; ``author`` — the issue's or pull request's author, or anyone with triage access
or more (maintainers can always act for an author); or a repository permission level.
Per-repository settings may override a command's default.

Gitea has only read, write, admin and owner. Its adapter reports them as read, write and admin, which
sit on either side of triage and maintain, so the same rule holds there: a command that needs triage
needs write, and one that needs maintain needs admin; the words people read say so (``who_may``).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.config.settings import Permission
from bot.forge import Forge, ForgeKind, PermissionDenied, PermissionLevel, RepoRef, permission_at_least

_WHO = {
    "anyone": "anyone",
    "author": "the author of this issue or pull request, or anyone with {triage} access or more",
    "triage": "people with {triage} access or more",
    "write": "people with write access or more",
    "maintain": "people with {maintain} access or more",
    "admin": "repository admins",
}

_WHO_SHORT = {
    "anyone": "anyone",
    "author": "the author, or {triage}+",
    "triage": "{triage}+",
    "write": "write+",
    "maintain": "{maintain}+",
    "admin": "admins",
}


def who_may(permission: Permission, *, short: bool = False, forge: ForgeKind = "github") -> str:
    """Who may run a command needing ``permission``: a sentence, or a table cell when ``short``."""
    words = {"triage": "triage", "maintain": "maintain"}
    if forge == "gitea":
        words = {"triage": "write", "maintain": "admin"}
        if permission == "maintain":
            return "admins" if short else "repository admins"
    return (_WHO_SHORT if short else _WHO)[permission].format(**words)


class PermissionsUnreadable(Exception):
    """The forge will not tell the bot what access people have (Gitea, unless the bot is a repository
    admin: FORGE-FACTS "Permissions"). A command that needs the answer is refused, saying so."""

    def __init__(self, repo: RepoRef) -> None:
        super().__init__(f"the forge refused to show permissions on {repo}")
        self.repo = repo


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
    """Ask the forge when the answer depends on the actor's access; raises ``PermissionsUnreadable``
    when the forge refuses to say."""
    if permission == "anyone":
        return Decision(True, "none")
    if permission == "author" and author and actor.casefold() == author.casefold():
        return Decision(True, "none")
    try:
        level = await forge.permission_of(repo, actor)
    except PermissionDenied:
        raise PermissionsUnreadable(repo) from None
    return decide(permission, actor=actor, author=author, actor_level=level)
