"""`steward config-schema`, `steward check-config` and `steward reconcile`: the operator's commands that
look at repositories rather than run a process."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.forge import ForgeError, ForgeKind, RepoRef

# check-config's exit codes.
CONFIG_VALID, CONFIG_INVALID, CONFIG_UNREADABLE = 0, 1, 2
# reconcile's exit codes.
RECONCILED, RECONCILE_ERRORS, RECONCILE_USAGE, RECONCILE_NO_REDIS = 0, 1, 2, 3

_DURATION = re.compile(r"^\s*+(\d++(?:\.\d++)?)\s*+([smhdw]?)\s*+$", re.IGNORECASE)
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}


def parse_duration(text: str) -> timedelta:
    """``90s``, ``30m``, ``6h``, ``2d``, ``1w`` (a bare number is seconds)."""
    match = _DURATION.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a duration (try 30m, 6h, 2d)")
    return timedelta(seconds=float(match[1]) * _UNITS[match[2].lower()])


def _commands() -> tuple[str, ...]:
    from bot.commands.registry import load_registry

    return load_registry().configurable


def cmd_config_schema(args: argparse.Namespace) -> int:
    from bot.config.repo_file import schema

    print(json.dumps(schema(_commands()), indent=2, ensure_ascii=False))
    return 0


def cmd_check_config(args: argparse.Namespace) -> int:
    from bot.config.repo_file import parse

    path: Path = args.path
    try:
        raw = sys.stdin.buffer.read() if str(path) == "-" else path.read_bytes()
    except OSError as exc:
        print(f"{path}: cannot read: {exc.strerror or exc}", file=sys.stderr)
        return CONFIG_UNREADABLE
    parsed = parse(raw, _commands())
    if parsed.valid:
        print(f"{path}: valid")
        return CONFIG_VALID
    for error in parsed.errors:
        line = f":{error.line}" if error.line else ""
        where = f" {error.path}:" if error.path else ""
        print(f"{path}{line}:{where} {error.message}")
    count = len(parsed.errors)
    print(
        f"{count} error{'' if count == 1 else 's'}: fix {'it' if count == 1 else 'them'} before pushing. "
        "Pushed like this, the file would not apply: a repository whose earlier file was valid keeps those "
        "settings, and one that never had a valid file stays switched off (or runs on Steward's defaults "
        "where STEWARD_REQUIRE_CONFIG=false), until it is fixed."
    )
    return CONFIG_INVALID


def _target(text: str, forge: str | None) -> tuple[ForgeKind | None, RepoRef]:
    kind, sep, name = text.partition(":")
    if sep and kind in ("github", "gitea"):
        return kind, RepoRef.parse(name)  # type: ignore[return-value]
    return forge, RepoRef.parse(text)  # type: ignore[return-value]


async def _reconcile(args: argparse.Namespace, settings: Any) -> int:
    from redis.exceptions import RedisError

    from bot.catchup.installed import repos_to_catch_up
    from bot.catchup.reconcile import reconcile_all, seen_repos
    from bot.queue.jobs import make_redis
    from bot.records.signing import install_from_settings
    from bot.worker.jobs import build_runtime

    try:
        since = datetime.now(UTC) - parse_duration(args.since) if args.since else None
    except ValueError as exc:
        print(f"--since: {exc}", file=sys.stderr)
        return RECONCILE_USAGE
    from bot.cli.preflight import EXIT_REFUSED, Refused, configuration

    try:
        # Before anything touches Redis: a refusal writes nothing there (not even a signing key).
        configuration(settings, receives=False)
    except Refused as exc:
        print(f"steward reconcile: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    redis = make_redis(settings.redis_url)
    # A catch-up by hand waits for the write budget (people's writes share it) instead of failing.
    runtime = build_runtime(settings, redis, on_budget_wait=_waiting_for_budget)
    try:
        kinds = runtime.forge_kinds
        try:
            await install_from_settings(settings, redis, runtime.state)
            seen = await seen_repos(runtime.seen, kinds)
        except (RedisError, OSError) as exc:
            print(_no_redis(settings.redis_url, exc), file=sys.stderr)
            return RECONCILE_NO_REDIS
        repos: list[tuple[ForgeKind, RepoRef]] = []
        for text in args.repo:
            try:
                kind, repo = _target(text, args.forge)
            except ValueError:
                print(f"--repo expects OWNER/NAME (or github:OWNER/NAME), got {text!r}", file=sys.stderr)
                return RECONCILE_USAGE
            if kind is None:
                known = [k for k, r in seen if r == repo]
                kind = known[0] if len(known) == 1 else (kinds[0] if len(kinds) == 1 else None)
            if kind is None:
                print(
                    f"{repo}: say which forge with --forge github|gitea (or github:{repo})", file=sys.stderr
                )
                return RECONCILE_USAGE
            if kind not in kinds:
                print(f"{repo}: {kind} is not configured here", file=sys.stderr)
                return RECONCILE_USAGE
            # The id of a repository Steward has seen saves asking the forge for it (the catch-up keeps its
            # marks by id: bot.forge.repo_key).
            ident = next((r.id for k, r in seen if k == kind and r == repo), 0)
            repos.append((kind, RepoRef(repo.owner, repo.name, ident) if ident else repo))
        if not args.repo:
            # Every repository Steward is installed on (the forge says), those heard from lately first.
            wanted = [k for k in kinds if args.forge is None or k == args.forge]
            try:
                repos = await repos_to_catch_up(runtime, wanted)
            except (RedisError, OSError) as exc:
                print(_no_redis(settings.redis_url, exc), file=sys.stderr)
                return RECONCILE_NO_REDIS
            if not repos:
                print(
                    "No repository to reconcile: the forge lists none Steward may write to, and none sent "
                    "a delivery lately; name one with --repo."
                )
                return RECONCILED
        has_github = any(kind == "github" for kind, _ in repos)
        print(
            f"{'Dry run: nothing is written. ' if args.dry_run else ''}Reconciling "
            f"{len(repos)} repositor{'y' if len(repos) == 1 else 'ies'}"
            + (f" (failed deliveries since {since:%Y-%m-%d %H:%M} UTC)" if since and has_github else "")
            + "…"
        )
        try:
            report = await reconcile_all(
                runtime, repos, dry_run=args.dry_run, since=since, say=print, full=args.full
            )
        except (RedisError, OSError) as exc:
            print(_no_redis(settings.redis_url, exc), file=sys.stderr)
            return RECONCILE_NO_REDIS
        wrote = f"{len(report.writes)} write(s) it would make" if args.dry_run else "changes written"
        redelivered = "to redeliver" if args.dry_run else "redelivered"
        print(
            f"Done: {report.repos} repositor{'y' if report.repos == 1 else 'ies'}, {report.issues} issue(s) "
            "re-checked"
            + (f" ({report.incremental} repositor(ies) incrementally)" if report.incremental else "")
            + (f", {len(report.redelivered)} delivery(ies) {redelivered}" if has_github else "")
            + (f" ({report.left} left for the next run)" if report.left else "")
            + (
                f", {len(report.commands)} comment(s) with commands "
                + ("to queue" if args.dry_run else "queued")
                if report.commands
                else ""
            )
            + (f", {wrote}" if args.dry_run else "")
            + (
                f", {len(report.skipped_busy)} busy issue(s) left to their running job"
                if report.skipped_busy
                else ""
            )
            + (f", {len(report.notes)} note(s)" if report.notes else "")
            + (f", {len(report.errors)} error(s)" if report.errors else "")
            + "."
        )
        return RECONCILE_ERRORS if report.errors else RECONCILED
    finally:
        await runtime.aclose()
        await redis.aclose()


def _waiting_for_budget(seconds: float) -> None:
    end = "" if sys.stderr.isatty() else "\n"
    print(
        f"\rwaiting {seconds:.0f} s for the write budget (STEWARD_WRITE_BUDGET_PER_MINUTE/_PER_HOUR, shared "
        "with people's commands)…",
        end=end,
        file=sys.stderr,
        flush=True,
    )


def _no_redis(url: str, exc: BaseException) -> str:
    """One sentence for Redis not answering: where it was looked for and what to do."""
    return (
        f"steward reconcile: Redis is not answering at {redacted(url)} ({type(exc).__name__}): start it, or "
        "set STEWARD_REDIS_URL to the Redis the workers use, and run it again."
    )


def redacted(url: str) -> str:
    """A Redis URL without its password."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return parts._replace(netloc=netloc).geturl()


