"""Forge economy, counted in the sandbox's request log: the reads and writes the bot makes for one handled
event of each capability, and for a redelivered event and an event that changes nothing (both must write
nothing). Steward runs as processes (sandbox, receiver, one worker) on both forges.

    .venv/bin/python bench/economy.py
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.stack import Stack, running
from tests.e2e.stack import ForgeUser

DATA = Path(__file__).resolve().parent.parent / "tests" / "e2e" / "data"
REJECTED = (DATA / "bug-rejected.md").read_text()


def counted(stack: Stack, repo: str, act: Callable[[], Any]) -> tuple[int, int]:
    """The bot's reads and writes on ``repo`` caused by ``act`` (once everything has settled)."""
    stack.admin("DELETE", "requests")
    stack.admin("DELETE", "deliveries")
    act()
    stack.settle()
    mine = [r for r in stack.admin("GET", "requests") if r["login"] == "steward-bot" and repo in r["path"]]
    reads = sum(1 for r in mine if r["method"] in ("GET", "HEAD"))
    return reads, len(mine) - reads


def redeliver_all(stack: Stack) -> None:
    for delivery in stack.admin("GET", "deliveries"):
        stack.admin("POST", f"deliveries/{delivery['id']}/redeliver")


def scenarios(stack: Stack, flavor: str) -> list[tuple[str, str, tuple[int, int]]]:
    owner: ForgeUser
    owner, repo = stack.new_repo(flavor)
    folder = ".github" if flavor == "github" else ".gitea"
    rows: list[tuple[str, str, tuple[int, int]]] = []
    plain = owner.open_issue(repo, "Dark mode", "Please add it.")
    stack.settle()

    def add(capability: str, what: str, act: Callable[[], Any]) -> None:
        rows.append((capability, what, counted(stack, repo, act)))

    add("core", "/steward ping", lambda: owner.comment(repo, plain, "/steward ping"))
    add("core", "  the same delivery again", lambda: redeliver_all(stack))
    add("core", "comment without a command", lambda: owner.comment(repo, plain, "Thanks!"))
    bug: list[int] = []
    add(
        "bug refinement",
        "bug report opened",
        lambda: bug.append(owner.open_issue(repo, "Login fails", REJECTED, labels=["bug"])),
    )
    add("bug refinement", "`refine` label", lambda: owner.add_labels(repo, bug[0], ["refine"]))
    add("bug refinement", "  the same delivery again", lambda: redeliver_all(stack))
    add(
        "bug refinement",
        "  title edited (no change)",
        lambda: owner.edit_issue(repo, bug[0], title="Login fails!"),
    )
    add("backlog", "`refine` label on a story", lambda: owner.add_labels(repo, plain, ["refine"]))
    add("backlog", "  the same delivery again", lambda: redeliver_all(stack))
    add(
        "config",
        "push of steward.yml",
        lambda: owner.put_file(repo, f"{folder}/steward.yml", "limits:\n  commands_per_minute: 5\n"),
    )
    return rows


def main() -> None:
    results: dict[str, list[tuple[str, str, tuple[int, int]]]] = {}
    with running(workers=1) as stack:
        for flavor in ("github", "gitea"):
            results[flavor] = scenarios(stack, flavor)
    print("== forge economy: the bot's requests per handled event (sandbox request log)")
    print(f"{'capability':<16}{'event':<30}{'github r/w':>12}{'gitea r/w':>12}")
    for (capability, what, (gr, gw)), (_, _, (tr, tw)) in zip(
        results["github"], results["gitea"], strict=True
    ):
        print(f"{capability:<16}{what:<30}{f'{gr}/{gw}':>12}{f'{tr}/{tw}':>12}")
    again = [w for rows in results.values() for (_, what, (_, w)) in rows if what.startswith("  ")]
    print(f"writes on a redelivered or no-change event: {sum(again)} (must be 0)")


if __name__ == "__main__":
    main()
