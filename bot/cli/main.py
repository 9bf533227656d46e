"""The ``steward`` command."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import signal
import sys
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.telemetry import logs

if TYPE_CHECKING:
    from bot.config.settings import Settings


def _settings(args: argparse.Namespace) -> Settings:
    # Imported here: the settings (pydantic) are a third of the start-up, and `steward refine`, `version`
    # and every `--help` read none.
    from bot.config.settings import Settings

    settings = Settings()
    overrides = {k: getattr(args, k) for k in ("host", "port") if getattr(args, k, None) is not None}
    return settings.model_copy(update=overrides) if overrides else settings


def event_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's event loop when it is installed (it comes with uvicorn[standard], as the receiver's loop):
    the worker's many small Redis and forge round trips cost less CPU on it than on asyncio's own
    (bench/cpu_per_event.py); None, asyncio's loop, otherwise."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def run_fast[T](main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` on the fastest event loop available (``event_loop_factory``)."""
    return asyncio.run(main, loop_factory=event_loop_factory())


def receiver_config(settings: Settings) -> Any:
    import uvicorn

    from bot.receiver.app import create_app

    return uvicorn.Config(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        access_log=False,
        # uvicorn's own lines go through Steward's renderer (bot.telemetry.logs), not uvicorn's formatters.
        log_config=None,
        timeout_graceful_shutdown=20,
    )


def preflight(command: str, settings: Settings, *, receives: bool, acts: bool) -> bool:
    """The start-up check (bot/cli/preflight.py): False once it has said, in one sentence on stderr, why
    the command refuses to start; a forge that could not be asked is logged and the command starts."""
    from bot.cli import preflight as checks

    try:
        warnings = checks.check(settings, receives=receives, acts=acts)
    except checks.Refused as exc:
        logs.flush()
        print(f"steward {command}: {exc}", file=sys.stderr)
        return False
    log = logs.get(f"steward.{command}")
    for warning in warnings:
        log.warning(
            "the forge did not answer; starting anyway (jobs wait and retry until it does)",
            forge=warning.forge,
            url=warning.url,
            error=warning.reason,
        )
    return True


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from bot.cli.preflight import EXIT_REFUSED

    settings = _settings(args)
    logs.configure(settings.log_level, settings.log_format)
    if not preflight("serve", settings, receives=True, acts=False):
        return EXIT_REFUSED
    uvicorn.Server(receiver_config(settings)).run()
    return 0


async def _worker_main(settings: Settings, burst: bool) -> None:
    from bot.worker.jobs import create_worker

    worker = create_worker(settings, burst=burst)
    try:
        await worker.async_run()
    except asyncio.CancelledError:
        pass
    finally:
        await worker.close()


def cmd_worker(args: argparse.Namespace) -> int:
    from bot.cli.preflight import EXIT_REFUSED

    settings = _settings(args)
    logs.configure(settings.log_level, settings.log_format)
    if not preflight("worker", settings, receives=False, acts=True):
        return EXIT_REFUSED
    run_fast(_worker_main(settings, args.burst))
    return 0


class WorkerDied(Exception):
    """The worker half of `steward run` stopped on its own: the receiver must not go on acknowledging."""


async def run_all(settings: Settings) -> None:
    """Receiver and worker in one process: small installs and the demo. They live and die together: a
    worker that stops for any reason but a shutdown takes the receiver down with it, and the process exits
    non-zero (a receiver must never acknowledge work nobody will do). Redis outages do not stop the worker."""
    import uvicorn

    from bot.worker.jobs import create_worker

    log = logs.get("steward.run")
    worker = create_worker(settings, handle_signals=False)
    server = uvicorn.Server(receiver_config(settings))
    worker_task = asyncio.create_task(worker.async_run())
    died: list[bool] = []

    def worker_done(task: asyncio.Task[None]) -> None:
        if server.should_exit:
            return  # a shutdown we asked for
        died.append(True)
        error = None if task.cancelled() else task.exception()
        log.error(
            "the worker stopped; stopping the receiver too",
            error=type(error).__name__ if error else "none",
            detail=str(error)[:300] if error else "",
        )
        server.should_exit = True

    worker_task.add_done_callback(worker_done)
    try:
        await server.serve()
    finally:
        # Stop picking jobs, let running ones finish (arq re-queues what is cut off).
        worker.handle_sig_wait_for_completion(signal.SIGTERM)
        with contextlib.suppress(asyncio.CancelledError):
            await worker_task
        await worker.close()
    if died:
        raise WorkerDied("the worker stopped on its own")


