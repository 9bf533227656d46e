"""The milestone gate's effects on an in-memory forge: one dashboard, written only when it changes; a
blocked closure reopened once with one notice; a passing one recorded; overrides; the periodic job's
schedule; what an outsider cannot do. The end-to-end tests run the same flows on both sandbox forges."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bot.commands.context import CommandError
from bot.commands.periodic import PeriodicContext
from bot.config.settings import HandlerSettings
from bot.forge import TooManyItems
from bot.records import signing, sticky
from handlers import build_registry
from handlers.milestones.bot import (
    gate_command,
    on_item,
    on_milestone,
    reconcile_milestones,
    run_gate,
    run_refresh,
    watch_repository,
)
from handlers.milestones.plan import iso
from tests.milestones.fakes import (
    REPO,
    FakeDeferred,
    FakeForge,
    command_context,
    context,
    item_event,
    milestone_event,
)

NOW = datetime.now(UTC)
LONG_AGO = iso(NOW - timedelta(minutes=10))


@pytest.fixture(autouse=True)
def fresh_keyring() -> Iterator[None]:
    """Each test signs with a keyring of its own that does not know when signing started (a worker that an
    earlier test of the process ran installed its own: its signing start would make closures history)."""
    before = signing._current
    signing.install(signing.Keyring(Ed25519PrivateKey.generate()))
    yield
    signing._current = before


def dashboard(forge: FakeForge) -> tuple[int, dict[str, object]]:
    [found] = forge.dashboards()
    return found.number, sticky.unverified_data(found.body)


async def opened_dashboard(forge: FakeForge) -> int:
    await on_item(context(forge, item_event(forge, max(forge.issues))))
    return dashboard(forge)[0]


async def test_the_first_item_opens_one_dashboard_and_an_unchanged_refresh_writes_nothing() -> None:
    forge = FakeForge()
    forge.milestone(1, "v1")
    number = forge.add("Export", "open")
    await on_item(context(forge, item_event(forge, number)))
    # The record is signed for the dashboard's id, known once it exists: created, then signed in (one edit).
    assert forge.writes == ["create issue 2", "edit issue 2 ['body']"]
    board = forge.issues[2]
    assert board.title == "Milestone v1 — dashboard" and board.labels == ("milestone-dashboard",)
    assert board.milestone is None, "the dashboard is never put in its milestone"
    assert board.body.startswith("<!-- steward:milestone-dashboard:1 -->")
    assert "| #1 | Export | issue, open |" in board.body
    forge.writes.clear()
    await on_item(context(forge, item_event(forge, number)))
    await run_refresh(context(forge, milestone_event("steward-refresh", sender="")))
    assert forge.writes == [], "same state, nothing written (only the time would differ)"
    forge.set(number, labels=("fieldtest",))
    await on_item(context(forge, item_event(forge, number)))
    assert forge.writes == ["edit issue 2 ['body']"]


async def test_a_milestone_without_items_gets_no_dashboard() -> None:
    forge = FakeForge()
    forge.milestone(1)
    await run_refresh(context(forge, milestone_event("steward-refresh", sender="")))
    assert forge.writes == []


async def test_a_burst_of_item_events_costs_one_queued_refresh_and_no_forge_call() -> None:
    forge = FakeForge()
    forge.milestone(1)
    number = forge.add("a")
    deferred = FakeDeferred()
    for _ in range(100):
        await on_item(context(forge, item_event(forge, number), deferred=deferred))
    assert len(deferred.jobs) == 1 and forge.reads == [] and forge.writes == []
    [(event, delay)] = deferred.jobs.values()
    assert (event.name, event.action, event.milestone and event.milestone.number) == (
        "milestone",
        "steward-refresh",
        1,
    )
    assert 10 <= delay <= 20, "the default debounce is 10 s"
    assert event.issue_key == "github:o/r%1", "the refresh runs under the milestone's lock"


async def test_a_blocked_closure_is_reopened_once_with_one_notice_to_who_closed_it() -> None:
    forge = FakeForge()
    forge.milestone(1)
    forge.add("still open", "open")
    board = await opened_dashboard(forge)
    forge.close_milestone(1, LONG_AGO)
    forge.writes.clear()
    gate = milestone_event("steward-gate", sender="bob", extra={"closed_at": LONG_AGO})
    await run_gate(context(forge, gate))
    assert forge.writes == ["edit issue 2 ['body']", "comment on 2", "milestone 1 open"]
    [notice] = forge.comments[board]
    assert notice.body.splitlines()[1].startswith("@bob: I reopened milestone **v1**")
    assert "#1 — open issue: finish it or move it to another milestone" in notice.body
    assert (
        "Steward reopened it at" in forge.issues[board].body and "closed by @bob" in forge.issues[board].body
    )
    forge.writes.clear()
    await run_gate(context(forge, gate))
    assert forge.writes == [], "a replayed gate check neither reopens nor comments again"


async def test_a_gate_check_cut_short_after_its_notice_finishes_without_a_second_one() -> None:
    forge = FakeForge()
    forge.milestone(1)
    forge.add("still open", "open")
    await opened_dashboard(forge)
    forge.close_milestone(1, LONG_AGO)
    gate = milestone_event("steward-gate", sender="bob", extra={"closed_at": LONG_AGO})
    original = forge.set_milestone_state

    async def fails(*args: object, **kwargs: object) -> object:
        raise RuntimeError("the forge went away")

    forge.set_milestone_state = fails  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        await run_gate(context(forge, gate))
    forge.set_milestone_state = original  # type: ignore[method-assign]
    forge.writes.clear()
    await run_gate(context(forge, gate))
    assert forge.writes == ["milestone 1 open"], "the retry only reopens: notice and dashboard are there"


async def test_a_passing_closure_is_recorded_and_its_dashboard_closed() -> None:
    forge = FakeForge()
    forge.milestone(1)
    forge.add("scenario", "closed", "fieldtest", "fieldtest:pass")
    board = await opened_dashboard(forge)
    forge.close_milestone(1, LONG_AGO)
    forge.writes.clear()
    gate = milestone_event("steward-gate", sender="bob", extra={"closed_at": LONG_AGO})
    await run_gate(context(forge, gate))
    assert forge.writes == [f"edit issue {board} ['body', 'state']"]
    assert forge.issues[board].state == "closed"
    assert f"closed by @bob at {LONG_AGO}; gate passed." in forge.issues[board].body
    assert forge.milestones[1].state == "closed"
    forge.writes.clear()
    await run_gate(context(forge, gate))
    await run_refresh(context(forge, milestone_event("steward-refresh", sender="")))
    assert forge.writes == []
    # Reopened by a person: the dashboard opens again.
    forge.milestones[1] = replace(forge.milestones[1], state="open", closed_at=None)
    await run_refresh(context(forge, milestone_event("steward-refresh", sender="")))
    assert forge.issues[board].state == "open"


async def test_a_closure_steward_did_not_see_is_never_gated() -> None:
    """History: a closed milestone without a dashboard is never reopened."""
    forge = FakeForge()
    forge.milestone(1)
    forge.add("open", "open")
    forge.close_milestone(1, LONG_AGO)
    await reconcile_milestones(context(forge, milestone_event("steward-refresh", sender="")))
    assert forge.writes == [] and forge.milestones[1].state == "closed"


async def test_a_destroyed_dashboard_record_does_not_settle_a_closure() -> None:
    """Issue 23: deleting the data block used to make a closure count as settled. A record that does not
    verify counts as not settled: the gate is evaluated as if the milestone had just closed."""
    forge = FakeForge()
    forge.milestone(1)
    forge.add("open", "open")
    board = await opened_dashboard(forge)
    forge.set(board, body="<!-- steward:milestone-dashboard:1 -->\nsomeone's notes")
    forge.close_milestone(1, LONG_AGO)
    await run_gate(context(forge, milestone_event("steward-gate", extra={"closed_at": LONG_AGO})))
    assert forge.milestones[1].state == "open", "the blocked gate reopened it"
    notes = [c.body for c in forge.comments.get(board, [])]
    assert any("could not be verified; it was rebuilt" in n for n in notes), notes


async def test_a_forged_override_in_the_dashboard_record_does_not_close_a_blocked_milestone() -> None:
    """Issue 23: a writer who adds ``"override": {"by": <a maintainer>, …}`` to the dashboard's block."""
    forge = FakeForge()
    forge.milestone(1)
    forge.add("open", "open")
    board = await opened_dashboard(forge)
    data = sticky.unverified_data(forge.issues[board].body)
    data["override"] = {"by": "maintainer", "at": LONG_AGO, "reason": "ship it", "overrode": []}
    body = forge.issues[board].body.splitlines()
    forged = [sticky.encode_data(data) if line.startswith("<!-- steward:data ") else line for line in body]
    forge.set(board, body="\n".join(forged))
    forge.close_milestone(1, LONG_AGO)
    await run_gate(context(forge, milestone_event("steward-gate", extra={"closed_at": LONG_AGO})))
    assert forge.milestones[1].state == "open", "the forged override counted for nothing"
    assert "Override by" not in forge.issues[board].body
    assert sticky.unverified_data(forge.issues[board].body)["override"] is None


