"""Fairness (issue 25): 1,000 signed label deliveries queued on one repository against one `/steward ping`
on another. The ping's delay — from the person's comment to the bot's reply being visible — is measured
black-box (the sandbox's request log) with the queue idle (the baseline, same run) and right after the
1,000 deliveries were acknowledged, in two ways:

- **one sender, event budget on** (`limits.events_per_minute` at its default, 30): what one person's burst
  costs now — 30 handled at once, the rest deferred to the sender's later slots or coalesced per issue;
- **budget off** (`events_per_minute: 0` on that repository): every delivery is a job, as before the budget;
  the queue's own fairness (one worker, jobs in arrival order) — with the `refine` label (each job refines
  the bug again) and, on GitHub, with a label no capability reacts to (each job is nearly free).

Prints each delay, its difference from the baseline, how the receiver answered the 1,000, and how long the
flood took to drain.

    .venv/bin/python bench/fairness.py [--deliveries 1000] [--samples 5] [--forge github]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.stack import Stack, running
from bot.receiver.signatures import sign_sha256
from tests.e2e.stack import SECRET, ForgeUser, wait_for

DATA = Path(__file__).resolve().parent.parent / "tests" / "e2e" / "data"
REJECTED = (DATA / "bug-rejected.md").read_text()


def ping_delay(stack: Stack, owner: ForgeUser, repo: str, number: int) -> float:
    """Seconds from the person's `/steward ping` (as the sandbox logged it) to the bot's reply (answered)."""
    stack.admin("DELETE", "requests")
    owner.comment(repo, number, "/steward ping")
    path = f"/repos/{repo}/issues/{number}/comments"

    def reply() -> dict[str, Any] | None:
        log = stack.admin("GET", "requests")
        return next(
            (
                e
                for e in log
                if e.get("login") == "steward-bot"
                and e["method"] == "POST"
                and e["path"].endswith(path)
                and "seconds" in e
            ),
            None,
        )

    answer = wait_for(reply, timeout=600, what="the ping's reply")
    person = next(
        e
        for e in stack.admin("GET", "requests")
        if e.get("login") == "maintainer" and e["method"] == "POST" and e["path"].endswith(path)
    )
    return float(answer["at"] + answer["seconds"] - person["at"])


def headers(flavor: str, event: str, body: bytes) -> dict[str, str]:
    signature = sign_sha256(SECRET, body)
    if flavor == "gitea":
        return {"X-Gitea-Event": event, "X-Gitea-Delivery": str(uuid.uuid4()), "X-Gitea-Signature": signature,
                "X-Gitea-Event-Type": "issue_label", "Content-Type": "application/json"}  # fmt: skip
    return {"X-GitHub-Event": event, "X-GitHub-Delivery": str(uuid.uuid4()),
            "X-Hub-Signature-256": "sha256=" + signature, "Content-Type": "application/json"}  # fmt: skip


async def flood(url: str, flavor: str, event: str, body: bytes, count: int) -> Counter[str]:
    """``count`` signed deliveries of ``body``, each with its own delivery id, 32 at a time."""
    answers: Counter[str] = Counter()
    gate = asyncio.Semaphore(32)
    async with httpx2.AsyncClient(timeout=60) as client:

        async def one() -> None:
            async with gate:
                response = await client.post(url, content=body, headers=headers(flavor, event, body))
                data = response.json()
                outcome = next((k for k in ("deferred", "coalesced", "duplicate") if k in data), "accepted")
                answers[f"{response.status_code} {outcome}"] += 1

        await asyncio.gather(*(one() for _ in range(count)))
    return answers


def label_payload(stack: Stack, flavor: str) -> tuple[str, dict[str, Any]]:
    """The payload of the last label delivery the sandbox made (a real one, as the forge shapes it)."""
    found = [d for d in stack.admin("GET", "deliveries") if d["event"] == "issues" and d["action"] in
             ("labeled", "label_updated")]  # fmt: skip
    detail = stack.admin("GET", f"deliveries/{found[-1]['id']}")
    return detail["request_headers"].get("X-GitHub-Event") or detail["request_headers"].get(
        "X-Gitea-Event", "issues"
    ), detail["payload"]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--deliveries", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=5, help="baseline pings on an idle queue")
    parser.add_argument("--forge", choices=("github", "gitea"), default="github")
    args = parser.parse_args()
    flavor = args.forge
    with running(workers=1) as stack:
        owner, busy = stack.new_repo(flavor)
        _, quiet = owner, owner.create_repo()
        owner.add_collaborator(quiet, "steward-bot", "admin")
        owner.add_hook(quiet, f"{stack.receiver_url}{owner.webhook_path}")
        ping_issue = owner.open_issue(quiet, "ping here")
        bug = owner.open_issue(busy, "Checkout fails", REJECTED, labels=["bug"])
        owner.add_labels(busy, bug, ["refine"])
        stack.settle()
        event, payload = label_payload(stack, flavor)
        payload["sender"]["login"] = "flooder"  # one person, not the maintainer who set the repository up
        body = json.dumps(payload).encode()
        url = f"{stack.receiver_url}/webhooks/{flavor}"

        baseline = [ping_delay(stack, owner, quiet, ping_issue) for _ in range(args.samples)]
        base = statistics.median(baseline)
        print(f"forge {flavor}; one worker; {args.deliveries} signed label deliveries on one repository")
        print(f"baseline (idle queue): ping p50 {base * 1000:.0f} ms over {len(baseline)} samples "
              f"(min {min(baseline) * 1000:.0f}, max {max(baseline) * 1000:.0f})")  # fmt: skip
        folder = ".github" if flavor == "github" else ".gitea"
        idle = dict(payload, label={**payload["label"], "name": "chore"}) if "label" in payload else None
        modes = [("one sender, event budget on (30/min)", 30, body), ("budget off", 0, body)]
        if idle is not None:  # GitHub names the one label; Gitea sends the whole set
            modes.append(("budget off, a label no capability handles", 0, json.dumps(idle).encode()))
        for name, limit, flood_body in modes:
            owner.put_file(busy, f"{folder}/steward.yml",
                           f"limits:\n  commands_per_minute: 0\n  events_per_minute: {limit}\n")  # fmt: skip
            stack.settle()
            owner.edit_issue(busy, bug, title=f"Checkout fails ({limit})")  # reads the new file, publishes it
            stack.settle()
            started = time.monotonic()
            answers = asyncio.run(flood(url, flavor, event, flood_body, args.deliveries))
            acked = time.monotonic() - started
            delay = ping_delay(stack, owner, quiet, ping_issue)
            stack.settle(timeout=1800)
            drained = time.monotonic() - started
            against = (delay - base) * 1000
            print(f"{name}: ping {delay * 1000:.0f} ms ({against:+.0f} ms against the baseline); "
                  f"1,000 acknowledged in {acked:.1f} s as {dict(sorted(answers.items()))}; "
                  f"queue drained after {drained:.1f} s")  # fmt: skip


if __name__ == "__main__":
    main()
