"""The demo and its scenes do not import each other (issue 21 §5): `bot.demo.run` runs the scenes, the scenes
share only `bot.demo.stage` and `bot.demo.texts`, and those (with the demo's other helpers) import no
scene."""

from __future__ import annotations

import ast
from pathlib import Path

DEMO = Path(__file__).resolve().parents[2] / "bot" / "demo"
HELPERS = {"__init__", "run", "stage", "texts", "threads", "scratch_redis"}


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
    return names


def test_no_scene_imports_the_demo_and_the_shared_modules_import_no_scene() -> None:
    scenes = {path.stem for path in DEMO.glob("*.py")} - HELPERS
    assert {"bugfix", "debug", "forks", "integrity", "onboarding", "scenes"} <= scenes
    for path in sorted(DEMO.glob("*.py")):
        found = imported(path)
        if path.stem in scenes:
            assert "bot.demo.run" not in found, f"{path.name} imports bot.demo.run"
            others = {
                n for n in found if n.startswith("bot.demo.") and n.split(".")[2] in scenes - {path.stem}
            }
            assert others == set(), f"the scene {path.name} imports another scene: {sorted(others)}"
        elif path.stem != "run":
            named = {n for n in found if n.startswith("bot.demo.") and n.split(".")[2] in scenes}
            assert named == set(), f"{path.name} imports a scene: {sorted(named)}"
