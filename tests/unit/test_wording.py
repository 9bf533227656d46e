"""What people read carries no internal names (DESIGN §8, issue 27 §4): every template, help text, generated
configuration and schema Steward ships is scanned for the kinds of leak that reached users — a design
section reference, a `(s)` plural, a Python type name in a YAML error, a state-machine code, a snake_case
completion word."""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import replace

import pytest

from bot.cli.main import build_parser
from bot.config.repo_file import parse, schema
from bot.config.settings import HandlerSettings
from bot.forge import ForgeKind
from handlers import build_registry
from handlers.core.bot import HelpRow, capability_of, render_help
from handlers.onboarding.plan import Preview, proposal, pull_body

LEAKS = {
    "a design-document reference": re.compile(r"DESIGN\s*§|§\s*\d"),
    "a `(s)` plural": re.compile(r"\w\(s\)"),
    "a Python type name": re.compile(r"valid (tuple|dict|frozenset)\b|\bNoneType\b"),
    # Not an environment variable (STEWARD_PORT) nor a forge's folder name (ISSUE_TEMPLATE).
    "a state-machine code": re.compile(r"\b(?!STEWARD_|ISSUE_TEMPLATE\b)[A-Z]{3,}(?:_[A-Z0-9]+)+\b"),
    "a snake_case completion word": re.compile(r"\bclean_with_residuals\b"),
}


def leaks(text: str) -> list[str]:
    return [f"{what}: {m.group(0)!r}" for what, pattern in LEAKS.items() for m in pattern.finditer(text)]


def _cli_help() -> dict[str, str]:
    parser = build_parser()
    texts = {"steward --help": parser.format_help()}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                texts[f"steward {name} --help"] = sub.format_help()
    return texts


def shipped_texts() -> dict[str, str]:
    registry = build_registry()
    settings = HandlerSettings()
    texts = _cli_help()
    texts["config-schema"] = json.dumps(schema(registry.configurable), ensure_ascii=False)
    kinds: tuple[ForgeKind, ...] = ("github", "gitea")
    for kind in kinds:
        for language in ("en", "pt"):
            plan = proposal(kind, registry, settings, language)  # type: ignore[arg-type]
            for path, text in plan.files.items():
                texts[f"{kind} {language} {path}"] = text
        plan = proposal(kind, registry, settings, "en")
        texts[f"{kind} onboarding pull request"] = pull_body(
            plan, kind=kind, registry=registry, settings=settings, found=Preview(None)
        )
        rows = [
            HelpRow(s.name, s.usage, s.help, s.permission, capability_of(s))
            for s in registry.commands.values()
        ]
        texts[f"{kind} /steward help"] = render_help("steward", rows, kind)
        reporter = [replace(row, runnable=row.permission in ("anyone", "author")) for row in rows]
        texts[f"{kind} /steward help, for a reporter"] = render_help("steward", reporter, kind)
    return texts


@pytest.mark.parametrize("name", sorted(shipped_texts()))
def test_no_internal_name_in_what_people_read(name: str) -> None:
    assert leaks(shipped_texts()[name]) == []


def test_the_scanner_finds_each_kind_of_leak() -> None:
    sample = "review clean_with_residuals after 1 round(s) (DESIGN §3.9): REVIEWER_COMMITTED; valid tuple"
    assert len(leaks(sample)) == 5


def test_a_yaml_error_names_yaml_s_types_not_python_s() -> None:
    [error] = parse("milestones:\n  notify: maintainer\n").errors
    assert error.message.startswith("should be a list")
    [error] = parse("limits: 3\n").errors
    assert error.message.startswith("should be a mapping")
