"""What each `steward` subcommand reads from the environment and what its exit codes mean: one table that
every `--help` ends with and that the README's exit-code table is generated from (`make docs`).

The shared meaning of a code, where a command has it: 0 done, 1 it ran and found a problem, 2 bad
arguments, 3 a service did not answer (Redis, or the forge), 4 the environment is wrong (a ``STEWARD_*``
setting that does not read, no forge configured, credentials the forge rejects), 5 the named thing does not
exist. Two commands keep the codes their callers already rely on: `steward refine` (the refinement skill's
2-6; 1 only with --check, not approved) and `steward ledger verdict` (the backlog stop gate's 0-3, with
64/65 for its own errors).
"""

from __future__ import annotations

import argparse
import textwrap
from dataclasses import dataclass
from typing import Any

# The forge settings every command that reads a forge takes.
FORGE = (
    "STEWARD_GITHUB_TOKEN or STEWARD_GITHUB_APP_ID + STEWARD_GITHUB_PRIVATE_KEY_PATH, STEWARD_GITHUB_API_URL",
    "STEWARD_GITEA_URL + STEWARD_GITEA_TOKEN",
)
KEYS = ("STEWARD_SIGNING_KEY, STEWARD_VERIFY_KEYS (else the key kept in Redis)",)
LOGS = ("STEWARD_LOG_LEVEL, STEWARD_LOG_FORMAT (logs go to stderr)",)
SETTING = (4, "a STEWARD_* setting does not read (the line names it)")
PROCESS_LOGS = ("STEWARD_LOG_LEVEL, STEWARD_LOG_FORMAT (logs go to stdout)",)
EVERY_SETTING = ("and every other setting in docs/operations.md#environment-variables",)
REFUSED = (
    4,
    "refused to start: a setting does not read, no forge configured, a webhook secret missing, or the forge "
    "rejected the credentials (the line names the variable)",
)


@dataclass(frozen=True)
class CommandHelp:
    name: str
    summary: str
    environment: tuple[str, ...]
    exit_codes: tuple[tuple[int, str], ...]