def cmd_run(args: argparse.Namespace) -> int:
    from bot.cli.preflight import EXIT_REFUSED

    settings = _settings(args)
    logs.configure(settings.log_level, settings.log_format)
    if not preflight("run", settings, receives=True, acts=True):
        return EXIT_REFUSED
    try:
        run_fast(run_all(settings))
    except WorkerDied:
        return 1
    return 0


def _parse_users(pairs: Sequence[str]) -> dict[str, str]:
    users: dict[str, str] = {}
    for pair in pairs:
        login, sep, token = pair.partition("=")
        if not sep or not login or not token:
            raise SystemExit(f"--user expects LOGIN=TOKEN, got {pair!r}")
        users[login] = token
    return users


def cmd_sandbox(args: argparse.Namespace) -> int:
    from bot.sandbox.server import run

    logs.configure("info")
    run(
        args.host or "127.0.0.1",
        args.port,
        _parse_users(args.user),
        args.state,
        auto_ci=args.ci,
        ci_delay=args.ci_delay,
    )
    return 0


async def _dead(args: argparse.Namespace, settings: Settings) -> int:
    import json

    from redis.exceptions import RedisError

    from bot.queue.dead_letters import DeadLetters
    from bot.queue.jobs import make_redis

    redis = make_redis(settings.redis_url)
    dead = DeadLetters(redis, max_bytes=settings.dead_max_bytes)
    try:
        if args.dead_command == "list":
            entries = await dead.list()
            if args.json:
                print(json.dumps([e.summary() for e in entries], indent=2))
            elif not entries:
                print("No dead jobs: every delivery was handled or is still queued.")
            else:
                print(
                    f"{len(entries)} dead job(s); replay with `steward dead retry ID` or `--all`, forget "
                    "with `steward dead drop ID` or `--all`:"
                )
                for e in entries:
                    when = e.summary()["failed_at"]
                    where = f"{e.forge} {e.repo} {e.event}"
                    runs = f"after {e.tries} run{'' if e.tries == 1 else 's'}"
                    print(f"  {e.job_id}  {when}  {where}  {runs}: {e.error}")
            return 0
        verb = "retry" if args.dead_command == "retry" else "drop"
        targets = [e.job_id for e in await dead.list()] if args.all else list(args.ids)
        if not targets:
            print(f"Nothing to {verb}." if args.all else "Name a job id (see `steward dead list`) or --all.")
            return 0 if args.all else 2
        status = 0
        for job_id in targets:
            if verb == "drop":
                if await dead.drop(job_id):
                    print(f"{job_id}: dropped")
                else:
                    print(f"{job_id}: no such dead job", file=sys.stderr)
                    status = 1
                continue
            new_id = await dead.retry(job_id)
            if new_id is None:
                print(f"{job_id}: no such dead job", file=sys.stderr)
                status = 1
            else:
                print(f"{job_id}: queued again as {new_id}")
        return status
    except (RedisError, OSError) as exc:
        from bot.cli.operator import redacted

        print(
            f"steward dead: Redis is not answering at {redacted(settings.redis_url)} ({type(exc).__name__}): "
            "start it, or set STEWARD_REDIS_URL to the Redis the workers use.",
            file=sys.stderr,
        )
        return 3
    finally:
        await redis.aclose()


def cmd_dead(args: argparse.Namespace) -> int:
    return asyncio.run(_dead(args, _settings(args)))


def cmd_demo(args: argparse.Namespace) -> int:
    from bot.demo.run import main as demo_main

    return demo_main(keep_running=args.keep, tour=args.all, forges=tuple(args.forge or ()))


def cmd_refine(argv: list[str]) -> int:
    module = importlib.import_module("handlers.bug_refinement.cli")
    return int(module.main(argv))


def cmd_ledger(argv: list[str]) -> int:
    module = importlib.import_module("handlers.backlog.cli")
    return int(module.main(argv))


def cmd_forks(argv: list[str]) -> int:
    module = importlib.import_module("handlers.forks.cli")
    return int(module.main(argv))


