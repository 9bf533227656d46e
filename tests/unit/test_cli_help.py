"""Every `steward` subcommand answers --help with what it does, the environment it reads and its exit codes
(issue 37: `public-key --help` was an error and `version --help` printed the version), from one table
(bot/cli/help.py) that the README's exit-code table is generated from."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import main as cli_main
from bot.cli.help import BY_NAME, COMMANDS
from bot.cli.main import build_parser, main
from tests.smoke.stack import steward_command


def _subcommands() -> list[str]:
    parser = build_parser()
    [action] = [a for a in parser._actions if a.dest == "command"]
    return sorted(action.choices)  # type: ignore[arg-type]


def test_every_subcommand_has_its_help_entry_and_no_entry_is_stale() -> None:
    assert _subcommands() == sorted(BY_NAME)
    for command in COMMANDS:
        codes = [code for code, _ in command.exit_codes]
        assert codes == sorted(set(codes)) and 0 in codes, command.name


def _help(name: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("STEWARD_")}
    return subprocess.run(
        [*steward_command(), *name.split(), "--help"], env=clean, capture_output=True, text=True, timeout=60
    )


def _help_here(name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> str:
    """`steward NAME --help` through the console script's own function, in this process (a subprocess per
    command cost half a second each; the two that were broken run as subprocesses below). The command's
    log set-up is left out: it would reconfigure this test process's logging."""
    monkeypatch.setattr(cli_main, "logs_to_stderr", lambda: None)
    with pytest.raises(SystemExit) as ended:
        code = main([name, "--help"])
        raise SystemExit(code)  # the commands that parse their own arguments return rather than exit
    assert ended.value.code in (0, None)
    return capsys.readouterr().out


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_steward_name_help_says_what_it_does_what_it_reads_and_its_exit_codes(
    name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = " ".join(_help_here(name, capsys, monkeypatch).split())
    assert "environment:" in text and "exit codes:" in text, text
    for code, meaning in BY_NAME[name].exit_codes:
        assert f"{code} {' '.join(meaning.split())}" in text, (code, meaning)
    for variable in BY_NAME[name].environment:
        assert " ".join(variable.split()) in text


@pytest.mark.parametrize("name", ["public-key", "version"])
def test_public_key_and_version_answer_help_from_the_installed_command(name: str) -> None:
    """`steward public-key --help` was an error and `steward version --help` printed the version."""
    done = _help(name)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: steward {name}") and "exit codes:" in done.stdout


def test_the_top_level_help_lists_every_command_and_the_shared_meaning_of_the_codes() -> None:
    done = _help("")
    assert done.returncode == 0
    for name in BY_NAME:
        assert name in done.stdout
    assert "4  the environment is wrong" in done.stdout and "5  the issue or pull request" in done.stdout


def test_help_version_and_refine_start_without_the_settings_redis_or_a_forge(tmp_path: Path) -> None:
    """The settings (pydantic), Redis and the forge clients are most of a `steward` process's start-up; the
    commands that read none of them — every `--help`, `version`, `refine` on a file (a CI job runs it on
    each bug file) — load none of them."""
    bug = tmp_path / "bug.md"
    bug.write_text("# A bug\n\nIt breaks.\n")
    script = (
        "import sys\n"
        "from bot.cli.main import main\n"
        "commands = (['--help'], ['reconcile', '--help'], ['version'], ['refine', sys.argv[1], '--check'])\n"
        "for argv in commands:\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = ('pydantic', 'bot.config.settings', 'redis', 'arq', 'gidgethub', 'gitea', 'aiohttp')\n"
        "print('LOADED', *[m for m in heavy if m in sys.modules], file=sys.stderr)\n"
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith("STEWARD_")}
    done = subprocess.run(
        [sys.executable, "-c", script, str(bug)], env=clean, capture_output=True, text=True, timeout=60
    )
    [loaded] = [line for line in done.stderr.splitlines() if line.startswith("LOADED")]
    assert loaded.split()[1:] == [], done.stderr[-2000:]
