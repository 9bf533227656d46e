"""Rooms a reader can hold: no module under bot/ or handlers/ is over 600 lines, and no two of them import
each other, directly or in a ring.

Imports are read with `ast`, as written at a module's top level, including those under `if TYPE_CHECKING:`
(a ring of types is still a ring a reader must hold at once) and those under other `if`s and `try`s; imports
inside functions are not counted (they run late, by design). Importing `a.b.c` counts as an arrow to `a.b.c`
only, not to its parent packages.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("bot", "handlers")
MAX_LINES = 600

# Today's offenders, each being fixed by someone else right now; the lead removes each line as its fix lands.
# Nothing may be added here: split the module, or cut the ring, instead.
TOO_LONG_ALLOWED: set[str] = set()
RINGS_ALLOWED: set[frozenset[str]] = set()


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _top_level_imports(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If):
            found += _top_level_imports(node.body) + _top_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            found += _top_level_imports(node.body) + _top_level_imports(node.orelse)
            found += _top_level_imports(node.finalbody)
            for handler in node.handlers:
                found += _top_level_imports(handler.body)
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of bot/ and handlers/ that module ``name`` imports at its top level."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    named: set[str] = set()
    for node in _top_level_imports(ast.parse(path.read_text()).body):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            parts = package.split(".")
            parts = parts[: len(parts) - (node.level - 1)]
            base = ".".join([*parts, *([node.module] if node.module else [])])
        for alias in node.names:  # `from bot import sticky` names the module bot.sticky
            named.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    arrows = set()
    for target in named:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target and target != name:
            arrows.add(target)
    return arrows


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def rings(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def test_the_ring_finder_finds_a_ring_and_nothing_else() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}, "f": set()}
    assert rings(graph) == [frozenset({"a", "b", "c"})]


def test_the_reader_sees_type_checking_imports_and_relative_ones(tmp_path: Path) -> None:
    path = tmp_path / "x.py"
    path.write_text(
        "from typing import TYPE_CHECKING\nfrom . import y\nif TYPE_CHECKING:\n    from p.z import Z\n"
        "def f():\n    import p.w\n"
    )
    modules = {"p.x": path, "p.y": path, "p.z": path, "p.w": path}
    assert _imports("p.x", path, modules) == {"p.y", "p.z"}


def test_no_module_is_over_600_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): n
        for path in _modules().values()
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert {p: n for p, n in long.items() if p not in TOO_LONG_ALLOWED} == {}, (
        f"split these along their seams (at most {MAX_LINES} lines each)"
    )
    fixed = TOO_LONG_ALLOWED - set(long)
    assert not fixed, f"these are short now: remove them from TOO_LONG_ALLOWED: {sorted(fixed)}"


def test_no_modules_import_each_other() -> None:
    found = set(rings(import_graph()))
    assert found - RINGS_ALLOWED == set(), (
        "these modules import each other: move what they share into a module both import "
        f"(or a protocol): {[sorted(ring) for ring in found - RINGS_ALLOWED]}"
    )
    gone = RINGS_ALLOWED - found
    assert not gone, f"these rings are cut now: remove them from RINGS_ALLOWED: {[sorted(r) for r in gone]}"