async def test_a_gate_check_that_runs_early_waits_for_the_end_of_the_grace_period() -> None:
    forge = FakeForge()
    forge.milestone(1)
    forge.add("open", "open")
    await opened_dashboard(forge)
    just_now = iso(datetime.now(UTC))
    forge.close_milestone(1, just_now)
    deferred = FakeDeferred()
    await run_gate(
        context(forge, milestone_event("steward-gate", extra={"closed_at": just_now}), deferred=deferred)
    )
    assert forge.milestones[1].state == "closed"
    [(event, delay)] = deferred.jobs.values()
    assert event.action == "steward-gate" and 50 <= delay <= 60


async def test_the_webhook_schedules_the_gate_once_per_closure() -> None:
    forge = FakeForge()
    forge.milestone(1)
    forge.add("open", "open")
    await opened_dashboard(forge)
    closed = iso(datetime.now(UTC))
    forge.close_milestone(1, closed)
    deferred = FakeDeferred()
    for _ in range(2):  # the delivery and its replay
        await on_milestone(context(forge, milestone_event("closed", sender="bob"), deferred=deferred))
    [(job, (event, delay))] = deferred.jobs.items()
    assert job == f"milestones:gate:github:o/r:1:{closed}"
    assert event.sender == "bob" and event.extra["closed_at"] == closed and 55 <= delay <= 60


