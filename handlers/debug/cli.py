"""`steward debug-report OWNER/REPO#N [--json] [--forge github|gitea]`: a bug's investigation from forge
state alone — hypotheses, evidence, verdicts, escalations, fix rows — for a post-mortem or a CI check.

Reads only (nothing is written, not even a due escalation). Exit codes: 0 a report was printed, 2 bad
arguments, 3 the forge did not answer, 4 no forge configured or the credentials rejected, 5 no such issue
(the codes `steward verify` and `steward forks` use: bot/cli/help.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from bot.forge import ForgeError, ForgeKind, RepoRef

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_FORGE = 3
EXIT_NOT_FOUND = 5
TARGET = re.compile(
    r"^(?:(?P<forge>github|gitea):)?(?P<owner>[^/\s#]+)/(?P<name>[^/\s#]+)#(?P<number>[0-9]{1,9})$"
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"steward debug-report: {message}\n")


def _parser() -> argparse.ArgumentParser:
    from bot.cli.help import epilog

    parser = _Parser(
        prog="steward debug-report",
        description="Print a bug's root-cause investigation (hypotheses, evidence, verdicts, escalations,\n"
        "fix attempts) from the forge. Reads only.",
        epilog=epilog("debug-report"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("target", help="OWNER/REPO#N (or github:OWNER/REPO#N, gitea:OWNER/REPO#N)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--forge", choices=("github", "gitea"), help="which forge, when both are set up")
    return parser


def parse_target(text: str, forge: str | None) -> tuple[ForgeKind | None, RepoRef, int] | None:
    match = TARGET.match(text.strip())
    if match is None:
        return None
    kind = match.group("forge") or forge
    return kind, RepoRef(match.group("owner"), match.group("name")), int(match.group("number"))  # type: ignore[return-value]


async def report(
    settings: Any, kind: ForgeKind | None, repo: RepoRef, number: int, *, as_json: bool
) -> tuple[int, str]:
    """(exit code, what to print) for one bug, read with ``settings`` (process settings)."""
    from redis.exceptions import RedisError

    import handlers
    from bot.cli.args import choose_forge, forge_failure
    from bot.config.repo_settings import RepoSettings
    from bot.queue.jobs import make_redis
    from bot.records.signing import verifying_keyring
    from bot.records.sticky import Verifier
    from bot.worker.jobs import build_runtime
    from handlers.debug.effects import fix_attempts, read_board
    from handlers.debug.render import report_json, report_text

    redis = make_redis(settings.redis_url)
    registry = handlers.build_registry()
    runtime = build_runtime(settings, redis, registry)
    try:
        chosen, code, sentence = choose_forge("steward debug-report", settings, kind)
        if chosen is None:
            return code, sentence
        kind = chosen
        try:
            forge = await runtime.forge(kind, repo)
            try:
                config = await runtime.configs.get(forge, repo)
            except (RedisError, OSError):
                config = RepoSettings(runtime.handler_settings)
            me = await forge.whoami()
            loaded = await read_board(
                forge,
                repo,
                number,
                bot_login=me.login,
                settings=config.settings,
                registry=registry,
                prefix=settings.command_prefix,
                verifier=await Verifier.for_repo(
                    await verifying_keyring(settings, redis=runtime.redis), forge, repo
                ),
            )
            fixes = await fix_attempts(
                forge, repo, number, loaded.board, config.settings.bugfix.branch_prefix
            )
        except ForgeError as exc:
            return forge_failure("steward debug-report", settings, kind, f"{repo}#{number}", exc)
        if as_json:
            return EXIT_OK, json.dumps(
                report_json(loaded.board, fixes, repo=repo.full_name, number=number), indent=2
            )
        if loaded.board_comment is None:
            return EXIT_OK, f"{repo}#{number}: no investigation (no hypotheses board)."
        timeout = config.settings.debug.pending_timeout_hours
        return EXIT_OK, report_text(
            loaded.board, fixes, repo=repo.full_name, number=number, timeout_hours=timeout
        )
    finally:
        await runtime.aclose()
        await redis.aclose()


def main(argv: Sequence[str]) -> int:
    from bot.config.settings import get_settings
    from bot.telemetry import logs

    args = _parser().parse_args(list(argv))
    target = parse_target(args.target, args.forge)
    if target is None:
        print(f"steward debug-report: expected OWNER/REPO#N, got {args.target!r}", file=sys.stderr)
        return EXIT_USAGE
    settings = get_settings()
    logs.configure("warning", settings.log_format, stream=sys.stderr)
    code, text = asyncio.run(report(settings, *target, as_json=args.json))
    print(text, file=sys.stdout if code == EXIT_OK else sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
