"""The mission's handlers. ``build_registry()`` is what ``bot.worker.jobs`` loads (by name, so that ``bot``
never imports ``handlers``).

Registration is explicit: each capability module declares its commands, events, periodic jobs and
reconcilers on a table of its own (``plugin``) and offers ``register(registry)``; ``capabilities()`` below is
the one list of what production runs. Importing a module registers nothing anywhere a worker looks, so a
test that imports a module cannot make a command appear that ``steward run`` lacks
(``tests/unit/test_registration.py`` fails when a module that declares commands or events is missing here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import ModuleType

    from bot.commands.registry import Registry


def capabilities() -> tuple[ModuleType, ...]:
    """The one list of what production runs, in order. Imported here, when a registry is built, not when
    ``handlers`` is: `python -m handlers.bug_refinement.cli` on a bug file then loads the rules it needs and
    not every capability's (Redis, the forge clients, the settings: several times the refinement's own
    start-up)."""
    from handlers.backlog import bot as backlog_bot
    from handlers.bug_refinement import bot as bug_refinement_bot
    from handlers.bugfix import bot as bugfix_bot
    from handlers.core import bot as core_bot
    from handlers.core import config as config_bot
    from handlers.core import refine as refine_router
    from handlers.debug import bot as debug_bot
    from handlers.forks import bot as forks_bot
    from handlers.milestones import bot as milestones_bot
    from handlers.milestones import ratify as milestones_ratify
    from handlers.onboarding import bot as onboarding_bot
    from handlers.triage import bot as triage_bot
    from handlers.triage import cc as triage_cc
    from handlers.triage import closing_bot as triage_closing
    from handlers.triage import hold as triage_hold
    from handlers.triage import label_bot as triage_label
    from handlers.triage import overview_bot as triage_overview
    from handlers.triage import welcome_bot as triage_welcome

    return (
        core_bot,
        config_bot,
        refine_router,
        backlog_bot,
        bug_refinement_bot,
        milestones_bot,
        milestones_ratify,
        forks_bot,
        onboarding_bot,
        bugfix_bot,
        debug_bot,
        triage_bot,
        triage_closing,
        triage_label,
        triage_welcome,
        triage_hold,
        triage_overview,
        triage_cc,
    )


def build_registry() -> Registry:
    """A new registry holding every capability in ``capabilities()`` (a fresh one per call)."""
    from bot.commands.registry import Registry

    registry = Registry()
    for module in capabilities():
        module.register(registry)
    return registry
