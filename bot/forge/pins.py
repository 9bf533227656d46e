"""What both adapters share about pins: why an issue was not pinned, said once.

``pin_issue`` answers False rather than raising when the forge refuses for a reason no retry can change (the
repository's pins are full, or the forge has no pins): the caller goes on without the pin, and the operator
reads the reason once per repository and process in the log, not once per event.
"""

from __future__ import annotations

from bot.forge import ForgeKind, RepoRef
from bot.telemetry import logs

log = logs.get("steward.forge")

# Bounded: repository names come from the forge; past the bound the set starts again (a reason said twice
# is better than memory that grows without end).
_MAX_SAID = 4096
_said: set[tuple[str, str, str]] = set()

GITHUB_FULL = (
    "the repository already has the most pinned issues GitHub allows (3; closed pinned issues count too): "
    "unpin one to make room"
)
GITHUB_NO_PINS = "this GitHub has no pinIssue mutation (an older GitHub Enterprise Server)"
GITEA_NO_PINS = "this Gitea has no pinned issues (they came with Gitea 1.21)"
GITEA_PINS_OFF = "this Gitea allows no pinned issues ([repository.issue] MAX_PINNED = 0)"


def gitea_full(count: int) -> str:
    return (
        f"the repository already has {count} pinned issues, the most this Gitea allows "
        "([repository.issue] MAX_PINNED; closed pinned issues count too): unpin one to make room"
    )


def not_pinned(kind: ForgeKind, repo: RepoRef, number: int, reason: str) -> bool:
    """Log once per repository, process and reason why `number` was not pinned; answers False."""
    key = (kind, repo.full_name.casefold(), reason)
    if key not in _said:
        if len(_said) >= _MAX_SAID:
            _said.clear()
        _said.add(key)
        log.warning("issue not pinned", forge=kind, repo=repo.full_name, issue=number, reason=reason)
    return False
