"""Structured logging (structlog). Secrets never reach a log: settings hold them as SecretStr."""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog


def configure(level: str = "info", fmt: str = "console", *, stream: Any = None) -> None:
    """Logs go to standard output (``stream`` to move them: a command's own output keeps stdout)."""
    numeric = logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
    logging.basicConfig(level=numeric, stream=sys.stderr, format="%(message)s")
    renderer: Any = (
        structlog.processors.JSONRenderer() if fmt == "json" else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=stream or sys.stdout),
        cache_logger_on_first_use=True,
    )


def get(name: str = "steward") -> Any:
    return structlog.get_logger(name)
