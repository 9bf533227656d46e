"""`/cc @x …` on a pull request (issue 39; Prow's and triagebot's `/cc`): the forge requests a review from
each person named. Not the pull request's author (the forges refuse it too), and on a bugfix pull request
nobody the independence rule excludes (whoever ran `/bugfix`, made a commit of the branch or pushed to it:
their review would not count). At most ``triage.cc_per_minute`` people a minute per person who asks, so a
loop or a long list cannot make Steward notify half the organisation.
"""

from __future__ import annotations

import re
import time
from typing import Final

from bot.commands.context import CommandContext, CommandError
from bot.commands.registry import Registry
from bot.forge import NotFound, ValidationFailed, repo_key
from handlers.bugfix.api import independence

plugin = Registry()


def register(registry: Registry) -> None:
    registry.include(plugin)


SECTION = "triage"
SHORT_SETTING = "triage.short_commands"
# GitHub's login rules (Gitea's are looser: dots and underscores too).
LOGIN: Final = re.compile(r"@?([A-Za-z0-9](?:[A-Za-z0-9._-]{0,38}))")
MAX_NAMED: Final = 10
WINDOW_SECONDS: Final = 60


def parse_logins(args: list[str]) -> list[str]:
    """The people a `/cc` names (`@` optional, each once, in order); a word that is no login is refused."""
    found: list[str] = []
    for word in args:
        matched = LOGIN.fullmatch(word.rstrip(","))
        if matched is None:
            raise CommandError(f"`{word[:40]}` is not a login. Usage: `/steward cc @login [@login …]`.")
        login = matched.group(1)
        if login.casefold() not in {f.casefold() for f in found}:
            found.append(login)
    if not found:
        raise CommandError("name someone to ask for a review: `/steward cc @login`.")
    if len(found) > MAX_NAMED:
        raise CommandError(f"at most {MAX_NAMED} people in one `/cc`.")
    return found


async def _within_budget(ctx: CommandContext, logins: list[str]) -> int | None:
    """Counts this command's requests against the asker's minute (a replay of the same comment counts once);
    returns the seconds to wait when that would go over ``triage.cc_per_minute``, else None."""
    limit = ctx.settings.triage.cc_per_minute
    redis = ctx.memo.redis if ctx.memo is not None else None
    if redis is None or limit <= 0:
        return None
    key = f"steward:cc:{repo_key(ctx.event.forge, ctx.repo)}:{ctx.actor.casefold()}"
    now = time.time()
    await redis.zremrangebyscore(key, 0, now - WINDOW_SECONDS)
    members = [f"{ctx.comment.id}:{login.casefold()}" for login in logins]
    known = await redis.zmscore(key, members)
    new = [m for m, score in zip(members, known, strict=True) if score is None]
    if not new:
        return None
    counted = await redis.zcard(key)
    if counted + len(new) > limit:
        oldest = await redis.zrange(key, 0, 0, withscores=True)
        wait = int(WINDOW_SECONDS - (now - oldest[0][1])) + 1 if oldest else WINDOW_SECONDS
        return max(wait, 1)
    await redis.zadd(key, dict.fromkeys(new, now))
    await redis.expire(key, WINDOW_SECONDS * 2)
    return None


@plugin.command(
    "cc",
    usage="cc @login [@login …]",
    help="Ask for a review of this pull request: the forge requests one from each person named (not its "
    "author; on a bugfix pull request, not whoever made or moved the fix).",
    permission="triage",
    on_issues=False,
    section=SECTION,
    short_setting=SHORT_SETTING,
)
async def cc_command(ctx: CommandContext) -> None:
    logins = parse_logins(list(ctx.command.args))
    pull = await ctx.forge.get_pull_request(ctx.repo, ctx.number)
    if pull.state != "open":
        raise CommandError("this pull request is closed: nobody is asked to review it.")
    author = [login for login in logins if login.casefold() == pull.author.casefold()]
    if author:
        raise CommandError(f"@{author[0]} opened this pull request: an author does not review their own.")
    fix = await independence(ctx, pull)
    if fix is not None:
        excluded = [
            (login, fix.excluded[login.casefold()]) for login in logins if login.casefold() in fix.excluded
        ]
        if excluded:
            login, why = excluded[0]
            raise CommandError(
                f"@{login} {why}: on a bugfix pull request whoever made or moved the fix does not review "
                f"it (their review would not count, docs/bugfix.md). Ask someone else: `/{ctx.prefix} cc "
                "@login`."
            )
    wait = await _within_budget(ctx, logins)
    if wait is not None:
        limit = ctx.settings.triage.cc_per_minute
        raise CommandError(
            f"you may ask for at most {limit} review{'s' if limit != 1 else ''} a minute here "
            f"(`triage.cc_per_minute`); try again in {wait} seconds."
        )
    try:
        requested = await ctx.forge.request_reviewers(ctx.repo, pull.number, logins)
    except (ValidationFailed, NotFound) as exc:
        raise CommandError(
            f"the forge would not ask {', '.join('@' + n for n in logins)} to review: {exc}. Only people "
            "with access to this repository can be asked."
        ) from None
    asked = [n for n in logins if n.casefold() in {r.casefold() for r in requested}]
    await ctx.reply("Asked " + ", ".join(f"@{n}" for n in asked or logins) + " to review this pull request.")
