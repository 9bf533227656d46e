"""Level scoring: how big is the refined scope?

* **L1 — trivial**: a trivial-change term appears (:data:`TRIVIAL_TERMS`: typo, rename, wording, docs,
  README, bump, log message… / erro de digitação, renomear, texto, documentação), at most one layer is
  touched and the spec has at most 3 REQ/AC lines.
* **L3 — new feature, architecture or several layers** (it adds test or CI surface): an architecture or
  CI term appears (:data:`ARCHITECTURE_TERMS`), a new-feature term appears (:data:`FEATURE_TERMS`), two
  or more layers of :data:`LAYERS` are touched, or the spec has 8 or more REQ/AC lines.
* **L2 — single layer**: everything else.

L3 is checked before L1. Terms are whole words or phrases on the folded text of the title, the goal and
the requirements.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from handlers.backlog.text import fold

__all__ = ["ARCHITECTURE_TERMS", "FEATURE_TERMS", "LAYERS", "TRIVIAL_TERMS", "Level", "LevelScore", "score"]

Level = Literal["L1", "L2", "L3"]

LAYERS: Final[dict[str, tuple[str, ...]]] = {
    "ui": (
        "ui",
        "frontend",
        "front-end",
        "screen",
        "page",
        "button",
        "form",
        "css",
        "tela",
        "pagina",
        "botao",
        "formulario",
    ),
    "api": (
        "api",
        "endpoint",
        "backend",
        "back-end",
        "server",
        "service",
        "rest",
        "graphql",
        "servidor",
        "servico",
    ),
    "data": (
        "database",
        "db",
        "schema",
        "table",
        "sql",
        "storage",
        "cache",
        "banco de dados",
        "tabela",
        "armazenamento",
    ),
    "ci": ("ci", "pipeline", "workflow", "github actions", "deploy", "deployment", "infra", "infrastructure"),
    "cli": ("cli", "command line", "command-line", "linha de comando"),
}
ARCHITECTURE_TERMS: Final = (
    "architecture",
    "new service",
    "microservice",
    "migration",
    "new module",
    "subsystem",
    "redesign",
    "test infrastructure",
    "test harness",
    "ci pipeline",
    "arquitetura",
    "novo servico",
    "migracao",
    "novo modulo",
    "redesenho",
)
FEATURE_TERMS: Final = (
    "new feature",
    "introduce",
    "introduces",
    "nova funcionalidade",
    "novo recurso",
    "introduzir",
)
TRIVIAL_TERMS: Final = (
    "typo",
    "typos",
    "rename",
    "wording",
    "copy change",
    "docs",
    "documentation",
    "readme",
    "comment",
    "bump",
    "log message",
    "erro de digitacao",
    "renomear",
    "texto",
    "documentacao",
)


def _any(text: str, terms: Sequence[str]) -> list[str]:
    return [t for t in terms if re.search(rf"(?<![\w-]){re.escape(t)}(?![\w-])", text)]


@dataclass(frozen=True)
class LevelScore:
    level: Level
    reasons: tuple[str, ...]


def score(title: str, goal: str, requirements: Sequence[str]) -> LevelScore:
    """The level of the refined scope (see the module docstring), with the reasons that decided it."""
    text = fold("\n".join([title, goal, *requirements]))
    layers = sorted(name for name, terms in LAYERS.items() if _any(text, terms))
    size = sum(1 for r in requirements if r.startswith(("REQ:", "AC:")))
    architecture = _any(text, ARCHITECTURE_TERMS)
    feature = _any(text, FEATURE_TERMS)
    reasons: list[str] = []
    if architecture:
        reasons.append(f"architecture/CI terms: {', '.join(architecture)}")
    if feature:
        reasons.append(f"new-feature terms: {', '.join(feature)}")
    if len(layers) >= 2:
        reasons.append(f"touches {len(layers)} layers: {', '.join(layers)}")
    if size >= 8:
        reasons.append(f"{size} REQ/AC lines")
    if reasons:
        return LevelScore("L3", tuple(reasons))
    trivial = _any(text, TRIVIAL_TERMS)
    layer_note = f"layer: {layers[0]}" if layers else "no layer named"
    if trivial and size <= 3:
        return LevelScore("L1", (f"trivial terms: {', '.join(trivial)}", layer_note, f"{size} REQ/AC lines"))
    return LevelScore("L2", (layer_note, f"{size} REQ/AC lines"))
