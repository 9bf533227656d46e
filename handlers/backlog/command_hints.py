"""How the backlog comments name a command and who may run it, so every hint matches the permission
the command really has (its default, or the repository's override) on this forge."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from bot.commands.permissions import who_may
from bot.config.settings import Permission
from bot.forge import ForgeKind

# The backlog commands' default permissions (what ``bot.py`` registers).
DEFAULT_PERMISSIONS: Final[Mapping[str, Permission]] = {
    "refine": "author",
    "answer": "author",
    "enough": "author",
    "edit-spec": "author",
    "cancel-refine": "author",
    "approve-spec": "triage",
}
# Starting a new spec version of an approved refinement is a maintainer's decision, whoever may /refine.
NEW_VERSION: Final[Permission] = "triage"


@dataclass(frozen=True)
class Hints:
    prefix: str = "steward"
    forge: ForgeKind = "github"
    permissions: Mapping[str, Permission] = field(default_factory=lambda: dict(DEFAULT_PERMISSIONS))

    def cmd(self, command: str) -> str:
        """`` `/steward approve-spec` ``"""
        return f"`/{self.prefix} {command}`"

    def who(self, command: str) -> str:
        """Who may run ``command`` (its first word), as a table cell says it: ``the author, or triage+``."""
        name = command.split()[0]
        return who_may(self.permissions.get(name, "anyone"), short=True, forge=self.forge)

    def run(self, command: str) -> str:
        """`` `/steward refine` (the author, or triage+) ``"""
        return f"{self.cmd(command)} ({self.who(command)})"

    def new_version(self) -> str:
        """How an approved refinement gets a new spec version, and who may start it."""
        return f"{self.cmd('refine')} ({who_may(NEW_VERSION, short=True, forge=self.forge)})"
