"""Routes one Event to the registered handlers, and comment commands to their handlers.

Commands follow DESIGN §3.4: an accepted command gets 👀 at once and then a result (a
reply, or 👍 / 😕); a refusal says why and who may run it; an unknown command is answered
with the closest known one.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Final

from bot.commands.context import CommandContext, CommandError, EventContext
from bot.commands.grammar import Command, added_commands_async, closest_command, parse_commands_async
from bot.commands.permissions import PermissionsUnreadable, check, who_may
from bot.forge import ThreadLocked, repo_key

# Commands are read from the first 128 KiB of a comment: GitHub caps comments at 65,536
# characters, and a hostile Gitea comment must not hold a worker's event loop for seconds.


# ``Event.extra`` of a catch-up job whose comment was edited after it was written (``bot.catchup.comments``):
# nothing of it runs; its author is told once why.
CATCH_UP_EDITED = "catch-up-edited"


def _format(prefix: str, name: str) -> str:
    return f"`/{prefix} {name}`"


async def dispatch(ctx: EventContext, *, prefix: str) -> list[str]:
    """Run every handler registered for the event; returns the names of the handlers run."""
    if ctx.event.extra.get(CATCH_UP_EDITED):
        return await _edited_not_run(ctx, prefix)
    ran: list[str] = []
    for spec in ctx.registry.handlers_for(ctx.event.name, ctx.event.action):
        if not ctx.enabled(spec.section):
            continue
        try:
            await spec.handler(ctx)
        except ThreadLocked as exc:
            # A write the handler made itself in a locked conversation: said once, not retried (the lock is
            # a maintainer's choice); the other handlers still run.
            ctx.note_locked(ctx.event.issue.number if ctx.event.issue is not None else 0, exc)
            ran.append(f"locked:{spec.handler.__name__}")
            continue
        ran.append(spec.handler.__name__)
    if ctx.event.name == "issue_comment" and ctx.event.action in ("created", "edited"):
        ran += await run_commands(ctx, prefix=prefix)
    return ran


async def _edited_not_run(ctx: EventContext, prefix: str) -> list[str]:
    """A comment the catch-up found edited after it was written: whoever edited it (the forge's listing does
    not say) could have added its commands, which would then run with its author's authority. Nothing runs;
    its author learns it once (a sticky reply: a second catch-up edits nothing)."""
    comment = ctx.event.comment
    if comment is None or ctx.event.issue is None:
        return []
    await ctx.upsert_sticky(
        "reply",
        f"{comment.id}-edited-not-run",
        f"@{comment.author}: to run a command, write it in a new comment. The commands in "
        f"[your comment](#issuecomment-{comment.id}) were not run: edited after it was written. Steward was "
        "not listening when it was edited, and anyone with write access may edit a comment, so only what a "
        f"comment held when it was written runs as its author's ({_format(prefix, 'help')} lists the "
        "commands).",
    )
    ctx.log.info("catch-up: an edited comment's commands not run", comment=comment.id)
    return ["refused:edited-after-written"]


async def _commands_of(ctx: EventContext, prefix: str) -> list[Command]:
    comment = ctx.event.comment
    if comment is None:
        return []
    known = ctx.registry.short_names()
    # parse_commands reads at most the first MAX_SCAN_CHARS itself, cut where no code span can open; a long
    # body is parsed off the event loop.
    body = comment.body
    if ctx.event.action == "edited":
        previous = ctx.event.previous_body or ""
        return await added_commands_async(previous, body, known=known, prefix=prefix)
    return await parse_commands_async(body, known=known, prefix=prefix)


_UNREADABLE_WARNED: set[str] = set()


def _unreadable_text(ctx: EventContext, actor: str, command: str) -> str:
    return (
        f"@{actor}: Steward cannot read permissions on this repository, so I cannot tell whether you may "
        f"run {command}. A repository admin needs to give `{ctx.me.login}` **Administrator** access "
        "(Settings → Collaborators): Gitea shows other people's permissions only to repository admins."
    )


def _warn_unreadable(ctx: EventContext) -> None:
    """One warning per repository and process, not one per event."""
    key = f"{ctx.event.forge}:{ctx.repo.full_name.casefold()}"
    if key not in _UNREADABLE_WARNED:
        _UNREADABLE_WARNED.add(key)
        ctx.log.warning(
            "the forge refuses to show permissions on this repository; commands that need them are "
            f"refused until {ctx.me.login} is a repository administrator",
            repo=ctx.repo.full_name,
        )


def not_invited(ctx: EventContext, prefix: str) -> str:
    """Why nothing acts on this repository yet, and what switches Steward on (DESIGN §3.15)."""
    config = ctx.config
    if config is not None and config.path and config.errors:
        return (
            f"Steward is not switched on in this repository yet, because `{config.path}` does not validate "
            "and never has (the issue *Steward configuration error* lists what is wrong). A maintainer "
            f"fixes the file on the default branch; {_format(prefix, 'config')} shows what is read."
        )
    core = ", ".join(
        _format(prefix, n) for n in sorted(ctx.registry.commands) if ctx.registry.commands[n].uninvited
    )
    return (
        "Steward is not switched on in this repository yet: it has no Steward configuration file. A "
        f"repository admin runs {_format(prefix, 'init')}, which opens a pull request with the file, and "
        f"merging it switches Steward on. Until then I answer only {core}."
    )


async def _over_budget(ctx: CommandContext, limit: int) -> bool:
    """Count the command against its author's budget; when over, answer once a minute and refuse."""
    budget = ctx.command_budget
    if budget is None or limit <= 0:
        return False
    person = dict(forge=ctx.event.forge, repo=repo_key(ctx.event.forge, ctx.repo), login=ctx.actor)
    wait = await budget.take(
        **person, command=f"{ctx.comment.id}:{ctx.command.line}:{ctx.occurrence}", limit=limit
    )
    if wait <= 0:
        return False
    thread = ctx.event.issue.number if ctx.event.issue is not None else None
    # Past the budget a refusal writes nothing but the one notice a minute (a 😕 on each refused comment
    # would let a flood of them spend the shared write budget: issue 35 item 5).
    if await budget.first_notice(**person, thread=thread):
        await ctx.react("confused")
        await ctx.reply(
            f"@{ctx.actor}: you have run {limit} commands here in the last minute, the most I take from one "
            f"person, so I skipped {_format(ctx.prefix, ctx.command.name)} and what follows it. "
            f"Try again in {max(1, round(wait))} s."
        )
    ctx.log.info("command over budget", actor=ctx.actor, retry_in=round(wait, 1))
    return True