COMMANDS: tuple[CommandHelp, ...] = (
    CommandHelp(
        "run",
        "the receiver and a worker in one process (small installs, the demo)",
        (
            "STEWARD_REDIS_URL, STEWARD_HOST, STEWARD_PORT",
            *FORGE,
            "STEWARD_GITHUB_WEBHOOK_SECRETS, STEWARD_GITEA_WEBHOOK_SECRETS",
            *PROCESS_LOGS,
            *EVERY_SETTING,
        ),
        (
            (0, "stopped (143 once SIGTERM has drained it)"),
            (1, "the worker stopped on its own, so the receiver stopped too"),
            (2, "bad arguments"),
            REFUSED,
        ),
    ),
    CommandHelp(
        "serve",
        "the webhook receiver (HTTP): checks each delivery's signature and queues it in Redis",
        (
            "STEWARD_REDIS_URL, STEWARD_HOST, STEWARD_PORT",
            *FORGE,
            "STEWARD_GITHUB_WEBHOOK_SECRETS, STEWARD_GITEA_WEBHOOK_SECRETS",
            *PROCESS_LOGS,
            *EVERY_SETTING,
        ),
        ((0, "stopped (143 once SIGTERM has drained it)"), (2, "bad arguments"), REFUSED),
    ),
    CommandHelp(
        "worker",
        "a worker: runs the queued jobs (several may share one Redis)",
        (
            "STEWARD_REDIS_URL",
            *FORGE,
            "STEWARD_SIGNING_KEY, STEWARD_WORKER_METRICS_PORT, STEWARD_MAX_JOBS",
            *PROCESS_LOGS,
            *EVERY_SETTING,
        ),
        ((0, "stopped (SIGTERM: running jobs finished)"), (2, "bad arguments"), REFUSED),
    ),
    CommandHelp(
        "reconcile",
        "catch up after downtime: re-check what Steward tends, redeliver failed deliveries, answer commands "
        "written meanwhile",
        ("STEWARD_REDIS_URL", *FORGE, *KEYS, "STEWARD_WRITE_BUDGET_PER_MINUTE/_PER_HOUR", *LOGS),
        (
            (0, "done"),
            (1, "some repository failed"),
            (2, "bad arguments"),
            (3, "Redis did not answer"),
            (4, "a setting does not read, or no forge is configured (nothing is written)"),
        ),
    ),
    CommandHelp(
        "config",
        "drop Steward's cached copy of a repository's configuration (`steward config reload --repo R`), so "
        "the next event reads the file again — after a push Steward missed",
        ("STEWARD_REDIS_URL", *FORGE, *LOGS),
        ((0, "done"), (2, "bad arguments"), (3, "Redis or the forge did not answer"), SETTING),
    ),
    CommandHelp(
        "dead",
        "jobs that failed for good: list them, queue them again, or forget them",
        ("STEWARD_REDIS_URL, STEWARD_DEAD_MAX_BYTES", *LOGS),
        (
            (0, "done"),
            (1, "a job id was unknown"),
            (2, "bad arguments"),
            (3, "Redis did not answer"),
            SETTING,
        ),
    ),
    CommandHelp(
        "check-config",
        "validate a repository configuration file (steward.yml) before pushing it",
        (),
        (
            (0, "the file is valid"),
            (1, "the file is invalid (each error with its key and line)"),
            (2, "bad arguments, or the file cannot be read"),
        ),
    ),
    CommandHelp(
        "config-schema",
        "print the JSON Schema of the repository configuration file",
        (),
        ((0, "printed"), (2, "bad arguments")),
    ),
    CommandHelp(
        "verify",
        "check every Steward record on an issue or pull request from the forge alone, with only the "
        "public key",
        (*FORGE, *KEYS, "STEWARD_REDIS_URL (the key, without --public-key)", *LOGS),
        (
            (0, "every record verifies"),
            (1, "some records do not (tampered, unknown key, unsigned)"),
            (2, "bad arguments"),
            (3, "the forge (or Redis, for the key) did not answer"),
            (4, "a setting does not read, no forge configured, or the forge rejected the credentials"),
            (5, "no such issue or pull request (or Steward's account cannot see it)"),
        ),
    ),
    CommandHelp(
        "public-key",
        "print the public key Steward signs its records with (PEM on stdout, its fingerprint on stderr)",
        (
            "STEWARD_SIGNING_KEY, else STEWARD_REDIS_URL (the key kept in Redis; made there if none yet)",
            *LOGS,
        ),
        (
            (0, "printed"),
            (2, "bad arguments"),
            (3, "no STEWARD_SIGNING_KEY and Redis did not answer"),
            SETTING,
        ),
    ),
    CommandHelp(
        "forks",
        "check an issue's design-fork records from the forge alone",
        ("STEWARD_REDIS_URL", *FORGE, *KEYS, "STEWARD_COMMAND_PREFIX", *LOGS),
        (
            (0, "every fork is resolved"),
            (1, "a fork is not resolved"),
            (2, "bad arguments"),
            (3, "the forge did not answer"),
            (4, "a setting does not read, no forge configured, or the forge rejected the credentials"),
            (5, "no such issue (or Steward's account cannot see it)"),
        ),
    ),
    CommandHelp(
        "debug-report",
        "a bug's root-cause investigation (hypotheses, evidence, verdicts, fix attempts) from the forge",
        ("STEWARD_REDIS_URL", *FORGE, *KEYS, "STEWARD_COMMAND_PREFIX", *LOGS),
        (
            (0, "a report was printed"),
            (2, "bad arguments"),
            (3, "the forge did not answer"),
            (4, "a setting does not read, no forge configured, or the forge rejected the credentials"),
            (5, "no such issue (or Steward's account cannot see it)"),
        ),
    ),
    CommandHelp(
        "refine",
        "refine a bug document (RA9) on a local file: write its verdict block and print the result",
        (),
        (
            (0, "a verdict was written, or the bug was already approved; with --check: approved"),
            (1, "with --check only: not approved (nothing is written)"),
            (2, "ARGS_INVALID: not a bug id or a path, or an unknown option"),
            (3, "BUG_NOT_FOUND: a bug id with no bug.md"),
            (4, "BUG_FILE_NOT_FOUND: the path does not exist"),
            (5, "WRITE_FAILED: the verdict could not be written"),
            (6, "BUG_FILE_UNREADABLE: not readable, or not UTF-8 text"),
        ),
    ),
    CommandHelp(
        "ledger",
        "gap-ledger tools: `ledger verdict` prints the backlog stop gate's verdict for a ledger on stdin",
        (),
        (
            (0, "STOP-CLEAN"),
            (1, "CONTINUE"),
            (2, "STOP-DEGRADED"),
            (3, "STOP-ENOUGH"),
            (64, "bad arguments"),
            (65, "the ledger cannot be read"),
        ),
    ),
    CommandHelp(
        "sandbox",
        "run the local forge emulator (GitHub's and Gitea's APIs, signed webhooks)",
        (),
        ((0, "stopped"), (2, "bad arguments")),
    ),
    CommandHelp(
        "demo",
        "sandbox + receiver + worker + a scripted story (--all: every capability on both forges)",
        ("STEWARD_REDIS_URL (a scratch database is claimed there)",),
        (
            (0, "the story ran"),
            (1, "it could not run (Redis not answering: the line says how to start it)"),
            (2, "bad arguments"),
            SETTING,
        ),
    ),
    CommandHelp("version", "print Steward's version", (), ((0, "printed"), (2, "bad arguments"))),
)

BY_NAME = {command.name: command for command in COMMANDS}


def epilog(name: str) -> str:
    """The end of `steward NAME --help`: the environment it reads and its exit codes."""
    command = BY_NAME[name]
    lines = ["environment:"]
    lines += [f"  {line}" for line in command.environment] or ["  none"]
    lines.append("exit codes:")
    for code, meaning in command.exit_codes:
        lines.append(f"  {code:<2} {meaning}")
    return "\n".join(lines)


def add_command(sub: Any, name: str, **kwargs: Any) -> argparse.ArgumentParser:
    """A subcommand whose --help says what it does, what it reads from the environment and its exit codes."""
    summary = BY_NAME[name].summary
    kwargs.setdefault("help", summary)
    kwargs.setdefault("description", summary[0].upper() + summary[1:] + ".")
    kwargs["description"] = textwrap.fill(kwargs["description"], 100)
    kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
    parser: argparse.ArgumentParser = sub.add_parser(name, epilog=epilog(name), **kwargs)
    return parser


EXIT_CODES_START = "<!-- exit-codes:start (generated by `make docs` from bot/cli/help.py) -->"
EXIT_CODES_END = "<!-- exit-codes:end -->"


def exit_codes_markdown() -> str:
    """The README's table: one row per command, its codes and what each means."""
    lines = ["| Command | Exit codes |", "|---|---|"]
    for command in COMMANDS:
        codes = "; ".join(f"**{code}** {meaning}" for code, meaning in command.exit_codes)
        lines.append(f"| `steward {command.name}` | {codes.replace('|', '\\|')} |")
    return "\n".join(lines)
