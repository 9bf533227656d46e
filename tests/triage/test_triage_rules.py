"""The everyday commands' pure rules: which labels are Steward's own, and the short forms' switch."""

from __future__ import annotations

from bot.commands.dispatch import setting_on
from bot.config.repo_file import merge
from bot.config.settings import HandlerSettings
from handlers.triage.rules import is_managed, managed_labels


def test_the_short_forms_are_off_until_the_repository_switches_them_on() -> None:
    assert not setting_on(HandlerSettings(), "triage.short_commands")
    on = merge(HandlerSettings(), {"triage": {"short_commands": True}})
    assert setting_on(on, "triage.short_commands")
    assert not setting_on(on, "triage.no_such_setting")


def test_every_label_steward_manages_is_derived_from_the_settings() -> None:
    settings = HandlerSettings()
    for label in (
        "refinement:pending",
        "refinement:needs-info",
        "refinement:needs-triage",
        "refinement:approved",
        "refine",
        "forks:open",
        "forks:resolved",
        "bugfix:open",
        "bugfix:merged",
        "debug:investigating",
        "needs-human",
        "level:L2",
        "fieldtest:pass",
        "audit:clean",
        "audit:ratified",
        "ratified",
        "milestone-dashboard",
    ):
        assert is_managed(settings, label), label
        assert is_managed(settings, label.upper()), label
    # A namespace of Steward's holds only Steward's labels, a state added later too.
    assert is_managed(settings, "bugfix:something-new") and is_managed(settings, "audit:other")
    # People's own labels, and the ones that classify work for the gate, are theirs.
    for label in ("bug", "good first issue", "cycle", "fieldtest", "finding:bug", "area/ui", "priority:high"):
        assert not is_managed(settings, label), label


def test_renamed_labels_are_managed_under_their_new_names() -> None:
    settings = merge(
        HandlerSettings(),
        {"forks": {"open_label": "decisions-open"}, "backlog": {"level_label_prefix": "size/"}},
    )
    assert is_managed(settings, "decisions-open") and is_managed(settings, "size/L1")
    assert "forks:open" not in managed_labels(settings)
