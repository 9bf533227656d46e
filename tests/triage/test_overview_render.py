"""The overview issue's rules and text: who must act first, every line a link, people shown and never
mentioned, lists bounded."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given

from bot.forge import Issue, Milestone
from bot.records.neutralise import live_parts
from handlers.triage.overview_render import MAX_LINES, Words, render_overview, without_stamp
from handlers.triage.overview_rules import Claim, Gate, OverviewLabels, classify
from tests.unit.test_inert_renderers import assert_inert
from tests.unit.test_neutralise import PEOPLES_TEXT

NOW = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)
LABELS = OverviewLabels(
    needs_info="refinement:needs-info",
    needs_triage="refinement:needs-triage",
    old_rejected="refinement:rejected",
    approved="refinement:approved",
    forks_open="forks:open",
    bugfix_open="bugfix:open",
    bugfix_exhausted="bugfix:budget-exhausted",
    hold="do-not-merge/hold",
    needs_human="needs-human",
    claimed="claimed",
    overview="steward-overview",
    dashboard="milestone-dashboard",
)
BOT = "steward-bot"


def issue(number: int, *labels: str, author: str = "alice", title: str = "", **kw: object) -> Issue:
    return Issue(
        number=number,
        title=title or f"issue {number}",
        body="",
        state=str(kw.pop("state", "open")),  # type: ignore[arg-type]
        author=author,
        labels=labels,
        html_url=f"https://forge.example/o/r/issues/{number}",
        updated_at=str(kw.pop("updated_at", "2026-12-01T09:00:00Z")),
        **kw,  # type: ignore[arg-type]
    )


def overview_of(items: list[Issue], milestones: list[Milestone] = (), **kw: object):  # type: ignore[assignment, no-untyped-def]
    return classify(
        items,
        list(milestones),
        kw.pop("gates", {}),  # type: ignore[arg-type]
        kw.pop("claims", []),  # type: ignore[arg-type]
        LABELS,
        bot_login=BOT,
        now=NOW,
        stale_after_days=7,
    )


def numbers(overview, section: str) -> list[int]:  # type: ignore[no-untyped-def]
    return [line.number for line in overview.lines(section)]


def test_each_open_issue_lands_where_the_next_action_is() -> None:
    items = [
        issue(1, "bug", "refinement:needs-info"),
        issue(2, "bug", "refinement:needs-triage"),
        issue(3, "refinement:rejected"),
        issue(4, "bug", "refinement:approved"),
        issue(5, "bug", "refinement:approved", assignees=("bob",)),
        issue(6, "bug", "refinement:approved", "bugfix:open"),
        issue(7, "forks:open"),
        issue(8, "needs-human"),
        issue(9, author=BOT, title="Bugfix for #6: a crash", is_pull_request=True, draft=True),
        issue(10, author=BOT, title="Bugfix for #4: b", is_pull_request=True),
        issue(11, "do-not-merge/hold", author=BOT, title="Bugfix for #1: c", is_pull_request=True),
        issue(12, "bugfix:budget-exhausted", author=BOT, title="WIP: Bugfix for #2: d", is_pull_request=True),
        issue(13, author="mallory", title="Bugfix for #6: not Steward's", is_pull_request=True),
        issue(14, "steward-overview", author=BOT),
        issue(15, "milestone-dashboard", author=BOT),
        issue(16, "refinement:approved", state="closed"),
    ]
    found = overview_of(items)
    assert numbers(found, "waiting_reporter") == [1]
    assert numbers(found, "waiting_maintainers") == [2, 3]
    assert numbers(found, "unclaimed") == [4]
    assert numbers(found, "forks_open") == [7]
    assert numbers(found, "escalated") == [8]
    assert numbers(found, "red_proof") == [9]
    assert numbers(found, "in_review") == [10]
    assert numbers(found, "held") == [11, 12]
    assert found.on_maintainers() == 2 + 1 + 1 + 1 + 2


def test_a_claim_takes_an_issue_off_the_unclaimed_list_and_goes_stale_after_the_days() -> None:
    items = [issue(4, "refinement:approved"), issue(5, "refinement:approved")]
    claims = [Claim(4, "carol", "2026-11-20T09:00:00Z"), Claim(5, "dave", "2026-11-30T09:00:00Z")]
    found = overview_of(items, claims=claims)
    assert numbers(found, "unclaimed") == []
    assert numbers(found, "stale_claims") == [4]
    assert found.lines("stale_claims")[0].people == ("carol",)
    # The label says claimed even where no record was read (or verified): never "unclaimed".
    assert numbers(overview_of([issue(6, "refinement:approved", "claimed")]), "unclaimed") == []


def test_the_page_leads_with_what_waits_on_the_maintainers_and_links_every_line() -> None:
    items = [issue(2, "refinement:needs-triage"), issue(1, "refinement:needs-info")]
    ms = Milestone(3, "v1.0", "open", open_issues=2, closed_issues=1, html_url="https://forge.example/m/3")
    dashboard = issue(20, "milestone-dashboard", author=BOT)
    text = render_overview(
        overview_of(items, [ms], gates={3: Gate(dashboard, "blocked", 2)}), Words(), changed_at="T"
    )
    lines = text.splitlines()
    assert lines[2] == "**1 item waits on the maintainers:** bugs waiting for the maintainers (1)."
    assert text.index("waiting for the maintainers (1)") < text.index("waiting for their reporter (1)")
    assert "- [#2](https://forge.example/o/r/issues/2) issue 2 — @\u2060alice" in text
    assert (
        "- [v1.0](https://forge.example/m/3): 1 of 3 closed; gate blocked by 2 "
        "([dashboard #20](https://forge.example/o/r/issues/20))" in text
    )
    for line in lines:
        if line.startswith("- ") and "more" not in line:
            assert "](https://" in line, line


def test_only_a_week_or_more_of_quiet_is_shown() -> None:
    items = [
        issue(1, "refinement:needs-triage", updated_at="2026-12-01T09:00:00Z"),
        issue(2, "refinement:needs-triage", updated_at="2026-11-20T09:00:00Z"),
    ]
    text = render_overview(overview_of(items), Words(), changed_at="T")
    assert "quiet 12 d" in text and text.count("quiet") == 1
    assert text.index("#2]") < text.index("#1]"), "the longest wait first"


def test_nothing_waiting_says_so_first() -> None:
    text = render_overview(overview_of([issue(1, "refinement:needs-info")]), Words(), changed_at="T")
    assert text.splitlines()[2].startswith("**Nothing waits on the maintainers.**")


def test_a_long_list_is_cut_with_how_many_more() -> None:
    items = [issue(n, "refinement:needs-triage") for n in range(1, 101)]
    text = render_overview(overview_of(items), Words(), changed_at="T")
    assert text.count("issues/") == MAX_LINES
    assert f"- … {100 - MAX_LINES} more" in text
    assert len(text) < 60_000


def test_only_the_stamp_differs_between_two_refreshes_of_the_same_state() -> None:
    found = overview_of([issue(1, "refinement:needs-triage")])
    a = render_overview(found, Words(), changed_at="2026-12-02T09:00:00Z")
    b = render_overview(found, Words(), changed_at="2026-12-02T10:00:00Z")
    assert a != b and without_stamp(a) == without_stamp(b)


def _render_with(text: str) -> str:
    login = "".join(ch for ch in text if ch.isalnum())[:30] or "x"
    items = [
        issue(1, "refinement:needs-triage", title=text, author=login),
        issue(2, "refinement:approved", title=text),
    ]
    ms = Milestone(3, text, "open", html_url="https://forge.example/m/3")
    claims = [Claim(2, login, "2026-01-01T00:00:00Z")]
    return render_overview(overview_of(items, [ms], claims=claims), Words(), changed_at="T")


@given(PEOPLES_TEXT)
def test_peoples_titles_and_logins_never_act(text: str) -> None:
    """Nothing acts that Steward's own page (rendered for a plain "x") does not have: no mention at all."""
    assert_inert(_render_with, text)
    assert not live_parts(_render_with(text))["mention"]
