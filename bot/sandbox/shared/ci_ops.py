"""The sandbox playing CI: commit statuses (both forges) and GitHub check runs and suites, set now or after
a delay, with the webhooks a real CI's reports cause.

Tests play CI through ``POST /_sandbox/ci``; ``steward sandbox --ci`` plays it by itself on every push to a
branch: one ``ci/sandbox`` report per new head (a check run on GitHub-flavoured repositories, a commit
status on Gitea-flavoured ones), **red when the commit changes only test files and green otherwise** — so
a bugfix branch whose first commit adds only a regression test is red first, and green once the fix lands.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Literal

from starlette.requests import Request

from bot.sandbox.shared import gitmodel

from .events_port import Events, EventsFactory
from .state import Annotation, CheckRun, CheckSuite, CommitStatus, Repo, now_iso

if TYPE_CHECKING:
    from .caller import Caller

CI_LOGIN = "sandbox-ci"
AUTO_CONTEXT = "ci/sandbox"
Kind = Literal["status", "check_run"]
# A suite concludes with the worst of its runs (GitHub: "the check suite's conclusion is the … most severe").
_SUITE_ORDER = (
    "action_required",
    "cancelled",
    "timed_out",
    "failure",
    "stale",
    "neutral",
    "skipped",
    "success",
)


def _emitter(request: Request) -> Events:
    sandbox = request.app.state.sandbox
    sandbox.forge.ensure_user(CI_LOGIN, kind="Bot")
    factory: EventsFactory = request.app.state.emitter
    return factory(request, CI_LOGIN)


def set_status(
    events: Events,
    repo: Repo,
    sha: str,
    *,
    state: str,
    context: str,
    description: str | None = None,
    target_url: str | None = None,
    creator: str,
) -> CommitStatus:
    """A new commit status (the latest per context is what counts) and its `status` webhook."""
    status = CommitStatus(
        id=events.sandbox.forge.new_id(),
        sha=sha,
        state=state,  # type: ignore[arg-type]
        context=context,
        description=description,
        target_url=target_url,
        creator=creator,
    )
    repo.statuses.append(status)
    events.status(repo, status)
    return status


def _suite_for(events: Events, repo: Repo, sha: str, app_id: int = 0) -> CheckSuite:
    """The open check suite of `app_id` (0: the sandbox's CI) for `sha`, or a new one."""
    suite = next(
        (
            s
            for s in repo.check_suites
            if s.head_sha == sha and s.status != "completed" and s.app_id == app_id
        ),
        None,
    )
    if suite is None:
        branch = next(
            (
                r.removeprefix("refs/heads/")
                for r, h in sorted(repo.refs.items())
                if h == sha and "heads/" in r
            ),
            None,
        )
        commit = repo.commits.get(sha)
        suite = CheckSuite(
            id=events.sandbox.forge.new_id(),
            head_sha=sha,
            head_branch=branch,
            before=commit.parents[0] if commit and commit.parents else None,
            status="in_progress",
            app_id=app_id,
        )
        repo.check_suites.append(suite)
    return suite


def start_run(
    events: Events, repo: Repo, sha: str, name: str, app_id: int = 0, details_url: str | None = None
) -> CheckRun:
    """A check run in progress (webhook `check_run` created), of the sandbox's CI or of App `app_id`."""
    suite = _suite_for(events, repo, sha, app_id)
    run = CheckRun(
        id=events.sandbox.forge.new_id(), suite_id=suite.id, head_sha=sha, name=name, details_url=details_url
    )
    run.status = "in_progress"
    repo.check_runs.append(run)
    events.check_run(repo, run, "created")
    return run


def set_output(run: CheckRun, output: dict[str, Any] | None) -> None:
    """A check run's `output`: `title`, `summary`, `text` and `annotations` (GitHub "Create a check run":
    each annotation has `path`, `start_line`, `end_line`, `annotation_level`, `message`, optional `title`,
    `raw_details`); without one, the title and summary say the conclusion."""
    output = output or {}
    run.title = str(output.get("title") or f"{run.name}: {run.conclusion or run.status}")
    run.summary = str(output.get("summary") or run.title)
    run.text = output.get("text") or None
    run.annotations.extend(Annotation.model_validate(a) for a in output.get("annotations") or [])


def complete_run(
    events: Events, repo: Repo, run: CheckRun, conclusion: str, output: dict[str, Any] | None = None
) -> None:
    """The run concludes (webhook `check_run` completed); when its suite has no run left going, the suite
    concludes too (webhook `check_suite` completed)."""
    run.status, run.conclusion, run.completed_at = "completed", conclusion, now_iso()
    set_output(run, output)
    events.check_run(repo, run, "completed")
    suite = next(s for s in repo.check_suites if s.id == run.suite_id)
    runs = [r for r in repo.check_runs if r.suite_id == suite.id]
    if all(r.status == "completed" for r in runs):
        found = {r.conclusion for r in runs}
        suite.status = "completed"
        suite.conclusion = next((c for c in _SUITE_ORDER if c in found), "success")
        suite.updated_at = now_iso()
        events.check_suite(repo, suite, "completed")


def play(
    request: Request,
    repo: Repo,
    sha: str,
    *,
    kind: Kind,
    context: str,
    outcome: str,
    delay: float = 0.0,
    description: str | None = None,
    target_url: str | None = None,
    output: dict[str, Any] | None = None,
) -> None:
    """Report `outcome` for `context` on `sha`, now or after `delay` seconds. A check run shows as in progress
    from now on; a status is posted when its time comes (a real CI posts `pending` first if it wants to).
    A check run's `output` (title, summary, text, annotations) comes with its conclusion."""
    sandbox = request.app.state.sandbox
    events = _emitter(request)
    run = start_run(events, repo, sha, context) if kind == "check_run" else None

    def report() -> None:
        if run is not None:
            if outcome not in ("in_progress", "queued"):
                complete_run(events, repo, run, outcome, output)
        else:
            set_status(
                events,
                repo,
                sha,
                state=outcome,
                context=context,
                description=description,
                target_url=target_url,
                creator=CI_LOGIN,
            )
        sandbox.save()

    if delay <= 0:
        report()
        return

    async def later() -> None:
        await asyncio.sleep(delay)
        report()

    sandbox.background(later())


def _test_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return (
        path.startswith(("tests/", "test/"))
        or "/tests/" in path
        or name.startswith("test_")
        or name.endswith(("_test.py", "_test.go"))
        or ".test." in name
        or ".spec." in name
    )


def auto_outcome(repo: Repo, sha: str) -> str:
    """--ci: failure when the commit changes test files only (a regression test without its fix)."""
    return "failure" if _failing_tests(repo, sha) else "success"


def _failing_tests(repo: Repo, sha: str) -> list[str]:
    """The test files of a commit that changes nothing else (--ci fails them), else none."""
    added, removed, modified = gitmodel.changed_paths(repo, repo.commits[sha])
    changed = added + removed + modified
    if not changed or not all(_test_file(p) for p in changed):
        return []
    return sorted(added + modified) or sorted(removed)


def auto_report(repo: Repo, sha: str, branch: str) -> tuple[str, str, dict[str, Any]]:
    """--ci's outcome, the status description, and the check run output: a red run names each failing
    test file (title, summary, text and one failure annotation per file), so a red check says which test
    failed, as a real CI's does."""
    failing = _failing_tests(repo, sha)
    if not failing:
        return "success", f"sandbox CI on {branch}", {"title": "All tests passed", "summary": f"on {branch}"}
    names = ", ".join(failing)
    title = f"{len(failing)} failing test file{'s' if len(failing) > 1 else ''}: {names}"
    output = {
        "title": title,
        "summary": f"The tests in {names} fail on {branch}: this commit changes tests and nothing else.",
        "text": "\n".join(f"FAILED {path}" for path in failing),
        "annotations": [
            {
                "path": path,
                "start_line": 1,
                "end_line": 1,
                "annotation_level": "failure",
                "title": "test failed",
                "message": f"{path} fails",
            }
            for path in failing
        ],
    }
    return "failure", title[:140], output


def on_push(caller: Caller, repo: Repo, branch: str, after: str) -> None:
    """With --ci, every new branch head gets its CI report."""
    sandbox = caller.sandbox
    if not sandbox.auto_ci:
        return
    kind: Kind = "check_run" if repo.flavor == "github" else "status"
    outcome, description, output = auto_report(repo, after, branch)
    play(
        caller.request,
        repo,
        after,
        kind=kind,
        context=AUTO_CONTEXT,
        outcome=outcome,
        delay=sandbox.ci_delay,
        description=description,
        output=output,
    )
