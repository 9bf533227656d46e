"""``steward ledger verdict``: the stop gate on a ledger file, for people and scripts.

    steward ledger verdict --round R --last-probe new_gaps|no_new_gaps [--user-enough] [--cap N] [--json]
        < ledger.json

The exit code is the verdict: 0 STOP-CLEAN, 1 CONTINUE, 2 STOP-DEGRADED, 3 STOP-ENOUGH. Bad arguments
exit 64 and an unreadable ledger 65 (``sysexits.h``), so they never pass for a verdict. Without ``--json``
the verdict's name and reason are printed; with it, an object holding ``verdict``, ``exit_code``, ``open``
(the number of OPEN rows), ``core_unresolved`` (core dimensions with an OPEN row), ``residual_open``
(the OPEN row ids a stop leaves as Open Questions) and ``reason``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import IO, NoReturn

from handlers.backlog.gate import DEFAULT_CAP, verdict
from handlers.backlog.ledger import LedgerError, parse_ledger_text

__all__ = ["EXIT_DATA", "EXIT_USAGE", "main"]

EXIT_USAGE = 64
EXIT_DATA = 65


class _Usage(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _Usage(f"{self.prog}: {message}")


def _parser() -> argparse.ArgumentParser:
    from bot.cli.help import epilog

    parser = _Parser(
        prog="steward ledger",
        description="Gap-ledger tools: `steward ledger verdict` reads a ledger (JSON) on stdin and prints\n"
        "the backlog stop gate's verdict, which is also its exit code.",
        epilog=epilog("ledger"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="tool", required=True, parser_class=_Parser)
    gate = sub.add_parser(
        "verdict",
        help="the stop gate: exit 0 STOP-CLEAN, 1 CONTINUE, 2 STOP-DEGRADED, 3 STOP-ENOUGH",
        description="Read a ledger (JSON) on stdin and print the stop gate's verdict; the exit code is "
        "the verdict (0 STOP-CLEAN, 1 CONTINUE, 2 STOP-DEGRADED, 3 STOP-ENOUGH; 64 bad arguments, "
        "65 bad ledger).",
    )
    gate.add_argument("--round", type=int, required=True, help="the round just completed (0 or more)")
    gate.add_argument(
        "--last-probe",
        choices=("new_gaps", "no_new_gaps"),
        required=True,
        help="what the last probe-scan found: new_gaps or no_new_gaps",
    )
    gate.add_argument("--user-enough", action="store_true", help="the user ended the interview")
    gate.add_argument("--cap", type=int, default=DEFAULT_CAP, help=f"round cap (default {DEFAULT_CAP})")
    gate.add_argument("--json", action="store_true", help="print the verdict as JSON")
    return parser


def main(argv: Sequence[str], stdin: IO[str] | None = None) -> int:
    try:
        args = _parser().parse_args(list(argv))
    except _Usage as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    if args.round < 0 or args.cap < 1:
        print("steward ledger verdict: --round must be 0 or more and --cap 1 or more", file=sys.stderr)
        return EXIT_USAGE
    try:
        ledger = parse_ledger_text((stdin or sys.stdin).read())
    except LedgerError as exc:
        print(f"steward ledger verdict: {exc}", file=sys.stderr)
        return EXIT_DATA
    except UnicodeDecodeError:
        print("steward ledger verdict: the ledger is not UTF-8 text", file=sys.stderr)
        return EXIT_DATA
    result = verdict(
        ledger, round=args.round, last_probe=args.last_probe, user_enough=args.user_enough, cap=args.cap
    )
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False))
    else:
        print(f"{result.verdict.label}: {result.reason}")
    return result.exit_code
