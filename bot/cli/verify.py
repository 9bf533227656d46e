"""``steward verify OWNER/REPO#N [--forge F] [--json] [--public-key FILE]``: check every record Steward keeps
on an issue or pull request (the data blocks of its comments, and of the issue's body when Steward wrote
it) from the forge alone, with only Steward's public key — so a CI job or a reviewer can check Steward
without trusting it. Exit 0 when every record verifies, 1 when some do not (tampered — a block stripped from a
kind Steward always writes with one included —, signed with an unknown key, or written before signing) or
there is none, 2 bad arguments, 3 the forge (or Redis, for the key) did not answer, 4 no
forge configured or the credentials rejected, 5 no such issue or pull request.

``steward public-key``: print the public key Steward signs with (PEM) and its fingerprint.

What it cannot see: a validly signed older version of the same comment pasted back from its edit history
verifies here (Steward itself detects it: it remembers the last sequence number it wrote at each place).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

from bot.cli.args import (
    EXIT_UNREACHABLE,
    Parser,
    choose_forge,
    forge_failure,
    read_target,
    target_parser,
)
from bot.config.settings import Settings
from bot.forge import Forge, ForgeError, ForgeKind, RepoRef
from bot.records import sticky
from bot.records.signing import Keyring, parse_signature, verifying_keyring

EXIT_OK = 0
EXIT_UNVERIFIED = 1
EXIT_USAGE = 2
EXIT_FORGE = EXIT_UNREACHABLE
_DATA = "<!-- steward:data "


def _parser() -> Parser:
    parser = target_parser(
        "steward verify",
        "Check every Steward record on an issue or pull request from the forge alone, with only "
        "the public key.",
        json_help="print the results as JSON",
    )
    parser.add_argument(
        "--public-key",
        metavar="FILE",
        help="Steward's public key (PEM; `steward public-key` prints it). Default: STEWARD_VERIFY_KEYS and "
        "the public half of STEWARD_SIGNING_KEY, else the key Steward keeps in Redis",
    )
    parser.add_argument(
        "--bot", metavar="LOGIN", help="Steward's account (default: the account the forge token is)"
    )
    return parser


async def check(forge: Forge, repo: RepoRef, number: int, keyring: Keyring, bot: str) -> list[dict[str, Any]]:
    """One row per record: where it is, what it is, and whether it verifies."""
    repo_id = (await forge.get_repo(repo)).id
    rows: list[dict[str, Any]] = []
    issue = await forge.get_issue(repo, number)
    places: list[tuple[str, int, str, str]] = []
    if issue.author.casefold() == bot.casefold() and _holds_record(issue.body):
        places.append(("issue", issue.id, issue.body, issue.html_url))
    for comment in await forge.list_comments(repo, number):
        if comment.author.casefold() == bot.casefold() and _holds_record(comment.body):
            places.append(("comment", comment.id, comment.body, comment.html_url))
    for container, ident, body, url in places:
        head = sticky.marker_of(body)
        if head is None:
            rows.append({"where": container, "id": ident, "url": url, "record": None, "outcome": "tampered"})
            continue
        record = await sticky.verify(
            keyring,
            body,
            forge=forge.kind,
            repo_id=repo_id,
            container=container,  # type: ignore[arg-type]
            id=ident,
            kind=head[0],
            key=head[1],
            # A kind Steward always writes with a block: a comment of that kind without one was stripped.
            expect_data=head[0] in sticky.DATA_KINDS,
            remember=False,
        )
        signature = parse_signature(body)
        rows.append(
            {
                "where": container,
                "id": ident,
                "url": url,
                "record": f"{head[0]}:{head[1]}",
                "outcome": record.outcome,
                "seq": record.seq or None,
                # Which key signed it (``ed25519:<key id>``), whether or not the verifier holds that key.
                "key": f"ed25519:{signature.kid}" if signature is not None else None,
            }
        )
    return rows


def _holds_record(body: str) -> bool:
    """A data block, or the marker of a kind that always has one."""
    if _DATA in body:
        return True
    head = sticky.marker_of(body)
    return head is not None and head[0] in sticky.DATA_KINDS


async def _run(
    kind: ForgeKind, repo: RepoRef, number: int, args: argparse.Namespace, settings: Settings
) -> int:
    from redis.exceptions import RedisError

    from bot.cli.operator import redacted
    from bot.queue.jobs import make_redis
    from bot.worker.jobs import build_runtime

    redis = make_redis(settings.redis_url)
    runtime = build_runtime(settings, redis)
    try:
        try:
            keyring = await verifying_keyring(
                settings, args.public_key, redis=None if args.public_key else redis
            )
        except (OSError, ValueError) as exc:
            print(f"steward verify: --public-key: {exc}", file=sys.stderr)
            return EXIT_USAGE
        if not keyring.public and not args.public_key:
            try:
                await redis.ping()
            except (RedisError, OSError) as exc:
                print(
                    "steward verify: no --public-key, and Redis (where Steward keeps its key) is not "
                    f"answering at {redacted(settings.redis_url)} ({type(exc).__name__}): give --public-key "
                    "FILE (see `steward public-key`) or set STEWARD_VERIFY_KEYS.",
                    file=sys.stderr,
                )
                return EXIT_UNREACHABLE
        if not keyring.public:
            print(
                "steward verify: no public key: give --public-key FILE (see `steward public-key`) or set "
                "STEWARD_VERIFY_KEYS.",
                file=sys.stderr,
            )
            return EXIT_USAGE
        try:
            forge = await runtime.forge(kind, repo)
            bot = args.bot or (await forge.whoami()).login
            rows = await check(forge, repo, number, keyring, bot)
        except ForgeError as exc:
            code, sentence = forge_failure("steward verify", settings, kind, f"{repo}#{number}", exc)
            print(sentence, file=sys.stderr)
            return code
    finally:
        await runtime.aclose()
        await redis.aclose()
    # No record at all is not a pass: there is nothing that verifies (a writer may have stripped them all).
    good = bool(rows) and all(row["outcome"] == "verified" for row in rows)
    target = f"{repo}#{number}"
    if args.json:
        print(json.dumps({"issue": target, "all_verified": good, "records": rows}, indent=2))
    elif not rows:
        print(f"{target}: no record of Steward's here, so nothing verifies.")
    else:
        print(
            f"{target}: {len(rows)} record(s), "
            + ("all verify." if good else f"{sum(r['outcome'] != 'verified' for r in rows)} do not verify.")
        )
        for row in rows:
            key = f"  {row['key']}" if row.get("key") else ""
            print(f"  {row['outcome']:<11} {row['record'] or '?'}  {row['url'] or row['where']}{key}")
    return EXIT_OK if good else EXIT_UNVERIFIED


def main(argv: Sequence[str]) -> int:
    read = read_target(_parser(), argv)
    if read is None:
        return EXIT_USAGE
    args, found = read
    settings = Settings()
    forge, code, sentence = choose_forge("steward verify", settings, found.group("kind") or args.forge)
    if forge is None:
        print(sentence, file=sys.stderr)
        return code
    repo = RepoRef.parse(found.group("repo"))
    return asyncio.run(_run(forge, repo, int(found.group("number")), args, settings))


async def _public_key(settings: Settings) -> int:
    from redis.exceptions import RedisError

    from bot.cli.operator import redacted
    from bot.queue.jobs import make_redis
    from bot.records.signing import fingerprint, load_private, public_pem, signing_key_of

    if settings.signing_key is not None:
        public = load_private(settings.signing_key.get_secret_value()).public_key()
    else:
        redis = make_redis(settings.redis_url)
        try:
            # The key the workers sign with (made now, as a worker would, when none exists yet). When Steward
            # started signing is left to the workers: this command may run without their state file.
            private, _ = await signing_key_of(None, redis)
            public = private.public_key()
        except (RedisError, OSError) as exc:
            print(
                "steward public-key: no STEWARD_SIGNING_KEY, and Redis (where Steward keeps its key) is not "
                f"answering at {redacted(settings.redis_url)} ({type(exc).__name__}): start it, set "
                "STEWARD_REDIS_URL to the Redis the workers use, or set STEWARD_SIGNING_KEY.",
                file=sys.stderr,
            )
            return EXIT_UNREACHABLE
        finally:
            await redis.aclose()
    print(public_pem(public), end="")
    print(f"# {fingerprint(public)}", file=sys.stderr)
    return EXIT_OK


def public_key_main(argv: Sequence[str]) -> int:
    from bot.cli.args import Usage
    from bot.cli.help import epilog

    parser = Parser(
        prog="steward public-key",
        description=textwrap.fill(
            "Print the public key Steward signs its records with: PEM on stdout (`steward public-key "
            "> steward.pub`), its fingerprint on stderr. Give the file to `steward verify --public-key` or "
            "to anyone who checks Steward's records.",
            100,
        ),
        epilog=epilog("public-key"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    try:
        parser.parse_args(list(argv))
    except Usage as exc:
        print(f"{exc} (it takes no arguments)", file=sys.stderr)
        return EXIT_USAGE
    return asyncio.run(_public_key(Settings()))