async def test_an_override_holds_until_the_milestone_is_reopened() -> None:
    forge = FakeForge(permissions={"maria": "maintain"})
    forge.milestone(1)
    forge.add("abandoned work", "open")
    board = await opened_dashboard(forge)
    await gate_command(command_context(forge, board, "gate override abandoned: moved to v2", actor="maria"))
    data = sticky.unverified_data(forge.issues[board].body)
    assert data["override"]["by"] == "maria" and data["override"]["reason"] == "abandoned: moved to v2"
    assert data["override"]["overrode"] == [
        "complete: #1 — open issue: finish it or move it to another milestone",
        "functional: no field-test scenario: label at least one issue `fieldtest`",
    ]
    assert "**The gate is overridden** by @maria" in forge.issues[board].body
    forge.close_milestone(1, LONG_AGO)
    await run_gate(
        context(forge, milestone_event("steward-gate", sender="bob", extra={"closed_at": LONG_AGO}))
    )
    assert forge.milestones[1].state == "closed" and forge.issues[board].state == "closed"
    assert "without the gate (override by @maria: “abandoned: moved to v2”)" in forge.issues[board].body
    assert "gate passed" not in forge.issues[board].body
    forge.milestones[1] = replace(forge.milestones[1], state="open", closed_at=None)
    await run_refresh(context(forge, milestone_event("steward-refresh", sender="")))
    assert sticky.unverified_data(forge.issues[board].body)["override"] is None, "reopening ends the override"
    assert forge.issues[board].state == "open"


@pytest.mark.parametrize("change", ["edited", "deleted", "demoted"])
async def test_an_override_counts_only_as_its_command_comment_and_its_authors_permission_now(
    change: str,
) -> None:
    """Issue 23, item 2: the override's command comment edited or deleted after it was recorded, or its author
    no longer holding the permission: the override no longer holds, and the blocked gate reopens."""
    forge = FakeForge(permissions={"maria": "maintain"})
    forge.milestone(1)
    forge.add("abandoned work", "open")
    board = await opened_dashboard(forge)
    await gate_command(command_context(forge, board, "gate override abandoned: moved to v2", actor="maria"))
    assert sticky.unverified_data(forge.issues[board].body)["override"]["comment"] == 77
    thread = forge.comments[board]
    if change == "edited":
        thread[:] = [replace(c, body="/gate override something else") if c.id == 77 else c for c in thread]
    elif change == "deleted":
        thread[:] = [c for c in thread if c.id != 77]
    else:
        forge.permissions["maria"] = "write"
    forge.close_milestone(1, LONG_AGO)
    await run_gate(context(forge, milestone_event("steward-gate", extra={"closed_at": LONG_AGO})))
    assert forge.milestones[1].state == "open", "the override no longer holds: reopened"
    assert sticky.unverified_data(forge.issues[board].body)["override"] is None


