"""The everyday commands' registrations. Each runs as `/steward <name>`; the short `/<name>` only where the
repository switched `triage.short_commands` on (other bots answer the same short forms)."""

from __future__ import annotations

from bot.commands.registry import Registry

# This module's commands and events; `handlers.build_registry()` includes them (importing registers nothing).
plugin = Registry()


def register(registry: Registry) -> None:
    registry.include(plugin)


SECTION = "triage"
# Declared on every command here: `/<name>` runs only where the repository switched it on.
SHORT_SETTING = "triage.short_commands"
