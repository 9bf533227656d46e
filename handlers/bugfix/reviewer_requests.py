"""Reviewers for a bugfix pull request (issue 39). Bugfix pull requests open as drafts with only the
regression test, and neither forge requests code owners on a draft; once the fix is pushed and the pull
request is ready (and again whenever its files change), Steward asks `bugfix.reviewers` independent
reviewers — code owners of the changed files, read with the forge's own rules (``codeowners``), else
`bugfix.reviewer_pool`, plus one of each `bugfix.sensitive_paths` group the fix touches — least recently
asked first, never the author, whoever ran `/bugfix`, made a commit or pushed (``reviewers.independence``).
Paths without an eligible owner, and teams whose members the forge will not show, are named in a note. Off
unless `bugfix.request_reviewers` is on.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Sequence

from bot.commands.context import EventContext
from bot.forge import (
    NotFound,
    NotSupported,
    PermissionDenied,
    PullRequest,
    TooManyItems,
    ValidationFailed,
    codeowners,
    repo_key,
)
from bot.records import neutralise
from handlers.bugfix.record import Record, settings_of
from handlers.bugfix.regression_slot import is_test_path
from handlers.bugfix.reviewers import independence
from handlers.bugfix.status import BranchCommit, own_commits

KIND = "bugfix-reviewers"
MAX_FILES = 300
_TTL = 180 * 86_400


async def read_owners(ctx: EventContext) -> codeowners.CodeOwners | None:
    """The repository's CODEOWNERS on its default branch, the first file the forge itself would read."""
    flavor: codeowners.Flavor = "gitea" if ctx.event.forge == "gitea" else "github"
    places = codeowners.GITEA_FILES if flavor == "gitea" else codeowners.GITHUB_FILES
    branch = (await ctx.forge.get_repo(ctx.repo)).default_branch
    for path in places:
        found = await ctx.forge.read_file(ctx.repo, path, ref=branch)
        if found is not None:
            return codeowners.parse(flavor, found.content.decode("utf-8", "replace"))
    return None


class _People:
    """Logins from names as CODEOWNERS, `bugfix.reviewer_pool` and `bugfix.sensitive_paths` give them: a login
    as it is, `org/team` (`@` optional) as the team's members read from the forge — each team once per
    request, however many paths it owns. A team the forge will not show (it does not exist, Steward may not
    see it, or it is longer than Steward reads a list) counts as nobody and is remembered in ``unreadable``
    for the note; any other error (the forge down, a rate limit) is raised, so the job runs again rather than
    ask someone else for good."""

    def __init__(self, ctx: EventContext) -> None:
        self.ctx = ctx
        self.teams: dict[str, tuple[str, ...]] = {}
        self.unreadable: dict[str, None] = {}

    async def __call__(self, names: Iterable[str]) -> list[str]:
        out: dict[str, None] = {}
        for name in names:
            name = name.strip().removeprefix("@")
            if "@" in name:
                continue  # an e-mail address names no account Steward can ask
            if "/" in name:
                key = name.casefold()
                if key not in self.teams:
                    org, _, team = name.partition("/")
                    try:
                        self.teams[key] = await self.ctx.forge.team_members(org, team)
                    except (NotFound, PermissionDenied, NotSupported, TooManyItems):
                        self.teams[key] = ()
                        self.unreadable[name] = None
                out.update(dict.fromkeys(self.teams[key]))
            elif name:
                out[name] = None
        return list(out)


async def _least_recent(ctx: EventContext, candidates: Sequence[str], count: int) -> list[str]:
    """``count`` of ``candidates``, least recently asked here first (then by name)."""
    redis = ctx.memo.redis if ctx.memo is not None else None
    key = f"steward:bugfix-reviewers:{repo_key(ctx.event.forge, ctx.repo)}"
    last: dict[str, float] = {}
    if redis is not None and candidates:
        found = await redis.zmscore(key, [c.casefold() for c in candidates])
        last = {c.casefold(): score or 0.0 for c, score in zip(candidates, found, strict=True)}
    return sorted(candidates, key=lambda c: (last.get(c.casefold(), 0.0), c.casefold()))[:count]


async def _remember(ctx: EventContext, asked: Sequence[str]) -> None:
    if ctx.memo is None or not asked:
        return
    key = f"steward:bugfix-reviewers:{repo_key(ctx.event.forge, ctx.repo)}"
    await ctx.memo.redis.zadd(key, {a.casefold(): time.time() for a in asked})
    await ctx.memo.redis.expire(key, _TTL)


