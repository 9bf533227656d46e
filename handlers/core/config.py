"""The repository's configuration file, as people meet it in the forge.

- ``/steward config`` (anyone) answers with the effective settings and where each comes from.
- A push that changes the file gets a ``steward/config`` commit status on its head: failure with the errors
  when the file is invalid (so a maintainer sees it before merging), success when it is valid. A push to the
  default branch also drops the cached settings.
- While the file on the default branch is invalid, Steward keeps the last valid settings (or the defaults)
  and says so: in one issue, "Steward configuration error", kept up to date, kept pinned while it is open
  (when the repository has room for another pin) and unpinned and closed when the file is fixed, and once in
  the first thread that triggers it — never a comment per event.

Pure rendering at the top; the few forge effects below.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from bot.commands.context import CommandContext, EventContext
from bot.commands.registry import Registry
from bot.config import shadow
from bot.config.repo_file import CONFIG_PATHS, ConfigError, dump_value, parse, sources
from bot.config.repo_settings import RepoSettings
from bot.forge import Issue, NotFound, PermissionDenied, StatusState
from bot.forge.own_results import set_own_result
from bot.records import neutralise
from handlers.bugfix.api import read_requirement, requirement_lines
from handlers.triage.api import hold_lines

# This module's commands and events; `handlers.build_registry()` includes them (importing registers nothing).
plugin = Registry()


def register(registry: Registry) -> None:
    registry.include(plugin)


ERROR_TITLE = "Steward configuration error"
ERROR_LABEL = "steward:config-error"
ERROR_MARKER = "<!-- steward:config-error -->"
STATUS_CONTEXT = "steward/config"
MAX_ERRORS_SHOWN = 30

# --- pure rules ---------------------------------------------------------------------------------------------


def error_lines(errors: Sequence[ConfigError]) -> list[str]:
    shown = [
        f"- {neutralise.code(e.path or 'file')}{f' (line {e.line})' if e.line else ''}: "
        f"{neutralise.line(e.message, 500)}"
        for e in errors
    ]
    if len(shown) > MAX_ERRORS_SHOWN:
        shown = [*shown[: MAX_ERRORS_SHOWN - 1], f"- … and {len(errors) - MAX_ERRORS_SHOWN + 1} more"]
    return shown


def status_description(errors: Sequence[ConfigError]) -> str:
    """At most 140 characters (GitHub refuses more)."""
    if not errors:
        return "The Steward configuration is valid."
    text = f"{len(errors)} error{'s' if len(errors) != 1 else ''} in the Steward configuration: {errors[0]}"
    return neutralise.line(text, 140)


def _until_fixed(*, stale: bool, waiting: bool) -> str:
    if waiting:
        # DESIGN §3.15: a file that never validated is no invitation yet.
        return (
            "Until then Steward stays switched off here: a configuration file switches it on once it "
            "validates."
        )
    keeps = "the file's last valid settings" if stale else "its defaults"
    return f"Until then Steward keeps working with {keeps}."


def error_issue_body(
    path: str, errors: Sequence[ConfigError], *, pushed_by: str = "", stale: bool, waiting: bool = False
) -> str:
    who = f" @{pushed_by} pushed a version that does not validate." if pushed_by else ""
    fix = f"**Next step:** a maintainer fixes `{path}` on the default branch.{who}"
    return "\n".join(
        [
            ERROR_MARKER,
            "## Steward cannot read this repository's configuration",
            "",
            f"{fix} {_until_fixed(stale=stale, waiting=waiting)} `steward check-config {path}` checks a "
            "file before it is pushed.",
            "",
            "### What is wrong",
            "",
            *error_lines(errors),
            "",
            "I close this issue when the file on the default branch is valid again.",
        ]
    )


def thread_notice(path: str, error_issue: Issue, *, stale: bool, waiting: bool = False) -> str:
    keeps = "its last valid settings" if stale else "Steward's defaults"
    runs = "Steward stays switched off here" if waiting else f"this repository runs on {keeps}"
    return (
        f"Heads-up: `{path}` on the default branch is not a valid Steward configuration, so {runs} "
        f"until a maintainer fixes it — see #{error_issue.number} for what is wrong."
    )


def _code(text: str) -> str:
    return neutralise.code(text, in_table=True)


def render_config(config: RepoSettings, prefix: str = "steward") -> str:
    rows = sources(config.overrides, config.as_configured)
    from_file = [r for r in rows if r[2] == "file"]
    where = f"`{config.path}`" if config.path else "no configuration file"
    if config.org:
        org_repo, _, org_path = config.org.partition(":")
        where += f" laid over the organisation's defaults (`{org_path}` in {neutralise.code(org_repo, 120)})"
    lines = ["**Steward's settings on this repository**", ""]
    if config.waiting:
        lines += [
            "Steward is **not switched on** here yet: nothing acts until a valid configuration file is on "
            f"the default branch (`/{prefix} init` proposes one in a pull request). Below is what would "
            "apply once it is.",
            "",
        ]
    lines += [
        f"{len(from_file)} setting{'s' if len(from_file) != 1 else ''} from {where}; everything else is "
        "Steward's default."
        + (" The file is **invalid**, so these are its last valid settings." if config.stale else ""),
    ]
    if config.errors:
        lines += ["", "**The configuration file does not validate:**", "", *error_lines(config.errors)]
    if from_file:
        lines += ["", "| Setting | Value |", "|---|---|"]
        lines += [f"| {_code(path)} | {_code(dump_value(value))} |" for path, value, _ in from_file]
    lines += ["", "<details><summary>Every setting, and where it comes from</summary>", ""]
    lines += ["| Setting | Value | From |", "|---|---|---|"]
    lines += [f"| `{path}` | {_code(dump_value(value))} | {origin} |" for path, value, origin in rows]
    lines += ["", "</details>"]
    return "\n".join(lines)


# --- effects -----------------------------------------------------------------------------------------------


async def find_error_issue(ctx: EventContext) -> Issue | None:
    for issue in await ctx.forge.list_issues(ctx.repo, labels=(ERROR_LABEL,), state="open"):
        if issue.title == ERROR_TITLE and issue.author.casefold() == ctx.me.login.casefold():
            return issue
    return None


async def ensure_error_issue(ctx: EventContext, config: RepoSettings, *, pushed_by: str = "") -> Issue:
    """The open error issue, made or brought up to date (callers pin it: ``keep_pinned``). Jobs that would
    make it take turns, so two events at once never open two."""
    async with ctx.holding_repo("config-error-issue"):
        return await _ensure_error_issue(ctx, config, pushed_by=pushed_by)


async def _ensure_error_issue(ctx: EventContext, config: RepoSettings, *, pushed_by: str) -> Issue:
    body = error_issue_body(
        config.path, config.errors, pushed_by=pushed_by, stale=config.stale, waiting=config.waiting
    )
    found = await find_error_issue(ctx)
    if found is None:
        await ctx.forge.ensure_label(
            ctx.repo, ERROR_LABEL, color="b60205", description="Steward: the configuration file is invalid"
        )
        return await ctx.forge.create_issue(ctx.repo, ERROR_TITLE, body, labels=(ERROR_LABEL,))
    if found.body.strip() != body.strip() and (pushed_by or error_lines(config.errors)[0] not in found.body):
        return await ctx.forge.edit_issue(ctx.repo, found.number, body=body)
    return found


def _cannot_pin(ctx: EventContext, what: str, exc: PermissionDenied) -> None:
    ctx.log.warning(
        f"cannot {what} the configuration error issue: {ctx.me.login} may not (GitHub: write access; "
        "Gitea: repository Administrator)",
        repo=ctx.repo.full_name,
        error=str(exc),
    )


async def keep_pinned(ctx: EventContext, issue: Issue) -> None:
    """Pin the error issue (nothing is written when it is pinned already). A repository whose pins are full,
    or a forge without pins, leaves it unpinned (the forge adapter logs why, once), and so does a bot that
    may not pin: the issue's body never says it is pinned."""
    try:
        await ctx.forge.pin_issue(ctx.repo, issue.number)
    except PermissionDenied as exc:
        _cannot_pin(ctx, "pin", exc)


