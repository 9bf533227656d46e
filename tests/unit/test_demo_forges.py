"""Which forges `steward demo` tells its story on: the first hour on GitHub, the tour (`--all`) on both, and
`--forge` picks (the end-to-end tests run the tour one forge a test, tests/e2e/test_demo.py)."""

from __future__ import annotations

import socket

import pytest

from bot.cli.main import build_parser
from bot.demo.run import flavors_of, main
from bot.demo.stage import redis_hint


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


def test_without_redis_the_demo_says_how_to_start_one_on_the_port_it_checked(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The hint used to start redis-server on its default port whatever URL the demo had checked."""
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("STEWARD_REDIS_URL", f"redis://127.0.0.1:{port}/0")
    assert main() == 1
    said = capsys.readouterr().out
    assert f"nothing answers at redis://127.0.0.1:{port}/0" in said
    assert f"redis-server --daemonize yes --port {port} --save ''" in said


def test_the_hint_for_a_remote_redis_names_its_host() -> None:
    assert "start the Redis at redis.internal:6380" in redis_hint("redis://redis.internal:6380/2")
