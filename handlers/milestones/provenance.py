"""Who set the gate's passing labels, and whether they count (pure: the forge's label events in, answers out).

The passing labels are ``fieldtest:pass``, ``audit:clean``, ``audit:ratified`` and ``ratified`` (as the
repository names them). One counts only while the person who applied it — the actor of its latest
``labeled`` event that is not Steward's own (a label Steward put back is the earlier applier's) — holds
``milestones.label_permission`` now. Labels are compared without regard to case, as the forges do.

A scenario's pass (``fieldtest:pass``) counts only when it was put on while the scenario was in the
milestone being gated (``in_milestone``): a pass earned in another milestone does not move with the issue.
GitHub's ``milestoned``/``demilestoned`` events name a milestone by the title it had then, Gitea's timeline
by its id.

Gitea's timeline shows a label as it is *now* (loaded by id): renaming a label someone once put on to a
passing name would make their old ``labeled`` event read as a pass. So on Gitea a passing label counts only
as the label (by id) that carries the name, and only when put on after it took the name, as far as
Steward can tell (``look``, ``named_then``): Gitea keeps no history of label names and sends no webhook for
a rename, so Steward remembers, in the dashboard's signed record, which label carried each name at its
last look and since when. GitHub's events give the name a label had when it was put on, so there the
rename never reads as a pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from bot.forge import LabelEvent, MilestoneEvent
from handlers.milestones.gate import GateLabels
from handlers.milestones.state import MAX_TITLES, LabelNames, Named, Title


@dataclass(frozen=True)
class LabelProof:
    """A passing label on an item: who applied it (None: no event records it) and whether it counts (when not,
    ``why``, in a reader's words)."""

    label: str
    by: str | None
    counts: bool
    why: str = ""


def passing_labels(labels: GateLabels) -> tuple[str, ...]:
    """The labels that let an item pass the gate, and so must come from someone with the permission."""
    return (labels.fieldtest_pass, labels.audit_clean, labels.audit_ratified, labels.ratified)


def carried(item_labels: Sequence[str], labels: GateLabels) -> tuple[str, ...]:
    """The passing labels among ``item_labels`` (in the configuration's spelling)."""
    have = {name.casefold() for name in item_labels}
    return tuple(name for name in passing_labels(labels) if name.casefold() in have)


def _same(a: str, b: str) -> bool:
    return a.casefold() == b.casefold()


def applying(events: Sequence[LabelEvent], label: str, bot: str) -> LabelEvent | None:
    """The latest ``labeled`` event of ``label`` not by Steward (``bot``), or None."""
    for event in reversed(events):
        if event.added and _same(event.label, label) and event.actor and not _same(event.actor, bot):
            return event
    return None


def applier(events: Sequence[LabelEvent], label: str, bot: str) -> str | None:
    """Who applied ``label``: the actor of its latest ``labeled`` event not by Steward (``bot``), or None."""
    found = applying(events, label, bot)
    return found.actor if found is not None else None


def in_milestone(
    moves: Sequence[MilestoneEvent],
    event: LabelEvent,
    key: int,
    title: str,
    titles: Sequence[Title] = (),
) -> bool:
    """Whether the issue was in the milestone (``key``; on GitHub, whose events carry only a title, the one
    titled ``title`` — or, given ``titles``, under a title it had when the move was made) when ``event``
    happened: its milestone changes before the event in the forge's own order (``seq``; never by time — the
    forges keep whole seconds, and a move in the label's second must not count as before it). No milestone
    event: in none."""
    inside = False
    for move in sorted(moves, key=lambda m: m.seq):
        if move.seq > event.seq:
            break
        if move.key is not None:
            same = move.key == key
        else:
            same = titled(titles, move) if titles else move.title == title
        if move.joined:
            inside = same  # joining one milestone leaves any other
        elif same:
            inside = False
    return inside


def titled(titles: Sequence[Title], move: MilestoneEvent) -> bool:
    """Whether the milestone had ``move``'s title when the move was made, as Steward saw it (``titles``)."""
    at = _when(move.at)
    for known in titles:
        if known.title != move.title:
            continue
        since, until = _when(known.since), _when(known.until)
        if (not known.since or (at and since and at >= since)) and (
            not known.until or (at and until and at <= until)
        ):
            return True
    return False


def look_titles(known: Sequence[Title], current: str, now: str, *, trusted: bool) -> tuple[Title, ...]:
    """GitHub: the milestone's titles after looking at it now. A title Steward did not see it with counts
    from ``now`` (a writer may have renamed another milestone away and this one to its title: the other's
    old events must not count here); the first look of a record Steward trusts takes the title as always
    held; a re-derived record knows no title's past."""
    if not known:
        return (Title(current, "" if trusted else now),)
    last = known[-1]
    if last.title == current and not last.until:
        return tuple(known)
    kept = list(known) if last.until else [*known[:-1], Title(last.title, last.since, now)]
    return (*kept, Title(current, now))[-MAX_TITLES:]


def last_change(events: Sequence[LabelEvent], label: str) -> int | None:
    """The index of ``label``'s latest event (put on or taken off), or None."""
    for index in range(len(events) - 1, -1, -1):
        if _same(events[index].label, label):
            return index
    return None


def look(
    known: LabelNames | None, listing: dict[str, int], top: int, now: str, *, trusted: bool
) -> LabelNames:
    """What Steward knows after looking at the repository's labels now (``listing``: casefolded passing
    name → the id of the label that has it; ``top``: the highest label id there). A label that kept its
    name keeps its ``since``. One that has a passing name Steward did not see it with gets ``since``
    ``now`` — it may have been renamed to it, and what was put on before counts for nothing — except a
    label created since the last look (its id above the ``top`` seen then), and on the first look of a
    record Steward trusts (``known`` None, ``trusted``: a new dashboard, or one signed before names were
    kept). A record that did not verify is re-derived (``trusted`` False): the forge keeps no history of
    label names, so every passing label's ``since`` is now."""
    out: dict[str, Named] = {}
    for name, ident in listing.items():
        was = known.names.get(name) if known is not None else None
        if was is not None and was.id == ident:
            out[name] = was
        elif (known is None and trusted) or (known is not None and ident > known.top):
            out[name] = Named(ident, "")
        else:
            out[name] = Named(ident, now)
    return LabelNames(out, max(top, known.top if known is not None else 0))


def named_then(names: LabelNames, label: str, event: LabelEvent) -> bool:
    """Whether ``event`` put on the label that carries the passing name ``label`` (by id), after it took
    that name (its ``since``; the forges keep whole seconds)."""
    named = names.names.get(label.casefold())
    if named is None or event.label_id != named.id:
        return False
    if not named.since:
        return True
    at, since = _when(event.at), _when(named.since)
    return at is not None and since is not None and at >= since


def _when(stamp: str) -> datetime | None:
    try:
        found = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return found if found.tzinfo is not None else None


Undo = Literal["remove", "restore"]


def undo_of(
    events: Sequence[LabelEvent], label: str, *, present: bool, sender: str, bot: str
) -> tuple[Undo, str | None] | None:
    """What putting back ``sender``'s latest change of ``label`` means, when that change is still the label's
    state: ("remove", None) for a label they applied; ("restore", the earlier applier) for one they removed
    — to be restored only when that applier holds the permission (else it did not count, and removing it
    changed nothing). None when the latest change is not ``sender``'s (or Steward's), or no longer holds."""
    index = last_change(events, label)
    if index is None or _same(sender, bot):
        return None
    last = events[index]
    if not _same(last.actor, sender) or last.added != present:
        return None
    if last.added:
        return ("remove", None)
    earlier = applier(events[:index], label, bot)
    return ("restore", earlier) if earlier is not None else None


def proof(label: str, by: str | None, allowed: bool | None, needs: str) -> LabelProof:
    """A label's proof from who applied it and whether they hold the permission now (None: the forge would
    not say). ``needs``: who may set it, in a reader's words ("people with maintain access or more")."""
    if by is None:
        return LabelProof(label, None, False, f"no label event says who applied it (only {needs} may)")
    if allowed is None:
        why = "the forge will not show Steward who holds which access (it needs repository admin)"
        return LabelProof(label, by, False, why)
    if not allowed:
        return LabelProof(label, by, False, f"only {needs} may set it")
    return LabelProof(label, by, True)


def put_back_reply(sender: str, labels: Sequence[str], word: str) -> str:
    """The one-line answer to someone whose change of passing labels Steward undid (``word``: the access it
    needs, as the forge names it: "maintain", on Gitea "admin")."""
    names = ", ".join(f"`{name}`" for name in labels)
    verb, it = ("needs", "it") if len(labels) == 1 else ("need", "them")
    return f"@{sender}: {names} {verb} {word} permission; Steward put {it} back."