async def close_error_issue(ctx: EventContext, sha: str) -> None:
    """Say why, unpin (a closed issue keeps its pin, and its place under the repository's limit, on both
    forges), close."""
    found = await find_error_issue(ctx)
    if found is None:
        return
    await ctx.upsert_sticky(
        "config-fixed",
        sha[:12] or "fixed",
        f"The configuration is valid again{f' as of {sha[:12]}' if sha else ''}; closing.",
        number=found.number,
    )
    try:
        await ctx.forge.unpin_issue(ctx.repo, found.number)
    except PermissionDenied as exc:
        _cannot_pin(ctx, "unpin", exc)
    await ctx.forge.edit_issue(ctx.repo, found.number, state="closed")


@plugin.command(
    "config",
    usage="config",
    help="Show this repository's Steward settings and where each comes from (its file or the defaults).",
    permission="anyone",
    uninvited=True,
)
async def config_command(ctx: CommandContext) -> None:
    config = ctx.config if ctx.config is not None else RepoSettings(ctx.settings)
    signed = (
        f"\n\nSteward signs the records it keeps in comments with the key `{ctx.keyring.fingerprint}` "
        "(`steward verify OWNER/REPO#N` checks them with the public key)."
    )
    enforced = ""
    bugfix = config.as_configured.bugfix.enabled and "bugfix" in ctx.registry.commands
    hold = config.as_configured.triage.enabled and "hold" in ctx.registry.commands
    if bugfix or hold:
        repo = await ctx.forge.get_repo(ctx.repo)
        found, branch = await read_requirement(ctx.forge, ctx.repo, repo.default_branch, ctx.event.forge)
        if bugfix:
            enforced = "\n\n" + "\n".join(requirement_lines(found, ctx.event.forge, repo.html_url))
        if hold:
            refused = found.reason if branch is None else ""
            enforced += "\n\n" + "\n".join(hold_lines(repo.default_branch, branch, ctx.event.forge, refused))
    await ctx.reply(render_config(config, ctx.prefix) + await _shadow_lines(ctx) + enforced + signed)


