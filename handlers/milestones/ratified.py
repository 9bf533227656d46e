"""Ratifications: why a finding or a cycle item's audit was accepted as it is (issue 23 §2).

`/ratify <reason>` (``handlers.milestones.ratify``) labels the item and keeps a signed record on it — a
Steward comment of kind ``RECORD_KIND`` whose data names who ratified, when, the command comment and its
digest, the reason and the labels it applied. The record counts only as the command comment it is: the
comment is still in the item's thread, unedited since Steward recorded it (``comment_digest``), written by
the person the record names, who holds the `ratify` permission *now*. The record never carries authority on
its own.

What the gate makes of each ratifying label on an item (``read_ratifications``):

- a record that holds and names the label: **ratified**, with its reason (the dashboard lists it); the label
  counts as set by the ratifier (``with_ratifications``), whoever's account applied it;
- a record that names the label but no longer holds (the comment edited or deleted, the permission lost),
  or a record that does not verify (whatever it names): **void** — the label does not count, the item is
  judged as if it did not carry it;
- no record naming the label: **legacy** — a label applied before `/ratify` existed (or by hand); it counts
  as any passing label does (when whoever applied it holds `milestones.label_permission`: ``proof``), so
  upgrading reopens nothing, and the dashboard says no reason was recorded.

Removing the label ends a ratification: only labels an item carries are read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

from bot.context import EventContext
from bot.forge import Comment, Issue
from bot.neutralise import line
from bot.permissions import PermissionsUnreadable, check
from bot.settings import Permission
from bot.sticky import find
from handlers.milestones.gate import GateLabels, is_finding
from handlers.milestones.proof import GateProof
from handlers.milestones.provenance import LabelProof

RECORD_KIND: Final = "ratification"
RATIFY_NAME: Final = "ratify"
RATIFY_PERMISSION: Final[Permission] = "maintain"
MAX_REASON = 500
MAX_LISTED = 50

Status = Literal["ratified", "void", "legacy"]


def comment_digest(body: str) -> str:
    """What a recorded command comment must still hash to (line endings and trailing space aside)."""
    text = "\n".join(row.rstrip() for row in body.replace("\r\n", "\n").split("\n")).strip()
    return hashlib.sha256(text.encode()).hexdigest()


def ratify_permission(ctx: EventContext) -> Permission:
    """Who may `/ratify`: maintain+ unless the repository says otherwise (never below the `ratify` floor)."""
    return ctx.settings.permission(RATIFY_NAME, RATIFY_PERMISSION)


def ratifying_labels(item: Issue, labels: GateLabels) -> tuple[str, ...]:
    """The labels `/ratify` applies to ``item``: `ratified` on a friction or spec-gap finding, the audit's
    `audit:ratified` on an item labelled `cycle`; () when it is neither."""
    found: list[str] = []
    if is_finding(item, labels):
        found.append(labels.ratified)
    if item.has_label(labels.cycle):
        found.append(labels.audit_ratified)
    return tuple(found)


@dataclass(frozen=True)
class Ratification:
    """One ratifying label on one item, and what it is worth."""

    number: int
    label: str
    status: Status
    by: str = ""
    at: str = ""
    reason: str = ""
    url: str = ""


def record_data(*, by: str, at: str, reason: str, comment: Comment, labels: Sequence[str]) -> dict[str, Any]:
    """The data block of a ratification record."""
    return {
        "by": by,
        "at": at,
        "reason": reason[:MAX_REASON],
        "comment": comment.id,
        "digest": comment_digest(comment.body),
        "url": comment.html_url,
        "labels": [name.casefold() for name in labels],
    }


def _str(data: dict[str, Any], name: str) -> str:
    value = data.get(name)
    return value if isinstance(value, str) else ""


async def _holds(ctx: EventContext, data: dict[str, Any], comments: Sequence[Comment]) -> bool:
    """The record counts only as its command comment, written by whom it names, who may ratify now."""
    by, comment_id = _str(data, "by"), data.get("comment")
    said = next((c for c in comments if c.id == comment_id), None)
    if not by or said is None or said.author.casefold() != by.casefold():
        return False
    if comment_digest(said.body) != _str(data, "digest"):
        return False
    try:
        decision = await check(ctx.forge, ctx.repo, ratify_permission(ctx), actor=by, author="")
    except PermissionsUnreadable:
        # The forge will not say (Gitea, Steward not an admin): `/ratify` itself could not have run then. The
        # record is taken as it is — a label without any record counts as well (legacy), so refusing here
        # would only reopen milestones.
        ctx.log.warning("milestones: cannot read who may ratify; a ratification is taken as recorded")
        return True
    return decision.allowed


async def item_ratifications(ctx: EventContext, item: Issue, labels: GateLabels) -> list[Ratification]:
    """What each ratifying label ``item`` carries is worth (one read of its thread when it carries any)."""
    carried = [name for name in ratifying_labels(item, labels) if item.has_label(name)]
    if not carried:
        return []
    comments = await ctx.forge.list_comments(ctx.repo, item.number)
    record = await ctx.record(
        find(comments, bot_login=ctx.me.login, kind=RECORD_KIND, key=str(item.number)),
        RECORD_KIND,
        str(item.number),
    )
    data = record.trusted if isinstance(record.trusted, dict) else None
    named = {str(name) for name in (data or {}).get("labels", ()) if isinstance(name, str)}
    holds = data is not None and await _holds(ctx, data, comments)
    out: list[Ratification] = []
    for name in carried:
        key = name.casefold()
        if data is not None and key in named:
            status: Status = "ratified" if holds else "void"
            out.append(
                Ratification(
                    item.number,
                    name,
                    status,
                    _str(data, "by"),
                    _str(data, "at"),
                    _str(data, "reason"),
                    _str(data, "url"),
                )
            )
        elif record.broken:
            # A record that does not verify (edited, stripped of its block) is not trusted, nor is the label.
            out.append(Ratification(item.number, name, "void"))
        else:
            out.append(Ratification(item.number, name, "legacy"))
    return out


async def read_ratifications(
    ctx: EventContext, items: Sequence[Issue], labels: GateLabels
) -> tuple[Ratification, ...]:
    """Every ratifying label of the milestone's items, in item order."""
    found: list[Ratification] = []
    for item in sorted(items, key=lambda i: i.number):
        found.extend(await item_ratifications(ctx, item, labels))
    return tuple(found)


