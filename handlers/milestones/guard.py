"""Putting back the gate's passing labels changed by someone without `milestones.label_permission` (Prow's
label plugin does the same for its restricted labels).

On a label event on an item of a milestone, by anyone but Steward: when the sender lacks the permission,
Steward reads the item's label events and undoes the sender's own latest change of each passing label that
still stands — a label they applied is removed; one they removed is put back when the person who had applied
it holds the permission (else it did not count, and its removal changes nothing) — and answers with one line
mentioning them — one reply per item and person, edited, never one per delivery; at most
``PUT_BACKS_PER_MINUTE`` put-backs of one person a minute (past that their change is left as it is: a passing
label they applied counts for nothing anyway). Steward's own label writes arrive with Steward as the sender
and are left alone, so nothing loops; changes by permitted people are never touched.

GitHub's event names the label that changed; Gitea's carries the item's whole label set, so Steward keeps
the passing labels it last saw on each item of a milestone (Redis, a week) to notice one taken off.
Reads: none for an event about another label (GitHub) or an item that carries and carried no passing label
(Gitea); else one permission read, and for someone without the permission one label-event read.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from bot.commands.context import EventContext
from bot.forge import repo_key
from handlers.milestones.effects import gate_labels
from handlers.milestones.gate import GateLabels
from handlers.milestones.gate_facts import Allowed, permission_word
from handlers.milestones.provenance import carried, passing_labels, put_back_reply, undo_of

SEEN_TTL = 7 * 24 * 3600
REPLY_KIND = "label-put-back"


def _seen_key(ctx: EventContext, number: int) -> str:
    raw = f"{repo_key(ctx.event.forge, ctx.repo)}#{number}"
    return "steward:milestones:passing:" + hashlib.sha256(raw.encode()).hexdigest()[:32]


async def remember_labels(ctx: EventContext, number: int, labels: tuple[str, ...]) -> tuple[str, ...]:
    """Note the passing labels item ``number`` carries now; returns those noted before (none without
    Redis, and none on GitHub, whose label events name the label)."""
    if ctx.memo is None or ctx.event.forge != "gitea":
        return ()
    redis = ctx.memo.redis
    key = _seen_key(ctx, number)
    before = await redis.set(key, json.dumps(list(labels)), ex=SEEN_TTL, get=True)
    if not before:
        return ()
    try:
        found = json.loads(before)
    except ValueError:
        return ()
    return tuple(str(name) for name in found) if isinstance(found, list) else ()


async def guard_labels(ctx: EventContext) -> None:
    """Undo a change of passing labels by someone without the permission (see the module's note)."""
    issue = ctx.event.issue
    if issue is None or issue.milestone is None:
        return
    labels = gate_labels(ctx.settings)
    now = carried(issue.labels, labels)
    before = await remember_labels(ctx, issue.number, now)
    if ctx.event.action not in ("labeled", "unlabeled"):
        return
    sender = ctx.event.sender
    if not sender or sender.casefold() == ctx.me.login.casefold():
        return  # Steward's own change (a put-back among them): never undone, so nothing loops
    if ctx.event.label is not None:
        wanted = {name.casefold() for name in passing_labels(labels)}
        candidates = [ctx.event.label] if ctx.event.label.casefold() in wanted else []
    else:
        candidates = list(dict.fromkeys([*now, *(n for n in before if n not in now)]))
    if not candidates:
        return
    allowed = Allowed(ctx)
    if await allowed(sender) is not False:
        return  # permitted (or the forge will not say: then nothing is undone, and the label does not count)
    if not await _may_put_back(ctx, sender):
        # Past the sender's share: the change is left as it is. A passing label they applied counts for
        # nothing whatever Steward does (``provenance``); one they removed blocks the gate until someone
        # permitted puts it back. Steward never spends a write per toggle on one person's burst.
        ctx.log.info("milestones: put-backs past the sender's rate; left as they are", sender=sender)
        return
    events = await ctx.forge.label_events(ctx.repo, issue.number)
    # The labels now (the event's may be older than the events just read).
    current = (await ctx.forge.get_issue(ctx.repo, issue.number)).labels
    present = {name.casefold() for name in current}
    undone: list[str] = []
    for label in candidates:
        undo = undo_of(events, label, present=label.casefold() in present, sender=sender, bot=ctx.me.login)
        if undo is None:
            continue
        what, earlier = undo
        if what == "remove":
            await ctx.forge.remove_label(ctx.repo, issue.number, label)
        elif earlier is not None and await allowed(earlier):
            await ctx.forge.add_labels(ctx.repo, issue.number, [label])
        else:
            continue
        undone.append(label)
    if not undone:
        return
    await remember_labels(ctx, issue.number, carried_after(current, undone, labels))
    # One reply per item and person, edited when what it says changes (never one per delivery).
    key = f"{issue.number}-{hashlib.sha256(sender.casefold().encode()).hexdigest()[:12]}"
    await ctx.upsert_sticky(REPLY_KIND, key, put_back_reply(sender, undone, permission_word(ctx)))
    ctx.log.info("milestones: passing labels put back", number=issue.number, labels=undone, sender=sender)


# Put-backs of one person's changes a minute, per repository: past that their changes are left as they are.
PUT_BACKS_PER_MINUTE = 5


async def _may_put_back(ctx: EventContext, sender: str) -> bool:
    if ctx.memo is None:
        return True
    raw = f"{repo_key(ctx.event.forge, ctx.repo)}|{sender.casefold()}"
    key = "steward:milestones:put-backs:" + hashlib.sha256(raw.encode()).hexdigest()[:32]
    redis = ctx.memo.redis
    count = int(await redis.incr(key))
    if count == 1:
        await redis.expire(key, 60)
    return count <= PUT_BACKS_PER_MINUTE


def carried_after(item_labels: Sequence[str], undone: list[str], labels: GateLabels) -> tuple[str, ...]:
    """The passing labels the item carries once ``undone`` are put back (each toggled)."""
    have = {name.casefold(): name for name in item_labels}
    for name in undone:
        if name.casefold() in have:
            del have[name.casefold()]
        else:
            have[name.casefold()] = name
    return carried(tuple(have.values()), labels)
