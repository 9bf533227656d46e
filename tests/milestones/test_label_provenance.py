"""Who applied a passing label, whether it counts, and what putting back a change means (pure rules of
``handlers.milestones.provenance``)."""

from __future__ import annotations

from bot.forge import LabelEvent, MilestoneEvent
from handlers.milestones.gate import GateLabels
from handlers.milestones.provenance import (
    applier,
    applying,
    carried,
    in_milestone,
    last_change,
    look,
    look_titles,
    named_then,
    passing_labels,
    proof,
    put_back_reply,
    undo_of,
)
from handlers.milestones.state import LabelNames, Named, Title

BOT = "steward-bot"
NEEDS = "people with maintain access or more"


def on(label: str, actor: str) -> LabelEvent:
    return LabelEvent(label, True, actor)


def off(label: str, actor: str) -> LabelEvent:
    return LabelEvent(label, False, actor)


def test_the_passing_labels_are_the_four_that_let_an_item_pass_as_the_repository_names_them() -> None:
    assert passing_labels(GateLabels()) == ("fieldtest:pass", "audit:clean", "audit:ratified", "ratified")
    renamed = GateLabels(fieldtest_pass="scenario:ok")
    assert carried(("Scenario:OK", "fieldtest", "bug"), renamed) == ("scenario:ok",)
    assert carried(("cycle", "finding:bug", "forks:open"), GateLabels()) == ()


def test_the_applier_is_the_latest_person_to_put_it_on() -> None:
    events = [on("fieldtest:pass", "ann"), off("fieldtest:pass", "ann"), on("FieldTest:Pass", "bob")]
    assert applier(events, "fieldtest:pass", BOT) == "bob"
    assert applier(events, "audit:clean", BOT) is None
    assert applier([], "fieldtest:pass", BOT) is None


def test_a_label_steward_put_back_is_the_earlier_appliers() -> None:
    events = [on("ratified", "maint"), off("ratified", "writer"), on("ratified", BOT)]
    assert applier(events, "ratified", BOT) == "maint"
    # Only Steward ever put it on: nobody who could hold the permission applied it.
    assert applier([on("ratified", BOT)], "ratified", BOT) is None


def test_last_change_finds_the_labels_latest_event() -> None:
    events = [on("a", "x"), on("b", "y"), off("a", "z")]
    assert last_change(events, "A") == 2
    assert last_change(events, "b") == 1
    assert last_change(events, "c") is None


def test_a_label_the_sender_put_on_is_removed() -> None:
    events = [on("fieldtest:pass", "writer")]
    assert undo_of(events, "fieldtest:pass", present=True, sender="writer", bot=BOT) == ("remove", None)


def test_a_label_the_sender_took_off_is_restored_for_its_earlier_applier_to_be_checked() -> None:
    events = [on("audit:clean", "maint"), off("audit:clean", "writer")]
    assert undo_of(events, "audit:clean", present=False, sender="writer", bot=BOT) == ("restore", "maint")


def test_a_removed_label_nobody_applied_is_not_restored() -> None:
    events = [off("audit:clean", "writer")]
    assert undo_of(events, "audit:clean", present=False, sender="writer", bot=BOT) is None


def test_nothing_to_undo_when_the_change_is_someone_elses_or_no_longer_stands() -> None:
    events = [on("ratified", "writer"), off("ratified", "maint")]
    assert undo_of(events, "ratified", present=False, sender="writer", bot=BOT) is None, "not the sender's"
    events = [on("ratified", "writer")]
    assert undo_of(events, "ratified", present=False, sender="writer", bot=BOT) is None, "already gone"
    assert undo_of([], "ratified", present=True, sender="writer", bot=BOT) is None, "no event at all"


def test_steward_never_undoes_its_own_change() -> None:
    events = [on("fieldtest:pass", "writer"), off("fieldtest:pass", BOT)]
    assert undo_of(events, "fieldtest:pass", present=False, sender=BOT, bot=BOT) is None
    assert undo_of(events, "fieldtest:pass", present=False, sender="writer", bot=BOT) is None


def test_a_label_counts_only_from_someone_who_holds_the_permission_now() -> None:
    assert proof("fieldtest:pass", "maint", True, NEEDS).counts
    denied = proof("fieldtest:pass", "writer", False, NEEDS)
    assert not denied.counts and denied.by == "writer"
    assert denied.why == f"only {NEEDS} may set it"
    unknown = proof("fieldtest:pass", None, None, NEEDS)
    assert not unknown.counts and "no label event says who applied it" in unknown.why
    unreadable = proof("fieldtest:pass", "maint", None, NEEDS)
    assert not unreadable.counts and "repository admin" in unreadable.why


def test_the_reply_is_one_line_naming_the_labels_and_the_permission() -> None:
    assert put_back_reply("writer", ["fieldtest:pass"], "maintain") == (
        "@writer: `fieldtest:pass` needs maintain permission; Steward put it back."
    )
    two = put_back_reply("writer", ["audit:clean", "ratified"], "admin")
    assert two == "@writer: `audit:clean`, `ratified` need admin permission; Steward put them back."
    assert "\n" not in two


