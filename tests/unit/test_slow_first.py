"""The tests run first (``tests/conftest.py`` ``SLOW_FIRST``) still exist: a renamed one would silently go
back to a random place in the order, and the run's end could again wait for it alone."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import SLOW_FIRST

ROOT = Path(__file__).resolve().parents[2]


def test_every_test_run_first_is_still_there() -> None:
    missing = []
    for prefix in SLOW_FIRST:
        path, _, name = prefix.partition("::")
        source = ROOT / path
        if not source.is_file() or f"def {name}" not in source.read_text():
            missing.append(prefix)
    assert missing == [], "rename these in tests/conftest.py SLOW_FIRST"
