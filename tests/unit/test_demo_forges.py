"""Which forges `steward demo` tells its story on: the first hour on GitHub, the tour (`--all`) on both, and
`--forge` picks (the end-to-end tests run the tour one forge a test, tests/e2e/test_demo.py)."""

from __future__ import annotations

from bot.cli.main import build_parser
from bot.demo.run import flavors_of


def test_the_story_is_on_github_and_the_tour_on_both_forges() -> None:
    assert flavors_of(tour=False) == ("github",)
    assert flavors_of(tour=True) == ("github", "gitea")


def test_forge_picks_the_forges_in_the_usual_order() -> None:
    assert flavors_of(tour=True, forges=("gitea",)) == ("gitea",)
    assert flavors_of(tour=False, forges=("gitea",)) == ("gitea",)
    assert flavors_of(tour=True, forges=("gitea", "github")) == ("github", "gitea")


def test_the_command_line_passes_forge_through() -> None:
    args = build_parser().parse_args(["demo", "--all", "--forge", "gitea"])
    assert args.all and args.forge == ["gitea"]
    assert build_parser().parse_args(["demo"]).forge is None