def cmd_reconcile(args: argparse.Namespace, settings: Any) -> int:
    from bot.telemetry import logs

    # The report is the output; the handlers' logs go to stderr, warnings and worse unless asked for more.
    level = settings.log_level if settings.log_level.lower() in ("debug", "warning", "error") else "warning"
    logs.configure(level, settings.log_format, stream=sys.stderr)
    return asyncio.run(_reconcile(args, settings))


async def _config_reload(args: argparse.Namespace, settings: Any) -> int:
    from redis.exceptions import RedisError

    from bot.queue.jobs import make_redis
    from bot.worker.jobs import build_runtime

    configured: list[ForgeKind] = []
    if settings.github_token or settings.github_app_id:
        configured.append("github")
    if settings.gitea_url:
        configured.append("gitea")
    targets: list[tuple[ForgeKind, RepoRef]] = []
    for text in args.repo:
        try:
            kind, repo = _target(text, args.forge)
        except ValueError:
            print(f"--repo expects OWNER/NAME (or github:OWNER/NAME), got {text!r}", file=sys.stderr)
            return RECONCILE_USAGE
        if kind is None and len(configured) == 1:
            kind = configured[0]
        if kind is None:
            print(f"{repo}: say which forge with --forge github|gitea (or github:{repo})", file=sys.stderr)
            return RECONCILE_USAGE
        targets.append((kind, repo))
    redis = make_redis(settings.redis_url)
    runtime = build_runtime(settings, redis)
    try:
        for kind, repo in targets:
            # Steward keys a repository's state by its id (``bot.forge.repo_key``): ask the forge for it.
            found = await (await runtime.forge(kind, repo)).get_repo(repo)
            await runtime.configs.invalidate(kind, RepoRef(repo.owner, repo.name, found.id))
            print(f"{kind}:{repo}: the cached configuration is dropped; the next event reads the file again.")
    except (RedisError, OSError) as exc:
        print(f"Redis is not answering at {settings.redis_url}: {type(exc).__name__}", file=sys.stderr)
        return RECONCILE_NO_REDIS
    except ForgeError as exc:
        print(f"the forge did not answer as expected: {exc}", file=sys.stderr)
        return RECONCILE_NO_REDIS
    finally:
        await runtime.aclose()
        await redis.aclose()
    return RECONCILED


