"""The layout shows the architecture (docs/architecture.md), and the code keeps to it.

- Each room of `bot/` imports only the rooms its row of the architecture's table lists; `handlers/` imports
  only the handler's side of the machinery; nothing in `bot/` imports `handlers/` but the CLI and the
  registry list; a capability asks another only through its `api.py`. Every import counts here: at a
  module's top level, under `if TYPE_CHECKING:`, inside a function, and `importlib.import_module("name")`
  with a name written in the code. An `import_module` with a name computed at run time is allowed only in
  the modules listed in `DYNAMIC_IMPORTS`, each with its reason.
- The capability table names every module of every capability, and nothing else.
- Rooms a reader can hold: no module is over 600 lines, and no two modules import each other, directly or
  in a ring. Rings are counted over top-level imports (an import inside a function runs late, by design),
  except in the forge adapters and the sandbox, where every import counts (issue 21 item 5).

Imports are read with `ast`. Importing `a.b.c` counts as an arrow to `a.b.c` only, not to its parent
packages; `from a.b import c` is an arrow to `a.b.c` when that is a module, else to `a.b`.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("bot", "handlers")
MAX_LINES = 600
ARCHITECTURE = ROOT / "docs" / "architecture.md"

# Today's offenders, each being fixed by someone else right now; the lead removes each line as its fix lands.
# Nothing may be added here: split the module, or cut the ring, instead.
TOO_LONG_ALLOWED: set[str] = set()
RINGS_ALLOWED: set[frozenset[str]] = set()

# Modules that import a module whose name is computed at run time, and why.
DYNAMIC_IMPORTS = {
    "bot.commands.registry": "load_registry: the registry list, `handlers`, loaded by name",
    "handlers.core.refine": "the /refine router: the RA9 engine, found by name when a command arrives",
}


@dataclass(frozen=True)
class Arrow:
    target: str
    line: int
    top_level: bool


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _top_level_nodes(body: list[ast.stmt]) -> set[int]:
    """The ids of the import statements at a module's top level (under `if` and `try` too)."""
    found: set[int] = set()
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.add(id(node))
        elif isinstance(node, ast.If):
            found |= _top_level_nodes(node.body) | _top_level_nodes(node.orelse)
        elif isinstance(node, ast.Try):
            found |= (
                _top_level_nodes(node.body) | _top_level_nodes(node.orelse) | _top_level_nodes(node.finalbody)
            )
            for handler in node.handlers:
                found |= _top_level_nodes(handler.body)
    return found


