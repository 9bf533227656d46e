"""What the dashboard, the reopen notice and the `/gate` reply say, and that they stay bounded and
harmless."""

from __future__ import annotations

import re

from bot.forge import Issue
from bot.records import sticky
from bot.records.neutralise import live_parts
from handlers.milestones.gate import NO_FACTS, Facts, GateLabels, evaluate
from handlers.milestones.provenance import LabelProof
from handlers.milestones.render import (
    Columns,
    Commands,
    DashboardView,
    gate_reply,
    mentions,
    plain,
    progress,
    render_dashboard,
    reopen_notice,
    without_stamp,
)
from handlers.milestones.state import Closure, DashboardData, Override, Reopened

LABELS = GateLabels()


def item(number: int, state: str = "closed", *labels: str, title: str = "", pr: bool = False) -> Issue:
    return Issue(number, title or f"item {number}", "", state, "alice", labels, 1, pr)  # type: ignore[arg-type]


def view(
    items: list[Issue],
    *,
    description: str = "",
    data: DashboardData | None = None,
    facts: Facts = NO_FACTS,
    **kw: object,
) -> DashboardView:
    result = evaluate(
        items, description=description, labels=LABELS, internal_marker="internal: true", facts=facts
    )
    fields: dict[str, object] = {
        "milestone_title": "v1.0",
        "milestone_url": "https://forge/o/r/milestone/1",
        "state": "open",
        "closed_at": None,
        "items": tuple(items),
        "result": result,
        "data": data or DashboardData(1),
        "internal_marker": "internal: true",
        "columns": Columns(LABELS),
        "commands": Commands("steward", "maintain+"),
        "facts": facts,
    }
    fields.update(kw)
    return DashboardView(**fields)  # type: ignore[arg-type]


def test_a_blocked_dashboard_leads_with_what_to_do_and_groups_the_blockers() -> None:
    items = [item(1, "open", "fieldtest"), item(2, "open", "cycle", pr=True), item(3, "closed", "forks:open")]
    facts = Facts(open_forks={3: "F1"})
    text = render_dashboard(view(items, facts=facts), updated_at="2026-12-01T12:00:00Z")
    lines = text.splitlines()
    assert lines[0].startswith("## Milestone [v1.0](https://forge/o/r/milestone/1): the gate is blocked")
    assert lines[2].startswith("❌ **Not ready to close: 5 blockers.** Clear them")
    assert "`/steward gate override <reason>`" in lines[2] and "maintain+" in lines[2]
    assert "**Progress:** 1 of 3 items closed (33%) `██████░░░░░░░░░░░░░░`" in text
    assert "- **Complete: ✗** open items: 2; audits missing: 1; unresolved design forks: 1" in text
    assert "- **Functional: ✗** field tests still open: 1" in text
    assert "**Open items** (2, complete leg)" in text
    assert "- #2 item 2 — open pull request: finish it or move it to another milestone" in text
    assert "| #2 | item 2 | PR, open | — | **missing** | — | — |" in text
    assert "| #3 | item 3 | issue, ✔ closed | — | — | — | **open** (F1) |" in text
    assert "- #3 item 3 — has an unresolved design fork (F1): resolve it" in text
    assert lines[-1].startswith("<sub>Updated 2026-12-01T12:00:00Z")


def test_the_exemption_and_a_passed_gate() -> None:
    text = render_dashboard(view([item(1)], description="internal: true"), updated_at="t")
    assert "**Functional: exempt (internal)**" in text
    assert "✅ **Ready to close:**" in text
    closed = DashboardData(
        1, "closed", "2026-12-01T11:00:00Z", closure=Closure("2026-12-01T11:00:00Z", "alice", "passed")
    )
    text = render_dashboard(
        view(
            [item(1, "closed", "fieldtest", "fieldtest:pass")],
            data=closed,
            state="closed",
            closed_at="2026-12-01T11:00:00Z",
        ),
        updated_at="t",
    )
    assert "✅ **Nothing to do: closed by @alice at 2026-12-01T11:00:00Z; gate passed.**" in text


