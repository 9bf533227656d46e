"""What the read-only CLI checks share (`steward verify`, `steward forks`): an argument parser whose errors
are raised rather than printed (the command chooses its exit code), and the `[FORGE:]OWNER/REPO#N` target."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

TARGET = re.compile(r"^(?:(?P<kind>github|gitea):)?(?P<repo>[^/\s#]+/[^/\s#]+)#(?P<number>\d+)$")


class Usage(Exception):
    """The arguments are wrong: the message says how (the command exits with its usage code)."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise Usage(f"{self.prog}: {message}")


def target_parser(prog: str, description: str, *, json_help: str) -> Parser:
    """A parser for one issue or pull request: the target, ``--forge`` and ``--json``."""
    parser = Parser(prog=prog, description=description)
    parser.add_argument(
        "target", metavar="OWNER/REPO#N", help="the issue or pull request (gitea:OWNER/REPO#N)"
    )
    parser.add_argument("--forge", choices=("github", "gitea"), help="which forge, when both are configured")
    parser.add_argument("--json", action="store_true", help=json_help)
    return parser


def read_target(parser: Parser, argv: Sequence[str]) -> tuple[argparse.Namespace, re.Match[str]] | None:
    """The parsed arguments and the target's match, or None once it has printed why they are wrong (the
    command then exits with its usage code)."""
    try:
        args = parser.parse_args(list(argv))
    except Usage as exc:
        print(exc, file=sys.stderr)
        return None
    found = TARGET.match(args.target)
    if found is None:
        print(f"{parser.prog}: expected OWNER/REPO#N, got {args.target!r}", file=sys.stderr)
        return None
    return args, found
