"""The milestone gate as a table of cases: every failing reason, the internal exemption, the empty
milestone, pull requests in the milestone, ratified findings and unresolved forks."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from bot.config.settings import HandlerSettings, MilestoneLabels
from bot.forge import Issue
from handlers.milestones.gate import NO_FACTS, Facts, GateLabels, evaluate, is_internal

LABELS = GateLabels()


def item(number: int, state: str = "closed", *labels: str, pr: bool = False) -> Issue:
    return Issue(
        number, f"item {number}", "", "open" if state == "open" else "closed", "alice", labels, 1, pr
    )


PASSED_SCENARIO = item(1, "closed", "fieldtest", "fieldtest:pass")


@dataclass(frozen=True)
class Case:
    name: str
    items: tuple[Issue, ...]
    description: str = ""
    verdict: str = "blocked"
    # (leg, kind, item number) of every failing reason, in order.
    reasons: tuple[tuple[str, str, int | None], ...] = ()
    exempt: bool = False
    # What the forge says beyond the labels: passing labels that do not count, unresolved forks.
    facts: Facts = NO_FACTS


NOT_A_MAINTAINER = "only people with maintain access or more may set it"


CASES = [
    Case("complete and functional", (PASSED_SCENARIO, item(2)), verdict="pass"),
    Case(
        "the empty milestone: nothing is open, but there is no scenario",
        (),
        reasons=(("functional", "no-scenario", None),),
    ),
    Case("an empty internal milestone passes", (), description="internal: true", verdict="pass", exempt=True),
    Case(
        "an open issue blocks complete",
        (PASSED_SCENARIO, item(2, "open")),
        reasons=(("complete", "open-item", 2),),
    ),
    Case(
        "an open pull request in the milestone blocks complete",
        (PASSED_SCENARIO, item(3, "open", pr=True)),
        reasons=(("complete", "open-item", 3),),
    ),
    Case(
        "a merged (closed) pull request counts as done", (PASSED_SCENARIO, item(3, pr=True)), verdict="pass"
    ),
    Case(
        "a cycle item without an audit label",
        (PASSED_SCENARIO, item(4, "closed", "cycle")),
        reasons=(("complete", "audit-missing", 4),),
    ),
    Case(
        "audit:clean and audit:ratified both satisfy cycle",
        (
            PASSED_SCENARIO,
            item(4, "closed", "cycle", "audit:clean"),
            item(5, "closed", "Cycle", "AUDIT:RATIFIED"),
        ),
        verdict="pass",
    ),
    Case(
        "an unresolved design fork blocks complete, open or closed",
        (PASSED_SCENARIO, item(6, "closed", "forks:open")),
        reasons=(("complete", "unresolved-fork", 6),),
        facts=Facts(open_forks={6: "F1"}),
    ),
    Case(
        "the juror, not the label: a fork still open blocks though `forks:open` was taken off by hand",
        (PASSED_SCENARIO, item(6, "closed", "forks:resolved")),
        reasons=(("complete", "unresolved-fork", 6),),
        facts=Facts(open_forks={6: "F2"}),
    ),
    Case(
        "the juror, not the label: a `forks:open` label put on by hand blocks nothing",
        (PASSED_SCENARIO, item(6, "closed", "forks:open")),
        verdict="pass",
    ),
    Case("a resolved fork does not", (PASSED_SCENARIO, item(6, "closed", "forks:resolved")), verdict="pass"),
    Case(
        "a fieldtest:pass that does not count (applied without the permission) is no pass",
        (PASSED_SCENARIO,),
        reasons=(("functional", "scenario-not-passed", 1),),
        facts=Facts(uncounted={1: {"fieldtest:pass": NOT_A_MAINTAINER}}),
    ),
    Case(
        "an audit label that does not count leaves the audit missing; the other one still satisfies it",
        (
            PASSED_SCENARIO,
            item(4, "closed", "cycle", "audit:clean"),
            item(5, "closed", "cycle", "audit:clean", "audit:ratified"),
        ),
        reasons=(("complete", "audit-missing", 4),),
        facts=Facts(uncounted={4: {"audit:clean": NOT_A_MAINTAINER}, 5: {"audit:clean": NOT_A_MAINTAINER}}),
    ),
    Case(
        "a ratified label that does not count settles no finding",
        (PASSED_SCENARIO, item(8, "open", "finding:friction", "ratified")),
        reasons=(("complete", "open-item", 8), ("functional", "finding-open", 8)),
        facts=Facts(uncounted={8: {"ratified": NOT_A_MAINTAINER}}),
    ),
    Case(
        "uncounted labels of one item do not touch another's",
        (PASSED_SCENARIO, item(4, "closed", "cycle", "audit:clean")),
        verdict="pass",
        facts=Facts(uncounted={9: {"audit:clean": NOT_A_MAINTAINER}}),
    ),
    Case(
        "no scenario at all",
        (item(2),),
        reasons=(("functional", "no-scenario", None),),
    ),
    Case(
        "a scenario still open blocks both legs",
        (item(1, "open", "fieldtest"),),
        reasons=(("complete", "open-item", 1), ("functional", "scenario-open", 1)),
    ),
    Case(
        "a scenario closed without fieldtest:pass",
        (item(1, "closed", "fieldtest"),),
        reasons=(("functional", "scenario-not-passed", 1),),
    ),
    Case(
        "an open bug finding",
        (PASSED_SCENARIO, item(7, "open", "finding:bug")),
        reasons=(("complete", "open-item", 7), ("functional", "bug-open", 7)),
    ),
    Case(
        "a ratified bug finding still blocks: ratifying settles friction and spec gaps only",
        (PASSED_SCENARIO, item(7, "open", "finding:bug", "ratified")),
        reasons=(("complete", "open-item", 7), ("functional", "bug-open", 7)),
    ),
    Case("a closed bug finding is fine", (PASSED_SCENARIO, item(7, "closed", "finding:bug")), verdict="pass"),
    Case(
        "an open friction finding not ratified",
        (PASSED_SCENARIO, item(8, "open", "finding:friction")),
        reasons=(("complete", "open-item", 8), ("functional", "finding-open", 8)),
    ),
    Case(
        "an open spec-gap finding not ratified",
        (PASSED_SCENARIO, item(9, "open", "finding:spec-gap")),
        reasons=(("complete", "open-item", 9), ("functional", "finding-open", 9)),
    ),
    Case(
        "a ratified open finding is settled for both legs",
        (
            PASSED_SCENARIO,
            item(8, "open", "finding:friction", "ratified"),
            item(9, "open", "finding:spec-gap", "ratified"),
        ),
        verdict="pass",
    ),
    Case(
        "an open item merely labelled ratified is still open",
        (PASSED_SCENARIO, item(10, "open", "ratified")),
        reasons=(("complete", "open-item", 10),),
    ),
    Case(
        "internal: the functional leg is exempt, the complete leg still holds",
        (item(2, "open"), item(7, "open", "finding:bug")),
        description="Plumbing.\n\n  Internal:   TRUE  \n",
        reasons=(("complete", "open-item", 2), ("complete", "open-item", 7)),
        exempt=True,
    ),
    Case(
        "every failing reason at once, in the legs' order",
        (
            item(1, "closed", "fieldtest"),
            item(2, "open", "cycle"),
            item(3, "closed", "forks:open"),
            item(4, "open", "finding:bug", pr=True),
            item(5, "open", "finding:spec-gap"),
        ),
        facts=Facts(open_forks={3: "F1"}),
        reasons=(
            ("complete", "open-item", 2),
            ("complete", "open-item", 4),
            ("complete", "open-item", 5),
            ("complete", "audit-missing", 2),
            ("complete", "unresolved-fork", 3),
            ("functional", "scenario-not-passed", 1),
            ("functional", "bug-open", 4),
            ("functional", "finding-open", 5),
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_the_gate(case: Case) -> None:
    result = evaluate(
        case.items,
        description=case.description,
        labels=LABELS,
        internal_marker="internal: true",
        facts=case.facts,
    )
    assert result.verdict == case.verdict
    assert result.exempt is case.exempt
    assert tuple((b.leg, b.kind, b.number) for b in result.blockers) == case.reasons
    assert all(b.missing for b in result.blockers), "every reason says what is missing"


def test_the_label_names_come_from_the_repository_settings() -> None:
    settings = HandlerSettings.model_validate(
        {
            "milestones": {"labels": {"fieldtest": "scenario", "fieldtest_pass": "scenario:ok"}},
            "forks": {"open_label": "fork?"},
        }
    )
    labels = GateLabels.from_settings(settings.milestones.labels, settings.forks.open_label)
    items = (item(1, "closed", "scenario", "scenario:ok"), item(2, "closed", "fieldtest:pass"))
    facts = Facts(uncounted={1: {"scenario:ok": NOT_A_MAINTAINER}})
    result = evaluate(items, description="", labels=labels, internal_marker="internal: true", facts=facts)
    assert [(b.kind, b.number) for b in result.blockers] == [("scenario-not-passed", 1)]
    assert result.blockers[0].missing == (
        "scenario closed without `scenario:ok` "
        f"(`scenario:ok` is there but does not count: {NOT_A_MAINTAINER})"
    )
    assert GateLabels.from_settings(MilestoneLabels(), "forks:open") == GateLabels()


@pytest.mark.parametrize(
    ("description", "internal"),
    [
        ("internal: true", True),
        ("Some words.\ninternal: true\nmore", True),
        ("INTERNAL:  True  ", True),
        ("internal: false", False),
        ("not internal: true", False),
        ("internal: true, probably", False),
        ("", False),
    ],
)
def test_the_internal_marker_is_a_line_of_its_own(description: str, internal: bool) -> None:
    assert is_internal(description, "internal: true") is internal


def test_an_empty_marker_exempts_nothing() -> None:
    assert not is_internal("\n\n", "   ")


def test_each_promise_needs_its_scenario_to_pass_and_without_a_list_one_scenario_suffices() -> None:
    """Issue 36 §6: with a promise list the functional leg is blocked while a promise has no passing
    scenario (passing as any scenario: labelled `fieldtest`, closed with a `fieldtest:pass` that counts); a
    promise whose command no longer holds blocks too; without a list, today's rule."""
    from handlers.milestones.gate import Promised

    scenarios = (PASSED_SCENARIO, item(2), item(3, "closed", "fieldtest", "fieldtest:pass"))
    plain = evaluate(scenarios, description="", labels=LABELS, internal_marker="internal: true")
    assert plain.passed and plain.coverage is None
    promises = [
        Promised("export", 1),
        Promised("import", 2),
        Promised("missing", 9),
        Promised("edited", 3, confirmed=False),
    ]
    uncounted = Facts(uncounted={3: {"fieldtest:pass": "applied by a writer"}})
    result = evaluate(
        scenarios, description="", labels=LABELS, internal_marker="internal: true", promises=promises
    )
    assert [c.state for c in result.coverage or ()] == [
        "passed",
        "not-scenario",
        "not-in-milestone",
        "unconfirmed",
    ]
    assert [(b.kind, b.number) for b in result.functional] == [
        ("promise-uncovered", 2),
        ("promise-uncovered", 9),
        ("promise-uncovered", 3),
    ]
    assert "promise 2 has no passing scenario" in result.functional[0].missing
    aside = evaluate(
        scenarios,
        description="",
        labels=LABELS,
        internal_marker="internal: true",
        facts=uncounted,
        promises=[Promised("checkout", 3)],
    )
    assert [c.state for c in aside.coverage or ()] == ["not-passed"] and not aside.passed
    done = evaluate(
        scenarios,
        description="",
        labels=LABELS,
        internal_marker="internal: true",
        promises=[Promised("export", 1), Promised("checkout", 3)],
    )
    assert done.passed and all(c.covered for c in done.coverage or ())
    still_open = evaluate(
        (PASSED_SCENARIO, item(4, "open", "fieldtest")),
        description="",
        labels=LABELS,
        internal_marker="internal: true",
        promises=[Promised("export", 1)],
    )
    assert [b.kind for b in still_open.blockers] == ["open-item", "scenario-open"], (
        "every scenario still counts"
    )
