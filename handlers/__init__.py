"""The mission's handlers. ``registry`` is what ``bot.worker`` loads (by name, so that
``bot`` never imports ``handlers``)."""

from bot.registry import Registry

registry = Registry()

# Each module registers its events and commands on import.
from handlers import core  # noqa: E402, F401
