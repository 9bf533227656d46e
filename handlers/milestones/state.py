"""What a dashboard remembers, in the data block of its body (the forge is the database: DESIGN §3.1).

- ``state``/``closed_at``: the milestone's state as Steward last *settled* it. A closure is settled only
  once the gate was checked (passed, or overridden); until then ``state`` stays ``open``, so a milestone
  that is closed while ``state`` says open "turned closed since Steward last looked" — that is how the
  periodic job notices closures on Gitea, which sends no milestone webhooks.
- ``internal``: whether the description had the internal marker then (a change means a refresh).
- ``counts``: the milestone's open and closed item counts as the forge gave them at the last refresh;
  the periodic job refreshes a dashboard whose milestone's counts moved (an event missed, or Gitea's
  `demilestoned`, which does not say which milestone the item left).
- ``override``: who overrode the gate, when, why, and the reasons it set aside; it stands until the
  milestone is reopened after a close.
- ``closure``: the last settled closure (when, by whom where the forge said, passed or overridden).
- ``promises``: the milestone's user-visible promises (`/gate promise`), each naming its scenario issue.
- ``reopened``: the last closure Steward undid (for the dashboard's "reopened because …" line).
- ``names`` (Gitea): which label carried each passing name at Steward's last look, since when, and the
  highest label id it saw then (``provenance.look``).

A person with write access can edit the body; whatever they leave there is read defensively (a value of
the wrong type is dropped) and bounded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

MAX_REASON = 300
MAX_OVERRODE = 15
MAX_LINE = 200
MAX_LOGIN = 100


def _text(value: Any, limit: int) -> str | None:
    return value[:limit] if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


@dataclass(frozen=True)
class Override:
    """A `/gate override`. It counts only as the command comment it is (``comment``, whose body hashed to
    ``digest`` when Steward recorded it): see ``effects.override_holds``. 0 / "": recorded before this was
    kept (a legacy override)."""

    by: str
    at: str
    reason: str
    overrode: tuple[str, ...] = ()
    comment: int = 0
    digest: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "at": self.at,
            "reason": self.reason,
            "overrode": list(self.overrode),
            "comment": self.comment,
            "digest": self.digest,
        }

    @classmethod
    def from_json(cls, raw: Any) -> Override | None:
        if not isinstance(raw, Mapping):
            return None
        by, at, reason = (
            _text(raw.get("by"), MAX_LOGIN),
            _text(raw.get("at"), 40),
            _text(raw.get("reason"), MAX_REASON),
        )
        if by is None or at is None or reason is None:
            return None
        overrode = raw.get("overrode")
        lines = tuple(
            line[:MAX_LINE]
            for line in (overrode if isinstance(overrode, list) else [])
            if isinstance(line, str)
        )
        comment = _int(raw.get("comment")) or 0
        digest = _text(raw.get("digest"), 64) or ""
        return cls(by, at, reason, lines[:MAX_OVERRODE], comment, digest)


@dataclass(frozen=True)
class Internal:
    """`/gate internal`: who exempted the milestone from the functional leg. It counts only as the command
    comment it is (``comment``, whose body hashed to ``digest``), by someone who holds
    `milestones.label_permission` now (``effects.internal_holds``)."""

    by: str
    at: str
    comment: int
    digest: str

    def to_json(self) -> dict[str, Any]:
        return {"by": self.by, "at": self.at, "comment": self.comment, "digest": self.digest}

    @classmethod
    def from_json(cls, raw: Any) -> Internal | None:
        if not isinstance(raw, Mapping):
            return None
        by, at = _text(raw.get("by"), MAX_LOGIN), _text(raw.get("at"), 40)
        comment, digest = _int(raw.get("comment")), _text(raw.get("digest"), 64)
        if by is None or at is None or not comment or digest is None:
            return None
        return cls(by, at, comment, digest)


MAX_PROMISE = 200
MAX_PROMISES = 30


@dataclass(frozen=True)
class Promise:
    """One of the milestone's user-visible promises (`/gate promise add <text> — #<scenario>`), and the
    field-test scenario issue that demonstrates it. Like `/gate internal`, it was said by a command comment
    (``comment``, whose body hashed to ``digest``) of someone who holds `milestones.label_permission`; unlike
    an exemption, a promise whose comment no longer holds is not dropped (that would loosen the gate): it
    stays, unconfirmed, and blocks the functional leg until someone permitted removes or re-adds it.
    ``digest`` "": re-derived from an edited comment (never confirmed)."""

    text: str
    scenario: int
    by: str
    at: str
    comment: int
    digest: str

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "scenario": self.scenario,
            "by": self.by,
            "at": self.at,
            "comment": self.comment,
            "digest": self.digest,
        }

    @classmethod
    def from_json(cls, raw: Any) -> Promise | None:
        if not isinstance(raw, Mapping):
            return None
        text, scenario = _text(raw.get("text"), MAX_PROMISE), _int(raw.get("scenario"))
        by, at = _text(raw.get("by"), MAX_LOGIN), _text(raw.get("at"), 40)
        comment, digest = _int(raw.get("comment")), raw.get("digest")
        if text is None or not scenario or by is None or at is None or not comment:
            return None
        return cls(text, scenario, by, at, comment, digest[:64] if isinstance(digest, str) else "")


def promises_from_json(raw: Any) -> tuple[Promise, ...] | None:
    """The promise list, or None when the milestone has none (never set; ``[]`` once set and emptied)."""
    if not isinstance(raw, list):
        return None
    return tuple(p for p in map(Promise.from_json, raw[:MAX_PROMISES]) if p is not None)


@dataclass(frozen=True)
class Closure:
    at: str
    by: str | None
    verdict: Literal["passed", "overridden"]

    def to_json(self) -> dict[str, Any]:
        return {"at": self.at, "by": self.by, "verdict": self.verdict}

    @classmethod
    def from_json(cls, raw: Any) -> Closure | None:
        if not isinstance(raw, Mapping):
            return None
        at = _text(raw.get("at"), 40)
        verdict = raw.get("verdict")
        if at is None or verdict not in ("passed", "overridden"):
            return None
        return cls(at, _text(raw.get("by"), MAX_LOGIN), verdict)


@dataclass(frozen=True)
class Reopened:
    closed_at: str
    by: str | None
    at: str

    def to_json(self) -> dict[str, Any]:
        return {"closed_at": self.closed_at, "by": self.by, "at": self.at}

    @classmethod
    def from_json(cls, raw: Any) -> Reopened | None:
        if not isinstance(raw, Mapping):
            return None
        closed_at, at = _text(raw.get("closed_at"), 40), _text(raw.get("at"), 40)
        if closed_at is None or at is None:
            return None
        return cls(closed_at, _text(raw.get("by"), MAX_LOGIN), at)


def _gate(raw: Any) -> tuple[Literal["pass", "blocked"], int] | None:
    if not isinstance(raw, Mapping):
        return None
    verdict, blockers = raw.get("verdict"), _int(raw.get("blockers"))
    if verdict == "pass" and blockers == 0:
        return ("pass", 0)
    if verdict == "blocked" and blockers is not None:
        return ("blocked", blockers)
    return None


@dataclass(frozen=True)
class Named:
    """The label (``id``) that carries a passing name, since ``since`` ("": since before Steward first
    looked, or created since its last look — as far as Steward can tell, it always had this name)."""

    id: int
    since: str


@dataclass(frozen=True)
class Title:
    """A title the milestone had (GitHub), from ``since`` to ``until`` ("" : from before Steward first
    looked; until now)."""

    title: str
    since: str
    until: str = ""


MAX_TITLES = 10


def titles_from_json(raw: Any) -> tuple[Title, ...]:
    out = []
    for entry in raw[-MAX_TITLES:] if isinstance(raw, list) else ():
        if isinstance(entry, list) and len(entry) == 3 and all(isinstance(v, str) for v in entry):
            out.append(Title(entry[0][:MAX_LINE], entry[1][:40], entry[2][:40]))
    return tuple(out)


@dataclass(frozen=True)
class LabelNames:
    """The names Steward has seen, as it last looked. Gitea's passing labels: casefolded name → ``Named``,
    and ``top``, the highest label id it saw (Gitea's ids only grow, so a higher one is a label created
    since). GitHub's milestone titles (``titles``, oldest first): its issue events name a milestone by the
    title it had, so an event counts for this milestone only under a title it had then."""

    names: Mapping[str, Named]
    top: int
    titles: tuple[Title, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "names": {n: [v.id, v.since] for n, v in sorted(self.names.items())},
            "top": self.top,
            **({"titles": [[t.title, t.since, t.until] for t in self.titles]} if self.titles else {}),
        }

    @classmethod
    def from_json(cls, raw: Any) -> LabelNames | None:
        if (
            not isinstance(raw, Mapping)
            or _int(raw.get("top")) is None
            or not isinstance(raw.get("names"), Mapping)
        ):
            return None
        names: dict[str, Named] = {}
        for name, pair in list(raw["names"].items())[:MAX_OVERRODE]:
            if isinstance(name, str) and isinstance(pair, list) and len(pair) == 2:
                ident, since = _int(pair[0]), pair[1]
                if ident is not None and isinstance(since, str) and len(since) <= 40:
                    names[name[:MAX_LINE]] = Named(ident, since)
        return cls(names, raw["top"], titles_from_json(raw.get("titles")))


@dataclass(frozen=True)
class DashboardData:
    key: int
    state: Literal["open", "closed"] = "open"
    closed_at: str | None = None
    counts: tuple[int, int] | None = None
    # Whether the description had the internal marker at the last refresh (Gitea sends no edit webhook).
    internal: bool | None = None
    override: Override | None = None
    closure: Closure | None = None
    reopened: Reopened | None = None
    # `/gate internal`: the milestone is exempt from the functional leg (the description's line alone is not).
    internal_by: Internal | None = None
    # `/gate promise`: the milestone's user-visible promises, each with its scenario; None: no promise list
    # (the functional leg then asks for at least one passing scenario, as it always did).
    promises: tuple[Promise, ...] | None = None
    # Gitea: which label carried each passing name at the last look (None: never looked, or not Gitea).
    names: LabelNames | None = None
    # The gate's verdict at the last refresh and how many blockers it had (what the overview issue shows
    # of the milestone); None: not recorded yet.
    gate: tuple[Literal["pass", "blocked"], int] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "v": 1,
            "key": self.key,
            "state": self.state,
            "closed_at": self.closed_at,
            "counts": list(self.counts) if self.counts is not None else None,
            "internal": self.internal,
            "override": self.override.to_json() if self.override else None,
            "closure": self.closure.to_json() if self.closure else None,
            "reopened": self.reopened.to_json() if self.reopened else None,
            "internal_by": self.internal_by.to_json() if self.internal_by else None,
            "promises": [p.to_json() for p in self.promises] if self.promises is not None else None,
            **({"names": self.names.to_json()} if self.names is not None else {}),
            "gate": {"verdict": self.gate[0], "blockers": self.gate[1]} if self.gate is not None else None,
        }

    @classmethod
    def from_json(cls, raw: Any, key: int) -> DashboardData:
        """The data a dashboard body holds; a missing or mangled block gives the defaults for ``key``."""
        if not isinstance(raw, Mapping):
            return cls(key)
        counts = raw.get("counts")
        pair = (
            (_int(counts[0]), _int(counts[1]))
            if isinstance(counts, list) and len(counts) == 2
            else (None, None)
        )
        return cls(
            key=key,
            state="closed" if raw.get("state") == "closed" else "open",
            closed_at=_text(raw.get("closed_at"), 40),
            counts=(pair[0], pair[1]) if pair[0] is not None and pair[1] is not None else None,
            internal=raw.get("internal") if isinstance(raw.get("internal"), bool) else None,
            override=Override.from_json(raw.get("override")),
            closure=Closure.from_json(raw.get("closure")),
            reopened=Reopened.from_json(raw.get("reopened")),
            internal_by=Internal.from_json(raw.get("internal_by")),
            promises=promises_from_json(raw.get("promises")),
            names=LabelNames.from_json(raw.get("names")),
            gate=_gate(raw.get("gate")),
        )

    def settled_closed(self, closed_at: str | None) -> bool:
        """Whether this very closure (``closed_at``) was settled already."""
        return self.state == "closed" and self.closed_at == closed_at

    def reopen_seen(self) -> DashboardData:
        """The milestone is open again after a settled close: that ends an override."""
        return replace(self, state="open", closed_at=None, override=None)
