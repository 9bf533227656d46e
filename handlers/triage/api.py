"""What other capabilities may ask of the everyday commands."""

from __future__ import annotations

from typing import Final

from bot.forge import Branch, ForgeKind
from handlers.bugfix.api import requirement
from handlers.triage.claims import Claim as Claim
from handlers.triage.effects import ClaimedIssue as ClaimedIssue
from handlers.triage.effects import list_claims as list_claims

# The status `/hold` keeps on a pull request's head (handlers.triage.hold restores it when someone else
# sets it, so the general `steward/*` rule in handlers.bugfix leaves this one to it).
HOLD_CONTEXT: Final = "steward/hold"


def hold_lines(branch_name: str, found: Branch | None, kind: ForgeKind, refused: str = "") -> list[str]:
    """What `/steward config` says of `/hold` on the default branch: whether its status blocks merging
    (``refused``: why the forge would not show the branch)."""
    answer = requirement(branch_name, found, kind, refused=refused, context=HOLD_CONTEXT)
    what, where = f"`{HOLD_CONTEXT}`", f"`{branch_name}`"
    if answer.answer == "required":
        return [f"✅ {what} is a **required** check on {where}: a held pull request cannot be merged."]
    if answer.answer == "not_required":
        return [
            f"⚠️ {what} is **not** a required check on {where}: `/hold` labels a pull request and fails its "
            "head's status, but the forge does not wait for it before merging. Add it to the branch's "
            "required status checks for a hold to block merging (Steward then sets it on every pull request "
            "into the branch)."
        ]
    return [f"❔ I could not read whether {what} is a required check on {where}: {answer.reason}."]