def test_a_pass_counts_in_the_milestone_the_issue_was_in_when_it_was_put_on() -> None:
    """Issue 35 item 6: the milestone changes before the `labeled` event, in the forge's order (``seq``), say
    where the scenario was; a move in the label's own second is not before it. GitHub names a milestone by
    title (key None), Gitea by id."""

    def label_at(seq: int, at: str = "2026-01-01T00:00:05Z") -> LabelEvent:
        return LabelEvent("fieldtest:pass", True, "m", at, seq=seq)

    github = [
        MilestoneEvent(True, "v0.9", None, "m", "2026-01-01T00:00:01Z", 0),
        MilestoneEvent(False, "v0.9", None, "w", "2026-01-01T00:00:05Z", 2),
        MilestoneEvent(True, "v1.0", None, "w", "2026-01-01T00:00:05Z", 3),
    ]
    assert in_milestone(github, label_at(1), 1, "v0.9")
    assert not in_milestone(github, label_at(1), 2, "v1.0"), "moved in later, in the same second"
    assert in_milestone(github, label_at(4), 2, "v1.0")
    assert not in_milestone([], label_at(1), 1, "v0.9"), "no milestone event: in none"
    gitea = [
        MilestoneEvent(True, "renamed since", 7, "m", "", 0),
        MilestoneEvent(False, "renamed since", 7, "w", "", 2),
        MilestoneEvent(True, "v1.0", 8, "w", "", 2),
    ]
    assert in_milestone(gitea, label_at(1), 7, "v0.9"), "Gitea: by id, whatever the title"
    assert not in_milestone(gitea, label_at(1), 8, "v1.0")
    assert not in_milestone(gitea, label_at(3), 7, "v0.9") and in_milestone(gitea, label_at(3), 8, "v1.0")
    events = [label_at(1), LabelEvent("fieldtest:pass", True, BOT, seq=5)]
    assert applying(events, "fieldtest:pass", BOT) == events[0], "Steward's own put-back is not the applier"


def test_a_label_renamed_to_a_passing_name_counts_only_from_when_steward_saw_it_so() -> None:
    """Issue 35 item 8 (Gitea shows a label under its name now): which label carries a passing name is kept
    by id with when Steward first saw it so; a label that took the name since Steward's last look (its id
    not above the highest id seen then) counts only from now; one created since, or seen on the first look
    of a trusted record, since always; a re-derived record trusts no name's past."""
    now = "2026-01-01T10:00:00Z"
    first = look(None, {"fieldtest:pass": 5}, 9, now, trusted=True)
    assert first == LabelNames({"fieldtest:pass": Named(5, "")}, 9)
    assert look(first, {"fieldtest:pass": 5}, 12, now, trusted=True) == LabelNames(first.names, 12)
    swapped = look(first, {"fieldtest:pass": 7}, 12, now, trusted=True)
    assert swapped.names["fieldtest:pass"] == Named(7, now), "an older label took the name: from now"
    created = look(first, {"fieldtest:pass": 11}, 12, now, trusted=True)
    assert created.names["fieldtest:pass"] == Named(11, ""), "created since the last look"
    rebuilt = look(None, {"fieldtest:pass": 5}, 9, now, trusted=False)
    assert rebuilt.names["fieldtest:pass"] == Named(5, now), "a re-derived record knows no name's past"
    assert LabelNames.from_json(swapped.to_json()) == swapped

    def put_on(ident: int | None, at: str) -> LabelEvent:
        return LabelEvent("fieldtest:pass", True, "m", at, label_id=ident)

    assert named_then(first, "FieldTest:Pass", put_on(5, "2025-01-01T00:00:00Z"))
    assert not named_then(first, "fieldtest:pass", put_on(6, "2026-02-01T00:00:00Z")), "another label"
    assert not named_then(swapped, "fieldtest:pass", put_on(7, "2026-01-01T09:59:59Z")), "put on before"
    assert named_then(swapped, "fieldtest:pass", put_on(7, "2026-01-01T10:00:00+00:00"))
    assert not named_then(LabelNames({}, 0), "fieldtest:pass", put_on(5, now)), "no label has the name"


def test_github_milestone_titles_count_for_the_time_the_milestone_had_them() -> None:
    """GitHub's `milestoned` events carry the title a milestone had: one counts for this milestone only
    under a title it had then, as Steward saw its titles (a rename it saw closes the old title's span)."""
    t0, t1 = "2026-01-01T10:00:00Z", "2026-01-02T10:00:00Z"
    first = look_titles((), "v1.0", t0, trusted=True)
    assert first == (Title("v1.0", ""),)
    assert look_titles(first, "v1.0", t1, trusted=True) == first
    renamed = look_titles(first, "v0.9", t1, trusted=True)
    assert renamed == (Title("v1.0", "", t1), Title("v0.9", t1))
    assert look_titles((), "v0.9", t1, trusted=False) == (Title("v0.9", t1),), "re-derived: from now"

    def joined(title: str, at: str) -> MilestoneEvent:
        return MilestoneEvent(True, title, None, "w", at, 0)

    label = LabelEvent("fieldtest:pass", True, "m", "2026-01-03T00:00:00Z", seq=1)
    assert in_milestone([joined("v1.0", "2026-01-01T12:00:00Z")], label, 2, "v0.9", renamed), "its old title"
    assert not in_milestone([joined("v0.9", "2026-01-01T12:00:00Z")], label, 2, "v0.9", renamed), (
        "another milestone's v0.9, before this one took the title"
    )
    assert in_milestone([joined("v0.9", "2026-01-02T11:00:00Z")], label, 2, "v0.9", renamed)
