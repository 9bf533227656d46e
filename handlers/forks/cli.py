"""``steward forks OWNER/REPO#N [--json]``: the juror's verdict on one issue or pull request, from forge state
alone (the `/decide` comments and their sources — never Steward's own comment), so a CI job or a reviewer
can verify the records without trusting Steward.

Exit 0 when every fork is resolved (or the issue lists none), 1 otherwise; 2 bad arguments; 3 the forge did
not answer; 4 no forge configured, or the forge rejected the credentials (or, on Gitea, the token is not a
repository admin's); 5 no such issue (`steward forks --help`, bot/cli/help.py). The forge comes from the
usual environment (`STEWARD_GITHUB_*`, `STEWARD_GITEA_*`); the repository's own configuration file
(headings, `commands.decide.permission`) is read from its default branch.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Sequence
from typing import Any

from bot.cli.args import (
    EXIT_ENVIRONMENT,
    EXIT_UNREACHABLE,
    Parser,
    choose_forge,
    forge_failure,
    read_target,
    target_parser,
)
from bot.commands.permissions import PermissionsUnreadable
from bot.config.repo_file import CONFIG_PATHS, merge, parse
from bot.config.settings import HandlerSettings, Settings
from bot.forge import Forge, ForgeError, ForgeKind, RepoRef
from handlers.forks.juror import Verdict

EXIT_RESOLVED = 0
EXIT_UNRESOLVED = 1
EXIT_USAGE = 2
EXIT_FORGE = EXIT_UNREACHABLE


def _parser() -> Parser:
    parser = target_parser(
        "steward forks",
        "Check the design-fork records of an issue or pull request from the forge alone. Exit 0 "
        "when every fork is resolved (or none is listed), 1 otherwise, 2 bad arguments, 3 forge unreadable.",
        json_help="print the verdict as JSON",
    )
    return parser


def verdict_json(target: str, verdict: Verdict) -> dict[str, Any]:
    forks = []
    for fork in verdict.forks:
        record = fork.record if fork.record is not None and fork.record.kind == "decide" else None
        forks.append(
            {
                "id": fork.id,
                "question": fork.question,
                "status": fork.status,
                "reason": fork.reason,
                "resolution": record.text if record else None,
                "decided_by": record.decider if record else None,
                "recorded_by": record.recorder if record else None,
                "url": record.url if record else None,
                "decided_at": record.decided_at if record else None,
                "quote": record.quote if record else None,
                "record_hash": record.hash if record else None,
                "body_lags": fork.body_lags,
                "removed": fork.removed,
                "legacy": record.legacy if record else False,
                "history": len(fork.history),
            }
        )
    return {
        "issue": target,
        "all_resolved": verdict.all_resolved,
        "unresolved": list(verdict.unresolved),
        "forks": forks,
    }


def verdict_text(target: str, verdict: Verdict) -> str:
    if not verdict.forks:
        return f"{target}: lists no design forks."
    lines = [
        f"{target}: all {len(verdict.forks)} design forks resolved."
        if verdict.all_resolved
        else f"{target}: not resolved: {', '.join(verdict.unresolved)} (of {len(verdict.forks)})."
    ]
    for fork in verdict.forks:
        line = f"  {fork.id} {fork.status:<8} {fork.question}"
        record = fork.record
        if fork.status == "resolved" and record is not None:
            by = f"@{record.decider}" + (
                f" (recorded by @{record.recorder})"
                if record.recorder.casefold() != record.decider.casefold()
                else ""
            )
            line += f"\n      → {record.text} — {by}, {record.decided_at}, {record.url}"
            line += f"\n      record {record.hash}"
        elif fork.reason:
            line += f"\n      {fork.reason}"
        lines.append(line)
    return "\n".join(lines)


async def _settings_of(forge: Forge, repo: RepoRef, defaults: HandlerSettings) -> HandlerSettings:
    from handlers import build_registry

    configurable = build_registry().configurable
    for path in CONFIG_PATHS[forge.kind]:
        found = await forge.read_file(repo, path)
        if found is None:
            continue
        parsed = parse(found.content, configurable)
        if parsed.valid:
            return merge(defaults, dict(parsed.data or {}))
        print(f"note: {path} is not valid; using the defaults", file=sys.stderr)
        return defaults
    return defaults


async def _run(kind: ForgeKind, repo: RepoRef, number: int, as_json: bool, settings: Settings) -> int:
    from bot.queue.jobs import make_redis
    from bot.records.signing import verifying_keyring
    from bot.records.sticky import Verifier
    from bot.worker.jobs import build_runtime
    from handlers.forks.effects import judge

    redis = make_redis(settings.redis_url)
    runtime = build_runtime(settings, redis)
    try:
        forge = await runtime.forge(kind, repo)
        handler_settings = await _settings_of(forge, repo, HandlerSettings())
        me = await forge.whoami()
        keyring = await verifying_keyring(settings, redis=redis)
        judged = await judge(
            forge,
            repo,
            number,
            handler_settings,
            bot_login=me.login,
            prefix=settings.command_prefix,
            verifier=await Verifier.for_repo(keyring, forge, repo),
        )
    except PermissionsUnreadable:
        print(
            f"steward forks: {repo}: the forge will not say who may decide (Gitea shows other people's "
            "permissions only to repository admins): set STEWARD_GITEA_TOKEN to a token of a repository "
            "admin.",
            file=sys.stderr,
        )
        return EXIT_ENVIRONMENT
    except ForgeError as exc:
        code, sentence = forge_failure("steward forks", settings, kind, f"{repo}#{number}", exc)
        print(sentence, file=sys.stderr)
        return code
    finally:
        await runtime.aclose()
        await redis.aclose()
    target = f"{repo}#{number}"
    if as_json:
        print(json.dumps(verdict_json(target, judged.verdict), indent=2, ensure_ascii=False))
    else:
        print(verdict_text(target, judged.verdict))
    return EXIT_RESOLVED if judged.verdict.all_resolved else EXIT_UNRESOLVED


def main(argv: Sequence[str]) -> int:
    read = read_target(_parser(), argv)
    if read is None:
        return EXIT_USAGE
    args, found = read
    settings = Settings()
    kind, code, sentence = choose_forge("steward forks", settings, found.group("kind") or args.forge)
    if kind is None:
        print(sentence, file=sys.stderr)
        return code
    from bot.telemetry import logs

    logs.configure("warning", settings.log_format, stream=sys.stderr)
    return asyncio.run(
        _run(kind, RepoRef.parse(found.group("repo")), int(found.group("number")), args.json, settings)
    )
