"""The demo and its scenes do not import each other (issue 21 §5): `bot.demo` runs the scenes, the scenes
(`bot/demo_*.py`) share only `bot.demo_stage` and `bot.demo_texts`, which import no scene."""

from __future__ import annotations

import ast
from pathlib import Path

BOT = Path(__file__).resolve().parents[2] / "bot"


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
    scenes = sorted(BOT.glob("demo_*.py"))
    assert scenes
    for path in scenes:
        found = imported(path)
        assert "bot.demo" not in found, f"{path.name} imports bot.demo"
        if path.stem in ("demo_stage", "demo_texts"):
            scenes_named = [n for n in found if n.startswith("bot.demo_") and "demo_texts" not in n]
            assert scenes_named == [], path
