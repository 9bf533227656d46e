"""The handler registry: handlers register by event and by command, the worker dispatches.

Like Prow's plugins, each command declares its usage, its help and who may run it, so
``/steward help`` and permission checks come from one place.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.settings import Permission

if TYPE_CHECKING:
    from bot.context import CommandContext, EventContext

EventHandler = Callable[["EventContext"], Awaitable[None]]
CommandHandler = Callable[["CommandContext"], Awaitable[None]]


@dataclass(frozen=True)
class CommandSpec:
    name: str
    handler: CommandHandler
    usage: str
    help: str
    permission: Permission
    # Whether the short form `/<name>` is accepted beside `/steward <name>`.
    short: bool = True
    # Where the command makes sense: on issues, on pull requests, or both.
    on_issues: bool = True
    on_pulls: bool = True


@dataclass(frozen=True)
class EventSpec:
    name: str
    actions: frozenset[str] | None
    handler: EventHandler

    def matches(self, name: str, action: str) -> bool:
        return self.name == name and (self.actions is None or action in self.actions)


@dataclass
class Registry:
    commands: dict[str, CommandSpec] = field(default_factory=dict)
    events: list[EventSpec] = field(default_factory=list)

    def command(
        self,
        name: str,
        *,
        usage: str,
        help: str,
        permission: Permission,
        short: bool = True,
        on_issues: bool = True,
        on_pulls: bool = True,
    ) -> Callable[[CommandHandler], CommandHandler]:
        def register(handler: CommandHandler) -> CommandHandler:
            key = name.lower()
            if key in self.commands:
                raise ValueError(f"command {name!r} registered twice")
            self.commands[key] = CommandSpec(
                key, handler, usage, help, permission, short, on_issues, on_pulls
            )
            return handler

        return register

    def on(self, name: str, *actions: str) -> Callable[[EventHandler], EventHandler]:
        def register(handler: EventHandler) -> EventHandler:
            self.events.append(EventSpec(name, frozenset(actions) if actions else None, handler))
            return handler

        return register

    def short_names(self) -> frozenset[str]:
        return frozenset(spec.name for spec in self.commands.values() if spec.short)

    def handlers_for(self, name: str, action: str) -> list[EventSpec]:
        return [spec for spec in self.events if spec.matches(name, action)]
