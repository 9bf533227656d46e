"""`steward demo` is the newcomer's first command: it must run to the end on both forges and show every
capability's scene (a scene that breaks, or a capability that never got one, fails here)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bot.demo import SCENES


@pytest.mark.timeout(900)  # every scene on both forges, in a process of its own
def test_the_demo_runs_every_scene_on_both_forges() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "demo"],
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        capture_output=True,
        text=True,
        timeout=840,
    )
    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    assert "═══ On GitHub" in out and "═══ On Gitea" in out
    github, gitea = out.split("═══ On Gitea", 1)
    scenes = len(SCENES)
    assert github.count("\n▶ ") == scenes, github[-2000:]
    assert gitea.count("\n▶ ") == scenes, gitea[-2000:]
    assert "Traceback" not in out + done.stderr
