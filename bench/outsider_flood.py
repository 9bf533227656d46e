"""Outsiders and the shared write budget (issue 35 item 5): another repository's reply time while one outsider
floods a repository, on both forges, with the production write budget (80 writes a minute, 500 an hour).

Two floods, each on a repository of its own with the default per-person limits (10 commands, 30 events a
minute):

- **comments**: ``--comments`` `/steward ping` comments from one outsider (past their command budget each
  used to cost a 😕 write; now only the one notice a minute is written);
- **issues**: ``--issues`` issues opened by one outsider with RA9 headings, labelled for refinement by
  nobody (``issues.opened`` used to be unbudgeted; now it takes the sender's event budget).

Each person may spend a quarter of the write budget and each repository half
(``STEWARD_WRITE_SHARE_PER_PERSON``/``…_PER_REPOSITORY``). After each flood has been acknowledged, the
maintainer's `/steward ping` on another repository is timed from the comment to the bot's reply (the aim:
under 5 s), and the bot's writes for the flood so far are counted.

    .venv/bin/python bench/outsider_flood.py [--comments 150] [--issues 40] [--forge github|gitea|both]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.fairness import ping_delay
from bench.stack import Stack, running
from tests.e2e.stack import wait_for

RA9 = (
    "## What happened\nThe cart total ignores the discount code.\n\n"
    "## What I expected\nThe total drops by 10%.\n\n"
    "## Steps to reproduce\n1. Add an item\n2. Apply SAVE10\n\n## Environment\nFirefox 128\n"
)


def _writes(stack: Stack, repo: str) -> int:
    log = stack.admin("GET", "requests")
    return sum(
        1 for r in log if r.get("login") == "steward-bot" and repo in r["path"] and r["method"] != "GET"
    )


def _acknowledged(stack: Stack, repo: str, count: int) -> None:
    def done() -> bool:
        mine = [d for d in stack.admin("GET", "deliveries") if d.get("repository") == repo]
        return len([d for d in mine if d.get("delivered")]) >= count

    wait_for(done, timeout=600, what="the flood's deliveries")


def _idle(stack: Stack) -> bool:
    queue = httpx2.get(f"{stack.receiver_url}/queue", timeout=10).json()
    return bool(queue["ready"] == 0 and queue["running"] == 0)


def one_forge(flavor: str, comments: int, issues: int) -> None:
    with running(workers=1, write_budget_per_minute="80", write_budget_per_hour="500") as stack:
        owner, quiet = stack.new_repo(flavor)
        ping_on = owner.open_issue(quiet, "ping here")
        stack.settle()
        base = ping_delay(stack, owner, quiet, ping_on)
        print(f"{flavor}: baseline ping {base:.2f} s")
        outsider = stack.user("outsider", flavor)
        for name, size in (("comments", comments), ("issues", issues)):
            if not size:
                continue
            _, flooded = owner, owner.create_repo()
            owner.add_collaborator(flooded, "steward-bot", "admin")
            owner.add_hook(flooded, f"{stack.receiver_url}{owner.webhook_path}")
            folder = ".github" if flavor == "github" else ".gitea"
            owner.put_file(flooded, f"{folder}/steward.yml", "# Steward, with its defaults.\n")
            stack.settle()
            stack.admin("DELETE", "deliveries")
            if name == "comments":
                number = owner.open_issue(flooded, "a question")
                stack.settle()
                stack.admin("DELETE", "deliveries")
                for _ in range(size):
                    outsider.comment(flooded, number, "/steward ping")
            else:
                for n in range(size):
                    outsider.open_issue(flooded, f"Discount ignored ({n})", RA9)
            stack.admin("DELETE", "requests")
            _acknowledged(stack, flooded, size)
            # The flood has had its turn: whatever it could write now is written, the rest waits.
            wait_for(lambda: _idle(stack), timeout=600, what="the flood's jobs to run or wait")
            writes = _writes(stack, flooded)
            delay = ping_delay(stack, owner, quiet, ping_on)
            print(
                f"{flavor}: {size} outsider {name}: the other repository's ping took {delay:.2f} s "
                f"({'within' if delay < 5 else 'OVER'} the 5 s aim); the flood's writes by then: {writes}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--comments", type=int, default=150)
    parser.add_argument("--issues", type=int, default=40)
    parser.add_argument("--forge", choices=("github", "gitea", "both"), default="both")
    args = parser.parse_args()
    for flavor in ("github", "gitea") if args.forge == "both" else (args.forge,):
        one_forge(flavor, args.comments, args.issues)


if __name__ == "__main__":
    main()
