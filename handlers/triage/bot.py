"""The everyday commands' registrations. Each runs as `/steward <name>`; the short `/<name>` only where the
repository switched `triage.short_commands` on (other bots answer the same short forms).

- `/claim` takes the issue for the commenter; `/assign @x …` assigns others (triage+ by default, never
  below: `commands.assign`); `/unassign [@x …]` lets go of oneself (anyone who may comment) or of others (as
  `/assign`). Where the forge will not assign someone, Steward keeps the claim in its signed record on the
  issue (``effects``); a claim with no activity for `triage.release_claims_after_days` is released (the
  `claim-release` job).
"""

from __future__ import annotations

import hashlib
import time
from datetime import UTC, datetime

from bot.commands.context import CommandContext, CommandError, EventContext
from bot.commands.periodic import PeriodicContext
from bot.commands.permissions import check, who_may
from bot.commands.registry import Registry
from bot.forge import ForgeError
from bot.records import sticky
from bot.records.neutralise import code
from handlers.triage.claims import Claim, holds, parse_logins, stale, with_claim, without
from handlers.triage.effects import CLAIMS_KEY, CLAIMS_KIND, dated_claims, read_claims, rebuild, save_claims
from handlers.triage.render import kept_text, not_held_text, release_text

# This module's commands and events; `handlers.build_registry()` includes them (importing registers nothing).
plugin = Registry()


def register(registry: Registry) -> None:
    registry.include(plugin)


SECTION = "triage"
# Declared on every command here: `/<name>` runs only where the repository switched it on.
SHORT_SETTING = "triage.short_commands"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _logins(ctx: CommandContext) -> list[str]:
    logins, bad = parse_logins(ctx.command.args, ctx.actor)
    if bad:
        shown = ", ".join(code(word, 40) for word in bad[:3])
        raise CommandError(
            f"{shown} is not a login. Name people as `@login`, e.g. "
            f"`/{ctx.prefix} {ctx.command.name} @octocat`."
        )
    if len(logins) > 10:
        raise CommandError("name at most 10 people at once (the forge assigns at most 10).")
    return logins


async def _may_assign_others(ctx: CommandContext, author: str) -> None:
    permission = ctx.settings.permission("assign", "triage")
    decision = await check(ctx.forge, ctx.repo, permission, actor=ctx.actor, author=author)
    if not decision.allowed:
        raise CommandError(
            f"only {who_may(permission, forge=ctx.event.forge)} may assign or unassign other people here; "
            f"your access is `{decision.actor_level}`. You can `/{ctx.prefix} claim` an issue, or "
            f"`/{ctx.prefix} unassign` yourself."
        )


async def _assign(ctx: CommandContext, logins: list[str]) -> None:
    others = [login for login in logins if login.casefold() != ctx.actor.casefold()]
    missing = [login for login in others if not await ctx.forge.user_exists(login)]
    if missing:
        names = ", ".join(f"`@{login}`" for login in missing)
        raise CommandError(
            f"{names}: no such account on this forge, so nobody was assigned. Check the spelling."
        )
    found = await read_claims(ctx, ctx.number)
    assigned = await ctx.forge.add_assignees(ctx.repo, ctx.number, logins)
    now = {a.casefold() for a in assigned}
    written = next((c.created_at for c in found.comments if c.id == ctx.comment.id and c.created_at), _now())
    claims = found.claims
    kept = []
    for login in logins:
        landed = login.casefold() in now
        if ctx.command.name == "claim" or not landed:
            claims = with_claim(claims, Claim(login, written, ctx.actor, landed, ctx.comment.id))
            kept += [] if landed else [login]
        elif holds(claims, login) is not None:
            claims = with_claim(claims, Claim(login, written, ctx.actor, True, ctx.comment.id))
    if claims != found.claims:
        await save_claims(ctx, found, claims)
    if kept:
        await ctx.reply(kept_text(kept, ctx.event.forge))


@plugin.command(
    "claim",
    usage="claim",
    help="Take this issue: you are assigned, or — where the forge will not assign you — Steward keeps your "
    "claim in its record on the issue.",
    permission="anyone",
    on_pulls=False,
    section=SECTION,
    short_setting=SHORT_SETTING,
)
async def claim_command(ctx: CommandContext) -> None:
    await _assign(ctx, [ctx.actor])


