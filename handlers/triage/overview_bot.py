"""What refreshes the overview issue (``handlers.triage.overview``): a change to an issue, a pull request or a
milestone asks for one coalesced refresh; a person's edit of the overview itself is answered at once (its
record no longer verifies: it is rebuilt, and the note names them); the configuration switching it on, the
hourly look (ages and stale claims move with the clock; Gitea sends no milestone webhooks) and
`steward reconcile` refresh it too."""

from __future__ import annotations

from bot.commands.context import EventContext
from bot.commands.grammar import could_hold_command
from bot.commands.periodic import PeriodicContext
from bot.commands.registry import Registry
from bot.config.repo_file import CONFIG_PATHS
from bot.forge import ForgeError
from handlers.triage.overview import REFRESH, is_overview, request_refresh, sync_overview, wanted

# This module's events, periodic job and reconciler; `handlers.build_registry()` includes them.
plugin = Registry()

SECTION = "triage"


def register(registry: Registry) -> None:
    registry.include(plugin)


ACTIONS = (
    "opened",
    "edited",
    "closed",
    "reopened",
    "labeled",
    "unlabeled",
    "assigned",
    "unassigned",
    "milestoned",
    "demilestoned",
    "deleted",
    "ready_for_review",
    "converted_to_draft",
    # A push to a bugfix branch: Steward marks the pull request ready once the fix is in (its own write comes
    # back as its own event, ignored), so the person's push asks for the refresh.
    "synchronize",
)


@plugin.on("issues", *ACTIONS, checks="the overview issue", section=SECTION)
@plugin.on("pull_request", *ACTIONS, section=SECTION)
async def on_item(ctx: EventContext) -> None:
    """An issue or pull request changed: refresh the overview (coalesced). Someone edited the overview
    itself: check its record now, in this event, so that the note names who changed it."""
    if not wanted(ctx) or ctx.event.issue is None:
        return
    issue = ctx.event.issue
    mine = issue.author.casefold() == ctx.me.login.casefold()
    if mine and not issue.is_pull_request and ctx.event.action == "edited":
        current = await ctx.forge.get_issue(ctx.repo, issue.number)
        if is_overview(current, ctx):
            await sync_overview(ctx)
            return
    await request_refresh(ctx)


@plugin.on("issue_comment", "created", "edited", section=SECTION)
async def on_command(ctx: EventContext) -> None:
    """A comment with a command: what the command makes Steward write (a claim, a label, a close) reaches
    Steward as its own event, which it ignores, so the person's comment asks for the refresh (coalesced, a
    slot later: the command has run by then)."""
    if not wanted(ctx) or ctx.event.comment is None:
        return
    known = ctx.registry.commands.keys()
    if could_hold_command(ctx.event.comment.body, known=known, prefix=ctx.prefix):
        await request_refresh(ctx)


@plugin.on("milestone", "created", "opened", "closed", "edited", "deleted", section=SECTION)
async def on_milestone(ctx: EventContext) -> None:
    await request_refresh(ctx)


@plugin.on("push", section=SECTION)
async def on_push(ctx: EventContext) -> None:
    """The configuration file changed (maybe switching the overview on): refresh."""
    if set(ctx.event.paths) & set(CONFIG_PATHS.get(ctx.event.forge, ())):
        await request_refresh(ctx)


@plugin.on("repository", REFRESH, section=SECTION)
async def run_refresh(ctx: EventContext) -> None:
    """A coalesced refresh, due."""
    await sync_overview(ctx)


@plugin.every(hours=1, name="overview")
async def hourly(pctx: PeriodicContext) -> None:
    """Ages and stale claims move with the clock alone; Gitea sends no milestone webhooks."""
    if pctx.deferred is None:
        return
    for kind in pctx.forges:
        for repo in await pctx.repositories(kind):
            try:
                forge = await pctx.forge(kind, repo)
                config = await pctx.settings_for(forge, repo)
                if not (config.settings.triage.enabled and config.settings.triage.overview):
                    continue
                ctx = pctx.repo_context(kind, repo, forge, await forge.whoami(), config)
                await request_refresh(ctx)
            except ForgeError as exc:
                pctx.log.warning(
                    "overview: could not look at a repository", repo=repo.full_name, error=str(exc)
                )


@plugin.reconcile("overview", checks="the overview issue (what needs whom)", section=SECTION)
async def reconcile_overview(ctx: EventContext) -> None:
    await sync_overview(ctx)
