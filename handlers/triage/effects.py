"""The everyday commands' forge reads and writes: each reads the issue now, decides with the pure rules
(``claims``, ``rules``) and writes only the difference.

Claims live in one signed sticky record per issue (``CLAIMS_KIND``); only a record that verifies counts
(DESIGN §3.13). One that does not is rebuilt from what made it: the `/claim`, `/assign` and `/unassign`
commands in the thread, each counted only if its author may run it now.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from bot.commands.context import EventContext
from bot.commands.dispatch import setting_on
from bot.commands.grammar import parse_commands
from bot.commands.permissions import PermissionsUnreadable, check
from bot.config.settings import Permission
from bot.forge import Comment, Issue
from bot.records import sticky
from handlers.triage.claims import Claim, from_data, parse_logins, stale, to_data, with_claim, without
from handlers.triage.render import claims_text

CLAIMS_KIND = "triage-claims"
CLAIMS_KEY = "record"
CLAIMED_COLOR = "c2e0c6"
# The commands whose history a claims record is rebuilt from.
CLAIM_COMMANDS = ("claim", "assign", "unassign")


@dataclass
class Claims:
    """An issue's claims as read now, and what was read to get them."""

    issue: Issue
    claims: list[Claim]
    comments: list[Comment]
    comment: Comment | None  # the record's comment, when there is one


async def read_claims(ctx: EventContext, number: int, issue: Issue | None = None) -> Claims:
    issue = issue if issue is not None else await ctx.forge.get_issue(ctx.repo, number)
    comments = await ctx.forge.list_comments(ctx.repo, number)
    found = sticky.find(comments, bot_login=ctx.me.login, kind=CLAIMS_KIND, key=CLAIMS_KEY)
    if found is None:
        return Claims(issue, [], comments, None)
    record = await ctx.record(found, CLAIMS_KIND, CLAIMS_KEY)
    if record.trusted is not None:
        return Claims(issue, from_data(record.trusted), comments, found)
    claims = await rebuild(ctx, issue, comments)
    link = found.html_url or f"{issue.html_url}#issuecomment-{found.id}"
    await ctx.report_rebuilt(record, f"[its claims record]({link})", number=number)
    return Claims(issue, claims, comments, found)


async def _may(
    ctx: EventContext, cache: dict[tuple[str, str], bool], who: str, need: Permission, author: str
) -> bool:
    key = (who.casefold(), need)
    if key not in cache:
        try:
            cache[key] = (await check(ctx.forge, ctx.repo, need, actor=who, author=author)).allowed
        except PermissionsUnreadable:
            cache[key] = False
    return cache[key]


async def rebuild(ctx: EventContext, issue: Issue, comments: list[Comment]) -> list[Claim]:
    """The claims the thread's commands make, each counted only if its author may run it now."""
    known = ctx.registry.short_names()
    specs = ctx.registry.commands
    cache: dict[tuple[str, str], bool] = {}
    claims: list[Claim] = []
    me = ctx.me.login.casefold()
    assigned = {a.casefold() for a in issue.assignees}
    for comment in comments:
        if comment.author.casefold() == me:
            continue
        for command in parse_commands(comment.body, known=known, prefix=ctx.prefix):
            spec = specs.get(command.name)
            if command.name not in CLAIM_COMMANDS or spec is None:
                continue
            if (
                not command.canonical
                and spec.short_setting
                and not setting_on(ctx.settings, spec.short_setting)
            ):
                continue
            who = comment.author
            if not await _may(
                ctx, cache, who, ctx.settings.permission(command.name, spec.permission), issue.author
            ):
                continue
            logins, _ = parse_logins(command.args, who)
            others = [x for x in logins if x.casefold() != who.casefold()]
            if command.name == "claim":
                logins = [who]
            elif others and not await _may(
                ctx, cache, who, ctx.settings.permission("assign", "triage"), issue.author
            ):
                continue
            if command.name == "unassign":
                claims = without(claims, logins)
                continue
            if command.name == "assign" and all(x.casefold() in assigned for x in logins):
                continue  # the forge assigned them: no claim of Steward's
            for login in logins:
                claim = Claim(login, comment.created_at or "", who, login.casefold() in assigned, comment.id)
                claims = with_claim(claims, claim)
    return claims


async def save_claims(ctx: EventContext, found: Claims, claims: list[Claim], *, force: bool = False) -> None:
    """Write the record (only a change is written) and the label that says an issue is claimed; ``force``:
    write it even when nobody holds a claim (a record someone deleted)."""
    triage = ctx.settings.triage
    if claims or found.comment is not None or force:
        text = claims_text(claims, ctx.prefix, ctx.forge.kind, triage.release_claims_after_days)
        await ctx.upsert_sticky(
            CLAIMS_KIND,
            CLAIMS_KEY,
            text,
            data=to_data(claims),
            number=found.issue.number,
            comments=found.comments,
        )
    label = triage.claimed_label
    if claims and not found.issue.has_label(label):
        await ctx.forge.ensure_label(
            ctx.repo, label, color=CLAIMED_COLOR, description="Steward: someone has claimed this issue"
        )
        await ctx.forge.add_labels(ctx.repo, found.issue.number, [label])
    elif not claims and found.issue.has_label(label):
        await ctx.forge.remove_label(ctx.repo, found.issue.number, label)


@dataclass(frozen=True)
class ClaimedIssue:
    """An open issue someone holds a claim on (``list_claims``): its claims as Steward's verified record has
    them, and those whose holder did nothing there for `triage.release_claims_after_days` (released by the
    next `claim-release` run)."""

    number: int
    title: str
    html_url: str
    claims: tuple[Claim, ...]
    stale: tuple[Claim, ...]


async def list_claims(ctx: EventContext, now: float | None = None) -> list[ClaimedIssue]:
    """Every open issue with a claim on this repository: one listing of the `triage.claimed_label` issues,
    then each one's thread (its record, verified — rebuilt from the commands when it does not verify — and
    its holders' latest comments). An issue the forge assigned without a claim is not listed: its
    ``Issue.assignees`` say who has it."""
    triage = ctx.settings.triage
    found: list[ClaimedIssue] = []
    moment = time.time() if now is None else now
    for issue in await ctx.forge.list_issues(ctx.repo, labels=[triage.claimed_label]):
        claims = await read_claims(ctx, issue.number, issue)
        if not claims.claims:
            continue
        dated, activity = dated_claims(claims)
        gone = stale(dated, activity, moment, triage.release_claims_after_days)
        found.append(ClaimedIssue(issue.number, issue.title, issue.html_url, tuple(dated), tuple(gone)))
    return found


def dated_claims(found: Claims) -> tuple[list[Claim], dict[str, str]]:
    """The claims, each dated by its command comment as the forge shows it now (nobody can change that
    time), and each person's latest comment in the thread (casefolded login → ISO-8601)."""
    activity: dict[str, str] = {}
    written: dict[int, str] = {}
    for comment in found.comments:
        key = comment.author.casefold()
        activity[key] = max(activity.get(key, ""), comment.created_at or "")
        written[comment.id] = comment.created_at or ""
    return [replace(c, since=written.get(c.comment) or c.since) for c in found.claims], activity
