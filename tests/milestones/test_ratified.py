"""Ratifications as the gate and the dashboard see them (pure rules:
``handlers.milestones.ratifications``)."""

from __future__ import annotations

from bot.forge import Issue
from handlers.milestones.gate import Facts, GateLabels, evaluate
from handlers.milestones.gate_facts import GateProof
from handlers.milestones.provenance import LabelProof
from handlers.milestones.ratifications import (
    Ratification,
    comment_digest,
    ratification_lines,
    ratifying_labels,
    with_ratifications,
    without_void,
)

LABELS = GateLabels()


def item(number: int, state: str, *labels: str) -> Issue:
    return Issue(number=number, title=f"Item {number}", body="", state=state, author="alice", labels=labels)


def test_ratify_applies_ratified_to_findings_audit_ratified_to_cycle_items_and_nothing_to_bugs() -> None:
    assert ratifying_labels(item(1, "open", "finding:friction"), LABELS) == ("ratified",)
    assert ratifying_labels(item(2, "open", "Finding:Spec-Gap"), LABELS) == ("ratified",)
    assert ratifying_labels(item(3, "closed", "cycle"), LABELS) == ("audit:ratified",)
    assert ratifying_labels(item(4, "open", "finding:friction", "cycle"), LABELS) == (
        "ratified",
        "audit:ratified",
    )
    assert ratifying_labels(item(5, "open", "finding:bug"), LABELS) == ()
    assert ratifying_labels(item(6, "open"), LABELS) == ()


def test_a_void_ratification_does_not_count_and_a_legacy_one_does() -> None:
    scenario = item(1, "closed", "fieldtest", "fieldtest:pass")
    void = item(2, "open", "finding:friction", "ratified")
    legacy = item(3, "open", "finding:spec-gap", "ratified")
    found = (Ratification(2, "ratified", "void"), Ratification(3, "ratified", "legacy"))
    seen = without_void([scenario, void, legacy], found)
    assert seen[1].labels == ("finding:friction",) and seen[2] == legacy and seen[0] == scenario
    result = evaluate(seen, description="", labels=LABELS, internal_marker="internal: true")
    assert {b.number for b in result.blockers} == {2}


def test_the_dashboard_lists_reasons_inert_legacy_and_void_ones_said_so() -> None:
    lines = ratification_lines(
        (
            Ratification(
                2, "ratified", "ratified", "maria", "2026-01-02T03:04:05Z", "ok @team <b>x</b>", "u"
            ),
            Ratification(3, "ratified", "legacy"),
            Ratification(4, "audit:ratified", "void"),
        ),
        "steward",
    )
    text = "\n".join(lines)
    assert "### Ratifications" in text
    assert (
        "#2 `ratified`: ratified by @maria at 2026-01-02T03:04:05Z" in text and "([the command](u))" in text
    )
    assert "@team" not in text and "<b>" not in text, "the reason is someone's text: inert"
    assert "#3 `ratified`: legacy ratification (no reason recorded)" in text
    assert "#4 `audit:ratified`: **does not count**" in text
    assert ratification_lines((), "steward") == []


def test_a_command_comment_digest_ignores_line_endings_and_trailing_blanks_only() -> None:
    assert comment_digest("/ratify ok  \r\nsecond") == comment_digest("/ratify ok\nsecond\n")
    assert comment_digest("/ratify ok") != comment_digest("/ratify OK")


def test_a_ratification_that_holds_counts_as_the_ratifiers_label_and_a_legacy_one_keeps_its_proof() -> None:
    why = "no label event says who applied it (only people with maintain access or more may)"
    proof = GateProof(
        Facts({2: {"ratified": why}, 3: {"ratified": why}}),
        {2: (LabelProof("ratified", None, False, why),), 3: (LabelProof("ratified", None, False, why),)},
    )
    found = (
        Ratification(2, "ratified", "ratified", "maria", "2026-01-02T03:04:05Z", "ok", "u"),
        Ratification(3, "ratified", "legacy"),
    )
    checked = with_ratifications(proof, found)
    assert checked.labels[2] == (LabelProof("ratified", "maria", True),)
    assert dict(checked.facts.uncounted) == {3: {"ratified": why}}, "the legacy label keeps its proof"
