"""Pure rendering of the everyday commands' replies and notes: the reader's next step first, people shown in
code (never pinged) except the one whose action is needed."""

from __future__ import annotations

from collections.abc import Sequence

from bot.forge import ForgeKind
from bot.records.neutralise import code
from handlers.triage.claims import Claim

# What each forge will assign (FORGE-FACTS "Assignees"), for the record and the replies.
WHO_THE_FORGE_ASSIGNS: dict[ForgeKind, str] = {
    "github": "GitHub assigns only collaborators and people who commented on the issue",
    "gitea": "Gitea assigns only people with write access",
}


def _day(stamp: str) -> str:
    return stamp[:10] or "?"


def claims_text(claims: Sequence[Claim], prefix: str, forge: ForgeKind, release_days: int | None) -> str:
    """The visible part of the claims record on an issue."""
    if not claims:
        return f"**No claims** on this issue now. `/{prefix} claim` takes it."
    lines = ["**Claimed** — who is working on this issue:", ""]
    for claim in claims:
        how = "assigned" if claim.assigned else f"kept by Steward: {WHO_THE_FORGE_ASSIGNS[forge]}"
        by = "" if claim.by.casefold() == claim.login.casefold() else f", by `@{claim.by}`"
        lines.append(f"- `@{claim.login}`, since {_day(claim.since)}{by} ({how})")
    lines += ["", f"To let go: `/{prefix} unassign`."]
    if release_days is not None:
        lines[-1] += f" A claim whose holder writes nothing here for {release_days} days is released."
    return "\n".join(lines)


def kept_text(kept: Sequence[str], forge: ForgeKind) -> str:
    """The reply when the forge would not assign someone and Steward keeps their claim instead."""
    names = ", ".join(f"`@{login}`" for login in kept)
    return (
        f"Nothing to do: {WHO_THE_FORGE_ASSIGNS[forge]}, so Steward keeps the claim of {names} in its record "
        "on this issue instead (above)."
    )


def release_text(claim: Claim, days: int, prefix: str) -> str:
    return (
        f"@{claim.login}: your claim on this issue was released — nothing from you here for {days} days. "
        f"To take it again: `/{prefix} claim`."
    )


def not_held_text(logins: Sequence[str]) -> str:
    names = ", ".join(f"`@{login}`" for login in logins)
    return (
        f"{names} {'is' if len(logins) == 1 else 'are'} not assigned here and hold no claim: nothing to do."
    )


def label_refusals(
    unknown: Sequence[tuple[str, Sequence[str]]],
    managed: Sequence[str],
    denied: Sequence[tuple[str, str]],
    bad: Sequence[str],
    prefix: str,
) -> str:
    """Why `/label` changed nothing: each label that does not exist (with the nearest names), that Steward
    manages, or that the asker may not set (with who may)."""
    lines = ["no label was changed:"]
    for name, close in unknown:
        hint = f" Did you mean {', '.join(code(c, 60) for c in close)}?" if close else ""
        lines.append(f"- {code(name, 60)} is not a label of this repository.{hint}")
    for name in managed:
        lines.append(
            f"- {code(name, 60)} is a label Steward sets and removes itself (it mirrors Steward's own "
            "record), so it is never changed with `/label`."
        )
    for name, who in denied:
        lines.append(f"- {code(name, 60)} may be set or removed here by {who} (`triage.labels`).")
    for word in bad:
        lines.append(f"- {code(word, 60)} names no label.")
    lines.append(f"Write e.g. `/{prefix} label bug -wontfix` (quote a name with spaces).")
    return "\n".join(lines)
