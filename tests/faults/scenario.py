"""What the fault scenarios share: the expected forge state after a stream of events, checked in one place
(one verdict per refined bug, its label, one reply per command, no duplicate bot comment), dead letters
read and replayed the way an operator does, and the write log read from the sandbox."""

from __future__ import annotations

import io
import os
from collections import Counter
from contextlib import redirect_stdout
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

import httpx2

from bot.cli import main as cli_main
from bot.cli.main import main
from tests.e2e.conftest import Steward

VERDICT = "<!-- steward:ra9-verdict:"
REPLY = "<!-- steward:reply:"


@dataclass
class Expected:
    """What the events sent should leave on the forge: per issue, whether it has a verdict (and which label)
    and how many command replies."""

    verdict_label: dict[int, str] = field(default_factory=dict)
    replies: Counter[int] = field(default_factory=Counter)

    @property
    def issues(self) -> set[int]:
        return set(self.verdict_label) | set(self.replies)


def markers(body: str) -> str | None:
    first = body.split("\n", 1)[0]
    return first if first.startswith("<!-- steward:") else None


def check_forge_state(steward: Steward, repo: str, expected: Expected) -> list[str]:
    """The differences between the forge and ``expected`` (empty when it matches): a missing or duplicated
    verdict, a missing label, a missing reply, any bot comment whose marker appears twice."""
    problems: list[str] = []
    for number in sorted(expected.issues):
        bot = steward.bot_comments(repo, number)
        seen = Counter(m for c in bot if (m := markers(str(c["body"]))) is not None)
        problems += [f"#{number}: {marker!r} posted {n} times" for marker, n in seen.items() if n > 1]
        unmarked = [c for c in bot if markers(str(c["body"])) is None]
        if unmarked:
            problems.append(f"#{number}: {len(unmarked)} bot comment(s) without a marker")
        verdicts = sum(n for m, n in seen.items() if m.startswith(VERDICT))
        if number in expected.verdict_label:
            if verdicts != 1:
                problems.append(f"#{number}: {verdicts} verdicts, expected 1")
            label = expected.verdict_label[number]
            if label not in steward.maintainer.labels_of(repo, number):
                problems.append(f"#{number}: label {label} missing")
        replies = sum(n for m, n in seen.items() if m.startswith(REPLY))
        if replies != expected.replies[number]:
            problems.append(f"#{number}: {replies} replies, expected {expected.replies[number]}")
    return problems


def killed_mid_verdict(owner: Any, repo: str, number: int, label: str) -> bool:
    """Whether the job refining issue ``number`` stopped in its middle: the forge applied the bot's verdict
    comment, and the verdict's label — put on after the comment is written — is not there. Read from the
    forge, as a person sees it: the worker's log cannot say it (the issue has other events, opened and one
    per label, and one with nothing to do may end before the kill; a SIGKILL loses the last log lines)."""
    comments = [c for c in owner.comments(repo, number) if c["user"]["login"] == "steward-bot"]
    labels = [x["name"] for x in owner.call("GET", f"/repos/{repo}/issues/{number}")["labels"]]
    return any(c["body"].startswith(VERDICT) for c in comments) and label not in labels


def steward_cli(redis_url: str, *argv: str) -> tuple[int, str]:
    """`steward ARGV` in this process, against ``redis_url`` (the dead-letter commands need nothing else).
    The command's log set-up is left out, as in tests/e2e/test_dead_letters.py: it would reconfigure this
    process's logging, and a later test's ``capture_logs`` would miss the loggers cached before."""
    before = os.environ.get("STEWARD_REDIS_URL")
    os.environ["STEWARD_REDIS_URL"] = redis_url
    out = io.StringIO()
    try:
        with redirect_stdout(out), mock.patch.object(cli_main, "logs_to_stderr", lambda: None):
            code = main(list(argv))
    finally:
        if before is None:
            os.environ.pop("STEWARD_REDIS_URL", None)
        else:
            os.environ["STEWARD_REDIS_URL"] = before
    return code, out.getvalue()


def dead_count(redis_url: str) -> int:
    code, listing = steward_cli(redis_url, "dead", "list")
    assert code == 0, listing
    if listing.startswith("No dead jobs"):
        return 0
    return int(listing.split(" dead job(s)", 1)[0].split()[-1])


def bot_requests(sandbox_url: str) -> list[dict[str, Any]]:
    log = httpx2.get(f"{sandbox_url}/_sandbox/requests", timeout=30).json()
    return [r for r in log if r["login"] == "steward-bot"]


def deliveries_to(sandbox_url: str, repo: str) -> list[dict[str, Any]]:
    every = httpx2.get(f"{sandbox_url}/_sandbox/deliveries", timeout=30).json()
    return [d for d in every if d["repository"] == repo]
