"""No regular expression Steward runs can backtrack without bound (issue 35 item 4).

Python's ``re`` backtracks, holds the GIL and cannot be stopped, so one expression with two overlapping
unbounded repetitions made one line of 40,000 ``[`` stall a worker for 16 s. These tests read the
expressions' *structure*, not their time: every pattern compiled in ``bot/`` and ``handlers/`` (module
attributes and literal ``re.*`` calls; the sandbox forge and the demo are not Steward's production code) is
parsed with ``re._parser`` and must not hold

- an unbounded repetition inside another one (``(a+)+``, ``(?:x*y)*``) — unless one of them is possessive
  (``*+``, ``++``) or atomic, so that it never gives back what it took;
- with ``re.MULTILINE``, an unbounded repetition right after ``^`` that can take a line break
  (``(?m)^\\s*def``): at each line start it takes all the blank lines after it again, so a run of them
  costs its length squared — possessive or not;
- two unbounded repetitions in a row whose characters overlap (``\\s*:?\\s*``, ``.+?[ \\t]*$``), with only
  optional items or characters the first could also take between them — the quadratic shape: the first gives
  back one character at a time and the second takes them all again each time — unless a mandatory character
  that the second cannot take stands between them, or the first is possessive.

``bench/pathological.py`` measures the same parsers on adversarial inputs at growing sizes.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import re._compiler as compiler
import re._constants as c
import re._parser as parser
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
_UNBOUNDED = c.MAXREPEAT
_BACKTRACKING = (c.MAX_REPEAT, c.MIN_REPEAT)
_REPEATS = (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT)
# The characters a piece of a pattern can take are found by trying these: ASCII, and a few others
# (no-break space, accented letters, a line separator, CJK, a zero-width space, an emoji).
_SAMPLE = [chr(i) for i in range(1, 128)] + list("\u00a0\u00e9\u00e3\u2028\u4e2d\u200b\U0001f600")


def _chars(state: Any, items: Any, flags: int) -> set[str]:
    try:
        rx = compiler.compile(parser.SubPattern(state, list(items)), flags)
    except Exception:  # a piece that cannot stand alone (a back-reference): assume it takes anything
        return set(_SAMPLE)
    return {ch for ch in _SAMPLE if rx.fullmatch(ch) or rx.fullmatch(ch + ch) or rx.match(ch)}


def _flat(items: Any) -> list[tuple[Any, Any]]:
    out: list[tuple[Any, Any]] = []
    for op, av in items:
        if op == c.SUBPATTERN:  # a group matches in line with its neighbours
            out.extend(_flat(av[-1]))
        else:
            out.append((op, av))
    return out


def _leading(items: Any) -> list[tuple[Any, Any]]:
    """The items a match of ``items`` can begin with (through groups and each alternative of a branch)."""
    for op, av in _flat(items):
        if op == c.AT:
            continue
        if op == c.BRANCH:
            return [first for branch in av[1] for first in _leading(branch)]
        return [(op, av)]
    return []


def problems(pattern: re.Pattern[str]) -> list[str]:
    """The shapes that can backtrack without bound in `pattern` (empty when there are none)."""
    tree = parser.parse(pattern.pattern, pattern.flags)
    state, flags = tree.state, pattern.flags
    found: list[str] = []

    def walk(items: Any, depth: int) -> None:
        seq = _flat(items)
        for k, (op, av) in enumerate(seq):
            if op in _BACKTRACKING:
                unbounded = av[1] == _UNBOUNDED
                if unbounded and depth:
                    found.append("nested unbounded repetition")
                walk(av[2], depth + unbounded)
            elif op == c.POSSESSIVE_REPEAT:
                walk(av[2], 0)
            elif op == c.BRANCH:
                for branch in av[1]:
                    walk(branch, depth)
            elif op in (c.ASSERT, c.ASSERT_NOT):
                walk(av[1], depth)
            elif op == c.ATOMIC_GROUP:
                walk(av, 0)
            elif op == c.GROUPREF_EXISTS:
                walk(av[1], depth)
                if av[2] is not None:
                    walk(av[2], depth)
            if op == c.AT and av == c.AT_BEGINNING and flags & re.MULTILINE:
                for nop, nav in _leading(seq[k + 1 :]):
                    if nop in _REPEATS and nav[1] == _UNBOUNDED and "\n" in _chars(state, nav[2], flags):
                        found.append("a repetition after a line start that takes line breaks")
            if op in _BACKTRACKING and av[1] == _UNBOUNDED:
                mine = _chars(state, av[2], flags)
                walls: list[set[str]] = []  # mandatory single characters passed on the way
                for nop, nav in seq[k + 1 :]:
                    if nop in (c.AT, c.ASSERT, c.ASSERT_NOT):
                        continue
                    repeat = nop in _REPEATS
                    theirs = _chars(state, nav[2] if repeat else [(nop, nav)], flags)
                    if repeat and nav[1] == _UNBOUNDED:
                        if mine & theirs and all(wall & theirs for wall in walls):
                            found.append("overlapping unbounded repetitions in a row")
                        break
                    lo, hi = parser.SubPattern(state, [(nop, nav)]).getwidth()
                    if lo == 0 or (hi == 1 and theirs <= mine):
                        if lo == 1:
                            walls.append(theirs)
                        continue
                    break

    walk(tree, 0)
    return found


def _production_modules() -> list[str]:
    names = []
    for root in ("bot", "handlers"):
        package = importlib.import_module(root)
        for info in pkgutil.walk_packages(package.__path__, root + "."):
            if ".sandbox" in info.name or ".demo" in info.name or info.name.endswith("__main__"):
                continue
            names.append(info.name)
    return names


def _module_patterns() -> list[tuple[str, re.Pattern[str]]]:
    seen: set[int] = set()
    out = []
    for name in _production_modules():
        for attr, value in vars(importlib.import_module(name)).items():
            if isinstance(value, re.Pattern) and id(value) not in seen and isinstance(value.pattern, str):
                seen.add(id(value))
                out.append((f"{name}.{attr}", value))
    return out


_RE_CALLS = {"compile", "match", "search", "fullmatch", "findall", "finditer", "sub", "subn", "split"}


def _literal_patterns() -> list[tuple[str, re.Pattern[str]]]:
    """Patterns written as literals in `re.<call>(...)` anywhere in the production code (inside functions
    too)."""
    out = []
    for path in sorted([*(ROOT / "bot").rglob("*.py"), *(ROOT / "handlers").rglob("*.py")]):
        if "sandbox" in path.parts or "demo" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in _RE_CALLS
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "re"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                out.append((f"{path.relative_to(ROOT)}:{node.lineno}", re.compile(node.args[0].value)))
    return out


def test_the_analysis_finds_the_shapes_that_backtrack_without_bound() -> None:
    # The link-reference expression of issue 35 (two overlapping stars), as it was.
    old_reference = (
        r"""\[(?:[^\]\\]|\\.)*[^\s\]\\](?:[^\]\\]|\\.)*\]:[ \t]*(?:<[^>\n]*>|[^\s<]\S*)"""
        r"""(?:[ \t]+(?:"[^"]*"|'[^']*'|\([^)]*\)))?[ \t]*$"""
    )
    bad_ones = (
        old_reference,
        r"(a+)+$",
        r"(?:x*y?)*z",
        r"\s*:?\s*$",
        r"^#+ (.+?)[ \t]*#*[ \t]*$",
        r"(\w+)\w*!",
        # At every line start the repetition takes the blank lines after it too, then fails: a test of
        # 19,800 blank lines took `/hypothesis` 13 s to read (possessive or not).
        r"(?m)^\s*def\s+(test\w*)",
        r"(?m)^\s*+class",
        r"(?m)^(?:\s*def|\s*class)",
    )
    for bad in bad_ones:
        assert problems(re.compile(bad)), bad
    for fine in (
        r"(?:a++)+$",
        r"\s*+:?\s*+$",
        r"[^,\s]+,[^,\s]+",
        r"(.*?\S),?\s++when",
        r"(?>a*)a*",
        r"(?m)^[ \t]*def[ \t]+(test\w*)",
        r"^\s*def",
    ):
        assert not problems(re.compile(fine)), fine


@pytest.mark.parametrize("source", ["modules", "literals"])
def test_no_expression_in_steward_can_backtrack_without_bound(source: str) -> None:
    patterns = _module_patterns() if source == "modules" else _literal_patterns()
    assert len(patterns) > (100 if source == "modules" else 0)
    bad = {name: (problems(p), p.pattern) for name, p in patterns if problems(p)}
    assert not bad, bad