async def request_reviewers(ctx: EventContext, pull: PullRequest, number: int, record: Record,
                            commits: Sequence[BranchCommit]) -> None:  # fmt: skip
    settings = settings_of(ctx)
    if not settings.request_reviewers or pull.draft or pull.state != "open" or len(own_commits(commits)) < 2:
        return  # a draft, or only the regression test so far: nothing to review yet
    files = sorted(f.path for f in (await ctx.forge.list_pr_files(ctx.repo, pull.number))[:MAX_FILES])
    digest = hashlib.sha256("\0".join(files).encode()).hexdigest()[:16]
    asked_for = f"bugfix-reviewers:{pull.number}:{digest}"
    if await ctx.was_once(asked_for):
        return  # asked for these files already
    fix = await independence(ctx, pull)
    excluded = dict(fix.excluded) if fix is not None else {}
    excluded.setdefault(pull.author.casefold(), "opened the pull request")
    excluded.setdefault(ctx.me.login.casefold(), "")
    owners = await read_owners(ctx)
    logins_of = _People(ctx)
    owned: dict[str, list[str]] = {}
    unowned: list[str] = []
    for path in files:
        named = owners.owners_of(path) if owners else ()
        people = [p for p in await logins_of(named) if p.casefold() not in excluded]
        if people:
            owned[path] = people
        else:
            unowned.append(path)
    candidates = list(dict.fromkeys(p for people in owned.values() for p in people))
    source = "code owner of the changed files"
    if not candidates:
        candidates = [p for p in await logins_of(settings.reviewer_pool) if p.casefold() not in excluded]
        source = "from `bugfix.reviewer_pool`"
    have = [r for r in pull.requested_reviewers if r.casefold() not in excluded]
    chosen = await _least_recent(
        ctx, [c for c in candidates if c.casefold() not in {h.casefold() for h in have}],
        max(settings.reviewers - len(have), 0),
    )  # fmt: skip
    specialists: list[tuple[str, str]] = []
    fixed = {f.path for c in own_commits(commits)[1:] for f in c.files}
    for name, group in sorted(settings.sensitive_paths.items()):
        if not any(is_test_path(path, group.paths) for path in fixed):
            continue
        members = [m for m in await logins_of(group.reviewers) if m.casefold() not in excluded]
        if any(m.casefold() in {c.casefold() for c in [*have, *chosen]} for m in members):
            continue
        picked = await _least_recent(ctx, members, 1)
        specialists += [(p, name) for p in picked]
    asked = [*chosen, *(p for p, _ in specialists)]
    lines: list[str] = []
    refused = False
    if asked:
        try:
            await ctx.forge.request_reviewers(ctx.repo, pull.number, asked)
        except (ValidationFailed, NotFound) as exc:  # someone the forge will not ask (no access, gone)
            lines.append(
                f"The forge would not ask {', '.join('@' + a for a in asked)} to review: "
                f"{neutralise.line(str(exc), 300)}. A maintainer asks someone (`/steward cc @login`)."
            )
            chosen, specialists, asked, refused = [], [], [], True
        await _remember(ctx, asked)
    if chosen:
        lines.append(f"Asked {', '.join('@' + c for c in chosen)} to review the fix of #{number} ({source}).")
    for person, group_name in specialists:
        lines.append(f"Asked @{person} to review for the `{group_name}` group (`bugfix.sensitive_paths`).")
    if logins_of.unreadable:
        teams = ", ".join(neutralise.code(t, 100) for t in list(logins_of.unreadable)[:6])
        lines.append(
            f"The members of {teams} could not be read (the team does not exist, or Steward may not see it: "
            "on GitHub it needs the organisation's members read permission, on Gitea membership of the "
            "organisation; or it is too large to list), so none of them was asked."
        )
    if unowned and owners is not None:
        more = f" … {len(unowned) - 20} more" if len(unowned) > 20 else ""
        shown = ", ".join(f"`{p}`" for p in unowned[:20]) + more
        lines.append(f"No code owner who may review this fix owns {shown}: a maintainer asks someone.")
    if not asked and not have and not refused:
        lines.append(
            "Nobody could be asked to review this fix: no code owner of its files may review it and "
            "`bugfix.reviewer_pool` names nobody who may. A maintainer asks someone (`/steward cc @login`)."
        )
    if lines:
        await ctx.upsert_sticky(KIND, str(number), "\n\n".join(lines), number=pull.number)
    await ctx.once(asked_for)


def forge_requested_excluded(pull: PullRequest, excluded: dict[str, str]) -> list[str]:
    """The ledger's line for each person the forge asked to review (its own code-owner request) whom the
    independence rule excludes: their review will not count."""
    return [
        f"@{r} is asked to review this pull request, but {excluded[r.casefold()]}: their review will not "
        "count."
        for r in pull.requested_reviewers
        if r.casefold() in excluded
    ]
