"""The mission's handlers. ``registry`` is what ``bot.worker`` loads (by name, so that
``bot`` never imports ``handlers``)."""

from bot.registry import Registry

registry = Registry()

# Each module registers its events and commands on import (one line each, in any order).
from handlers import core  # noqa: E402, F401, I001
from handlers import backlog  # noqa: E402, F401
from handlers.bug_refinement import bot as bug_refinement_bot  # noqa: E402, F401
from handlers import config  # noqa: E402, F401
from handlers import milestones  # noqa: E402, F401
from handlers import forks  # noqa: E402, F401
from handlers import onboarding  # noqa: E402, F401
from handlers.bugfix import bot as bugfix_bot  # noqa: E402, F401
from handlers import debug  # noqa: E402, F401
