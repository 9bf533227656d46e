"""What CI says of a commit, as pure rules over what the forge reports: commit statuses (both forges) and
check runs (GitHub: GitHub Actions and most CI apps report as check runs, not statuses — FORGE-FACTS,
"Branches, commits, pull requests, statuses").

Each context (a status's ``context``, a check run's ``name``) gets one outcome from its latest report:

============================  =====================================================================
green                         status ``success``; check run concluded ``success``; ``neutral`` or
                              ``skipped`` (check run, or Gitea's ``skipped`` status) when the context
                              is not required
red                           status or check run ``failure``
inconclusive                  status ``error`` (and Gitea's ``warning``); check run ``cancelled``,
                              ``timed_out``, ``action_required``, ``stale`` or any conclusion this
                              table does not know; ``neutral``/``skipped`` of a required context
pending                       status ``pending``; a check run not completed yet; a required context
                              that has not reported at all
============================  =====================================================================

A context reported both as a status and as a check run takes the worse of the two. The verdict is the
worst outcome over all contexts, in the order red, pending, inconclusive, green: one failure is enough to
be red, and while something still runs a cancelled job is not yet the last word. A commit with no report
at all is pending. Steward's own ``steward/*`` contexts are never counted: Steward does not judge itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from bot.forge import CheckRun, CIOutcome, CIState, CommitStatus

OWN_PREFIX = "steward/"
# Worst first: the verdict is the first of these that any context has.
SEVERITY: tuple[CIOutcome, ...] = ("red", "pending", "inconclusive", "green")

_STATUS_OUTCOMES: Mapping[str, CIOutcome] = {
    "success": "green",
    "failure": "red",
    "error": "inconclusive",
    "warning": "inconclusive",
    "pending": "pending",
}
_CHECK_OUTCOMES: Mapping[str, CIOutcome] = {
    "success": "green",
    "failure": "red",
    "cancelled": "inconclusive",
    "timed_out": "inconclusive",
    "action_required": "inconclusive",
    "stale": "inconclusive",
}
# Outcomes that pass only a context nobody requires.
_SOFT = frozenset({"neutral", "skipped"})


def is_own(context: str) -> bool:
    return context.casefold().startswith(OWN_PREFIX)


def status_outcome(state: str, *, required: bool) -> CIOutcome:
    if state in _SOFT:
        return "inconclusive" if required else "green"
    return _STATUS_OUTCOMES.get(state, "inconclusive")


def check_outcome(status: str, conclusion: str | None, *, required: bool) -> CIOutcome:
    if status != "completed" or conclusion is None:
        return "pending"
    if conclusion in _SOFT:
        return "inconclusive" if required else "green"
    return _CHECK_OUTCOMES.get(conclusion, "inconclusive")


def worst(outcomes: Iterable[CIOutcome]) -> CIOutcome | None:
    found = set(outcomes)
    return next((outcome for outcome in SEVERITY if outcome in found), None)


def latest_statuses(statuses: Iterable[CommitStatus]) -> dict[str, CommitStatus]:
    """The latest status of each context (by time, then id), whatever order the forge listed them in."""
    latest: dict[str, CommitStatus] = {}
    for status in statuses:
        kept = latest.get(status.context)
        if kept is None or (status.updated_at, status.id) > (kept.updated_at, kept.id):
            latest[status.context] = status
    return latest


def latest_checks(check_runs: Iterable[CheckRun]) -> dict[str, CheckRun]:
    """The latest run of each check name (a re-run has a higher id)."""
    latest: dict[str, CheckRun] = {}
    for run in check_runs:
        kept = latest.get(run.name)
        if kept is None or run.id > kept.id:
            latest[run.name] = run
    return latest


def ci_state(
    sha: str,
    statuses: Iterable[CommitStatus],
    check_runs: Iterable[CheckRun] = (),
    required_contexts: Sequence[str] = (),
) -> CIState:
    required = {c for c in required_contexts if not is_own(c)}
    reported: dict[str, list[CIOutcome]] = {}
    for context, status in latest_statuses(statuses).items():
        if not is_own(context):
            reported.setdefault(context, []).append(
                status_outcome(status.state, required=context in required)
            )
    for name, run in latest_checks(check_runs).items():
        if not is_own(name):
            outcome = check_outcome(run.status, run.conclusion, required=name in required)
            reported.setdefault(name, []).append(outcome)
    contexts: dict[str, CIOutcome] = {name: worst(found) or "pending" for name, found in reported.items()}
    for context in sorted(required - contexts.keys()):
        contexts[context] = "pending"
    return CIState(sha=sha, verdict=worst(contexts.values()) or "pending", contexts=contexts)