async def _shadow_lines(ctx: CommandContext) -> str:
    """In shadow mode: that Steward writes nothing here, and the last things it would have done."""
    if ctx.settings.mode != "shadow":
        return ""
    head = (
        "\n\n**Shadow mode** (`mode: shadow`): Steward works out what it would do here and writes nothing — "
        "no comment, reaction, label, status, branch or pull request — except its answers to "
        f"`/{ctx.prefix} config`, `help` and `ping`. Set `mode: live` to let it act."
    )
    found = await shadow.recent(ctx.memo.redis, ctx.event.forge, ctx.repo) if ctx.memo is not None else []
    if not found:
        return head + "\n\nIt has had nothing to do here yet."
    shown = "\n".join(f"- {neutralise.line(line, 300)}" for line in found)
    return f"{head}\n\nThe last {len(found)} things it would have done, newest first:\n\n{shown}"


def _touched(paths: Sequence[str], kind: str) -> list[str]:
    wanted = CONFIG_PATHS["gitea" if kind == "gitea" else "github"]
    return [p for p in wanted if p in paths]


@plugin.on("push", checks="the Steward configuration file")
async def on_push(ctx: EventContext) -> None:
    """A push that touches the configuration file: a commit status on its head, and on the default branch
    the cached settings dropped and the error issue opened, updated or closed."""
    event = ctx.event
    if (
        not event.ref
        or not event.ref.startswith("refs/heads/")
        or not event.after
        or set(event.after) == {"0"}
    ):
        return
    touched = _touched(event.paths, event.forge)
    if not touched:
        return
    branch = event.ref.removeprefix("refs/heads/")
    found = None
    for path in CONFIG_PATHS[event.forge]:
        found = await ctx.forge.read_file(ctx.repo, path, ref=event.after)
        if found is not None:
            break
    errors = parse(found.content, ctx.registry.configurable).errors if found is not None else ()
    state: StatusState = "failure" if errors else "success"
    await set_own_result(ctx.forge, ctx.repo, event.after, STATUS_CONTEXT, state, status_description(errors))
    repo = await ctx.forge.get_repo(ctx.repo)
    if branch != repo.default_branch:
        return
    if errors:
        config = ctx.config  # read after this push: it says whether a last valid version is in force
        if config is None or not config.errors:
            config = RepoSettings(
                ctx.settings,
                path=found.path if found else touched[0],
                sha=found.sha if found else "",
                errors=errors,
                waiting=config.waiting if config is not None else False,
            )
        await keep_pinned(ctx, await ensure_error_issue(ctx, config, pushed_by=event.sender))
    else:
        await close_error_issue(ctx, event.after)


@plugin.on("issues", checks="whether the Steward configuration is valid")
@plugin.on("issue_comment", "created")
async def on_thread(ctx: EventContext) -> None:
    """While the configuration on the default branch is invalid, say so once: in the first thread that
    triggers Steward, and in the error issue."""
    config = ctx.config
    if config is None or not config.errors or ctx.event.issue is None:
        return
    if not await ctx.once(f"config-announced:{config.sha}"):
        return
    error_issue = await ensure_error_issue(ctx, config)
    if ctx.event.issue.number != error_issue.number:
        with contextlib.suppress(NotFound):
            await ctx.upsert_sticky(
                "config-notice",
                config.sha[:12] or "file",
                thread_notice(config.path, error_issue, stale=config.stale, waiting=config.waiting),
            )
    # After the notice: the notice is said once (above), the pin is kept by every run.
    await keep_pinned(ctx, error_issue)


@plugin.reconcile("config", checks="the configuration error issue")
async def reconcile_config(ctx: EventContext) -> None:
    """Catch-up: an error issue left open although the file is valid again is closed; an invalid file
    without its error issue gets one."""
    config = ctx.config
    if config is None:
        return
    if config.errors:
        await keep_pinned(ctx, await ensure_error_issue(ctx, config))
    else:
        await close_error_issue(ctx, config.sha)
