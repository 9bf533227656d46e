"""Nothing is lost: a job that fails for good is parked with its delivery, the forge's "Redeliver" is no
longer refused as a duplicate, and `steward dead retry` runs it again."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import httpx2
import pytest

from bot.cli import main as cli_main
from bot.cli.main import main
from tests.e2e.conftest import Steward
from tests.e2e.stack import reconcile, wait_for


def steward_cli(monkeypatch: pytest.MonkeyPatch, steward: Steward, *argv: str) -> tuple[int, str]:
    """`steward ARGV` in this process. The command's log set-up is left out (as tests/unit/test_cli_help.py
    does): configuring structlog again gives it a new processor list, and the loggers cached since the last
    set-up keep the old one — a later test's ``structlog.testing.capture_logs`` in this process no longer
    sees their lines."""
    monkeypatch.setenv("STEWARD_REDIS_URL", steward.redis_url)
    monkeypatch.setattr(cli_main, "logs_to_stderr", lambda: None)
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(list(argv))
    return code, out.getvalue()


def park_a_ping(steward: Steward) -> tuple[str, int, str]:
    """`/steward ping` whose reply the forge refuses (403) until the fault is cleared: the job is parked."""
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "refused")
    path = f"/repos/{repo}/issues/{number}/comments$"
    steward.faults({"method": "POST", "path": path, "status": 403, "times": 100, "login": "steward-bot"})
    steward.maintainer.comment(repo, number, "/steward ping")
    steward.settle()
    deliveries = httpx2.get(f"{steward.sandbox.url}/_sandbox/deliveries").json()
    [ping] = [d for d in deliveries if d["repository"] == repo and d["event"] == "issue_comment"]
    return repo, number, ping["id"]


def test_a_parked_job_is_listed_and_runs_again_with_steward_dead_retry(
    steward: Steward, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, number, delivery = park_a_ping(steward)
    assert steward.bot_comments(repo, number) == []
    code, listing = steward_cli(monkeypatch, steward, "dead", "list")
    assert code == 0 and "1 dead job(s)" in listing and delivery in listing and repo in listing
    assert "PermissionDenied" in listing or "403" in listing
    httpx2.delete(f"{steward.sandbox.url}/_sandbox/faults")
    code, out = steward_cli(monkeypatch, steward, "dead", "retry", "--all")
    assert code == 0 and "queued again" in out
    steward.settle()
    [reply] = [c["body"] for c in steward.bot_comments(repo, number)]
    assert "pong" in reply
    assert steward_cli(monkeypatch, steward, "dead", "list")[1].startswith("No dead jobs")


def test_after_a_job_is_parked_the_forges_redeliver_is_accepted(steward: Steward) -> None:
    repo, number, delivery = park_a_ping(steward)
    httpx2.delete(f"{steward.sandbox.url}/_sandbox/faults")
    again = httpx2.post(f"{steward.sandbox.url}/_sandbox/deliveries/{delivery}/redeliver").json()
    assert again["redelivery"] is True
    steward.settle()

    def answered() -> int | None:
        attempts = httpx2.get(f"{steward.sandbox.url}/_sandbox/deliveries/{delivery}").json()
        return attempts["status_code"] if attempts["attempts"] == 2 else None

    assert wait_for(answered, what="the redelivery's answer") == 202, "not refused as a duplicate"
    [reply] = [c["body"] for c in steward.bot_comments(repo, number)]
    assert "pong" in reply


def test_dead_retry_of_an_unknown_id_says_so(steward: Steward, monkeypatch: pytest.MonkeyPatch) -> None:
    code, _ = steward_cli(monkeypatch, steward, "dead", "retry", "no-such-job")
    assert code == 1


def test_a_catch_up_leaves_a_parked_command_to_the_operator(
    steward: Steward, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A comment whose job is parked is not one "no job handled yet": a catch-up (`steward reconcile`, or a
    worker's start-up one) does not run it again behind the operator's back, nor park it a second time."""
    repo, number, _ = park_a_ping(steward)
    done = reconcile(steward.settings, "--repo", f"{steward.forge}:{repo}", "--since", "1h")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "run the commands of comment" not in done.stdout + done.stderr
    steward.settle()
    code, listing = steward_cli(monkeypatch, steward, "dead", "list")
    assert code == 0 and "1 dead job(s)" in listing, listing
    assert steward.bot_comments(repo, number) == []
