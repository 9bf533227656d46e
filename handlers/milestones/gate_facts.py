"""What the gate needs from the forge beyond the items' labels (``gate.Facts``): who applied each passing
label and whether they hold `milestones.label_permission` now, and decision provenance's answer on each item's
design forks (``handlers.forks.api``, never the `forks:open` label).

Reads, per evaluation: one history read per item that carries a passing label (GitHub
``GET /issues/{n}/events``, Gitea ``GET /issues/{n}/timeline``: its label and milestone changes in one
list), one permission read per distinct person who applied one, and the forks juror's reads for the items
that list forks or carry a forks label. Items with neither cost nothing more than the item list.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.commands.context import EventContext
from bot.commands.permissions import PermissionsUnreadable, check, who_may
from bot.config.settings import Permission
from bot.forge import Issue, Milestone, repo_key
from handlers.forks.api import unresolved_forks
from handlers.milestones.gate import Facts, GateLabels
from handlers.milestones.provenance import (
    LabelProof,
    applying,
    carried,
    in_milestone,
    look,
    look_titles,
    named_then,
    passing_labels,
    proof,
)
from handlers.milestones.state import LabelNames


def label_permission(ctx: EventContext) -> Permission:
    return ctx.settings.milestones.label_permission


def needs_words(ctx: EventContext) -> str:
    """Who may set a passing label, in a reader's words ("people with maintain access or more")."""
    return who_may(label_permission(ctx), forge=ctx.event.forge)


def permission_word(ctx: EventContext) -> str:
    """The access a passing label needs, as this forge names it (Gitea has no maintain: its admin)."""
    permission = label_permission(ctx)
    if ctx.event.forge == "gitea":
        return {"triage": "write", "maintain": "admin"}.get(permission, permission)
    return permission


@dataclass
class Allowed:
    """Whether people hold the label permission now, each asked of the forge once (None: it would not say)."""

    ctx: EventContext
    known: dict[str, bool | None] = field(default_factory=dict)

    async def __call__(self, login: str) -> bool | None:
        key = login.casefold()
        if key not in self.known:
            try:
                decision = await check(
                    self.ctx.forge, self.ctx.repo, label_permission(self.ctx), actor=login, author=""
                )
            except PermissionsUnreadable:
                self.known[key] = None
            else:
                self.known[key] = decision.allowed
        return self.known[key]


@dataclass(frozen=True)
class GateProof:
    facts: Facts
    # Per item, its passing labels with who applied them and whether they count.
    labels: dict[int, tuple[LabelProof, ...]]


ELSEWHERE = (
    "it was put on while the scenario was not in this milestone: a pass counts in the milestone it was "
    "earned in — run the scenario again and put the label on again"
)


RENAMED = (
    "Gitea shows a renamed label under its new name, and this one took that name after it was put on (or "
    "Steward cannot tell when it did): someone who may set it takes it off and puts it on again"
)


async def look_at_names(
    ctx: EventContext,
    labels: GateLabels,
    known: LabelNames | None,
    *,
    trusted: bool,
    now: str,
    milestone: Milestone,
) -> LabelNames:
    """On Gitea, which label carries each passing name now (one read of the repository's labels), against
    what the dashboard's record remembers (``provenance.look``). On GitHub, whose label events keep the name
    a label had, the milestone's titles (``provenance.look_titles``): its events name it by title only."""
    if ctx.event.forge != "gitea":
        earlier = known.titles if known is not None else ()
        if not earlier:
            remembered = await _remembered_names(ctx, milestone.key)
            if remembered is not None and remembered.titles:
                earlier, trusted = remembered.titles, True
        seen = LabelNames({}, 0, look_titles(earlier, milestone.title, now, trusted=trusted))
        await _remember_names(ctx, seen, milestone.key)
        return seen
    passing = {name.casefold() for name in passing_labels(labels)}
    listing: dict[str, int] = {}
    top = 0
    for label in await ctx.forge.list_repo_labels(ctx.repo):
        top = max(top, label.id)
        if label.name.casefold() in passing:
            listing.setdefault(label.name.casefold(), label.id)
    if known is None:
        # A new dashboard, or one re-derived: what Steward itself last saw in this repository (kept in
        # Redis, which only Steward writes) is better than trusting the names as they are now — or, for a
        # re-derived record, than trusting none (a writer editing a dashboard must not void every pass).
        remembered = await _remembered_names(ctx)
        if remembered is not None:
            known, trusted = remembered, True
    seen = look(known, listing, top, now, trusted=trusted)
    await _remember_names(ctx, seen)
    return seen


