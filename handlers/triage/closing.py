"""Pure rules and wording of `/close`, `/reopen` and `/duplicate`: what the arguments name, who may reopen
(as the forge itself would let them), what an issue may be marked a duplicate of, and what Steward says.

The forge's own rules, which Steward follows so that nobody does through it what they could not do
themselves (docs/forge-port.md "Closing, reopening, duplicates"): an issue's author or triage (Gitea: write)
and more may close it; triage and more may reopen it; its author may reopen it on Gitea always, on GitHub only
when they closed it themselves. Steward adds one case: a report Steward itself closed (for lack of an answer)
its author may reopen, since Steward stood in for nobody's decision.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from bot.forge import CloseReason, ForgeKind, Issue, PermissionLevel, RepoRef, permission_at_least
from bot.records.neutralise import line

# `/close not-planned …` (Prow's word) closes as not planned; any other text is the reason, said in the reply.
NOT_PLANNED: Final = frozenset({"not-planned", "not_planned", "wontfix", "won't-fix"})
REASON_LIMIT: Final = 200

_TARGET = re.compile(
    r"^(?:(?P<owner>[A-Za-z0-9][A-Za-z0-9._-]{0,99})/(?P<name>[A-Za-z0-9._-]{1,100}))?#?(?P<number>[0-9]{1,9})$"
)


class UsageError(ValueError):
    """Arguments that name nothing Steward can act on; the message says what to write."""


@dataclass(frozen=True)
class CloseRequest:
    reason: CloseReason
    text: str  # the reason in the person's words ("" when none), inert, one line


def parse_close(args: tuple[str, ...]) -> CloseRequest:
    """`/close [not-planned] [reason …]`."""
    words = list(args)
    reason: CloseReason = "completed"
    if words and words[0].casefold() in NOT_PLANNED:
        reason = "not_planned"
        words = words[1:]
    return CloseRequest(reason, line(" ".join(words), REASON_LIMIT))


@dataclass(frozen=True)
class Target:
    """What `/duplicate` names: an issue number, in this repository (``repo`` None) or another."""

    number: int
    repo: RepoRef | None = None

    def ref(self, here: RepoRef) -> str:
        """How Steward writes it in a comment on ``here`` (the forges link both forms)."""
        if self.repo is None or self.repo.full_name.casefold() == here.full_name.casefold():
            return f"#{self.number}"
        return f"{self.repo.full_name}#{self.number}"


def parse_target(args: tuple[str, ...], prefix: str) -> Target:
    """`/duplicate #N` or `/duplicate owner/repo#N`; anything else is a usage error that shows the forms."""
    usage = (
        f"write `/{prefix} duplicate #123` (or `/{prefix} duplicate owner/repo#123`) with the issue this one "
        "repeats"
    )
    if len(args) != 1:
        raise UsageError(f"name one issue: {usage}.")
    found = _TARGET.match(args[0].strip())
    if found is None or int(found["number"]) == 0:
        raise UsageError(f"`{line(args[0], 60)}` is not an issue reference: {usage}.")
    repo = RepoRef(found["owner"], found["name"]) if found["owner"] else None
    return Target(int(found["number"]), repo)


def closed_as_duplicate(issue: Issue, duplicate_label: str) -> bool:
    """Closed as a duplicate: GitHub's state reason, or (Gitea, which keeps none; or by hand) the label."""
    return issue.state == "closed" and (
        issue.state_reason == "duplicate" or (bool(duplicate_label) and issue.has_label(duplicate_label))
    )


def duplicate_refusal(
    here: RepoRef,
    issue: Issue,
    target_repo: RepoRef,
    target: Issue,
    duplicate_label: str,
    *,
    canonical: int = 0,
) -> str | None:
    """Why ``issue`` may not be closed as a duplicate of ``target`` (None: it may). ``canonical``: the issue
    ``target`` was closed as a duplicate of, when Steward's record of it says (0: unknown)."""
    same_repo = target_repo.full_name.casefold() == here.full_name.casefold()
    ref = Target(target.number, target_repo).ref(here)
    if same_repo and target.number == issue.number:
        return "an issue cannot be a duplicate of itself; name the issue it repeats."
    if closed_as_duplicate(target, duplicate_label):
        if canonical and canonical != issue.number:
            return (
                f"{ref} is itself closed as a duplicate, of #{canonical}: mark this one a duplicate of "
                f"#{canonical} instead, so that everyone lands on the one that stays open."
            )
        return (
            f"{ref} is itself closed as a duplicate. Mark this one a duplicate of the issue {ref} repeats, "
            "so that everyone lands on the one that stays open."
        )
    if issue.state == "closed":
        return "this issue is closed already; reopen it first if it should be closed as a duplicate instead."
    return None


def may_reopen(
    forge: ForgeKind,
    *,
    actor: str,
    author: str,
    actor_level: PermissionLevel,
    closed_by: str,
    bot_login: str,
    closed_for: str = "",
) -> bool:
    """Whether ``actor`` may have Steward reopen the issue: triage and more always; its author on Gitea
    always, on GitHub when they closed it themselves or Steward closed it of its own accord. Steward closing
    it at someone's request (``closed_for``: its signed record of that closing) counts as that person's."""
    if permission_at_least(actor_level, "triage"):
        return True
    if not author or actor.casefold() != author.casefold():
        return False
    if forge == "gitea":
        return True
    closer = closer_of(closed_by, closed_for, bot_login)
    return closer in ("", author.casefold())


def closer_of(closed_by: str, closed_for: str, bot_login: str) -> str:
    """Who closed it, casefolded: the person Steward closed it for, when Steward did; "" when Steward closed
    it of its own accord (a report left without an answer); "?" when the forge does not say."""
    if closed_by.casefold() == bot_login.casefold():
        return closed_for.casefold()
    return closed_by.casefold() or "?"


def reopen_refusal(forge: ForgeKind, *, closer: str) -> str:
    """Why the author may not reopen it, and who may (the reply names the asker first)."""
    who = "triage access or more" if forge == "github" else "write access or more"
    by = f"@{closer} closed it" if closer and closer != "?" else "someone else closed it"
    return (
        f"I did not reopen this: {by}, and an issue's author may reopen it only when they closed it "
        f"themselves (or Steward closed it on its own). People with {who} may reopen it — say here why it "
        "should be open again, and one of them can."
    )


def closed_text(actor: str, request: CloseRequest, prefix: str) -> str:
    how = " as not planned" if request.reason == "not_planned" else ""
    because = f" ({request.text})" if request.text else ""
    return f"Closed{how} at {actor}'s request{because}. Nothing to do; `/{prefix} reopen` reopens it."


def reopened_text(actor: str) -> str:
    return f"Reopened at {actor}'s request. Nothing to do."


def duplicate_text(actor: str, ref: str) -> str:
    return (
        f"Closed as a duplicate of {ref} at {actor}'s request. Follow {ref} for progress; if this is not the "
        "same problem, say so here and it can be reopened."
    )


def backlink_text(ref: str) -> str:
    """On the issue that stays open: one line naming the duplicate (nobody is mentioned)."""
    return f"{ref} was closed as a duplicate of this issue. Nothing to do."
