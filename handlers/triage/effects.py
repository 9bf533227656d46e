"""The everyday commands' forge reads and writes: each reads the issue now, decides with ``rules`` and
writes only the difference."""

from __future__ import annotations