def cmd_config(args: argparse.Namespace, settings: Any) -> int:
    if args.action != "reload" or not args.repo:
        print("usage: steward config reload --repo OWNER/NAME [--repo …]", file=sys.stderr)
        return RECONCILE_USAGE
    return asyncio.run(_config_reload(args, settings))


def add_parsers(sub: Any, settings_of: Any) -> None:
    from bot.cli.help import add_command

    schema = add_command(sub, "config-schema")
    schema.set_defaults(func=cmd_config_schema)

    check = add_command(
        sub,
        "check-config",
        description="Validate a steward.yml before pushing it: each error is printed with its key and line.",
    )
    check.add_argument("path", type=Path, metavar="PATH", help="the file (- reads standard input)")
    check.set_defaults(func=cmd_check_config)

    config = add_command(
        sub,
        "config",
        description="Drop Steward's cached copy of a repository's configuration file (it keeps one for five "
        "minutes, and drops it on every push it hears of): after a push Steward missed, the next event reads "
        "the file again instead of acting on the old settings.",
    )
    config.add_argument("action", choices=("reload",), help="reload: drop the cached copy")
    config.add_argument(
        "--repo",
        action="append",
        default=[],
        metavar="OWNER/NAME",
        help="a repository (repeatable; github:OWNER/NAME or gitea:OWNER/NAME when both forges are set up)",
    )
    config.add_argument("--forge", choices=("github", "gitea"), help="the repositories' forge")
    config.set_defaults(func=lambda args: cmd_config(args, settings_of(args)))

    reconcile = add_command(
        sub,
        "reconcile",
        description="Re-evaluate every open issue carrying one of Steward's trigger or state labels and each "
        "capability's repository-wide state (dashboards, the configuration error issue), writing only what "
        "differs; on GitHub, ask GitHub to redeliver the webhook deliveries that failed. Without --repo, "
        "every repository Steward is installed on (the forge says) and may write to. Waits for the write "
        "budget when it is spent.",
    )
    reconcile.add_argument(
        "--repo",
        action="append",
        default=[],
        metavar="OWNER/NAME",
        help="a repository (repeatable; github:OWNER/NAME or gitea:OWNER/NAME when both forges are set up)",
    )
    reconcile.add_argument("--forge", choices=("github", "gitea"), help="only this forge")
    reconcile.add_argument(
        "--since",
        metavar="DURATION",
        help="look this far back (30m, 6h, 2d; default: since each repository's last catch-up)",
    )
    reconcile.add_argument(
        "--dry-run", action="store_true", help="print what would be written; write nothing"
    )
    reconcile.add_argument(
        "--full",
        action="store_true",
        help="re-check every tracked issue, not only those updated since the last run (after a change "
        "of steward.yml or of Steward's rules; the workers do a full pass once a day)",
    )
    reconcile.set_defaults(func=lambda args: cmd_reconcile(args, settings_of(args)))