NAMES_TTL = 400 * 86_400


def _names_key(ctx: EventContext, milestone: int | None) -> str:
    """Label names are the repository's (Gitea); titles are a milestone's (GitHub)."""
    raw = repo_key(ctx.event.forge, ctx.repo) + (f"#{milestone}" if milestone is not None else "")
    return "steward:milestones:label-names:" + hashlib.sha256(raw.encode()).hexdigest()[:32]


async def _remember_names(ctx: EventContext, seen: LabelNames, milestone: int | None = None) -> None:
    if ctx.memo is not None:
        await ctx.memo.redis.set(_names_key(ctx, milestone), json.dumps(seen.to_json()), ex=NAMES_TTL)


async def _remembered_names(ctx: EventContext, milestone: int | None = None) -> LabelNames | None:
    if ctx.memo is None:
        return None
    raw = await ctx.memo.redis.get(_names_key(ctx, milestone))
    try:
        return LabelNames.from_json(json.loads(raw)) if raw else None
    except ValueError:
        return None


async def label_proofs(
    ctx: EventContext,
    item: Issue,
    labels: GateLabels,
    allowed: Allowed,
    milestone: Milestone,
    names: LabelNames | None = None,
) -> tuple[LabelProof, ...]:
    on_item = carried(item.labels, labels)
    if not on_item:
        return ()
    history = await ctx.forge.issue_history(ctx.repo, item.number)
    needs = needs_words(ctx)
    out = []
    for name in on_item:
        event = applying(history.labels, name, ctx.me.login)
        by = event.actor if event is not None else None
        found = proof(name, by, await allowed(by) if by else False, needs)
        gitea = ctx.event.forge == "gitea"
        if (
            gitea
            and found.counts
            and event is not None
            and names is not None
            and not named_then(names, name, event)
        ):
            found = LabelProof(name, by, False, RENAMED)
        titles = names.titles if names is not None and not gitea else ()
        if (
            found.counts
            and event is not None
            and name.casefold() == labels.fieldtest_pass.casefold()
            and not in_milestone(history.milestones, event, milestone.key, milestone.title, titles)
        ):
            found = LabelProof(name, by, False, ELSEWHERE)
        out.append(found)
    return tuple(out)


async def open_forks(ctx: EventContext, item: Issue) -> str | None:
    """What is unresolved in the item's design forks, or None."""
    try:
        ids = await unresolved_forks(ctx, ctx.repo, item.number, issue=item)
    except PermissionsUnreadable:
        return (
            "its decisions cannot be checked: the forge shows who may decide only to a repository admin, "
            "and Steward's account is not one"
        )
    return ", ".join(ids) if ids else None


async def gate_proof(
    ctx: EventContext,
    items: Sequence[Issue],
    labels: GateLabels,
    milestone: Milestone,
    names: LabelNames | None = None,
) -> GateProof:
    """The gate's facts over ``items`` of ``milestone``, read from the forge now (see the module's note for
    the cost). ``names``: on Gitea, which label carries each passing name, since when (``look_at_names``)."""
    allowed = Allowed(ctx)
    proofs: dict[int, tuple[LabelProof, ...]] = {}
    forks: dict[int, str] = {}
    for item in items:
        found = await label_proofs(ctx, item, labels, allowed, milestone, names)
        if found:
            proofs[item.number] = found
        unresolved = await open_forks(ctx, item)
        if unresolved is not None:
            forks[item.number] = unresolved
    uncounted = {
        number: {p.label.casefold(): p.why for p in found if not p.counts} for number, found in proofs.items()
    }
    facts = Facts({number: why for number, why in uncounted.items() if why}, forks)
    return GateProof(facts, proofs)