async def test_who_may_override_and_where() -> None:
    forge = FakeForge(permissions={"tom": "triage", "wendy": "write", "maria": "maintain"})
    forge.milestone(1)
    item = forge.add("open", "open")
    board = await opened_dashboard(forge)
    with pytest.raises(
        CommandError, match=r"can only be run by people with maintain access or more; your access .* `triage`"
    ):
        await gate_command(command_context(forge, board, "gate override because", actor="tom"))
    with pytest.raises(CommandError, match="works on a milestone's dashboard"):
        await gate_command(command_context(forge, item, "gate override because", actor="maria"))
    with pytest.raises(CommandError, match="needs a reason"):
        await gate_command(command_context(forge, board, "gate override", actor="maria"))
    assert sticky.unverified_data(forge.issues[board].body)["override"] is None
    # A repository may lower the permission, but not below the floor of a privileged act (write).
    too_low = HandlerSettings.model_validate({"commands": {"gate-override": {"permission": "triage"}}})
    with pytest.raises(CommandError, match=r"write access or more; your access .* `triage`"):
        await gate_command(command_context(forge, board, "gate override now", actor="tom", settings=too_low))
    relaxed = HandlerSettings.model_validate({"commands": {"gate-override": {"permission": "write"}}})
    await gate_command(command_context(forge, board, "gate override now", actor="wendy", settings=relaxed))
    assert sticky.unverified_data(forge.issues[board].body)["override"]["by"] == "wendy"


async def test_gate_answers_anyone_and_changes_nothing() -> None:
    forge = FakeForge()
    forge.milestone(1)
    item = forge.add("open", "open")
    board = await opened_dashboard(forge)
    forge.writes.clear()
    await gate_command(command_context(forge, item, "gate", actor="outsider"))
    [reply] = [c for c in forge.comments[item] if c.author == "steward-bot"]
    assert "❌ The gate of milestone **v1** is blocked (2):" in reply.body and f"#{board}" in reply.body
    assert forge.writes == [f"comment on {item}"]
    loose = forge.add("no milestone", milestone=None)
    with pytest.raises(CommandError, match="is in no milestone"):
        await gate_command(command_context(forge, loose, "gate"))
    off = HandlerSettings.model_validate({"milestones": {"enabled": False}})
    await gate_command(command_context(forge, item, "gate", settings=off))
    assert "switched off" in [c for c in forge.comments[item] if c.author == "steward-bot"][-1].body


async def test_a_deleted_milestones_dashboard_is_closed() -> None:
    forge = FakeForge()
    forge.milestone(1)
    forge.add("a")
    board = await opened_dashboard(forge)
    del forge.milestones[1]
    await on_milestone(context(forge, milestone_event("deleted")))
    assert forge.issues[board].state == "closed" and "was deleted" in forge.issues[board].body


async def test_the_periodic_job_schedules_a_gitea_closure_once() -> None:
    forge = FakeForge(kind="gitea")
    forge.milestone(1)
    forge.add("open", "open")
    await opened_dashboard(forge)
    forge.close_milestone(1, LONG_AGO)
    deferred = FakeDeferred()

    async def find(kind: str, repo: object) -> FakeForge:
        return forge

    pctx = PeriodicContext(
        "milestones",
        NOW,
        HandlerSettings(),
        __import__("structlog").get_logger(),
        find,  # type: ignore[arg-type]
        ("gitea",),
        deferred,  # type: ignore[arg-type]
        registry=build_registry(),
    )
    assert await watch_repository(pctx, "gitea", REPO) == 1
    assert await watch_repository(pctx, "gitea", REPO) == 1, "asked again ..."
    [(job, (event, delay))] = deferred.jobs.items()  # ... but queued once
    assert job == f"milestones:gate:gitea:o/r:1:{LONG_AGO}" and delay == 0 and event.sender == ""
    await run_gate(context(forge, event))
    assert forge.milestones[1].state == "open"
    notice = forge.comments[dashboard(forge)[0]][0].body
    assert "Gitea does not record who closed a milestone" in notice


