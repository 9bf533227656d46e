"""The effects that need an exact interleaving: a save that races another job, and `/refine` routing.

Everything else about the effects is tested end to end on the sandbox (tests/e2e/test_backlog_e2e.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

import handlers.core.refine as router
from bot.commands.context import CommandContext
from bot.forge import Comment, Issue, NotFound, PermissionDenied
from handlers.backlog import bot as backlog
from tests.backlog.fakes import FakeForge, command_context, event_context

BODY = "We need people to log in.\n\n## Why\nShoppers lose their carts.\n"


def forge() -> FakeForge:
    return FakeForge(Issue(5, "Add login", BODY, "open", "maintainer", ("refine",)))


def another_job_writes(times: set[int]) -> Any:
    """On the listed reads, "another job" edits the interview comment (adds a harmless handled key)."""

    def hook(fake: FakeForge, n: int) -> None:
        if n in times:
            for i, comment in enumerate(fake.comments):
                if comment.body.startswith("<!-- steward:backlog-interview:issue -->"):
                    fake.comments[i] = replace(comment, body=comment.body + f"\n<!-- moved {n} -->")

    return hook


async def test_a_save_with_nothing_moving_writes_once() -> None:
    fake = forge()
    await backlog.on_refine_label(event_context(fake))
    # The interview (created, then its record signed in), then the notice for its author.
    assert fake.writes == ["create 101", "edit 101", "create 102"]
    notice = fake.comments[-1].body
    assert notice.startswith("<!-- steward:backlog-notice:round-c1r1 -->")
    assert "@maintainer: round 1 of the refinement — " in notice
    await backlog.on_refine_label(event_context(fake))  # replay: nothing new
    assert fake.writes == ["create 101", "edit 101", "create 102"]


async def test_a_save_recomputes_once_when_the_state_moved() -> None:
    fake = forge()
    await backlog.on_refine_label(event_context(fake))
    fake.on_list = another_job_writes({fake.lists + 2})  # between this job's first read and its write
    ctx = command_context(fake, "", name="enough")
    await backlog.enough_command(ctx)
    assert any(w.startswith("create") for w in fake.writes[1:])  # the spec was written
    thread = await backlog.load(event_context(fake))
    assert thread.interview is not None and thread.interview.status == "stopped"
    assert thread.spec.current is not None and thread.spec.current.version == 1


async def test_a_save_reports_a_conflict_when_the_state_moved_twice() -> None:
    fake = forge()
    await backlog.on_refine_label(event_context(fake))
    first = fake.lists
    fake.on_list = another_job_writes({first + 2, first + 3})
    writes = list(fake.writes)
    with pytest.raises(backlog.CommandError, match="changed twice"):
        await backlog.enough_command(command_context(fake, "", name="enough"))
    assert fake.writes == writes  # nothing overwritten


async def test_a_label_event_reports_a_conflict_in_a_notice() -> None:
    fake = forge()
    fake.comments.append(
        Comment(50, "steward-bot", "<!-- steward:backlog-interview:issue -->\nbeing written")
    )
    fake.on_list = another_job_writes(set(range(1, 50)))
    await backlog.on_refine_label(event_context(fake))
    assert fake.comments[0].body.startswith("<!-- steward:backlog-interview:issue -->\nbeing written")
    [notice] = [c for c in fake.comments if c.body.startswith("<!-- steward:backlog-notice:conflict -->")]
    assert "changed twice" in notice.body


async def test_a_dependency_that_would_close_a_cycle_is_refused_and_spelled_out() -> None:
    fake = forge()
    fake.issue = replace(fake.issue, body=BODY + "\nBlocked by #7\n")
    fake.blocked_by = {7: [6], 6: [5]}
    await backlog.on_refine_label(event_context(fake))
    thread = await backlog.load(event_context(fake))
    assert thread.interview is not None
    [dep] = thread.interview.deps
    assert (
        dep.state == "refused"
        and "#5 is blocked by #7, which is blocked by #6, which is blocked by #5" in dep.note
    )
    assert 7 not in fake.blocked_by.get(5, [])
    assert "refused: it would close a cycle" in thread.interview_body  # type: ignore[operator]


@pytest.mark.parametrize(
    ("labels", "body", "bug"),
    [
        (("bug",), "", True),
        (("Bug",), "", True),
        ((), "## 1. Vision\nx\n## 4. Acceptance Criteria\ny", True),
        ((), "## 1. Visão\nx\n## 2. Persona & Cenário de Uso\ny", True),
        ((), "## 1. Vision\nonly one section", False),
        ((), "## 1. Goals\n## 2. Plan", False),
        (("enhancement",), "As a user I want things.", False),
    ],
)
def test_bug_reports_are_recognised(labels: tuple[str, ...], body: str, bug: bool) -> None:
    assert router.is_bug_report(labels, body) is bug


async def test_refine_routes_bugs_to_the_bug_engine_when_it_exists(monkeypatch: pytest.MonkeyPatch) -> None:
    called: list[CommandContext] = []

    async def engine(ctx: CommandContext) -> None:
        called.append(ctx)

    fake = FakeForge(Issue(5, "Crash", "It crashes", "open", "maintainer", ("bug",)))
    monkeypatch.setattr(router, "_bug_engine", lambda: engine)
    ctx = command_context(fake, "", name="refine")
    await router.refine_command(ctx)
    assert called == [ctx] and fake.writes == []


async def test_refine_on_a_bug_without_the_engine_says_it_runs_from_the_label(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = FakeForge(Issue(5, "Crash", "It crashes", "open", "maintainer", ("bug",)))
    monkeypatch.setattr(router, "_bug_engine", lambda: None)
    await router.refine_command(command_context(fake, "", name="refine"))
    [reply] = fake.comments
    assert "bug report" in reply.body and "`refine` label" in reply.body


async def test_refine_on_a_backlog_item_starts_the_interview_and_mirrors_the_label() -> None:
    fake = FakeForge(Issue(5, "Add login", BODY, "open", "maintainer", ()))
    await router.refine_command(command_context(fake, "", name="refine"))
    assert "refine" in fake.issue.labels
    thread = await backlog.load(event_context(fake))
    assert thread.interview is not None and thread.interview.status == "interviewing"


def test_refine_is_registered_once_by_the_router() -> None:
    from handlers import build_registry

    assert build_registry().commands["refine"].handler is router.refine_command


async def test_references_past_the_limit_are_listed_as_skipped_not_walked() -> None:
    """Abuse: a body that names a hundred blockers costs at most `limits.references_per_issue` lookups and
    writes; the rest are listed as skipped (five by number, the others counted)."""
    fake = forge()
    refs = " ".join(f"#{n}" for n in range(100, 200))
    fake.issue = replace(fake.issue, body=BODY + f"\nBlocked by {refs}\n")
    await backlog.on_refine_label(event_context(fake))
    thread = await backlog.load(event_context(fake))
    assert thread.interview is not None
    deps = thread.interview.deps
    assert len([d for d in deps if d.state == "declared"]) == 20
    assert len(fake.blocked_by[5]) == 20, "no write past the limit"
    skipped = [d for d in deps if d.state == "skipped"]
    assert [d.number for d in skipped] == [120, 121, 122, 123, 124, 0]
    assert skipped[-1].note == "75 more references were skipped"
    assert "#120 — skipped: more than 20 references in one issue" in thread.interview_body  # type: ignore[operator]


async def test_blockers_linked_on_the_forge_are_recorded_within_the_same_bound() -> None:
    """Issue 36 §7: the forge's own "blocked by" links, named in no text, are recorded as linked (one list of
    them a job), bounded by `limits.references_per_issue` like the ones a body names."""
    fake = forge()
    fake.issue = replace(fake.issue, body=BODY + "\nBlocked by #7\n")
    fake.blocked_by = {5: [7, *range(100, 130)]}
    await backlog.on_refine_label(event_context(fake))
    thread = await backlog.load(event_context(fake))
    assert thread.interview is not None
    deps = thread.interview.deps
    assert [d.number for d in deps if d.state == "declared"] == [7], "the body's blocker, already linked"
    assert [d.number for d in deps if d.state == "linked"] == list(range(100, 119))
    assert [d.number for d in deps if d.state == "skipped"] == [119, 120, 121, 122, 123, 0]
    assert fake.writes.count("blocked 5<-7") == 0, "nothing written for what the forge already links"
    assert fake.blocked_by_lists == 1
    assert "#100 (linked on the forge as blocking this issue)" in thread.interview_body  # type: ignore[operator]
    await backlog.on_refine_label(event_context(fake))  # a replay lists once more and records nothing new
    assert fake.blocked_by_lists == 2
    assert (await backlog.load(event_context(fake))).interview == thread.interview


@pytest.mark.parametrize("error", [NotFound("dependencies are off"), PermissionDenied("no access")])
async def test_a_forge_without_dependencies_links_none(error: Exception) -> None:
    """Gitea answers 404 for an issue's dependencies when the repository turned them off: that means none
    are linked, and the blockers a body names are only listed."""
    fake = forge()
    fake.issue = replace(fake.issue, body=BODY + "\nBlocked by #7\n")
    fake.blocked_by_error = error
    await backlog.on_refine_label(event_context(fake))
    thread = await backlog.load(event_context(fake))
    assert thread.interview is not None and thread.interview.status == "interviewing"
    assert [(d.number, d.state) for d in thread.interview.deps] == [(7, "listed")]
    assert fake.blocked_by_lists == 1
