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
  a void record (below), or a record that does not verify and could not be rewritten: **void** — the label
  does not count, the item is judged as if it did not carry it;
- no record naming the label: **legacy** — a label applied before `/ratify` existed (or by hand); it counts
  as any passing label does (when whoever applied it holds `milestones.label_permission`: ``proof``), so
  upgrading reopens nothing, and the dashboard says no reason was recorded.

Removing the label ends a ratification: only labels an item carries are read.

A record that does not verify (its block edited or removed, an older version pasted back), or one deleted
while Steward was looking (the `issue_comment.deleted` delivery of it), is **rebuilt** from its source
(``rebuild``): the latest `/ratify <reason>` comment in the item's thread that still holds — never edited
since it was written (its ``updated_at`` is its ``created_at``), by a person who may ratify *now*, with a
reason. Steward rewrites the record signed from that comment and posts one note in the thread saying who
changed the record (the delivery's ``sender``), or that it could not be verified. When no command comment
holds, it writes a signed **void** record instead (the labels do not count) and the note says the record
could not be rebuilt. A record deleted while no delivery said so is rebuilt at the next refresh that finds
the label without a record and a `/ratify` comment that holds.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Final, Literal

from bot.commands.context import EventContext
from bot.commands.grammar import could_hold_command, parse_cached
from bot.commands.permissions import PermissionsUnreadable, check
from bot.config.settings import Permission
from bot.forge import Comment, Issue
from bot.records import sticky
from bot.records.neutralise import line
from bot.records.sticky import find
from handlers.milestones.gate import GateLabels, is_finding
from handlers.milestones.gate_facts import GateProof
from handlers.milestones.provenance import LabelProof

RECORD_KIND: Final = "ratification"
RATIFY_NAME: Final = "ratify"
RATIFY_PERMISSION: Final[Permission] = "maintain"
MAX_REASON = 500
MAX_LISTED = 50
# How many `/ratify` comments a rebuild asks the forge about (newest first): each costs a permission read.
MAX_CANDIDATES = 5
NOTE_KIND: Final = "record-rebuilt"

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


def reason_of(text: str) -> str:
    """A `/ratify` reason as recorded: one line, bounded."""
    return " ".join(text.split())[:MAX_REASON]


def _names(labels: Sequence[str]) -> str:
    return " and ".join(f"`{name}`" for name in labels)


def record_text(prefix: str, actor: str, reason: str, url: str, labels: Sequence[str]) -> str:
    """The visible text of a ratification record (the record is its data block)."""
    return (
        f"Ratified by {actor}, labelled {_names(labels)}: “{line(reason, MAX_REASON)}”. The milestone's "
        f"dashboard lists it with this reason. Nothing to do.\n\nIt counts as [the `/{prefix} ratify` "
        f"comment]({url}): editing or deleting that comment, removing the label, or {actor} losing the "
        "permission to ratify ends it."
    )


def void_text(prefix: str, labels: Sequence[str]) -> str:
    return (
        f"{_names(labels)} on this item does not count until someone who may ratify runs `/{prefix} ratify "
        f"<reason>` here again. Steward's record of the ratification was changed or deleted, and no "
        f"`/{prefix} ratify` comment in this thread still holds (unedited, by someone who may ratify now), "
        "so it could not be rebuilt."
    )


def _instant(stamp: str) -> datetime | None:
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None


def unedited(comment: Comment) -> bool:
    """Whether the forge says ``comment`` was never edited since it was written (``updated_at`` is its
    ``created_at``; Gitea may write its server's offset, so compared as instants)."""
    if not comment.updated_at or comment.updated_at == comment.created_at:
        return True
    updated, created = _instant(comment.updated_at), _instant(comment.created_at)
    return updated is not None and created is not None and updated <= created


@dataclass(frozen=True)
class Source:
    """The `/ratify` comment a record is rebuilt from, and its reason."""

    comment: Comment
    reason: str


async def command_source(ctx: EventContext, comments: Sequence[Comment]) -> Source | None:
    """The newest `/ratify <reason>` comment in the thread that still holds: never edited, with a reason, by
    someone who may ratify now. At most ``MAX_CANDIDATES`` permission reads; None when none holds."""
    me, asked = ctx.me.login.casefold(), 0
    for comment in sorted(comments, key=lambda c: (c.created_at, c.id), reverse=True):
        if comment.author.casefold() == me or not could_hold_command(
            comment.body, known=(RATIFY_NAME,), prefix=ctx.prefix
        ):
            continue
        commands = parse_cached(
            comment.body, known=(RATIFY_NAME,), prefix=ctx.prefix, key=(comment.id, comment.updated_at)
        )
        reason = next((reason_of(c.text) for c in commands if c.name == RATIFY_NAME), "")
        if not reason or not unedited(comment):
            continue
        if asked >= MAX_CANDIDATES:
            return None
        asked += 1
        try:
            required = ratify_permission(ctx)
            decision = await check(ctx.forge, ctx.repo, required, actor=comment.author, author="")
        except PermissionsUnreadable:
            return None  # rebuilding needs a yes from the forge
        if decision.allowed:
            return Source(comment, reason)
    return None


def deleted_by(ctx: EventContext, number: int) -> str | None:
    """This event is the deletion of Steward's ratification record on item ``number``: who deleted it ("" when
    the forge did not say, or it was Steward); None otherwise."""
    event, comment = ctx.event, ctx.event.comment
    if event.name != "issue_comment" or event.action != "deleted" or comment is None:
        return None
    me = ctx.me.login.casefold()
    if comment.author.casefold() != me or sticky.marker_of(comment.body) != (RECORD_KIND, str(number)):
        return None
    return "" if not event.sender or event.sender.casefold() == me else event.sender


@dataclass(frozen=True)
class Read:
    """An item's thread and its ratification record, as read once."""

    comments: list[Comment]
    found: Comment | None
    record: sticky.Record


async def _read(ctx: EventContext, number: int) -> Read:
    comments = await ctx.forge.list_comments(ctx.repo, number)
    found = find(comments, bot_login=ctx.me.login, kind=RECORD_KIND, key=str(number))
    return Read(comments, found, await ctx.record(found, RECORD_KIND, str(number)))


async def _note(
    ctx: EventContext, number: int, read: Read, link: str, source: Source | None, labels: Sequence[str]
) -> None:
    """The one note in the thread (keyed by the broken version, or the deletion: a replay writes nothing)."""
    record = read.record
    if record.broken and record.quiet and source is not None and ctx.editor_of(record) is None:
        # Legacy, or signed by a key Steward no longer holds: rebuilt from the `/ratify` comment, quietly.
        ctx.log.info("record re-derived", kind=RECORD_KIND, outcome=record.outcome)
        return
    if record.broken:
        editor = ctx.editor_of(record)
        what = f"was changed by @{editor}" if editor else "could not be verified"
        if record.outcome == "replayed":
            what = f"was replaced by an older version{f' by @{editor}' if editor else ''}"
        place = record.place.ident if record.place else ""
        key = f"{place}\0{record.outcome}\0{record.seq}\0{record.shown!r}"
    else:
        editor = deleted_by(ctx, number) or ""
        what = f"was deleted by @{editor}" if editor else "was deleted"
        key = f"deleted\0{link}"
    if source is not None:
        text = (
            f"Steward's record in {link} {what}; it was rebuilt from [the `/{ctx.prefix} ratify` comment]"
            f"({source.comment.html_url}). Nothing to do."
        )
    else:
        text = (
            f"{_names(labels)} does not count until someone who may ratify runs `/{ctx.prefix} ratify "
            f"<reason>` here again: Steward's record in {link} {what}, and no `/{ctx.prefix} ratify` comment "
            "here still holds (unedited, by someone who may ratify now), so it could not be rebuilt."
        )
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    ctx.log.warning("record rebuilt", kind=RECORD_KIND, outcome=record.outcome, editor=editor or None)
    await ctx.upsert_sticky(NOTE_KIND, digest, text, number=number, comments=read.comments)


def _wanted(ctx: EventContext, number: int, read: Read, source: Source | None) -> bool:
    """Whether the record must be rewritten: it does not verify, or it is gone and either a `/ratify`
    comment still holds or this very event is its deletion. A label without any record and no `/ratify`
    comment that holds is a legacy ratification, left as it is."""
    if read.record.broken:
        return True
    return read.found is None and (source is not None or deleted_by(ctx, number) is not None)


async def _rebuild(
    ctx: EventContext, item: Issue, carried: Sequence[str], read: Read, source: Source | None
) -> dict[str, Any]:
    """Rewrite the record from the `/ratify` comment that holds (void when none does), signed, and note it
    once in the thread."""
    labels = [name.casefold() for name in carried]
    if source is not None:
        data = record_data(
            by=source.comment.author,
            at=source.comment.created_at,
            reason=source.reason,
            comment=source.comment,
            labels=carried,
        )
        text = record_text(ctx.prefix, source.comment.author, source.reason, source.comment.html_url, carried)
    else:
        data = {"by": "", "at": "", "reason": "", "comment": 0, "digest": "", "url": "", "labels": labels}
        data["void"] = True
        text = void_text(ctx.prefix, carried)
    if read.found is not None:
        # Noted first: should the job stop before the record is rewritten, its replay finds the note (keyed by
        # the broken version) and writes it no second time.
        await _note(ctx, item.number, read, read.found.html_url or "this thread", source, carried)
    written = await ctx.upsert_sticky(
        RECORD_KIND,
        str(item.number),
        text,
        data=data,
        number=item.number,
        comments=read.comments,
        pin_text=True,  # what a reader sees (who, why) is covered too
    )
    if read.found is None:  # deleted: the note links the new record
        await _note(ctx, item.number, read, written.comment.html_url or "this thread", source, carried)
    return data


async def item_ratifications(ctx: EventContext, item: Issue, labels: GateLabels) -> list[Ratification]:
    """What each ratifying label ``item`` carries is worth (one read of its thread when it carries any; a
    second, under the item's lock, only when its record must be rebuilt — ``_rebuild``)."""
    carried = [name for name in ratifying_labels(item, labels) if item.has_label(name)]
    if not carried:
        return []
    read = await _read(ctx, item.number)
    rebuilt: dict[str, Any] | None = None
    source = await command_source(ctx, read.comments) if read.record.broken or read.found is None else None
    if _wanted(ctx, item.number, read, source):
        held = ctx.event.issue is not None and ctx.event.issue.number == item.number
        async with ctx.holding(item.number):
            if not held:  # another job may have written the record since: read again, under the lock
                read = await _read(ctx, item.number)
                source = await command_source(ctx, read.comments)
            if _wanted(ctx, item.number, read, source):
                rebuilt = await _rebuild(ctx, item, carried, read, source)
    record = read.record
    data = rebuilt if rebuilt is not None else record.trusted if isinstance(record.trusted, dict) else None
    named = {str(name) for name in (data or {}).get("labels", ()) if isinstance(name, str)}
    if rebuilt is not None:
        holds = not rebuilt.get("void")  # its source was just checked (``command_source``)
    else:
        holds = data is not None and await _holds(ctx, data, read.comments)
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
        elif record.broken and rebuilt is None:
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