def test_an_override_and_a_reopening_are_shown() -> None:
    data = DashboardData(
        1,
        override=Override(
            "maria",
            "2026-12-01T10:00:00Z",
            "abandoned: moved to v2",
            ("complete: #2 — open issue: finish it or move it to another milestone",),
        ),
    )
    text = render_dashboard(view([item(2, "open")], data=data), updated_at="t")
    assert "⚠️ **The gate is overridden** by @maria (2026-12-01T10:00:00Z): “abandoned: moved to v2”" in text
    assert "It set aside: complete: #2 — open issue: finish it or move it to another milestone." in text
    reopened = DashboardData(1, reopened=Reopened("2026-12-01T11:00:00Z", "bob", "2026-12-01T11:01:00Z"))
    text = render_dashboard(view([item(2, "open")], data=reopened), updated_at="t")
    assert (
        "Steward reopened it at 2026-12-01T11:01:00Z: it was closed by @bob while the gate was blocked."
        in text
    )


def test_only_the_stamp_changes_between_two_renders_of_the_same_state() -> None:
    one = render_dashboard(view([item(1, "open")]), updated_at="2026-12-01T12:00:00Z")
    two = render_dashboard(view([item(1, "open")]), updated_at="2026-12-01T12:05:00Z")
    assert one != two and without_stamp(one) == without_stamp(two)
    assert without_stamp(one.replace("\n", "\r\n") + "\n") == without_stamp(one)


def test_a_huge_milestone_stays_far_below_the_forge_limit() -> None:
    items = [
        item(n, "open", "cycle", "finding:bug", title="x" * 500 + "|<b>@everyone") for n in range(1, 3001)
    ]
    text = render_dashboard(view(items), updated_at="t")
    assert len(text) < 50_000
    assert "| … | 2900 more | | | | | |" in text and "- … 2975 more" in text
    body = sticky.fit("milestone-dashboard", "1", text, DashboardData(1).to_json())
    assert len(body) <= sticky.MAX_CHARS


def test_other_peoples_titles_cannot_break_the_page_or_mention_anyone() -> None:
    hostile = "a|b <!-- x --> <details>\n@org/team `code` @alice\u202e"
    cell = plain(hostile)
    assert "\n" not in cell and "`" not in cell
    assert not any(live_parts(cell).values())
    assert "a\\|b" in cell
    assert "@alice" not in cell and "@\u2060alice" in cell
    assert len(plain("y" * 500)) == 80


def test_progress() -> None:
    assert progress([]) == (0, 0, 0, "░" * 20)
    assert progress([item(1), item(2, "open")])[:3] == (1, 2, 50)


def test_the_reopen_notice_mentions_who_must_act() -> None:
    result = evaluate([item(2, "open")], description="", labels=LABELS, internal_marker="internal: true")
    cmds = Commands("steward", "admins")
    github = reopen_notice(
        milestone_title="v1", closer="bob", notify=(), forge="github", result=result, cmds=cmds
    )
    assert github.startswith("@bob: I reopened milestone **v1**: you closed it while its gate was blocked.")
    assert "- complete: #2 — open issue: finish it or move it to another milestone" in github
    assert "admins may write" in github
    gitea = reopen_notice(
        milestone_title="v1",
        closer=None,
        notify=("alice", "@org/release", "bad name!"),
        forge="gitea",
        result=result,
        cmds=cmds,
    )
    assert gitea.startswith("@alice @org/release: I reopened milestone **v1**")
    assert "Gitea does not record who closed a milestone" in gitea
    nobody = reopen_notice(
        milestone_title="v1", closer=None, notify=(), forge="gitea", result=result, cmds=cmds
    )
    assert nobody.startswith("I reopened milestone") and "`milestones.notify`" in nobody
    for text in (gitea, nobody):  # no parenthesis inside another
        assert not re.search(r"\([^()]*\(", text), text
    assert mentions(["a", "a", "@a"]) == "@a"


