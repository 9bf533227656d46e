"""The README's command table is generated from the registry `steward run` builds (`make docs`), so the
table and what Steward serves cannot drift: this fails while the README is stale."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from bot.commands.registry import load_registry

ROOT = Path(__file__).resolve().parents[2]


def readme_commands() -> list[str]:
    """The command names of the README's generated table, in its order."""
    readme = (ROOT / "README.md").read_text()
    table = readme.split("<!-- commands:start", 1)[1].split("<!-- commands:end -->", 1)[0]
    return re.findall(r"^\| `/steward ([a-z-]+)", table, re.M)


def test_the_readme_command_table_is_current() -> None:
    """`scripts/update-docs --check` in a fresh interpreter: the registry as shipped, nothing a test added."""
    done = subprocess.run(
        [sys.executable, "scripts/update-docs", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_the_table_lists_every_command_once() -> None:
    assert readme_commands() == list(load_registry().commands)
