"""Registration is explicit: what `steward run` serves is `handlers.capabilities()`, never what a test
happened to import. (`/refine` once vanished from `steward run` while every in-process test stayed green,
because test modules imported the router and it registered itself into a process-wide registry.)"""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import handlers
from bot.commands.registry import Registry, load_registry

ROOT = Path(__file__).resolve().parents[2]
SHOW_COMMANDS = (
    "from bot.commands.registry import load_registry; print(' '.join(sorted(load_registry().commands)))"
)


def _handler_modules() -> list[str]:
    return [
        info.name
        for info in pkgutil.walk_packages(handlers.__path__, prefix="handlers.")
        if not info.name.endswith(".cli")
    ]


def _tables(module_name: str) -> list[Registry]:
    module = importlib.import_module(module_name)
    return [value for value in vars(module).values() if isinstance(value, Registry)]


def test_every_module_that_declares_commands_or_events_is_in_the_list() -> None:
    listed = {module.__name__ for module in handlers.capabilities()}
    missing = []
    for name in _handler_modules():
        for table in _tables(name):
            declares = table.commands or table.events or table.periodic or table.reconcilers
            if declares and name not in listed:
                missing.append(name)
    assert missing == [], (
        f"declare these in handlers.capabilities(), or `steward run` will not serve them: {missing}"
    )


def test_importing_every_handler_module_changes_nothing_a_worker_loads() -> None:
    before = load_registry()
    for name in _handler_modules():
        importlib.import_module(name)
    after = load_registry()
    assert sorted(after.commands) == sorted(before.commands)
    assert len(after.events) == len(before.events)
    assert after is not before, "each worker gets a registry of its own"


def test_a_fresh_interpreter_serves_refine_and_every_command_the_readme_teaches() -> None:
    """What a fresh `steward run` loads, checked in a new process (nothing a test imported can help it)."""
    shown = subprocess.run(
        [
            sys.executable,
            "-c",
            SHOW_COMMANDS,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    ).stdout.split()
    assert "refine" in shown
    readme = (ROOT / "README.md").read_text()
    taught = {word for word in shown if f"/steward {word}" in readme}
    assert taught == set(shown), f"commands served but not taught: {sorted(set(shown) - taught)}"