@plugin.command(
    "assign",
    usage="assign @login …",
    help="Assign people to this issue or pull request (`me` is you); whom the forge will not assign, "
    "Steward records as a claim. Triage+ by default, never less (`commands.assign`).",
    permission="triage",
    section=SECTION,
    short_setting=SHORT_SETTING,
)
async def assign_command(ctx: CommandContext) -> None:
    await _assign(ctx, _logins(ctx))


@plugin.command(
    "unassign",
    usage="unassign [@login …]",
    help="Let go of this issue (without a name: yourself); unassigning others needs what `assign` needs.",
    permission="anyone",
    section=SECTION,
    short_setting=SHORT_SETTING,
)
async def unassign_command(ctx: CommandContext) -> None:
    logins = _logins(ctx)
    issue = await ctx.forge.get_issue(ctx.repo, ctx.number)
    if any(login.casefold() != ctx.actor.casefold() for login in logins):
        await _may_assign_others(ctx, issue.author)
    found = await read_claims(ctx, ctx.number, issue)
    held = {a.casefold() for a in issue.assignees} | {c.login.casefold() for c in found.claims}
    if not any(login.casefold() in held for login in logins):
        await ctx.reply(not_held_text(logins))
        return
    if any(login.casefold() in {a.casefold() for a in issue.assignees} for login in logins):
        await ctx.forge.remove_assignees(ctx.repo, ctx.number, logins)
    claims = without(found.claims, logins)
    if claims != found.claims:
        await save_claims(ctx, found, claims)


@plugin.on("issue_comment", "edited", "deleted", section=SECTION)
async def on_record_changed(ctx: EventContext) -> None:
    """Someone edited or deleted Steward's claims record: it is rebuilt from the thread's commands now, with
    a note naming who changed it (a deleted one is written again)."""
    comment, issue = ctx.event.comment, ctx.event.issue
    me = ctx.me.login.casefold()
    if (
        comment is None
        or issue is None
        or comment.author.casefold() != me
        or ctx.event.sender.casefold() == me
    ):
        return
    if not comment.body.lstrip().startswith(sticky.marker(CLAIMS_KIND, CLAIMS_KEY)):
        return
    found = await read_claims(ctx, issue.number)
    if found.comment is None:  # deleted: the commands say what it held
        found.claims = await rebuild(ctx, found.issue, found.comments)
    await save_claims(ctx, found, found.claims, force=True)


@plugin.every(hours=1, name="claim-release")
async def release_claims(pctx: PeriodicContext) -> None:
    """Claims whose holder did nothing on the issue for `triage.release_claims_after_days` are released
    with a note to them (one listing of claimed issues per repository; a thread read only for those)."""
    for kind in pctx.forges:
        for repo in await pctx.repositories(kind):
            try:
                forge = await pctx.forge(kind, repo)
                config = await pctx.settings_for(forge, repo)
                triage = config.settings.triage
                days = triage.release_claims_after_days
                if config.waiting or not triage.enabled or days is None:
                    continue
                issues = await forge.list_issues(repo, labels=[triage.claimed_label])
                if not issues:
                    continue
                me = await forge.whoami()
                ctx = pctx.repo_context(kind, repo, forge, me, config)
                for issue in issues:
                    async with ctx.holding_unless_busy(issue.number) as held:
                        if held:
                            await _release_stale(ctx, issue.number, days)
            except ForgeError as exc:
                pctx.log.warning(
                    "claim release: could not look at a repository", repo=repo.full_name, error=str(exc)
                )


async def _release_stale(ctx: EventContext, number: int, days: int) -> None:
    found = await read_claims(ctx, number)
    # A claim started when its command comment was written (the forge's time, which nobody can change).
    dated, activity = dated_claims(found)
    gone = stale(dated, activity, time.time(), days)
    if not gone:
        return
    assigned = [c.login for c in gone if c.login.casefold() in {a.casefold() for a in found.issue.assignees}]
    if assigned:
        await ctx.forge.remove_assignees(ctx.repo, number, assigned)
    await save_claims(ctx, found, without(found.claims, [c.login for c in gone]))
    ctx.log.info("claims released", number=number, count=len(gone))
    for claim in gone:
        await ctx.upsert_sticky(
            "triage-released",
            hashlib.sha256(f"{claim.login.casefold()}\0{claim.since}".encode()).hexdigest()[:12],
            release_text(claim, days, ctx.prefix),
            number=number,
        )