def cmd_debug_report(argv: list[str]) -> int:
    module = importlib.import_module("handlers.debug.cli")
    return int(module.main(argv))


EXIT_CODES = """exit codes:
  0  done
  1  it ran and found a problem (an invalid file, a record that does not verify, a repository that failed)
  2  bad arguments
  3  a service did not answer (Redis, or the forge)
  4  the environment is wrong: a STEWARD_* setting that does not read, no forge configured, or credentials
     the forge rejects (run, serve and worker refuse to start); the one line on stderr names the variable
  5  the issue or pull request named does not exist (verify, forks, debug-report)
  steward refine (2-6) and steward ledger verdict (0-3 the verdict, 64/65) keep codes of their own.
`steward NAME --help` lists what each command reads from the environment and its own codes."""


def _sub(sub: Any, name: str, **kwargs: Any) -> argparse.ArgumentParser:
    from bot.cli.help import add_command

    return add_command(sub, name, **kwargs)


def cmd_version(args: argparse.Namespace) -> int:
    from bot.version import steward_version

    print(steward_version())
    return 0


def build_parser() -> argparse.ArgumentParser:
    from bot.version import steward_version

    parser = argparse.ArgumentParser(
        prog="steward",
        description="Steward: a disciplined issue-to-fix workflow bot.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-V", "--version", action="version", version=f"steward {steward_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = _sub(sub, "serve")
    serve.add_argument("--host", help="address to listen on (default: STEWARD_HOST, 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to listen on (default: STEWARD_PORT, 8000)")
    serve.set_defaults(func=cmd_serve)

    worker = _sub(sub, "worker")
    worker.add_argument("--burst", action="store_true", help="exit once the queue is empty")
    worker.set_defaults(func=cmd_worker)

    run = _sub(sub, "run")
    run.add_argument("--host", help="address to listen on (default: STEWARD_HOST, 127.0.0.1)")
    run.add_argument("--port", type=int, help="port to listen on (default: STEWARD_PORT, 8000)")
    run.set_defaults(func=cmd_run)

    sandbox = _sub(sub, "sandbox")
    sandbox.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    sandbox.add_argument("--port", type=int, default=8700, help="port to listen on (default 8700)")
    sandbox.add_argument("--state", type=Path, help="load and save the sandbox's state in this JSON file")
    sandbox.add_argument(
        "--user",
        action="append",
        default=[],
        metavar="LOGIN=TOKEN",
        help="a user and the token that authenticates as it (repeatable)",
    )
    sandbox.add_argument(
        "--ci",
        action="store_true",
        help="play CI: every push gets a ci/sandbox check run (GitHub) or status (Gitea), red when the "
        "commit changes only test files, green otherwise",
    )
    sandbox.add_argument(
        "--ci-delay", type=float, default=1.0, metavar="SECONDS", help="how long --ci takes to report"
    )
    sandbox.set_defaults(func=cmd_sandbox)

    dead = _sub(
        sub,
        "dead",
        description="Jobs that failed for good are parked in Redis with their delivery: list them, queue "
        "them again, or forget them.",
    )
    dead_sub = dead.add_subparsers(dest="dead_command", required=True)
    dead_list = dead_sub.add_parser("list", help="list the dead jobs (oldest first)")
    dead_list.add_argument("--json", action="store_true", help="print them as JSON")
    dead_retry = dead_sub.add_parser("retry", help="queue dead jobs again (each under a new job id)")
    dead_retry.add_argument("ids", nargs="*", metavar="ID", help="job ids from `steward dead list`")
    dead_retry.add_argument("--all", action="store_true", help="queue every dead job again")
    dead_drop = dead_sub.add_parser("drop", help="forget dead jobs that can never succeed")
    dead_drop.add_argument("ids", nargs="*", metavar="ID", help="job ids from `steward dead list`")
    dead_drop.add_argument("--all", action="store_true", help="forget every dead job")
    dead.set_defaults(func=cmd_dead)

    demo = _sub(sub, "demo")
    demo.add_argument("--all", action="store_true", help="tour every capability, on GitHub and on Gitea")
    demo.add_argument(
        "--forge",
        action="append",
        choices=("github", "gitea"),
        help="tell it on this forge (repeatable); by default the story is on GitHub and the tour on both",
    )
    demo.add_argument("--keep", action="store_true", help="keep everything running after the walk-through")
    demo.set_defaults(func=cmd_demo)

    from bot.cli.operator import add_parsers

    add_parsers(sub, _settings)

    # These parse their own arguments (`steward NAME --help`); listed here for `steward --help`.
    from bot.cli.help import BY_NAME

    for name, usage in (
        ("refine", "steward refine <bug-id | path> [--json]"),
        ("ledger", "steward ledger verdict --round R --last-probe new_gaps|no_new_gaps < ledger.json"),
        ("forks", "steward forks OWNER/REPO#N [--json]"),
        ("debug-report", "steward debug-report OWNER/REPO#N [--json]"),
        ("verify", "steward verify OWNER/REPO#N [--forge F] [--json] [--public-key FILE]"),
        ("public-key", "steward public-key > steward.pub"),
    ):
        sub.add_parser(name, help=f"{BY_NAME[name].summary}: {usage}", add_help=False)
    _sub(sub, "version").set_defaults(func=cmd_version)
    return parser


def environment_problem(exc: Exception) -> str | None:
    """A ``STEWARD_*`` variable that does not read (pydantic's ``ValidationError`` raised by ``Settings()``),
    as one sentence naming it; None for any other error."""
    pydantic = sys.modules.get("pydantic")  # not loaded: no settings were read, so none failed
    if pydantic is None or not isinstance(exc, pydantic.ValidationError):
        return None
    from bot.config.repo_file import plain_message
    from bot.config.settings import Settings

    if exc.title != Settings.__name__:
        return None
    errors = exc.errors()
    first = errors[0]
    variable = "STEWARD_" + "_".join(str(part) for part in first["loc"]).upper()
    more = f" ({len(errors) - 1} more setting(s) are wrong too)" if len(errors) > 1 else ""
    said = plain_message(first)
    said = f"it {said}" if said.startswith(("should", "is ")) else said
    return f"{variable} is not valid: {said}; fix it or unset it{more}."


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _dispatch(list(sys.argv[1:] if argv is None else argv))
    except Exception as exc:
        problem = environment_problem(exc)
        if problem is None:
            raise
        import json
        import os

        from bot.cli.preflight import EXIT_REFUSED

        if os.environ.get("STEWARD_LOG_FORMAT", "").lower() == "json":
            # One JSON line, as every other line of a process with JSON logs (issue 40 item 5).
            from datetime import UTC, datetime

            line = {
                "event": "steward refused to start",
                "level": "error",
                "setting": problem.split(" ", 1)[0],
                "reason": problem,
                "timestamp": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            }
            print(json.dumps(line), file=sys.stderr)
        else:
            print(f"steward: {problem}", file=sys.stderr)
        return EXIT_REFUSED


# The commands that are processes: their log is their output (standard output, STEWARD_LOG_LEVEL).
_PROCESSES = frozenset({"run", "serve", "worker", "sandbox", "demo"})


def logs_to_stderr() -> None:
    """Every other command's output is its own (a key, JSON, a report): its logs go to standard error,
    warnings and worse unless STEWARD_LOG_LEVEL asks for debug, so ``steward public-key > steward.pub``
    writes the key and nothing else."""
    import os

    level = os.environ.get("STEWARD_LOG_LEVEL", "").lower()
    fmt = os.environ.get("STEWARD_LOG_FORMAT", "auto")
    logs.configure(level if level in ("debug", "error") else "warning", fmt, stream=sys.stderr)


def _dispatch(argv: list[str]) -> int:
    if not argv or argv[0] not in _PROCESSES:
        logs_to_stderr()
    if argv and argv[0] == "refine":
        return cmd_refine(argv[1:])
    if argv and argv[0] == "ledger":
        return cmd_ledger(argv[1:])
    if argv and argv[0] == "forks":
        return cmd_forks(argv[1:])
    if argv and argv[0] == "debug-report":
        return cmd_debug_report(argv[1:])
    if argv and argv[0] in ("verify", "public-key"):
        from bot.cli import verify as cli_verify

        run = cli_verify.main if argv[0] == "verify" else cli_verify.public_key_main
        return run(argv[1:])
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