async def test_a_closure_while_steward_was_not_running_is_checked_and_history_is_not() -> None:
    """Issue 27: milestones with items but no dashboard yet. One closed after the periodic job's last look
    (remembered in Redis) is gated; one closed long before it is history, left alone; the look is
    remembered for the next one."""
    forge = FakeForge(kind="gitea")
    forge.milestone(1, "recent")
    forge.add("open", "open", milestone=1)
    forge.close_milestone(1, iso(NOW - timedelta(minutes=5)))
    forge.milestone(2, "ancient")
    forge.add("open too", "open", milestone=2)
    forge.close_milestone(2, iso(NOW - timedelta(days=3)))
    deferred = FakeDeferred()
    key = "milestones:polled:gitea:o/r"
    deferred.marks[key] = (NOW - timedelta(hours=2)).timestamp()  # Steward stopped two hours ago

    async def find(kind: str, repo: object) -> FakeForge:
        return forge

    pctx = PeriodicContext(
        "milestones",
        NOW,
        HandlerSettings(),
        __import__("structlog").get_logger(),
        find,  # type: ignore[arg-type]
        ("gitea",),
        deferred,  # type: ignore[arg-type]
        registry=build_registry(),
    )
    assert await watch_repository(pctx, "gitea", REPO) == 1
    [(job, (event, _))] = deferred.jobs.items()
    assert job.startswith("milestones:gate:gitea:o/r:1:")
    assert deferred.marks[key] >= NOW.timestamp(), "this look is remembered"
    await run_gate(context(forge, event))
    assert forge.milestones[1].state == "open" and forge.milestones[2].state == "closed"


@pytest.mark.parametrize(
    ("admins", "head"),
    [
        (("steward-bot", "maria"), "@maria: I reopened"),
        (None, "I could not read who administers this repository"),
        (TooManyItems("too many", limit=1000), "set `milestones.notify`"),
    ],
)
async def test_a_gitea_reopening_without_notify_mentions_the_admins_or_says_why_not(
    admins: object, head: str
) -> None:
    """The admins, never Steward itself; a 403 said plainly; any other failure to list them does not keep
    the milestone closed."""
    forge = FakeForge(kind="gitea")
    if isinstance(admins, Exception):
        failure = admins

        async def fails(repo: object) -> tuple[str, ...]:
            raise failure

        forge.repo_admins = fails  # type: ignore[method-assign]
    else:
        forge.admins = admins  # type: ignore[assignment]
    forge.milestone(1)
    forge.add("still open", "open")
    board = await opened_dashboard(forge)
    forge.close_milestone(1, LONG_AGO)
    await run_gate(context(forge, milestone_event("steward-gate", sender="", extra={"closed_at": LONG_AGO})))
    assert forge.milestones[1].state == "open"
    [notice] = forge.comments[board]
    assert head in notice.body.splitlines()[1] and "@steward-bot" not in notice.body


async def test_a_copy_of_a_dashboard_by_someone_else_is_not_a_dashboard() -> None:
    """Security: the hidden marker counts only in an issue Steward's own account wrote, so an outsider cannot
    make Steward edit their issue, take an override there, or hide the real dashboard."""
    forge = FakeForge(permissions={"maria": "maintain"})
    forge.milestone(1)
    forge.add("work", "open")
    board = await opened_dashboard(forge)
    fake = forge.add("Milestone v1 — dashboard", "open", "milestone-dashboard", milestone=None)
    forge.set(fake, body=forge.issues[board].body, author="mallory")
    forge.writes.clear()
    await run_refresh(context(forge, milestone_event("steward-refresh", sender="")))
    assert forge.writes == [] and forge.issues[fake].author == "mallory"
    with pytest.raises(CommandError, match="works on a milestone's dashboard"):
        await gate_command(command_context(forge, fake, "gate override x", actor="maria"))
    assert [b.number for b in forge.dashboards() if b.author == "steward-bot"] == [board]


