"""One ``/refine`` for both refinement engines.

Bug reports are refined by the RA9 engine (``handlers.bug_refinement``); everything else on the backlog by
``handlers.backlog``. Both react to the ``refine`` label on their own and skip what is not theirs, using
:func:`is_bug_report`. The ``/refine`` command can only be registered once, so it lives here and routes:

* a bug report goes to ``handlers.bug_refinement.api.refine_command(ctx)`` when that module exists (the RA9
  engine plugs in by defining it); until then the reply says bug refinement runs from the label;
* anything else goes to ``handlers.backlog.bot.refine_command(ctx, issue)``.

Engines are imported lazily, when a command arrives, so neither depends on the other.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable

from bot.commands.context import CommandContext, CommandError
from bot.commands.registry import Registry
from handlers.bug_refinement.api import RA9_SECTIONS, is_bug_report

__all__ = ["RA9_SECTIONS", "is_bug_report", "refine_command"]

BugRefine = Callable[[CommandContext], Awaitable[None]]


def _bug_engine() -> BugRefine | None:
    name = "handlers.bug_refinement.api"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name in (name, "handlers.bug_refinement"):
            return None
        raise
    handler = getattr(module, "refine_command", None)
    return handler if callable(handler) else None


def _switched_off(ctx: CommandContext, section: str) -> CommandError:
    where = ctx.config.path if ctx.config is not None and ctx.config.path else "its Steward configuration"
    what = "bug refinement (RA9)" if section == "bug_refinement" else "backlog refinement"
    return CommandError(
        f"{what} is switched off on this repository (`{section}.enabled: false` in `{where}`)."
    )


async def refine_command(ctx: CommandContext) -> None:
    issue = await ctx.forge.get_issue(ctx.repo, ctx.number)
    bug = is_bug_report(issue.labels, issue.body, bug_label=ctx.settings.backlog.bug_label)
    section = "bug_refinement" if bug else "backlog"
    if not ctx.enabled(section):
        raise _switched_off(ctx, section)
    if bug:
        engine = _bug_engine()
        if engine is None:
            await ctx.reply(
                "This is a bug report, so the bug-refinement engine (RA9) handles it, and it runs from the "
                f"`{ctx.settings.backlog.refine_label}` label: add the label to refine it."
            )
            return
        await engine(ctx)
        return
    from handlers.backlog import bot as backlog

    await backlog.refine_command(ctx, issue)


# This module's command; `handlers.build_registry()` includes it (importing registers nothing).
plugin = Registry()
plugin.command(
    "refine",
    usage="refine",
    help="Refine this issue: an interview for backlog items (a spec at the end), RA9 for bug reports. "
    "On an approved refinement, starts a new spec version.",
    permission="author",
    on_pulls=False,
)(refine_command)


def register(registry: Registry) -> None:
    registry.include(plugin)
