"""The handler registry: handlers register by event and by command, the worker dispatches.

Like Prow's plugins, each command declares its usage, its help and who may run it, so
``/steward help`` and permission checks come from one place.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field

# The declarations live beside what they take (contexts in bot.commands.context, periodic jobs in
# bot.commands.periodic); those modules see a registry only through their protocols, so nothing imports this
# module back.
from bot.commands.context import CommandHandler, CommandSpec, EventHandler, EventSpec, ReconcileSpec
from bot.commands.periodic import PeriodicHandler, PeriodicSpec
from bot.config.settings import Permission

__all__ = [
    "CommandHandler",
    "CommandSpec",
    "EventHandler",
    "EventSpec",
    "PeriodicHandler",
    "PeriodicSpec",
    "ReconcileSpec",
    "Registry",
]


@dataclass
class Registry:
    commands: dict[str, CommandSpec] = field(default_factory=dict)
    events: list[EventSpec] = field(default_factory=list)
    periodic: list[PeriodicSpec] = field(default_factory=list)
    reconcilers: list[ReconcileSpec] = field(default_factory=list)
    # Permissions a capability checks itself, beside its commands' (e.g. `gate-override` for
    # `/gate override`): names a repository may set under `commands:` in its configuration file.
    permission_names: dict[str, str] = field(default_factory=dict)

    def permission_name(self, name: str, *, what: str) -> str:
        """Declare a permission that `commands.<name>.permission` in a repository's file may set."""
        if name in self.commands or name in self.permission_names:
            raise ValueError(f"permission {name!r} declared twice")
        self.permission_names[name] = what
        return name

    @property
    def configurable(self) -> tuple[str, ...]:
        """Every name `commands:` may hold in a repository's configuration file."""
        return (*self.commands, *self.permission_names)

    def reconcile(
        self, name: str, *, checks: str, section: str = ""
    ) -> Callable[[EventHandler], EventHandler]:
        """Register a repository-wide re-derivation (see ``ReconcileSpec``)."""

        def register(handler: EventHandler) -> EventHandler:
            if any(spec.name == name for spec in self.reconcilers):
                raise ValueError(f"reconciler {name!r} registered twice")
            self.reconcilers.append(ReconcileSpec(name, handler, checks, section))
            return handler

        return register

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
        section: str = "",
        uninvited: bool = False,
        short_setting: str = "",
    ) -> Callable[[CommandHandler], CommandHandler]:
        def register(handler: CommandHandler) -> CommandHandler:
            key = name.lower()
            if key in self.commands:
                raise ValueError(f"command {name!r} registered twice")
            self.commands[key] = CommandSpec(
                key,
                handler,
                usage,
                help,
                permission,
                short,
                on_issues,
                on_pulls,
                section,
                uninvited,
                short_setting,
            )
            return handler

        return register

    def on(
        self, name: str, *actions: str, checks: str = "", section: str = ""
    ) -> Callable[[EventHandler], EventHandler]:
        def register(handler: EventHandler) -> EventHandler:
            self.events.append(
                EventSpec(name, frozenset(actions) if actions else None, handler, checks, section)
            )
            return handler

        return register

    def every(
        self, *, seconds: int = 0, minutes: int = 0, hours: int = 0, name: str | None = None
    ) -> Callable[[PeriodicHandler], PeriodicHandler]:
        """Run the handler periodically, once per slot however many workers run (arq cron jobs).

        Gitea has no milestone webhook, so e.g. the milestone gate polls there. The interval must
        divide a minute (seconds), an hour (minutes) or a day (hours), so slots line up on the clock.
        """
        interval = seconds + 60 * minutes + 3600 * hours
        if interval <= 0 or not (
            (interval < 60 and 60 % interval == 0)
            or (interval < 3600 and interval % 60 == 0 and 3600 % interval == 0)
            or (interval % 3600 == 0 and 86400 % interval == 0)
        ):
            raise ValueError(f"an interval of {interval}s does not divide a minute, an hour or a day")

        def register(handler: PeriodicHandler) -> PeriodicHandler:
            key = name if name else str(getattr(handler, "__qualname__", repr(handler)))
            if any(spec.name == key for spec in self.periodic):
                raise ValueError(f"periodic job {key!r} registered twice")
            self.periodic.append(PeriodicSpec(key, interval, handler))
            return handler

        return register

    def include(self, other: Registry) -> None:
        """Add another table's commands, events, periodic jobs, reconcilers and permission names (a
        capability module's own table, see ``handlers.build_registry``); a name taken twice is an error."""
        for key, spec in other.commands.items():
            if key in self.commands or key in self.permission_names:
                raise ValueError(f"command {key!r} registered twice")
            self.commands[key] = spec
        for name, what in other.permission_names.items():
            if name in self.commands or name in self.permission_names:
                raise ValueError(f"permission {name!r} declared twice")
            self.permission_names[name] = what
        for periodic in other.periodic:
            if any(spec.name == periodic.name for spec in self.periodic):
                raise ValueError(f"periodic job {periodic.name!r} registered twice")
            self.periodic.append(periodic)
        for reconciler in other.reconcilers:
            if any(spec.name == reconciler.name for spec in self.reconcilers):
                raise ValueError(f"reconciler {reconciler.name!r} registered twice")
            self.reconcilers.append(reconciler)
        self.events.extend(other.events)

    def short_names(self) -> frozenset[str]:
        return frozenset(spec.name for spec in self.commands.values() if spec.short)

    def handlers_for(self, name: str, action: str) -> list[EventSpec]:
        return [spec for spec in self.events if spec.matches(name, action)]


def load_registry(module: str = "handlers") -> Registry:
    """A new registry built by ``module.build_registry()`` (the explicit list of capabilities).

    The one place in ``bot`` that loads ``handlers`` (by name, so that no module of ``bot`` imports it),
    besides the CLI's subcommands that belong to a capability."""
    registry = importlib.import_module(module).build_registry()
    if not isinstance(registry, Registry):
        raise TypeError(f"{module}.build_registry() did not return a bot.commands.registry.Registry")
    return registry