def without_void(items: Sequence[Issue], ratifications: Sequence[Ratification]) -> list[Issue]:
    """The items as the gate sees them: a void ratification's label does not count."""
    void: dict[int, set[str]] = {}
    for r in ratifications:
        if r.status == "void":
            void.setdefault(r.number, set()).add(r.label.casefold())
    if not void:
        return list(items)
    return [
        replace(item, labels=tuple(n for n in item.labels if n.casefold() not in void[item.number]))
        if item.number in void
        else item
        for item in items
    ]


def with_ratifications(proof: GateProof, ratifications: Sequence[Ratification]) -> GateProof:
    """The gate's label proofs with each ratification that holds counted as its ratifier's: Steward applied
    the label for them (its own label events name no one), and the record is the proof of who set it — a
    person who may ratify now (`commands.ratify`). Legacy labels keep the proof of who applied them."""
    held = {(r.number, r.label.casefold()): r for r in ratifications if r.status == "ratified"}
    if not held:
        return proof
    labels = {
        number: tuple(
            LabelProof(p.label, held[(number, p.label.casefold())].by, True)
            if (number, p.label.casefold()) in held
            else p
            for p in found
        )
        for number, found in proof.labels.items()
    }
    uncounted = {
        number: {name: why for name, why in found.items() if (number, name) not in held}
        for number, found in proof.facts.uncounted.items()
    }
    facts = replace(proof.facts, uncounted={number: found for number, found in uncounted.items() if found})
    return GateProof(facts, labels)


def ratification_lines(ratifications: Sequence[Ratification], prefix: str) -> list[str]:
    """The dashboard's "Ratifications" section (empty when there are none). Reasons are people's text."""
    if not ratifications:
        return []
    out = ["", "### Ratifications", ""]
    for r in ratifications[:MAX_LISTED]:
        head = f"- #{r.number} `{r.label}`"
        if r.status == "ratified":
            link = f" ([the command]({r.url}))" if r.url else ""
            out.append(f"{head}: ratified by @{r.by} at {r.at}: “{line(r.reason, 300)}”{link}")
        elif r.status == "legacy":
            out.append(f"{head}: legacy ratification (no reason recorded): `/{prefix} ratify <reason>` on it")
        else:
            out.append(
                f"{head}: **does not count** — its `/{prefix} ratify` comment was edited or deleted, or "
                f"who ran it may no longer ratify: run `/{prefix} ratify <reason>` on it again"
            )
    if len(ratifications) > MAX_LISTED:
        out.append(f"- … and {len(ratifications) - MAX_LISTED} more")
    return out
