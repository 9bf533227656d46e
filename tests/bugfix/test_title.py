"""The bugfix pull request's title: Steward's one prefix, `Bugfix for #N:` (never a closing keyword), and not
the bug title's own kind prefix as issue templates write it."""

from __future__ import annotations

import pytest

from handlers.bugfix.gate import pull_title


@pytest.mark.parametrize(
    ("title", "shown"),
    [
        ("[Bug]: Cart total wrong", "Cart total wrong"),
        ("[bug] [Bug]: twice", "twice"),
        ("Bug: plain", "plain"),
        ("[BUG] - dashed", "dashed"),
        ("Bugfix needed", "Bugfix needed"),
        ("Debug mode crashes", "Debug mode crashes"),
        ("[Feature] not ours", "[Feature] not ours"),
        ("[Bug]:", "[Bug]:"),
    ],
)
def test_one_prefix(title: str, shown: str) -> None:
    assert pull_title(7, title) == f"Bugfix for #7: {shown}"
