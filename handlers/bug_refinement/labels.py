"""The descriptions of Steward's refinement labels, in the repository's language (issue 34 §2: label
descriptions belong to the repository, so they follow its configured ``language``, while a verdict speaks its
report's).

A label Steward creates gets the description in that language. A label whose description is Steward's own in
another language is given the configured one: at once when a push to the default branch changes the
configuration file (``describe_labels``: one listing of the repository's labels, one write per label that
changes), and otherwise the next time Steward puts the label on an issue (``ensure_described``: no request in
the steady state, the forge adapter knowing the label already). A description someone wrote for the team —
anything Steward never writes — is left alone, as is a label that is not Steward's.
"""

from __future__ import annotations

from typing import Final

from bot.commands.context import EventContext
from bot.config.label_texts import LABEL_DESCRIPTIONS
from bot.config.repo_file import CONFIG_PATHS

__all__ = ["STATES", "describe_labels", "ensure_described", "touches_config", "wanted_descriptions"]

STATES: Final = ("pending", "needs-info", "needs-triage", "approved")
# Every description Steward writes, in every language: only these are ever replaced.
_STEWARDS: Final = frozenset(text for table in LABEL_DESCRIPTIONS.values() for text in table.values())


def wanted_descriptions(ctx: EventContext) -> dict[str, str]:
    """Steward's refinement labels here (folded name → the description in the repository's language)."""
    settings = ctx.settings.bug_refinement
    language = ctx.settings.language
    wanted = {
        settings.label_for(state).casefold(): settings.description_for(state, language) for state in STATES
    }
    wanted[settings.refine_label.casefold()] = LABEL_DESCRIPTIONS[language]["refine"]
    return wanted


async def ensure_described(ctx: EventContext, name: str, *, color: str, description: str) -> None:
    """The label ``name``, created with ``description`` when missing; an existing one whose description is
    Steward's in another language is given ``description``."""
    label = await ctx.forge.ensure_label(ctx.repo, name, color=color, description=description)
    if label.description != description and label.description in _STEWARDS:
        await ctx.forge.set_label_description(ctx.repo, name, description)


def touches_config(ctx: EventContext) -> bool:
    """Whether this push changed the repository's Steward configuration file."""
    wanted = CONFIG_PATHS["gitea" if ctx.event.forge == "gitea" else "github"]
    return any(path in ctx.event.paths for path in wanted)


async def describe_labels(ctx: EventContext) -> int:
    """After a push to the default branch that changed the configuration: Steward's refinement labels whose
    description is Steward's in another language get the configured one. Returns how many changed."""
    if not (ctx.event.ref or "").startswith("refs/heads/") or not touches_config(ctx):
        return 0
    repo = await ctx.forge.get_repo(ctx.repo)
    if ctx.event.ref != f"refs/heads/{repo.default_branch}":
        return 0
    wanted = wanted_descriptions(ctx)
    changed = 0
    for label in await ctx.forge.list_repo_labels(ctx.repo):
        want = wanted.get(label.name.casefold())
        if want is not None and label.description != want and label.description in _STEWARDS:
            await ctx.forge.set_label_description(ctx.repo, label.name, want)
            changed += 1
    return changed
