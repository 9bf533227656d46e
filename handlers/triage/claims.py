"""Claims (`/claim`, and `/assign` of someone the forge will not assign): who holds an issue, since when, and
whether the forge assigned them too. Pure: the record's data, its changes, and which claims went stale.

A claim lives in Steward's signed record on the issue (``effects.CLAIMS_KIND``): the forge's assignees
cannot hold someone it will not assign (GitHub: collaborators and commenters; Gitea: write access), and a
claim is released after `triage.release_claims_after_days` without activity from its holder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any, Final

DATA_VERSION: Final = 1
# At most this many claims on one issue (the forge assigns at most 10 people).
MAX_CLAIMS: Final = 10
# A login as both forges allow one (GitHub: 39 characters, letters, digits, hyphens; Gitea adds . and _).
_LOGIN: Final = re.compile(r"@?([A-Za-z0-9](?:[A-Za-z0-9._-]{0,38}))")


@dataclass(frozen=True)
class Claim:
    login: str
    since: str  # ISO-8601, UTC: when the claim was made
    by: str  # who made it: the claimant (`/claim`) or whoever ran `/assign`
    assigned: bool  # the forge assigned them too
    comment: int = 0  # the command's comment


def parse_logins(args: Sequence[str], actor: str) -> tuple[list[str], list[str]]:
    """(logins, words that are not logins) from `/assign @a @b` — `me` is the actor; none named: the
    actor. Each login once, in order."""
    logins: list[str] = []
    bad: list[str] = []
    for word in args:
        for part in word.split(","):
            if not part:
                continue
            found = _LOGIN.fullmatch(part)
            if found is None:
                bad.append(part)
                continue
            login = actor if found.group(1).casefold() == "me" else found.group(1)
            if login.casefold() not in {x.casefold() for x in logins}:
                logins.append(login)
    return (logins or ([actor] if not bad else [])), bad


def from_data(data: Any) -> list[Claim]:
    """The claims a verified record holds (anything malformed is left out)."""
    if not isinstance(data, Mapping):
        return []
    found: list[Claim] = []
    for item in data.get("claims") or ():
        if not isinstance(item, Mapping):
            continue
        try:
            found.append(
                Claim(
                    login=str(item["login"]),
                    since=str(item["since"]),
                    by=str(item.get("by") or item["login"]),
                    assigned=bool(item.get("assigned")),
                    comment=int(item.get("comment") or 0),
                )
            )
        except (KeyError, TypeError, ValueError):
            continue
    return found[:MAX_CLAIMS]


def to_data(claims: Iterable[Claim]) -> dict[str, Any]:
    return {"version": DATA_VERSION, "claims": [asdict(c) for c in claims]}


def holds(claims: Iterable[Claim], login: str) -> Claim | None:
    return next((c for c in claims if c.login.casefold() == login.casefold()), None)


def with_claim(claims: Sequence[Claim], claim: Claim) -> list[Claim]:
    """``claims`` with ``claim`` added; one already held keeps its start and learns whether it is assigned."""
    held = holds(claims, claim.login)
    if held is not None:
        return [replace(c, assigned=claim.assigned or c.assigned) if c is held else c for c in claims]
    return [*claims, claim][-MAX_CLAIMS:]


def without(claims: Sequence[Claim], logins: Iterable[str]) -> list[Claim]:
    gone = {login.casefold() for login in logins}
    return [c for c in claims if c.login.casefold() not in gone]


def _at(stamp: str) -> float:
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def stale(claims: Sequence[Claim], activity: Mapping[str, str], now: float, days: int | None) -> list[Claim]:
    """The claims whose holder did nothing on the issue for ``days`` (``activity``: login, casefolded → the
    holder's latest comment there, ISO-8601); none when ``days`` is None."""
    if days is None:
        return []
    limit = days * 86_400
    found = []
    for claim in claims:
        last = max(_at(claim.since), _at(activity.get(claim.login.casefold(), "")))
        if last and now - last >= limit:
            found.append(claim)
    return found
