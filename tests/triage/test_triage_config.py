"""The `triage` section as `steward check-config` reads it: assigning others never below triage, the short
forms a switch, `triage.labels` keyed by access level."""

from __future__ import annotations

from bot.config.repo_file import merge, parse
from bot.config.settings import HandlerSettings
from handlers import build_registry

COMMANDS = build_registry().configurable


def test_assigning_others_may_ask_for_more_than_triage_never_less() -> None:
    low = parse("commands:\n  assign:\n    permission: anyone\n", COMMANDS)
    assert not low.valid
    assert any("`assign` needs at least `triage`" in str(e) for e in low.errors), low.errors
    assert parse("commands:\n  assign:\n    permission: maintain\n", COMMANDS).valid
    # Claiming is anyone's by default and may be narrowed.
    narrowed = parse("commands:\n  claim:\n    permission: triage\n", COMMANDS)
    assert narrowed.valid and narrowed.data is not None
    assert merge(HandlerSettings(), narrowed.data).permission("claim", "anyone") == "triage"


def test_the_section_s_keys_are_checked() -> None:
    assert parse("triage:\n  short_commands: true\n  release_claims_after_days: 14\n", COMMANDS).valid
    typo = parse("triage:\n  short_command: true\n", COMMANDS)
    assert not typo.valid and any("short_commands" in str(e) for e in typo.errors), typo.errors
    assert not parse("triage:\n  labels:\n    everyone: [bug]\n", COMMANDS).valid
    assert not parse("triage:\n  release_claims_after_days: 0\n", COMMANDS).valid
