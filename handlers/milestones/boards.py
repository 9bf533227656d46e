"""Finding a milestone's dashboard: the issues Steward wrote with a milestone's hidden marker, bound to it by
their signed record, and the items of a milestone (dashboards left out)."""

from __future__ import annotations

from bot.commands.context import EventContext
from bot.forge import Forge, Issue, NotFound, RepoRef
from bot.records import sticky
from handlers.milestones.plan import KIND, dashboard_key


def dashboard_of(issue: Issue, bot_login: str) -> int | None:
    """The milestone key of a Steward dashboard (written by the bot, with the hidden marker), else None."""
    if issue.is_pull_request or issue.author.casefold() != bot_login.casefold():
        return None
    return dashboard_key(issue.body)


async def find_dashboards(
    forge: Forge, repo: RepoRef, bot_login: str, label: str, *, verifier: sticky.Verifier | None = None
) -> dict[int, Issue]:
    """Every dashboard of the repository by milestone key (open or closed).

    A milestone is bound to its dashboard by the dashboard's signed record: the signature names the issue's
    id and the milestone's key together, so another Steward issue whose body a writer gave this milestone's
    marker (an older dashboard, the configuration error issue) never verifies as it. Should two issues carry
    one milestone's marker, the one whose record verifies is the dashboard (``verifier``); only when none
    does, the oldest."""
    candidates: dict[int, list[Issue]] = {}
    for issue in await forge.list_issues(repo, labels=[label], state="all", kind="issues"):
        key = dashboard_of(issue, bot_login)
        if key is not None:
            candidates.setdefault(key, []).append(issue)
    found: dict[int, Issue] = {}
    for key, issues in candidates.items():
        issues.sort(key=lambda issue: issue.number)
        found[key] = issues[0]
        if len(issues) > 1 and verifier is not None:
            for issue in issues:
                if (await verifier.issue(issue, KIND, str(key))).outcome == "verified":
                    found[key] = issue
                    break
    return found


async def milestone_items(forge: Forge, repo: RepoRef, key: int, bot_login: str) -> list[Issue]:
    """Every issue and pull request in the milestone, dashboards left out (Steward never puts one there)."""
    items = await forge.list_issues(repo, milestone=key, state="all", kind="all")
    return [item for item in items if dashboard_of(item, bot_login) is None]


async def dashboard_now(
    ctx: EventContext, key: int, dashboards: dict[int, Issue], *, snapshot: bool
) -> tuple[Issue | None, sticky.Record | None]:
    """Milestone ``key``'s dashboard and what its record is worth. ``snapshot``: the caller read
    ``dashboards`` (the catch-up lists them all, then holds each milestone's lock in turn), so another job may
    have written this dashboard since; a listed copy whose record does not verify is read again under the
    lock, else it would read as an older version Steward replaced, and be rebuilt from that stale copy."""
    current = dashboards.get(key)
    if current is None:
        return None, None
    record = await ctx.record_of_issue(current, KIND, str(key))
    if not snapshot or record.outcome == "verified":
        return current, record
    try:
        current = await ctx.forge.get_issue(ctx.repo, current.number)
    except NotFound:
        dashboards.pop(key, None)
        return None, None
    dashboards[key] = current
    return current, await ctx.record_of_issue(current, KIND, str(key))
