"""The ledger's record of forged `steward/*` results: someone other than Steward set one of Steward's
contexts (a commit status, or on GitHub a check run of that name from another app) on the pull request's
head, and Steward posted its own state again at once (issue 35 item 7). Each restoration is an entry of the
ledger comment — who set which context to what, on which commit, and when — kept in the ledger's signed
data block so it outlives every re-render. Only the last ``MAX_KEPT`` are kept; a replayed delivery of the
same forgery adds nothing. Pure: values in, values and markdown out."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.records import neutralise

MAX_KEPT = 5
# A forge login as both forges allow it (GitHub's app accounts end in `[bot]`): anything else is shown inert.
_LOGIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,38}(?:\[bot\])?$")


@dataclass(frozen=True)
class Restoration:
    """``who`` set ``context`` to ``state`` on ``sha`` (``kind``: "status" or "check run"); Steward posted
    its own state again at ``at`` (UTC, ISO 8601)."""

    who: str
    context: str
    state: str
    sha: str
    at: str
    kind: str = "status"

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        return (self.who.casefold(), self.context.casefold(), self.state, self.sha, self.kind)

    def to_json(self) -> dict[str, str]:
        return {
            "who": self.who,
            "context": self.context,
            "state": self.state,
            "sha": self.sha,
            "at": self.at,
            "kind": self.kind,
        }

    @classmethod
    def from_json(cls, raw: Any) -> Restoration | None:
        """The entry a ledger's data block holds, or None for anything malformed (never raises)."""
        if not isinstance(raw, Mapping):
            return None
        fields = [raw.get(k) for k in ("who", "context", "state", "sha", "at")]
        if not all(isinstance(f, str) for f in fields):
            return None
        who, context, state, sha, at = (str(f) for f in fields)
        kind = "check run" if raw.get("kind") == "check run" else "status"
        return cls(who[:60], context[:100], state[:20], sha[:40], at[:20], kind)


def merged(*groups: Iterable[Restoration]) -> tuple[Restoration, ...]:
    """Every restoration of ``groups`` once (the first seen of each forgery: who, context, state, commit),
    oldest first, the last ``MAX_KEPT`` of them."""
    seen: dict[tuple[str, str, str, str, str], Restoration] = {}
    for group in groups:
        for entry in group:
            seen.setdefault(entry.key, entry)
    return tuple(sorted(seen.values(), key=lambda r: r.at))[-MAX_KEPT:]


def from_data(raw: Any) -> list[Restoration]:
    """The restorations a ledger comment's data block holds (its ``restored`` list)."""
    if not isinstance(raw, list):
        return []
    return [r for r in (Restoration.from_json(x) for x in raw[: MAX_KEPT * 2]) if r is not None]


def who_text(login: str) -> str:
    """Who set it, named without a mention (nobody is asked to act); a login no forge allows, as code."""
    return neutralise.name(login) if _LOGIN.match(login) else neutralise.code(login, 60, in_table=True)


def lines(restorations: Iterable[Restoration]) -> list[str]:
    """The ledger's section on them (none: no lines)."""
    rows = [
        f"| {r.at.replace('T', ' ').removesuffix('Z')} UTC | {who_text(r.who)} | "
        f"{neutralise.code(r.context, 100, in_table=True)} ({r.kind}) | {neutralise.cell(r.state, 20)} | "
        f"`{neutralise.line(r.sha[:10], 10)}` |"
        for r in restorations
    ]
    if not rows:
        return []
    return [
        "",
        "**Steward's own results set by someone else** — each was overwritten at once with Steward's own "
        "state: only Steward sets `steward/*` results, and a required status cannot tell who set it "
        f"(docs/bugfix.md). The last {MAX_KEPT} are kept.",
        "",
        "| When | Who | Context | Set to | Commit |",
        "|---|---|---|---|---|",
        *rows,
    ]