def _named(node: ast.AST, package: str, modules: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            parts = package.split(".")
            parts = parts[: len(parts) - (node.level - 1)]
            base = ".".join([*parts, *([node.module] if node.module else [])])
        return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
    if (
        isinstance(node, ast.Call)
        and _is_import_module(node.func)
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return [node.args[0].value]
    return []


def _is_import_module(func: ast.expr) -> bool:
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in ("import_module", "__import__")


@functools.cache
def _tree(path: Path) -> ast.Module:
    """``path`` parsed, once for all the tests of this file (each reads every module)."""
    return ast.parse(path.read_text())


@functools.cache
def _imports(path: Path) -> tuple[tuple[ast.AST, bool], ...]:
    """The statements and calls of ``path`` that import, each with whether it is at the module's top level
    (walked once: every test of this file asks for them)."""
    tree = _tree(path)
    top = _top_level_nodes(tree.body)
    return tuple(
        (node, id(node) in top)
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        or (isinstance(node, ast.Call) and _is_import_module(node.func))
    )


def arrows(name: str, path: Path, modules: dict[str, Path]) -> list[Arrow]:
    """What module ``name`` imports of bot/ and handlers/, each with its line and whether it is at the top."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node, at_top in _imports(path):
        for target in _named(node, package, modules):
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.append(Arrow(target, getattr(node, "lineno", 0), at_top))
    return found


def dynamic_imports(path: Path) -> list[int]:
    """The lines where ``path`` imports a module by a name computed at run time."""
    return [
        node.lineno
        for node, _ in _imports(path)
        if isinstance(node, ast.Call) and not (node.args and isinstance(node.args[0], ast.Constant))
    ]


def import_graph(*, every_import: bool = False) -> dict[str, set[str]]:
    modules = _modules()
    return {
        name: {a.target for a in arrows(name, path, modules) if every_import or a.top_level}
        for name, path in modules.items()
    }


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
                    work.append((child, iter(sorted(graph.get(child, ())))))
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


# --- the architecture's tables ---------------------------------------------------------------------------


def _table(heading_words: str) -> list[list[str]]:
    """The rows of the first table after the heading that contains ``heading_words``."""
    text = ARCHITECTURE.read_text()
    start = text.index(heading_words)
    rows = []
    for line in text[start:].splitlines():
        if line.startswith("|"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if not set(cells[0]) <= {"-", ":"}:
                rows.append(cells)
        elif rows:
            break
    return rows[1:]  # the header row aside


def room_of(module: str) -> str:
    """``bot.queue.jobs`` → ``bot.queue``; ``bot.version`` → itself; anything under handlers → handlers."""
    parts = module.split(".")
    return "handlers" if parts[0] == "handlers" else ".".join(parts[:2])


def room_rules() -> dict[str, set[str]]:
    """Room → the rooms it may import, as docs/architecture.md lists them."""
    rows = _table("## The rooms of `bot/`")
    rooms = {row[0].strip("`").rstrip("/").removesuffix(".py").replace("/", ".") for row in rows}
    short = {room.rpartition(".")[2]: room for room in rooms} | {"handlers": "handlers"}
    rules: dict[str, set[str]] = {}
    for row in rows:
        room = row[0].strip("`").rstrip("/").removesuffix(".py").replace("/", ".")
        allowed = row[2]
        if allowed.startswith("nothing"):
            rules[room] = set()
            continue
        words = {w.strip("` ").removeprefix("and ").strip("` ") for w in allowed.split(",")}
        if "everything" in words:
            rules[room] = set(short.values())
            continue
        unknown = words - set(short)
        assert not unknown, f"docs/architecture.md names rooms that do not exist: {sorted(unknown)}"
        rules[room] = {short[w] for w in words}
    return rules


HANDLERS_MAY_IMPORT = {
    "bot.commands",
    "bot.records",
    "bot.config",
    "bot.queue",
    "bot.events",
    "bot.forge",
    "bot.telemetry",
    "bot.version",
    "handlers",
}
HANDLER_CLI_MAY_ALSO_IMPORT = {"bot.cli", "bot.worker"}


def test_the_rooms_table_names_every_room_of_bot_and_only_those() -> None:
    named = set(room_rules())
    present = {room_of(m) for m in _modules() if m.startswith("bot.") and m != "bot"}
    assert named == present


def test_each_room_imports_only_what_the_architecture_allows() -> None:
    rules = room_rules()
    modules = _modules()
    wrong = []
    for name, path in modules.items():
        room = room_of(name)
        if room == "handlers":
            allowed = HANDLERS_MAY_IMPORT | (HANDLER_CLI_MAY_ALSO_IMPORT if name.endswith(".cli") else set())
        elif name == "bot":
            continue
        else:
            allowed = rules[room] | {room}
        for arrow in arrows(name, path, modules):
            if room_of(arrow.target) not in allowed:
                wrong.append(f"{path.relative_to(ROOT)}:{arrow.line} imports {arrow.target}")
    assert wrong == [], "imports the architecture does not allow (docs/architecture.md):\n" + "\n".join(wrong)


def test_the_receiver_never_imports_the_worker_even_through_another_room() -> None:
    graph = import_graph(every_import=True)
    seen: set[str] = set()
    todo = [m for m in graph if m.startswith("bot.receiver")]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        todo += graph[module]
    assert not {m for m in seen if m.startswith(("bot.worker", "bot.catchup", "handlers"))}


def test_bot_imports_handlers_only_from_the_cli_and_the_registry_list() -> None:
    modules = _modules()
    found = {
        name
        for name, path in modules.items()
        if name.startswith("bot")
        and any(a.target.startswith("handlers") for a in arrows(name, path, modules))
    }
    assert {name for name in found if room_of(name) != "bot.cli"} == set()
    assert "handlers" in DYNAMIC_IMPORTS["bot.commands.registry"]


def test_names_computed_at_run_time_are_imported_only_where_listed() -> None:
    found = {name: lines for name, path in _modules().items() if (lines := dynamic_imports(path))}
    assert set(found) == set(DYNAMIC_IMPORTS), found


def test_a_capability_asks_another_only_through_its_api() -> None:
    modules = _modules()
    starters = {"handlers", "handlers.core.refine"}  # the registry list and the /refine router start them
    wrong = []
    for name, path in modules.items():
        if not name.startswith("handlers.") or name in starters:
            continue
        capability = name.split(".")[1]
        for arrow in arrows(name, path, modules):
            parts = arrow.target.split(".")
            if parts[0] == "handlers" and len(parts) > 1 and parts[1] != capability and parts[2:] != ["api"]:
                wrong.append(f"{path.relative_to(ROOT)}:{arrow.line} imports {arrow.target}")
    assert wrong == []


def test_the_capability_table_names_every_module_of_every_capability() -> None:
    rows = _table("| Capability |")
    on_disk = {p.name for p in (ROOT / "handlers").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    named = {row[0].split()[0].strip("`/") for row in rows}
    assert named == on_disk
    for row in rows:
        capability = row[0].split()[0].strip("`/")
        listed = set(re.findall(r"`([a-z_]+\.py)`", " | ".join(row[1:])))
        present = {p.name for p in (ROOT / "handlers" / capability).glob("*.py")} - {"__init__.py"}
        assert listed == present, capability


def test_the_ring_finder_finds_a_ring_and_nothing_else() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}, "f": set()}
    assert rings(graph) == [frozenset({"a", "b", "c"})]


def test_the_reader_sees_every_kind_of_import(tmp_path: Path) -> None:
    path = tmp_path / "x.py"
    path.write_text(
        "import importlib\nfrom typing import TYPE_CHECKING\nfrom . import y\nif TYPE_CHECKING:\n"
        "    from p.z import Z\ndef f():\n    import p.w\n    importlib.import_module('p.v')\n"
        "    importlib.import_module(name)\n"
    )
    modules = {"p.x": path, "p.y": path, "p.z": path, "p.w": path, "p.v": path}
    found = {(a.target, a.top_level) for a in arrows("p.x", path, modules)}
    assert found == {("p.y", True), ("p.z", True), ("p.w", False), ("p.v", False)}
    assert dynamic_imports(path) == [9]


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


@pytest.mark.parametrize("room", ["bot.forge", "bot.sandbox"])
def test_no_module_of_the_forge_adapters_or_the_sandbox_is_in_a_ring_even_late(room: str) -> None:
    graph = import_graph(every_import=True)
    ours = {
        name: {t for t in targets if t.startswith(room)}
        for name, targets in graph.items()
        if name.startswith(room)
    }
    assert rings(ours) == []
