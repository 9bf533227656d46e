"""The README tells a new user the truth about the first hour (issue 27): what is switched on and when, how
to switch it on on each forge, what the demo shows, the hand-driven steps, the licence, and no path outside
the repository."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from bot.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def section(title: str) -> str:
    start = README.index(title)
    following = re.search(r"^##+ ", README[start + len(title) :], flags=re.MULTILINE)
    return README[start : start + len(title) + (following.start() if following else len(README))]


def test_the_readme_never_points_outside_the_repository() -> None:
    assert "../" not in README
    for link in re.findall(r"\]\(([^)#]+)", README):
        if not link.startswith(("http://", "https://", "mailto:")):
            assert (ROOT / link).exists(), link


def test_the_invitation_is_documented_with_the_operator_s_switch_and_its_consequence() -> None:
    rule = section("### Nothing acts until invited")
    assert "`/steward help`, `/steward ping`, `/steward init` and `/steward config`" in rule
    assert "Removing the file" in rule and "does not validate" in rule and "`internal: true`" in rule
    assert "STEWARD_REQUIRE_CONFIG=false" in rule and "starts acting at once" in rule
    assert "`STEWARD_REQUIRE_CONFIG`" in (ROOT / "docs/operations.md").read_text()
    upgrade = section("### Operating Steward")
    assert "goes quiet there on upgrade" in upgrade and "STEWARD_REQUIRE_CONFIG=false" in upgrade
    gitea = section("## Installing on Gitea or Forgejo")
    assert "Gitea has no installation event" in gitea and "`/steward init`" in gitea


def test_the_readme_says_which_label_starts_what() -> None:
    assert "`bug` alone does nothing" in README and "`refine` starts a refinement" in README


def test_the_demo_section_describes_the_short_story_and_the_full_tour() -> None:
    demo = section("## Try it in one minute")
    assert "make demo-all" in demo and "steward demo --all" in demo
    assert "Installed, not yet invited" in demo and "escalate to a human" in demo
    assert "demo-all:" in (ROOT / "Makefile").read_text()


def test_the_hand_driven_steps_invite_steward_create_gitea_labels_first_and_read_a_thread_with_jq() -> None:
    by_hand = section("## Try it by hand")
    assert "contents/.github/steward.yml" in by_hand and "contents/.gitea/steward.yml" in by_hand
    assert by_hand.index('/labels -d \'{"name":"bug"') < by_hand.index('issues/1/labels -d "{')
    assert "start it\nagain with the Gitea variables" in by_hand
    assert "| jq -r" in by_hand


def test_steward_help_lists_its_exit_codes() -> None:
    text = build_parser().format_help()
    assert "exit codes:" in text
    for code in ("0", "1", "2", "3"):
        assert re.search(rf"^  {code}  ", text, flags=re.MULTILINE), code
    said = "`steward --help` lists every command; `steward NAME --help` its environment and exit codes"
    assert said in README


def test_the_licence_file_is_the_mit_licence_the_package_and_the_image_declare() -> None:
    licence = (ROOT / "LICENSE").read_text()
    assert licence.startswith("MIT License") and "Permission is hereby granted, free of charge" in licence
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"] == "MIT"
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert 'org.opencontainers.image.licenses="MIT"' in dockerfile and "LICENSE" in dockerfile
