"""What the read-only CLI checks share (`steward verify`, `steward forks`): an argument parser whose errors
are raised rather than printed (the command chooses its exit code), and the `[FORGE:]OWNER/REPO#N` target."""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from bot.forge import ForgeKind

TARGET = re.compile(r"^(?:(?P<kind>github|gitea):)?(?P<repo>[^/\s#]+/[^/\s#]+)#(?P<number>\d+)$")


EXIT_USAGE = 2


class Usage(Exception):
    """The arguments are wrong: the message says how (the command exits with its usage code)."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise Usage(f"{self.prog}: {message}")


def target_parser(prog: str, description: str, *, json_help: str) -> Parser:
    """A parser for one issue or pull request: the target, ``--forge`` and ``--json``."""
    from bot.cli.help import epilog

    parser = Parser(
        prog=prog,
        description=textwrap.fill(description, 100),
        epilog=epilog(prog.removeprefix("steward ")),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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


# The exit codes the read-only forge commands share (`steward verify`, `steward forks`, `steward
# debug-report`), beside 0 (done), 1 (a finding: a record that does not verify, a fork not resolved) and
# 2 (bad arguments); the README's exit-code table lists them.
EXIT_UNREACHABLE = 3  # the forge (or Redis) did not answer
EXIT_ENVIRONMENT = 4  # no forge configured, or the forge rejected the credentials
EXIT_NOT_FOUND = 5  # no such issue or pull request (or Steward's account cannot see it)

_NAMES = {"github": "GitHub", "gitea": "Gitea"}


def configured_forges(settings: Any) -> list[ForgeKind]:
    """The forges ``settings`` configure, as `steward run` would use them."""
    kinds: list[ForgeKind] = []
    if settings.github_token is not None or settings.github_app_id is not None:
        kinds.append("github")
    if settings.gitea_url and settings.gitea_token is not None:
        kinds.append("gitea")
    return kinds


def choose_forge(prog: str, settings: Any, asked: str | None) -> tuple[ForgeKind | None, int, str]:
    """The forge to read (``asked``: the target's ``gitea:`` prefix or ``--forge``), or None with the exit
    code and the sentence that says what to do."""
    kinds = configured_forges(settings)
    if not kinds:
        return (
            None,
            EXIT_ENVIRONMENT,
            f"{prog}: no forge is configured: set STEWARD_GITHUB_TOKEN (GitHub) or STEWARD_GITEA_URL with "
            "STEWARD_GITEA_TOKEN (Gitea), as for `steward run`.",
        )
    if asked is None:
        if len(kinds) == 1:
            return kinds[0], 0, ""
        return (
            None,
            EXIT_USAGE,
            f"{prog}: both forges are configured: say which with --forge github|gitea "
            "(or gitea:OWNER/REPO#N).",
        )
    if asked not in kinds:
        variables = (
            "STEWARD_GITHUB_TOKEN" if asked == "github" else "STEWARD_GITEA_URL and STEWARD_GITEA_TOKEN"
        )
        return None, EXIT_ENVIRONMENT, f"{prog}: {_NAMES[asked]} is not configured: set {variables}."
    return asked, 0, ""


def forge_failure(prog: str, settings: Any, kind: ForgeKind, target: str, exc: Exception) -> tuple[int, str]:
    """A forge error as an exit code and one sentence naming the URL or variable and what to do."""
    from bot.forge import NotFound, PermissionDenied, RateLimited

    name = _NAMES[kind]
    url = settings.github_api_url if kind == "github" else settings.gitea_url
    token = (
        "STEWARD_GITEA_TOKEN"
        if kind == "gitea"
        else ("STEWARD_GITHUB_TOKEN" if settings.github_token is not None else "STEWARD_GITHUB_APP_ID")
    )
    status = getattr(exc, "status", None)
    if isinstance(exc, NotFound):
        return (
            EXIT_NOT_FOUND,
            f"{prog}: {target} was not found on {name} at {url} (or Steward's account cannot see it): check "
            f"the name and number, and that the account of {token} can read the repository.",
        )
    if isinstance(exc, RateLimited):
        return (
            EXIT_UNREACHABLE,
            f"{prog}: {name}'s rate limit is spent for {token}: try again in {exc.retry_after:.0f} s.",
        )
    if isinstance(exc, PermissionDenied) or status in (401, 403):
        what = "rejected the credentials" if status == 401 else "refused Steward's account"
        return (
            EXIT_ENVIRONMENT,
            f"{prog}: {name} {what} in {token} ({status}: {exc}): set it to a valid token of Steward's "
            "account that can read the repository.",
        )
    url_variable = "STEWARD_GITHUB_API_URL" if kind == "github" else "STEWARD_GITEA_URL"
    return (
        EXIT_UNREACHABLE,
        f"{prog}: {name} did not answer at {url} ({exc}): check {url_variable}, or try again when the forge "
        "is up.",
    )
