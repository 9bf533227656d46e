"""The errors a forge call raises (re-exported by ``bot.forge``)."""

from __future__ import annotations


class ForgeError(Exception):
    """A forge call failed. Messages never contain secrets."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class NotFound(ForgeError):
    """The thing asked for does not exist (or the bot cannot see it)."""


class PermissionDenied(ForgeError):
    """The forge refused the bot (401/403 that is not a rate limit)."""


class Unauthorized(ForgeError):
    """The forge does not accept Steward's credentials at all (401: a revoked or expired token, a rotated App
    key): an outage of Steward's access, not a refusal of one request — jobs wait for it to end and none is
    parked (issue 40 item 5)."""


class ThreadLocked(PermissionDenied):
    """The forge refuses a write in a locked conversation: a comment (GitHub, to a GitHub App whatever its
    permission and to anyone without write access: "Unable to create comment because issue is locked.";
    Gitea, to anyone who may not write its issues: "You cannot comment on a locked issue."), an edit of a
    comment there, or a reaction (GitHub allows none in a locked conversation). See docs/forge-port.md,
    "Locked conversations"."""


def locked_refusal(exc: PermissionDenied) -> PermissionDenied:
    """`exc` as a ``ThreadLocked`` when the forge's words say the conversation is locked."""
    if not isinstance(exc, ThreadLocked) and "locked" in str(exc).casefold():
        return ThreadLocked(str(exc), status=exc.status)
    return exc


class ValidationFailed(ForgeError):
    """The forge rejected the request's content (422)."""


class ForgeUnavailable(ForgeError):
    """The forge kept failing (5xx, timeouts, transport errors) after every retry."""


class NotSupported(ForgeError):
    """The forge (or this kind of link, or this authentication) cannot do what was asked; the message
    says why."""


class TooManyItems(ForgeError):
    """A list is longer than ``STEWARD_MAX_LIST_ITEMS``: it is refused whole rather than cut short,
    because a decision taken on part of a list (is every issue of the milestone closed?) is wrong."""

    def __init__(self, message: str, *, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


class RateLimited(ForgeError):
    """The forge's rate limit is spent; try again after ``retry_after`` seconds."""

    def __init__(self, message: str, *, retry_after: float, status: int | None = None) -> None:
        super().__init__(message, status=status)
        self.retry_after = retry_after