def test_the_gate_reply() -> None:
    passed = evaluate(
        [item(1)], description="internal: true", labels=LABELS, internal_marker="internal: true"
    )
    assert gate_reply(milestone_title="v1", result=passed, dashboard=7, data=None) == (
        "✅ The gate of milestone **v1** passes (an internal milestone: no field test is asked of it): "
        "it may be closed. The dashboard is #7."
    )
    blocked = evaluate([item(2, "open")], description="", labels=LABELS, internal_marker="internal: true")
    data = DashboardData(1, override=Override("m", "t", "why"))
    text = gate_reply(milestone_title="v1", result=blocked, dashboard=None, data=data)
    assert text.startswith("❌ The gate of milestone **v1** is blocked (2):")
    assert "overridden by @m" in text and text.endswith("Its dashboard is being opened.")


def test_without_notify_the_reopen_notice_mentions_the_admins_or_says_it_could_not_read_them() -> None:
    result = evaluate([item(2, "open")], description="", labels=LABELS, internal_marker="internal: true")
    cmds = Commands("steward", "admins")
    admins = reopen_notice(
        milestone_title="v1",
        closer=None,
        notify=(),
        forge="gitea",
        result=result,
        cmds=cmds,
        admins=("maria", "org/owners"),
    )
    assert admins.startswith("@maria @org/owners: I reopened milestone **v1**")
    assert "so I mention the repository's admins; set `milestones.notify`" in admins
    refused = reopen_notice(
        milestone_title="v1", closer=None, notify=(), forge="gitea", result=result, cmds=cmds, admins=None
    )
    assert refused.startswith("I reopened milestone **v1**")
    assert "I could not read who administers this repository" in refused
    notified = reopen_notice(
        milestone_title="v1",
        closer=None,
        notify=("lead",),
        forge="gitea",
        result=result,
        cmds=cmds,
        admins=None,
    )
    assert notified.startswith("@lead: ") and "administers" not in notified, "notify comes first"
    for text in (admins, refused, notified):
        assert not re.search(r"\([^()]*\(", text), text


def test_passing_labels_show_who_applied_them_and_those_that_do_not_count_say_why() -> None:
    why = "only people with maintain access or more may set it"
    items = [
        item(1, "closed", "fieldtest", "fieldtest:pass"),
        item(2, "closed", "fieldtest", "fieldtest:pass"),
        item(3, "closed", "cycle", "audit:clean"),
    ]
    proofs = {
        1: (LabelProof("fieldtest:pass", "maintainer", True),),
        2: (LabelProof("fieldtest:pass", "writer", False, why),),
        3: (LabelProof("audit:clean", None, False, "no label event says who applied it"),),
    }
    facts = Facts(
        uncounted={2: {"fieldtest:pass": why}, 3: {"audit:clean": "no label event says who applied it"}}
    )
    text = render_dashboard(view(items, facts=facts, proofs=proofs), updated_at="2026-12-01T12:00:00Z")
    at = "@\u2060"  # a handle shown, never a mention
    assert (
        f"| #1 | item 1 | issue, ✔ closed | — | — | scenario, `fieldtest:pass` by {at}maintainer | — |"
        in text
    )
    assert f"scenario, `fieldtest:pass` by {at}writer (does not count) |" in text
    assert "| `audit:clean` (does not count) |" in text
    assert "### Labels that do not count" in text
    assert f"- #2 `fieldtest:pass` by {at}writer (does not count): {why}" in text
    assert "- #3 `audit:clean` (does not count): no label event says who applied it" in text
    assert (
        f"scenario closed without `fieldtest:pass` (`fieldtest:pass` is there but does not count: {why})"
        in text
    )
    assert "@writer" not in text and "@maintainer" not in text
    assert not live_parts(text)["mention"]


def test_a_dashboard_where_every_label_counts_has_no_such_section() -> None:
    items = [item(1, "closed", "fieldtest", "fieldtest:pass")]
    proofs = {1: (LabelProof("fieldtest:pass", "maintainer", True),)}
    text = render_dashboard(view(items, proofs=proofs), updated_at="2026-12-01T12:00:00Z")
    assert "Labels that do not count" not in text and "(does not count)" not in text
