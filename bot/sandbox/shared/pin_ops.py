"""Pinned issues, once for both APIs: which are pinned and in what order, pinning and unpinning, and the
webhooks it causes. Each API words its own limits and refusals around these (``gitea.pins``,
``github.graphql``).

Facts both forges share, with their sources:

- Pins are kept per repository, issues and pull requests apart (Gitea `models/issues/issue_pin.go`:
  ``IssuePin.IsPull``; GitHub pins issues only — its ``pinIssue`` takes an Issue).
- **Closing an issue does not unpin it**, and a closed pinned issue still counts against the limit. Gitea:
  ``services/issue/status.go`` ``CloseIssue`` touches no pin (only ``DeleteIssue`` unpins). GitHub: a closed
  pinned issue stays in ``Repository.pinnedIssues`` until it is unpinned (reported by API users who free
  slots by unpinning closed pinned issues, e.g. getknext-dev/knext ``compat-matrix-tracker``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .state import Issue, Repo

if TYPE_CHECKING:  # the callers' module imports the shapes, which import this one
    from .caller import Caller


def pinned(repo: Repo, *, pulls: bool = False) -> list[Issue]:
    """The pinned issues (or pull requests) of `repo`, in pin order."""
    found = [repo.issues[n] for n in repo.pinned if n in repo.issues]
    return [issue for issue in found if (issue.pull is not None) == pulls]


def is_pinned(repo: Repo, issue: Issue) -> bool:
    return issue.number in repo.pinned


def pin_order(repo: Repo, issue: Issue) -> int:
    """Gitea's ``pin_order``: the issue's place among its kind's pins, from 1; 0 when it is not pinned."""
    numbers = [i.number for i in pinned(repo, pulls=issue.pull is not None)]
    return numbers.index(issue.number) + 1 if issue.number in numbers else 0


def pin(caller: Caller, repo: Repo, issue: Issue) -> None:
    if issue.number not in repo.pinned:
        repo.pinned.append(issue.number)
        caller.events.pin(repo, issue, "pinned")


def unpin(caller: Caller, repo: Repo, issue: Issue) -> None:
    if issue.number in repo.pinned:
        repo.pinned.remove(issue.number)
        caller.events.pin(repo, issue, "unpinned")