# The commands that answer even in shadow mode: how a team watching Steward asks what it would have done.
SHADOW_SPEAKERS: Final = frozenset({"help", "ping", "config"})


def setting_on(settings: object, path: str) -> bool:
    """Whether the repository setting at ``path`` (``triage.short_commands``) is true."""
    value: object = settings
    for part in path.split("."):
        value = getattr(value, part, None)
    return value is True


def _short_form_off(ctx: EventContext, command: Command) -> bool:
    """``/<name>`` of a command whose short form this repository has not switched on (``short_setting``)."""
    spec = ctx.registry.commands.get(command.name)
    if command.canonical or spec is None or not spec.short_setting:
        return False
    return not setting_on(ctx.settings, spec.short_setting)


async def run_commands(ctx: EventContext, *, prefix: str) -> list[str]:
    comment = ctx.event.comment
    issue = ctx.event.issue
    if comment is None or issue is None:
        return []
    if comment.author.casefold() == ctx.me.login.casefold():
        return []
    sender = ctx.event.sender
    if ctx.event.action == "edited" and sender and sender.casefold() != comment.author.casefold():
        # Anyone with write access may edit anyone's comment: a command added that way would run with the
        # comment author's authority. It runs only from its author's own hand (DESIGN §3.13).
        if await _commands_of(ctx, prefix):
            await ctx.upsert_sticky(
                "reply",
                f"{comment.id}-edited-by-other",
                f"@{sender}: commands added by editing @{comment.author}'s comment do not run — a command "
                "counts only as written by its author. Write it in a comment of your own.",
            )
        return ["refused:edited-by-other"]
    ran: list[str] = []
    seen: Counter[tuple[str, tuple[str, ...]]] = Counter()
    for command in await _commands_of(ctx, prefix):
        occurrence = seen[(command.name, command.args)]
        seen[(command.name, command.args)] += 1
        name = command.name or "help"
        cctx = CommandContext(
            **{
                f: getattr(ctx, f)
                for f in (
                    "event",
                    "forge",
                    "me",
                    "settings",
                    "registry",
                    "prefix",
                    "command_budget",
                    "locks",
                    "config",
                    "memo",
                    "deferred",
                )
            },
            log=ctx.log.bind(command=name),
            command=replace(command, name=name),
            comment=comment,
            occurrence=occurrence,
        )
        if _short_form_off(ctx, command):
            ran.append(f"short-off:{name}")  # `/assign` for another bot: not Steward's to answer
            continue
        if ctx.live_forge is not None and name in SHADOW_SPEAKERS:
            cctx.forge = ctx.live_forge  # shadow mode: these answer for real (`mode` in bot.config.settings)
        if await _over_budget(cctx, ctx.settings.limits.commands_per_minute):
            ran.append(f"over-budget:{name}")
            continue
        ran.append(await _run_one(ctx, cctx, issue.is_pull_request, issue.author))
    return ran


