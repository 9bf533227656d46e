"""Rooms a reader can hold (issue 21 item 5): no module of the sandbox or of the forge adapters imports
another that imports it back, directly or round a ring (imports inside functions and under
``TYPE_CHECKING`` count too), and none is longer than 600 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BOT = Path(__file__).resolve().parents[2] / "bot"
PACKAGES = ("sandbox", "forge")


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in BOT.rglob("*.py"):
        name = ".".join(path.relative_to(BOT.parent).with_suffix("").parts).removesuffix(".__init__")
        found[name] = path
    return found


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            targets = [module, *(f"{module}.{alias.name}" for alias in node.names)]
        found.update(t for t in targets if t in known and t != name)
    return found


def _rings(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    rings: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            ring: list[str] = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                ring.append(top)
                if top == node:
                    break
            if len(ring) > 1:
                rings.append(sorted(ring))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return rings


def test_no_module_of_the_sandbox_or_the_forge_adapters_is_in_an_import_ring() -> None:
    modules = _modules()
    ours = {n: p for n, p in modules.items() if n.split(".")[1:2] and n.split(".")[1] in PACKAGES}
    graph = {name: _imports(name, path, set(ours)) for name, path in ours.items()}
    assert _rings(graph) == []


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_is_longer_than_600_lines(package: str) -> None:
    long = {p.name: n for p in (BOT / package).glob("*.py") if (n := len(p.read_text().splitlines())) > 600}
    assert long == {}