async def test_reconcile_refreshes_every_tracked_milestone_and_gates_closures_nobody_checked() -> None:
    forge = FakeForge()
    forge.milestone(1, "v1")
    forge.milestone(2, "v2")
    forge.milestone(3, "v3")
    forge.add("open work", "open", milestone=1)
    forge.add("more open work", "open", milestone=2)
    await opened_dashboard(forge)  # v2's dashboard only: v1 has none yet
    board_v2 = dashboard(forge)[0]
    forge.close_milestone(2, LONG_AGO)  # closed while nobody looked
    forge.writes.clear()
    reconcile = replace(
        milestone_event("steward-refresh", sender=""), name="reconcile", action="", milestone=None
    )
    await reconcile_milestones(context(forge, reconcile))
    assert forge.milestones[2].state == "open", "v2's closure is gated: blocked, reopened"
    assert len(forge.comments[board_v2]) == 1
    titles = sorted(b.title for b in forge.dashboards())
    assert titles == ["Milestone v1 — dashboard", "Milestone v2 — dashboard"], "v1 gets one; v3 (empty) none"
    forge.writes.clear()
    await reconcile_milestones(context(forge, reconcile))
    assert forge.writes == [], "reconciling again writes nothing"


async def test_upgrading_reopens_nothing_and_re_signs_the_dashboard() -> None:
    """Issue 23: a dashboard written before records were signed is legacy: re-derived from its sources (issue
    35 item 1), a closure from before the signing start is history and stays settled (a blocked milestone is
    not reopened), and the record is signed on first touch, quietly."""
    forge = FakeForge()
    forge.milestone(1)
    forge.add("still open", "open")
    board = await opened_dashboard(forge)
    forge.close_milestone(1, LONG_AGO)
    keyring = signing.current()
    keyring.since, before = time.time() + 1, keyring.since  # Steward started signing after the dashboard
    try:
        await _upgraded(forge, board)
    finally:
        keyring.since = before


async def _upgraded(forge: FakeForge, board: int) -> None:
    old = {"v": 1, "key": 1, "state": "closed", "closed_at": LONG_AGO, "counts": [1, 0], "internal": False}
    old["closure"] = {"at": LONG_AGO, "by": None, "verdict": "passed"}
    forge.set(board, body=sticky.fit("milestone-dashboard", "1", "the old dashboard", old), state="closed")
    # What Steward remembers of the signatures it wrote is gone too, as after an upgrade.
    signing.current().memory = signing.LocalMemory()
    await reconcile_milestones(context(forge, milestone_event("steward-refresh", sender="")))
    assert forge.milestones[1].state == "closed", "history is not reopened"
    assert "<!-- steward:sig v1 " in forge.issues[board].body, "re-signed on first touch"
    assert not any("rebuilt" in c.body for c in forge.comments.get(board, []))
    await reconcile_milestones(context(forge, milestone_event("steward-refresh", sender="")))
    assert forge.milestones[1].state == "closed"


async def test_a_dashboard_another_job_wrote_after_the_catch_up_listed_it_is_read_again() -> None:
    """The catch-up lists every dashboard, then holds each milestone's lock in turn; an item's refresh may
    write a dashboard in between. Under the lock, the listed copy is older than the record Steward last
    signed: it is read again, not reported as "replaced by an older version" and rebuilt from the stale copy
    (seen on Gitea: a second, false note after a writer's edit)."""
    forge = FakeForge()
    forge.milestone(1)
    number = forge.add("work", "open")
    board = await opened_dashboard(forge)
    listed = forge.list_milestones

    async def another_job_writes_meanwhile(repo: Any, state: str = "open") -> Any:
        forge.set(number, labels=("fieldtest",))
        await on_item(context(forge, item_event(forge, number)))
        return await listed(repo, state)

    forge.list_milestones = another_job_writes_meanwhile  # type: ignore[method-assign]
    before = forge.issues[board].body
    reconcile = replace(
        milestone_event("steward-refresh", sender=""), name="reconcile", action="", milestone=None
    )
    forge.writes.clear()
    await reconcile_milestones(context(forge, reconcile))
    assert forge.issues[board].body != before, "the item's refresh wrote the dashboard"
    assert forge.writes == ["edit issue 2 ['body']"], "the catch-up found it current and wrote nothing"
    assert forge.comments.get(board, []) == [], "no note: nobody replaced the dashboard"
    assert f"issue {board}" in forge.reads, "the listed copy was read again under the lock"
