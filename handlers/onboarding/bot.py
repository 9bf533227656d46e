"""Onboarding in the forge: the "Configure Steward" pull request, its labels at merge, its closing comment.

- A GitHub App installed on repositories (``installation.created``, ``installation_repositories.added``), or
  ``/steward init`` (repository admins, both forges): one pull request from ``steward/configure`` with the
  configuration file and the issue templates (``plan.proposal``), unless the repository already has a
  configuration file or the pull request is open already. While `/bugfix` is on, it first reads the default
  branch (``branch_facts``): the CI contexts on its head, proposed for ``bugfix.required_contexts``, and
  whether `steward/regression-first` is a required check there (``handlers.bugfix.required_check``).
- Closing it unmerged means "not now": the forge keeps the closed pull request of ``steward/configure``, and
  that is what Steward reads to never open it again on its own (only ``/steward init`` does). Nothing is kept
  in Redis: flushing it forgets no decision.
- A merged pull request that touches the configuration file creates the labels of the capabilities it
  switches on (existing labels are kept; Steward never deletes one). ``/steward init --labels`` does it
  at once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Final, Literal

from bot.commands.context import CommandContext, CommandError, EventContext
from bot.commands.registry import Registry
from bot.config.repo_file import CONFIG_PATHS, merge, parse
from bot.config.repo_settings import RepoSettings
from bot.config.settings import HandlerSettings
from bot.events.event import IssueSnapshot
from bot.forge import (
    FileChange,
    ForgeError,
    NotFound,
    PermissionDenied,
    PullRequest,
    TooManyItems,
    ValidationFailed,
)
from bot.records import sticky
from handlers.bugfix.api import codeowners_files, read_requirement, seen_contexts
from handlers.onboarding.plan import (
    BRANCH,
    TITLE,
    BranchFacts,
    LabelSpec,
    capabilities,
    closing_text,
    issue_language,
    labels_for,
    preview,
    proposal,
    pull_body,
    switched_on_text,
)
from handlers.onboarding.templates import proposed_template_paths, template_files

# This module's commands and events; `handlers.build_registry()` includes them (importing registers nothing).
plugin = Registry()


def register(registry: Registry) -> None:
    registry.include(plugin)


CLOSED_KIND = "onboarding-closed"

Outcome = Literal["configured", "open", "declined", "opened"]


class StaleBranch(ValidationFailed):
    """``steward/configure`` has nothing new for the default branch, so no pull request can be opened."""


@dataclass(frozen=True)
class Onboarding:
    outcome: Outcome
    pull: PullRequest | None = None
    config_path: str = ""


async def _existing_config(ctx: EventContext, branch: str) -> str:
    for path in CONFIG_PATHS[ctx.event.forge]:
        if await ctx.forge.read_file(ctx.repo, path, ref=branch) is not None:
            return path
    return ""


async def onboard(ctx: EventContext, *, explicit: bool, requested_by: str = "") -> Onboarding:
    """Open the onboarding pull request when the repository needs one. ``explicit``: asked for with
    ``/steward init``, which may open it again after it was closed unmerged. Jobs take turns per repository,
    so an installation event and a command at once never open two."""
    async with ctx.holding_repo("onboarding"):
        return await _onboard(ctx, explicit=explicit, requested_by=requested_by)


async def _onboard(ctx: EventContext, *, explicit: bool, requested_by: str) -> Onboarding:
    repo = await ctx.forge.get_repo(ctx.repo)
    base = repo.default_branch
    found = await _existing_config(ctx, base)
    if found:
        return Onboarding("configured", config_path=found)
    current = await ctx.forge.find_pull_request(ctx.repo, BRANCH)
    if current is not None:
        return Onboarding("open", current)
    if not explicit:
        last = await ctx.forge.find_pull_request(ctx.repo, BRANCH, state="closed")
        if last is not None and not last.merged:
            return Onboarding("declined", last)
    bug_label = _configured(ctx).bug_refinement.bug_label
    try:
        bugs = await ctx.forge.list_issues(ctx.repo, labels=(bug_label,), state="open")
    except TooManyItems:
        bugs = []
    language = issue_language([issue.body for issue in bugs])
    settings = _configured(ctx)
    running = {c.section for c in capabilities(ctx.registry, settings) if c.enabled}
    facts = await branch_facts(ctx, base, repo.html_url) if "bugfix" in running else None
    # A template the repository has is never overwritten (issue 34 §4); one that is Steward's own, as it
    # would write it (a proposal merged before), is not the repository's.
    mine = template_files(ctx.event.forge, language)
    taken = frozenset(
        [
            path
            for path in proposed_template_paths(ctx.event.forge)
            if (there := await ctx.forge.read_file(ctx.repo, path, ref=base)) is not None
            and there.content.decode("utf-8", "replace") != mine.get(path)
        ]
    )
    plan = proposal(ctx.event.forge, ctx.registry, settings, language, facts, taken)
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    body = pull_body(
        plan,
        kind=ctx.event.forge,
        registry=ctx.registry,
        settings=settings,
        found=preview(bugs, repo=ctx.repo.full_name, refined_at=stamp),
        requested_by=requested_by,
        fingerprint=ctx.keyring.fingerprint,
        facts=facts,
    )
    files = [FileChange(path, text.encode()) for path, text in plan.files.items()]
    await ctx.forge.commit_files(ctx.repo, base=base, branch=BRANCH, files=files, message=TITLE)
    try:
        pull = await ctx.forge.open_pull_request(ctx.repo, head=BRANCH, base=base, title=TITLE, body=body)
    except ValidationFailed as exc:
        # The branch holds the files already and adds nothing to the default branch (an onboarding pull
        # request was merged, and the file deleted since): the forge refuses a pull request of no commits.
        raise StaleBranch(str(exc)) from exc
    ctx.log.info("onboarding pull request", number=pull.number, language=language, explicit=explicit)
    return Onboarding("opened", pull, plan.config_path)


async def branch_facts(ctx: EventContext, base: str, html_url: str) -> BranchFacts:
    """The default branch as the bugfix capability needs it: whether `steward/regression-first` is required
    there and the CI contexts that reported on its head. A refusal is said, never guessed around."""
    found, branch = await read_requirement(ctx.forge, ctx.repo, base, ctx.event.forge)
    if branch is None:
        return BranchFacts(base, found, unread=found.reason, html_url=html_url)
    try:
        reports = await ctx.forge.ci_reports(ctx.repo, branch.sha)
    except PermissionDenied as exc:
        why = f"the forge refused to show me its checks and statuses ({exc})"
        return BranchFacts(base, found, branch.sha, None, why, html_url)
    owners = await codeowners_path(ctx, base)
    return BranchFacts(
        base, found, branch.sha, tuple(seen_contexts(reports)), html_url=html_url, codeowners=owners
    )


async def codeowners_path(ctx: EventContext, base: str) -> str:
    """The CODEOWNERS file the forge reads on ``base`` ("" when none)."""
    for path in codeowners_files(ctx.event.forge):
        if await ctx.forge.read_file(ctx.repo, path, ref=base) is not None:
            return path
    return ""


async def ensure_labels(ctx: EventContext, wanted: list[LabelSpec]) -> tuple[list[str], list[str]]:
    """Create the labels that do not exist (by name, any case); returns (created, already there)."""
    have = {label.name.casefold() for label in await ctx.forge.list_repo_labels(ctx.repo)}
    created: list[str] = []
    kept: list[str] = []
    for label in wanted:
        if label.name.casefold() in have:
            kept.append(label.name)
            continue
        await ctx.forge.ensure_label(ctx.repo, label.name, color=label.color, description=label.description)
        created.append(label.name)
    return created, kept


def _configured(ctx: EventContext) -> HandlerSettings:
    """The settings the repository would run on once it invites Steward (before that, ``ctx.settings``
    has every capability switched off: ``bot.config.repo_settings``)."""
    return ctx.config.as_configured if ctx.config is not None else ctx.settings


def _running(ctx: EventContext) -> list[str]:
    return [c.section for c in capabilities(ctx.registry, _configured(ctx))]


# --- the App's installation ------------------------------------------------------------------------------


@plugin.on("installation", "created")
@plugin.on("installation_repositories", "added")
async def on_installed(ctx: EventContext) -> None:
    """Each repository the App was installed on gets its onboarding pull request (when it needs one). A
    repository the App cannot work on is logged and skipped; any other failure runs the job again, which
    finds what was already done."""
    retry: ForgeError | None = None
    for repo in ctx.event.repos:
        rctx = ctx.for_event(replace(ctx.event, repo=repo))
        try:
            done = await onboard(rctx, explicit=False)
        except (NotFound, PermissionDenied, ValidationFailed) as exc:
            ctx.log.warning("cannot onboard the repository", repo=repo.full_name, error=str(exc))
            continue
        except ForgeError as exc:
            retry = retry or exc
            continue
        ctx.log.info("onboarding", repo=repo.full_name, outcome=done.outcome)
    if retry is not None:
        raise retry


# --- the pull request's end ---------------------------------------------------------------------------------


@plugin.on("pull_request", "closed", checks="the onboarding pull request")
async def on_pull_closed(ctx: EventContext) -> None:
    event = ctx.event
    if event.pull is None or event.issue is None:
        return
    if event.pull.merged:
        settings = await _labels_at_merge(ctx, event.issue.number)
        ours = event.pull.head_ref == BRANCH and event.issue.author.casefold() == ctx.me.login.casefold()
        if settings is not None and ours:
            await _switched_on(ctx, event.issue.number, settings)
        return
    if event.pull.head_ref != BRANCH or event.issue.author.casefold() != ctx.me.login.casefold():
        return
    await ctx.upsert_sticky(CLOSED_KIND, str(event.issue.number), closing_text(event.sender))


async def _labels_at_merge(ctx: EventContext, number: int) -> HandlerSettings | None:
    """A merged pull request that touched the configuration file: the labels of what it switches on. Returns
    the settings the merged file gives (None: it touched no configuration, or the file is invalid)."""
    paths = set(CONFIG_PATHS[ctx.event.forge])
    if not any(f.path in paths for f in await ctx.forge.list_pr_files(ctx.repo, number)):
        return None
    repo = await ctx.forge.get_repo(ctx.repo)
    settings = await _settings_on(ctx, repo.default_branch)
    if settings is None:
        return None  # an invalid file: handlers.core.config says so; the labels wait for a valid one
    created, _ = await ensure_labels(ctx, labels_for(settings, _running(ctx)))
    ctx.log.info("labels at merge", created=created)
    return settings


SWITCHED_ON_KIND = "onboarding-on"
REFINE_AT_ONCE: Final = 50  # labelled bugs refined at the merge; more are left to the hourly catch-up


async def _switched_on(ctx: EventContext, number: int, settings: HandlerSettings) -> None:
    """Once, on the merged onboarding pull request: Steward is on, what it will do, and the open bugs already
    labelled for refinement, each queued for refinement now rather than at the next hourly catch-up."""
    comments = await ctx.forge.list_comments(ctx.repo, number)
    if sticky.find(comments, bot_login=ctx.me.login, kind=SWITCHED_ON_KIND, key=str(number)) is not None:
        return  # said once already (a replay, a redelivery)
    running = [c for c in capabilities(ctx.registry, settings) if c.enabled]
    queued: list[int] = []
    refining = settings.bug_refinement
    if refining.enabled and ctx.deferred is not None:
        labelled = await ctx.forge.list_issues(ctx.repo, labels=[refining.refine_label], state="open")
        for issue in sorted(labelled, key=lambda i: i.number)[:REFINE_AT_ONCE]:
            event = replace(
                ctx.event,
                delivery_id=f"onboarded-{number}-{issue.number}",
                name="issues",
                action="edited",
                sender="",
                issue=IssueSnapshot.of(issue),
                pull=None,
                previous_body=None,
            )
            job = f"onboarded:{ctx.event.forge}:{ctx.repo.full_name}:{issue.number}"
            await ctx.deferred.run_later(event, delay=0, job_id=job)
            queued.append(issue.number)
        more = len(labelled) - len(queued)
    else:
        more = 0
    await ctx.upsert_sticky(
        SWITCHED_ON_KIND, str(number), switched_on_text(running, queued, more, ctx.prefix)
    )


async def _settings_on(ctx: EventContext, branch: str) -> HandlerSettings | None:
    """The settings the file on ``branch`` gives (None when it is invalid). The cached settings may predate
    the merge: when they came from this very file they are used; with no file behind them they are Steward's
    defaults, which the file is laid over; from an older version of it, the file is laid over the built-in
    defaults."""
    for path in CONFIG_PATHS[ctx.event.forge]:
        found = await ctx.forge.read_file(ctx.repo, path, ref=branch)
        if found is None:
            continue
        parsed = parse(found.content, ctx.registry.configurable)
        if parsed.data is None:
            return None
        config = ctx.config if ctx.config is not None else RepoSettings(ctx.settings)
        if config.path == path and config.sha == found.sha and not config.errors:
            return config.as_configured
        return merge(config.as_configured if not config.path else HandlerSettings(), parsed.data)
    return _configured(ctx)


# --- /steward init ------------------------------------------------------------------------------------------


def _init_reply(done: Onboarding, actor: str) -> str:
    if done.outcome == "configured":
        return (
            f"@{actor}: this repository already has Steward's configuration (`{done.config_path}`), so there "
            "is nothing to propose. `/steward config` shows the settings in force; `/steward init --labels` "
            "creates Steward's labels."
        )
    assert done.pull is not None
    if done.outcome == "open":
        return (
            f"@{actor}: the onboarding pull request is already open: #{done.pull.number}. Review and merge "
            "it to switch Steward on here."
        )
    return (
        f"@{actor}: I opened #{done.pull.number} ({TITLE}). Review it — it says what Steward will do here — "
        "and merge it to switch Steward on; nothing changes before that."
    )


@plugin.command(
    "init",
    usage="init [--labels]",
    help="Propose Steward's configuration, issue templates and labels in a pull request (again, after it "
    "was closed); `--labels` creates the labels now instead.",
    permission="admin",
    uninvited=True,
)
async def init_command(ctx: CommandContext) -> None:
    args = [arg.casefold() for arg in ctx.command.args]
    if args and args != ["--labels"]:
        raise CommandError(
            f"`/steward init` takes nothing, or `--labels`; I don't know `{' '.join(ctx.command.args)}`."
        )
    if args:
        try:
            created, kept = await ensure_labels(ctx, labels_for(_configured(ctx), _running(ctx)))
        except PermissionDenied:
            raise CommandError(_cannot_write(ctx, "create labels")) from None
        made = ", ".join(f"`{name}`" for name in created) or "none"
        await ctx.reply(
            f"@{ctx.actor}: created {len(created)} label{'s' if len(created) != 1 else ''} ({made}); "
            f"{len(kept)} existed already and were left as they are."
        )
        return
    try:
        done = await onboard(ctx, explicit=True, requested_by=ctx.actor)
    except StaleBranch:
        raise CommandError(
            f"the branch `{BRANCH}` already holds this proposal and adds nothing to the default branch (an "
            "earlier onboarding pull request was merged). Delete the branch, then run `/steward init` again."
        ) from None
    except PermissionDenied as exc:
        ctx.log.warning("cannot open the onboarding pull request", error=str(exc))
        raise CommandError(
            _cannot_write(ctx, f"push the `{BRANCH}` branch or open the pull request")
        ) from None
    await ctx.reply(_init_reply(done, ctx.actor))


def _cannot_write(ctx: EventContext, what: str) -> str:
    need = (
        "repository Administrator access"
        if ctx.event.forge == "gitea"
        else "write access (a GitHub App: *Contents* and *Pull requests: Read & write*)"
    )
    return (
        f"the forge refused to let `{ctx.me.login}` {what}. A repository admin needs to give it {need}, then "
        "run the command again."
    )
