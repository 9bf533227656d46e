"""Pure rendering of the everyday commands' replies and notes (who may, what happened, what to do next)."""

from __future__ import annotations
