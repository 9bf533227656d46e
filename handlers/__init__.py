"""The mission's handlers. ``build_registry()`` is what ``bot.worker.jobs`` loads (by name, so that ``bot``
never imports ``handlers``).

Registration is explicit: each capability module declares its commands, events, periodic jobs and
reconcilers on a table of its own (``plugin``) and offers ``register(registry)``; ``CAPABILITIES`` below is
the one list of what production runs. Importing a module registers nothing anywhere a worker looks, so a
test that imports a module cannot make a command appear that ``steward run`` lacks
(``tests/unit/test_registration.py`` fails when a module that declares commands or events is missing here).
"""

from types import ModuleType

from bot.commands.registry import Registry
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

CAPABILITIES: tuple[ModuleType, ...] = (
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
    """A new registry holding every capability in ``CAPABILITIES`` (a fresh one per call)."""
    registry = Registry()
    for module in CAPABILITIES:
        module.register(registry)
    return registry
