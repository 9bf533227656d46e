"""One ``/refine`` for both refinement engines.

Bug reports are refined by the RA9 engine (``handlers.bug_refinement``); everything else on the backlog by
``handlers.backlog``. Both react to the ``refine`` label on their own and skip what is not theirs, using
:func:`is_bug_report`. The ``/refine`` command can only be registered once, so it lives here and routes:

* a bug report goes to ``handlers.bug_refinement.bot.refine_command(ctx)`` when that module exists (the RA9
  engine plugs in by defining it); until then the reply says bug refinement runs from the label;
* anything else goes to ``handlers.backlog.bot.refine_command(ctx, issue)``.

Engines are imported lazily, when a command arrives, so neither depends on the other.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Final

from bot.context import CommandContext, CommandError
from handlers import registry
from handlers.backlog.text import fold, words
from handlers.bug_refinement.document import BUG_SECTION_NAMES, STORY_SECTION_NAMES

__all__ = ["RA9_SECTIONS", "is_bug_report", "refine_command"]

# RA9's numbered sections, bug and story documents together (a story's section 7 is its dependencies).
RA9_SECTIONS: Final[dict[int, tuple[str, ...]]] = {
    n: tuple(dict.fromkeys((*BUG_SECTION_NAMES.get(n, ()), *STORY_SECTION_NAMES.get(n, ()))))
    for n in range(1, 10)
}
_NUMBERED_HEADING: Final = re.compile(r"^ {0,3}#{1,6}[ \t]+(\d)[.)][ \t]*(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
_NAMES: Final = {n: {" ".join(words(name)) for name in names} for n, names in RA9_SECTIONS.items()}


def is_bug_report(labels: Iterable[str], body: str, *, bug_label: str = "bug") -> bool:
    """A bug report: labelled ``bug_label``, or a body with at least two RA9 numbered section headings
    (``## 1. Vision`` / ``## 1. Visão`` … ``## 4. Acceptance Criteria``: number and name both match)."""
    if any(fold(label) == fold(bug_label) for label in labels):
        return True
    found: set[int] = set()
    for match in _NUMBERED_HEADING.finditer(body or ""):
        number = int(match.group(1))
        if " ".join(words(match.group(2))) in _NAMES.get(number, set()):
            found.add(number)
    return len(found) >= 2


BugRefine = Callable[[CommandContext], Awaitable[None]]


def _bug_engine() -> BugRefine | None:
    name = "handlers.bug_refinement.bot"
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


if "refine" not in registry.commands:
    registry.command(
        "refine",
        usage="refine",
        help="Refine this issue: an interview for backlog items (a spec at the end), RA9 for bug reports. "
        "On an approved refinement, starts a new spec version.",
        permission="author",
        on_pulls=False,
    )(refine_command)
