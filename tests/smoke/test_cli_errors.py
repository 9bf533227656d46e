"""The `steward` command's errors say what to do, in one sentence, with the documented exit code (issue 37
§2): Redis down or its URL malformed, no forge configured, a setting that does not read; and a command whose
output is data keeps its standard output for the data (its logs go to standard error). Each runs the
installed entry point in a fresh process, against real Redis."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from bot.demo.scratch_redis import CLAIM_KEY, Claim
from bot.demo.threads import free_port
from tests.smoke.stack import steward_command

NO_REDIS, REFUSED = 3, 4


def _steward(*args: str, env: dict[str, str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("STEWARD_")}
    return subprocess.run(
        [*steward_command(), *args],
        env={**clean, **env},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _one_sentence(done: subprocess.CompletedProcess[str], code: int) -> str:
    assert done.returncode == code, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr and done.stdout == "", (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_reconcile_with_redis_down_exits_3_with_one_sentence() -> None:
    down = f"redis://:hunter2@127.0.0.1:{free_port()}/0"
    said = _one_sentence(
        _steward("reconcile", env={"STEWARD_REDIS_URL": down, "STEWARD_GITHUB_TOKEN": "t"}), NO_REDIS
    )
    assert said.startswith("steward reconcile: Redis is not answering at redis://:***@127.0.0.1:")
    assert "set STEWARD_REDIS_URL" in said and "hunter2" not in said


@pytest.mark.parametrize(
    ("url", "what"),
    [
        ("localhost:6379", "it should look like redis://HOST:PORT/DB"),
        ("redis://127.0.0.1:6379/x", "it should end in a database number, not 'x'"),
        ("redis://127.0.0.1:port/0", "it should have a port that is a number"),
    ],
)
@pytest.mark.parametrize("command", ["reconcile", "dead list", "worker"])
def test_a_malformed_redis_url_is_one_sentence(command: str, url: str, what: str) -> None:
    said = _one_sentence(
        _steward(*command.split(), env={"STEWARD_REDIS_URL": url, "STEWARD_GITHUB_TOKEN": "t"}), REFUSED
    )
    assert said.startswith(f"steward: STEWARD_REDIS_URL is not valid: {what}"), said
    assert said.endswith("fix it or unset it.")


def test_a_setting_that_does_not_read_is_named_in_plain_words() -> None:
    said = _one_sentence(_steward("dead", "list", env={"STEWARD_DEAD_MAX_BYTES": "lots"}), REFUSED)
    assert said == (
        "steward: STEWARD_DEAD_MAX_BYTES is not valid: it should be a whole number, like 3; "
        "fix it or unset it."
    )


def test_with_json_logs_a_setting_that_does_not_read_is_one_json_line() -> None:
    """Issue 40 item 5: a process with STEWARD_LOG_FORMAT=json says why it refused to start in JSON too."""

    done = _steward("worker", env={"STEWARD_MAX_JOBS": "abc", "STEWARD_LOG_FORMAT": "json"})
    assert done.returncode == REFUSED
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    said = json.loads(lines[0])
    assert said["setting"] == "STEWARD_MAX_JOBS" and said["level"] == "error"
    assert said["reason"].startswith("STEWARD_MAX_JOBS is not valid: it should be a whole number")


def test_reconcile_with_no_forge_refuses_before_writing_to_redis(redis_claim: Claim) -> None:
    redis_claim.reset()
    said = _one_sentence(_steward("reconcile", env={"STEWARD_REDIS_URL": redis_claim.url}), REFUSED)
    assert said.startswith("steward reconcile: No forge is configured: set STEWARD_GITHUB_TOKEN")
    client = redis_claim.client()
    try:
        written = [key for key in client.keys("*") if key != CLAIM_KEY.encode()]
    finally:
        client.close()
    assert written == [], "nothing written, not even a signing key"


def test_public_key_writes_the_key_and_nothing_else_to_stdout(redis_claim: Claim) -> None:
    """A fresh Redis: Steward makes its key and warns (pin it) — on stderr; the key file gets the key."""
    redis_claim.reset()
    done = _steward("public-key", env={"STEWARD_REDIS_URL": redis_claim.url, "STEWARD_LOG_LEVEL": "info"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("-----BEGIN PUBLIC KEY-----\n")
    assert done.stdout.endswith("-----END PUBLIC KEY-----\n")
    assert "generated a signing key" in done.stderr and done.stderr.strip().splitlines()[-1].startswith("# ")


def test_config_schema_prints_json_only_even_when_asked_for_debug_logs() -> None:
    done = _steward("config-schema", env={"STEWARD_LOG_LEVEL": "debug"})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["$schema"].endswith("2020-12/schema")


@pytest.mark.parametrize(
    ("args", "start"),
    [
        (["dead", "list"], "steward dead: Redis is not answering at redis://127.0.0.1:"),
        (
            ["public-key"],
            "steward public-key: no STEWARD_SIGNING_KEY, and Redis (where Steward keeps its key)",
        ),
        (["verify", "o/r#1"], "steward verify: no --public-key, and Redis (where Steward keeps its key)"),
    ],
)
def test_redis_down_is_one_sentence_with_exit_3(args: list[str], start: str) -> None:
    env = {"STEWARD_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0", "STEWARD_GITHUB_TOKEN": "t"}
    said = _one_sentence(_steward(*args, env=env), NO_REDIS)
    assert said.startswith(start), said
