"""Dependency cycles: would "``issue`` is blocked by ``blocker``" close a loop?

The graph maps an issue number to the numbers that block it. Adding ``issue ← blocker`` closes a cycle
exactly when ``issue`` is already reachable from ``blocker`` along blocked-by edges (or when they are the
same issue). The cycle is returned as the path ``[issue, blocker, …, issue]`` so it can be spelled out.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping

__all__ = ["describe_cycle", "find_cycle"]


def find_cycle(graph: Mapping[int, Iterable[int]], issue: int, blocker: int) -> list[int] | None:
    """The cycle that ``issue`` blocked by ``blocker`` would close, or None (breadth-first: shortest)."""
    if issue == blocker:
        return [issue, issue]
    parent: dict[int, int] = {blocker: blocker}
    queue = deque([blocker])
    while queue:
        node = queue.popleft()
        for nxt in graph.get(node, ()):
            if nxt in parent:
                continue
            parent[nxt] = node
            if nxt == issue:
                path = [issue]
                while path[-1] != blocker:
                    path.append(parent[path[-1]])
                return [issue, *reversed(path)]
            queue.append(nxt)
    return None


def describe_cycle(cycle: list[int]) -> str:
    """``[5, 7, 6, 5]`` → ``#5 is blocked by #7, which is blocked by #6, which is blocked by #5``."""
    if len(cycle) < 2:
        return ""
    text = f"#{cycle[0]} is blocked by #{cycle[1]}"
    for number in cycle[2:]:
        text += f", which is blocked by #{number}"
    return text