async def _run_one(ctx: EventContext, cctx: CommandContext, on_pull: bool, author: str) -> str:
    """Run one command, or say why not; returns what happened, for the logs."""
    prefix, name, actor = cctx.prefix, cctx.command.name, cctx.actor
    spec = ctx.registry.commands.get(name)
    if spec is None:
        suggestion = closest_command(name, list(ctx.registry.commands))
        hint = f" Did you mean {_format(prefix, suggestion)}?" if suggestion else ""
        await cctx.react("confused")
        await cctx.reply(
            f"@{actor}: I don't know the command {_format(prefix, name)}.{hint} "
            f"{_format(prefix, 'help')} lists the commands I know."
        )
        return f"unknown:{name}"
    if ctx.config is not None and ctx.config.waiting and not spec.uninvited:
        await cctx.react("confused")
        await cctx.reply(f"@{actor}: I did not run {_format(prefix, name)}: {not_invited(ctx, prefix)}")
        return f"not-invited:{name}"
    if not ctx.enabled(spec.section):
        where = ctx.config.path if ctx.config is not None and ctx.config.path else "its Steward configuration"
        await cctx.react("confused")
        await cctx.reply(
            f"@{actor}: {_format(prefix, name)} is switched off on this repository "
            f"(`{spec.section}.enabled: false` in `{where}`)."
        )
        return f"disabled:{name}"
    if not (spec.on_pulls if on_pull else spec.on_issues):
        place = "pull requests" if on_pull else "issues"
        await cctx.react("confused")
        await cctx.reply(f"@{actor}: {_format(prefix, name)} does not work on {place}.")
        return f"misplaced:{name}"
    permission = ctx.settings.permission(name, spec.permission)
    try:
        decision = await check(ctx.forge, ctx.repo, permission, actor=actor, author=author)
        if not decision.allowed:
            await cctx.react("confused")
            await cctx.reply(
                f"@{actor}: {_format(prefix, name)} can only be run by "
                f"{who_may(permission, forge=ctx.event.forge)}; your access to this repository is "
                f"`{decision.actor_level}`. Ask someone who may run it."
            )
            return f"refused:{name}"
        await cctx.react("eyes")
        await spec.handler(cctx)
    except PermissionsUnreadable:
        _warn_unreadable(ctx)
        await cctx.react("confused")
        await cctx.reply(_unreadable_text(ctx, actor, _format(prefix, name)))
        return f"unreadable-permissions:{name}"
    except CommandError as exc:
        await cctx.react("confused")
        await cctx.reply(f"@{actor}: {exc}")
        return f"error:{name}"
    except ThreadLocked as exc:
        cctx.note_locked(cctx.number, exc)
        return f"locked:{name}"
    if not cctx.replied:
        await cctx.react("+1")
    return name
