"""The `steward/regression-first` status of a bugfix pull request: a pure function of its commits (with the
files each changed), CI on the red commit and on the head, the test cases at both, and the review ledger.

The rules, in order; the first that applies decides (issue 13):

1. failure: the red commit touches a non-test file or no longer adds the regression test, or the head lost
   the regression test file or a test case;
   (then, from the root-cause discipline: pending while the root cause is not evidenced; then pending while
   the juror cannot check the design forks — the forge will not say who may decide: ``INFRA_ERROR``, they
   count as undecided —, and while a design fork opened on the bug or its pull request is not decided:
   ``DECISION_PENDING``)
2. pending while CI on the red commit runs or is inconclusive; failure when it is green (the test does not
   reproduce the bug) — unless a gap was disclosed with `/accept-gap`;
3. pending until a later commit touches non-test files (the fix);
4. failure when more than ``max_commits_after_red`` commits follow the red one; failure when the review
   stopped early (a repeated finding, reviewers in conflict: ``native``) or its budget is exhausted;
4a. pending while the fix goes beyond its evidence (``scope``: files the evidence does not name, sensitive
   files, the regression test edited) until `/scope` accepts it;
5. pending until CI on the head is green, then while a native Request changes on the head awaits a
   `/review` round, then until a review round on the head completes;
5a. pending while a reviewer group of ``bugfix.sensitive_paths`` whose paths the fix touches has given
   neither a clean round nor an approval on the head (``SPECIALIST_REVIEW_NEEDED``);
6. success.

Merge commits (more than one parent: the base merged in) are ignored everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bot.forge import ChangedFile, CIOutcome, Review
from bot.records import neutralise
from handlers.bugfix.ledger import Ledger
from handlers.bugfix.native_reviews import Conflict, judge
from handlers.bugfix.proof import HeadReport, ProofProblem
from handlers.bugfix.regression_slot import is_test_path, removed_cases
from handlers.bugfix.scope import FIX_OUT_OF_SCOPE, ScopeCheck

CONTEXT = "steward/regression-first"
DECISION_PENDING = "DECISION_PENDING"
# A check Steward could not make (the forge would not answer what it needs): the gate stays closed.
INFRA_ERROR = "INFRA_ERROR"
SPECIALIST_REVIEW_NEEDED = "SPECIALIST_REVIEW_NEEDED"
DESCRIPTION_LIMIT = 140
State = Literal["pending", "success", "failure"]


@dataclass(frozen=True)
class BranchCommit:
    sha: str
    parents: tuple[str, ...]
    files: tuple[ChangedFile, ...]
    author: str = ""
    # The forge account the commit's committer is linked to ("" when none).
    committer: str = ""

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1


@dataclass(frozen=True)
class StatusInput:
    commits: Sequence[BranchCommit]  # the pull request's commits, oldest first
    test_globs: tuple[str, ...]
    test_path: str
    red_ci: CIOutcome | None  # CI's verdict on the red commit (None: not read)
    head_ci: CIOutcome | None
    red_cases: frozenset[str]  # test cases in the regression test file at the red commit
    head_cases: frozenset[str] | None  # … at the head (None: the file is gone)
    max_commits_after_red: int
    ledger: Ledger
    root_cause_evidenced: bool = True
    root_cause_note: str = ""
    # Whether the proof still stands at the head (``proof.check_proof``; None: it does) and what CI at the
    # head said of the regression test (``proof.head_report``; None: not read).
    proof_problem: ProofProblem | None = None
    head_report: HeadReport | None = None
    # Whom a stopped review mentions: `debug.escalate_to` and the bug's author.
    escalate_to: tuple[str, ...] = ()
    bug_author: str = ""
    # Whether a failing required context on the red commit named the regression test (None: not checked)
    # and who confirmed the red proof with `/red-proof ok` where CI did not.
    red_named: bool | None = None
    red_confirmed_by: str = ""
    # The pull request's native reviews (the forge's list, oldest first) and the recorded conflicts between
    # `/review` rounds (``native``).
    native: tuple[Review, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    # What in the fix goes beyond the evidence (``scope.check_scope``; None: not checked — the hypotheses
    # board is off). What `/scope` acceptances cover is taken from the ledger.
    scope: ScopeCheck | None = None
    # Design forks opened on the bug or its pull request since `/bugfix` and not decided yet ("F2 on #12"),
    # each with where it is: a product decision stops the loop (``DECISION_PENDING``).
    decisions: tuple[tuple[str, str], ...] = ()
    # The issues ("#12", its address) whose design forks the juror could not check (the forge would not say
    # who may decide): their decisions count as not made (``INFRA_ERROR``).
    unchecked: tuple[tuple[str, str], ...] = ()
    # The reviewer groups whose paths the fix touches.
    specialists: tuple[Specialists, ...] = ()


@dataclass(frozen=True)
class Specialists:
    """A ``bugfix.sensitive_paths`` group the fix touches: its reviewers as configured (logins and
    ``@org/team`` names), the files that matched, the logins that count (the teams' members read from the
    forge) and the teams whose members could not be read (they count as nobody: fail closed)."""

    group: str
    reviewers: tuple[str, ...]
    files: tuple[str, ...]
    logins: tuple[str, ...]
    unreadable: tuple[str, ...] = ()


@dataclass(frozen=True)
class RegressionStatus:
    state: State
    code: str  # which rule decided (for tests and the ledger's table)
    description: str  # at most 140 characters (GitHub refuses longer)
    detail: str = ""  # the longer note the ledger comment shows

    def __post_init__(self) -> None:
        # It may name files and test cases someone else wrote: one inert line (bot.records.neutralise),
        # bounded.
        object.__setattr__(self, "description", neutralise.line(self.description, DESCRIPTION_LIMIT))
        object.__setattr__(self, "detail", neutralise.inert(self.detail))


def problem_on_red(problem: ProofProblem) -> bool:
    return problem.code == "RED_NOT_VOUCHED_CODE"


def own_commits(commits: Sequence[BranchCommit]) -> list[BranchCommit]:
    return [c for c in commits if not c.is_merge]


def red_commit(commits: Sequence[BranchCommit]) -> BranchCommit | None:
    found = own_commits(commits)
    return found[0] if found else None


def committers_of(commits: Sequence[BranchCommit]) -> frozenset[str]:
    """Who authored any commit of the branch, the red one included."""
    return frozenset(c.author.casefold() for c in own_commits(commits) if c.author)


def committers_after_red(commits: Sequence[BranchCommit]) -> frozenset[str]:
    """Who authored a commit after the red one (they may not review the fix)."""
    return frozenset(c.author.casefold() for c in own_commits(commits)[1:] if c.author)


def evaluate(given: StatusInput) -> RegressionStatus:
    mine = own_commits(given.commits)
    if not mine:
        return RegressionStatus("pending", "NO_COMMITS", "awaiting the red commit: the branch has no commits")
    red, later = mine[0], mine[1:]
    globs = given.test_globs
    outside = sorted(f.path for f in red.files if not is_test_path(f.path, globs))
    if outside:
        return RegressionStatus(
            "failure",
            "RED_TOUCHES_CODE",
            f"the first commit must change only tests; it also changes {', '.join(outside)[:80]}",
            "The red commit must hold the regression test only. Move the other changes to a later commit "
            "(rebase so the test-only commit stays first, then force-push).",
        )
    if given.test_path not in {f.path for f in red.files}:
        return RegressionStatus(
            "failure",
            "RED_WITHOUT_TEST",
            f"the first commit no longer adds the regression test {given.test_path}"[:140],
            "Rebases and force-pushes are fine as long as the commit that adds the regression test (and only "
            "tests) stays first.",
        )
    removed = removed_cases(given.red_cases, given.head_cases)
    if given.head_cases is None and later:
        return RegressionStatus(
            "failure",
            "TEST_FILE_DELETED",
            f"a later commit deletes the regression test file {given.test_path}"[:140],
            "Restore the regression test file: the fix must make the test pass, not remove it.",
        )
    if removed and later:
        return RegressionStatus(
            "failure",
            "TEST_CASES_REMOVED",
            f"a later commit removes test cases: {', '.join(removed)}"[:140],
            "Adding tests or strengthening them is fine; removing a test case is not. Restore: "
            + ", ".join(f"`{name}`" for name in removed),
        )
    if given.proof_problem is not None and later:
        problem = given.proof_problem
        return RegressionStatus("failure", problem.code, problem.description, problem.detail)
    if given.proof_problem is not None and problem_on_red(given.proof_problem):
        problem = given.proof_problem
        return RegressionStatus("failure", problem.code, problem.description, problem.detail)
    if given.head_report is not None and given.head_report.verdict == "skipped" and later:
        return RegressionStatus(
            "failure",
            "REGRESSION_TEST_SKIPPED_IN_CI",
            f"CI at the head reports the regression test skipped ({given.head_report.where})"[:140],
            "The head's CI names the regression test on a line saying it was skipped, expected to fail or "
            "deselected: look for a `conftest.py`, `addopts`/`-k` in configuration, or a workflow edit.",
        )
    if not given.root_cause_evidenced:
        return RegressionStatus(
            "pending",
            "ROOT_CAUSE_NOT_EVIDENCED",
            "pending: root cause not evidenced",
            given.root_cause_note or "The root cause has no evidence yet.",
        )
    if given.unchecked:
        where = ", ".join(name for name, _ in given.unchecked[:6])
        links = "; ".join(f"{name}: {url}" for name, url in given.unchecked[:6] if url)
        return RegressionStatus(
            "pending",
            INFRA_ERROR,
            f"pending: a repository admin must let Steward read who may decide — decisions on {where} "
            "cannot be checked",
            "A repository admin gives Steward's account the access to read who may decide (on Gitea that is "
            "repository admin; on GitHub, a token that may read collaborators' permissions). Until then the "
            "design forks there count as undecided and the review loop waits; the next sync (a push, CI, a "
            f"command, the periodic catch-up) checks again. {links}",
        )
    if given.decisions:
        named = ", ".join(name for name, _ in given.decisions[:6])
        links = "; ".join(f"{name}: {url}" for name, url in given.decisions[:6] if url)
        return RegressionStatus(
            "pending",
            DECISION_PENDING,
            f"a product decision is pending: {named} — the loop stops until it is decided",
            "A design fork opened on the bug or on this pull request after `/bugfix` is a product decision "
            "the fix depends on: the review loop stops until it is decided (`/decide <fork> <decision>` "
            f"where the fork is). {links}",
        )
    gaps = given.ledger.gaps
    if not gaps:
        if given.red_ci == "red":
            if given.red_named is False and not given.red_confirmed_by:
                return RegressionStatus(
                    "pending",
                    "RED_UNNAMED",
                    "red, but CI did not say which test failed",
                    "A failing lint or import error proves nothing: the red proof is the regression test "
                    "failing. CI's report on the first commit names no regression test case (Gitea Actions "
                    "statuses never do). Someone with write access reads CI's log and, when the regression "
                    "test is what failed, confirms it: `/red-proof ok`. docs/bugfix.md says how to make CI "
                    "name the failing test.",
                )
        elif given.red_ci == "green":
            return RegressionStatus(
                "failure",
                "RED_PASSES",
                "the test passes before the fix — it does not reproduce the bug",
                "CI was green on the red commit. Make the test fail for the reason the bug describes (amend "
                "the first commit and force-push), or a maintainer discloses the gap: "
                "`/accept-gap <reason>`.",
            )
        elif given.red_ci is None:
            # Nothing reported at all: on a repository without CI this would read "running" forever.
            return RegressionStatus(
                "pending",
                "AWAITING_RED",
                "no CI reported on the first commit — is CI set up for this branch?",
                "CI must fail on the first (test-only) commit, and no CI run has reported on it. If this "
                "repository's CI does not run on this branch, set it up (or push again to start it); if the "
                "repository has no CI, a maintainer discloses the gap with `/accept-gap <reason>`.",
            )
        else:
            note = "still running" if given.red_ci == "pending" else "inconclusive: re-run CI on it"
            return RegressionStatus(
                "pending",
                "AWAITING_RED",
                f"awaiting red proof: CI on the first commit is {note}",
                "CI must fail on the first (test-only) commit. If it errored, was cancelled or timed out, "
                "re-run it.",
            )
    fixes = [c for c in later if any(not is_test_path(f.path, globs) for f in c.files)]
    if not fixes:
        return RegressionStatus(
            "pending", "AWAITING_FIX", "awaiting the fix: push a commit that changes the code", ""
        )
    limit = given.max_commits_after_red
    if len(later) > limit:
        return RegressionStatus(
            "failure",
            "TOO_MANY_COMMITS",
            f"{len(later)} commits follow the red one (at most {limit}): amend the last fix and force-push",
            "A fix cycle after the allowed commits is an amended commit, force-pushed; the red commit stays "
            "first.",
        )
    ledger = given.ledger
    who = " ".join(f"@{w.lstrip('@')}" for w in (*given.escalate_to, given.bug_author) if w)
    if ledger.stop_reason:
        return _escalated(
            "REVIEW_STOPPED",
            f"the review stopped early: {ledger.stop_reason}",
            "A finding that comes back means the fix does not address it",
            who,
            ledger.stop_reason,
        )
    head = given.commits[-1].sha
    native = judge(ledger, given.native, given.conflicts, head)
    if native.state == "conflict":
        return _escalated(
            "REVIEWERS_IN_CONFLICT",
            f"the review stopped: reviewers disagree — {native.reason}",
            "Two reviewers disagree about the same head",
            who,
            native.reason,
            " To go on: push a new head and review it again, or the reviewer who requested changes "
            "approves or dismisses that review.",
        )
    if ledger.exhausted:
        return RegressionStatus(
            "failure",
            "BUDGET_EXHAUSTED",
            "the review budget is exhausted: a person must decide how this bug goes on",
            ledger.exhaustion_reason,
        )
    if given.scope is not None:
        waiting = given.scope.waiting(ledger.scope_accepted)
        if waiting.items():
            return RegressionStatus(
                "pending",
                FIX_OUT_OF_SCOPE,
                f"fix out of scope: {waiting.describe()}",
                scope_detail(waiting),
            )
    if given.head_ci != "green":
        word = {"red": "red", "inconclusive": "inconclusive (re-run it)"}.get(given.head_ci or "", "running")
        return RegressionStatus(
            "pending", "AWAITING_GREEN_HEAD", f"awaiting green CI on the head: it is {word}"
        )
    if native.state == "pending":
        return RegressionStatus("pending", "CHANGES_REQUESTED", native.reason[:140])
    review = ledger.review_state(head)
    if review != "complete":
        return RegressionStatus("pending", "AWAITING_REVIEW", review[:140])
    groups = specialists_waiting(given, head)
    if groups:
        group = groups[0]
        who = ", ".join(m.lstrip("@") for m in group.reviewers[:6]) or "no reviewers listed"
        unread = (
            " The members of "
            + ", ".join(f"`{t.lstrip('@')}`" for t in group.unreadable[:6])
            + " could not be read (the team does not exist, or Steward may not see it: on GitHub it needs "
            "the organisation's members read permission, on Gitea membership of the organisation), so "
            "nobody counts for it."
            if group.unreadable
            else ""
        )
        return RegressionStatus(
            "pending",
            SPECIALIST_REVIEW_NEEDED,
            f"awaiting the {group.group} group's review of the head (reviewers: {who})",
            f"The fix touches the paths the `{group.group}` reviewer group covers "
            "(`bugfix.sensitive_paths`): "
            + ", ".join(f"`{f}`" for f in group.files[:10])
            + f". Besides the independent review, one of {who} approves the head (the forge's own review), "
            "or gives its clean `/review` round themselves — a head reviewed already takes no second round."
            + unread,
        )
    word = "clean" if ledger.completion() == "CLEAN" else "clean, with accepted residuals"
    done = f"proof in order, review {word}"
    if given.head_report is not None and given.head_report.verdict == "silent":
        return RegressionStatus(
            "success",
            "SUCCESS",
            f"{done}; CI did not report the regression test's result at the head",
            "CI at the head does not name the regression test in its output, so its passing there is not "
            "confirmed (a `conftest.py`, `addopts` or workflow edit could skip it unseen). See "
            "docs/bugfix.md on making CI name tests.",
        )
    return RegressionStatus("success", "SUCCESS", done)


def specialists_waiting(given: StatusInput, head: str) -> list[Specialists]:
    """The reviewer groups whose paths the fix touches and whose members gave neither a clean round (that
    counts) nor an approval on ``head``."""
    out = []
    for specialists in given.specialists:
        names = {m.lstrip("@").casefold() for m in specialists.logins}
        rounds = any(
            r.head == head and r.verdict == "clean" and not r.void and r.actor.casefold() in names
            for r in given.ledger.rounds
        )
        approved = any(
            n.state == "approved" and (n.commit_id or head) == head and n.user.casefold() in names
            for n in given.native
        )
        if not (rounds or approved):
            out.append(specialists)
    return out


def scope_detail(waiting: ScopeCheck) -> str:
    """What the ledger says of a fix that goes beyond its evidence, and the two ways on."""
    lines = ["The fix must touch only the files the confirmed hypothesis's evidence names (tests aside)."]
    if waiting.outside:
        lines.append("It also changes " + ", ".join(f"`{f}`" for f in waiting.outside[:20]) + ".")
    if waiting.sensitive:
        lines.append(
            "It changes "
            + ", ".join(f"`{f}`" for f in waiting.sensitive[:20])
            + " (CI configuration, a lockfile, a generated file or one that looks like a secret: "
            "`bugfix.scope_globs`)."
        )
    if waiting.oversize:
        lines.append(
            f"It changes {waiting.oversize} lines (added plus removed, test files aside), more than "
            f"`bugfix.max_fix_lines` ({waiting.budget})."
        )
    if waiting.test_edited:
        lines.append(
            f"It changes the regression test `{waiting.test_edited}` as the first commit added it (adding "
            "new tests beside it is fine)."
        )
    lines.append(
        "Either extend the evidence on the bug (`/evidence H1 for path:line …`) or someone with maintain "
        "access who did not make or move the branch accepts it: `/scope` followed by the reason."
    )
    return " ".join(lines)


def _escalated(code: str, summary: str, why: str, who: str, reason: str, after: str = "") -> RegressionStatus:
    """A review that stopped for a person to decide: the status names whom to ask (``debug.escalate_to`` and
    the bug's author) and why it stopped."""
    return RegressionStatus(
        "failure",
        code,
        summary[:140].replace("`", ""),
        f"{why}: a person decides how this bug goes on ({who or 'the maintainers'}; `debug.escalate_to` "
        f"names whom to ask). {reason[0].upper()}{reason[1:]}.{after}",
    )
