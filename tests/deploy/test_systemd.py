"""The systemd units in deploy/systemd: they parse, run the right command as the steward user from the
shared environment file, restart on failure, stop gracefully, are hardened, and pass
`systemd-analyze verify` where systemd is installed."""

from __future__ import annotations

import configparser
import shutil
import subprocess
from pathlib import Path

import pytest

from bot.config.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
UNITS = ROOT / "deploy" / "systemd"
COMMANDS = {
    "steward-receiver.service": "serve",
    "steward-worker.service": "worker",
    "steward-worker@.service": "worker",
}
STEWARD = "/opt/steward/bin/steward"

Unit = dict[str, dict[str, list[str]]]


def parse(path: Path) -> Unit:
    """A unit file as section -> key -> values (systemd lets a key repeat; configparser does not)."""
    text = path.read_text()
    ini = configparser.RawConfigParser(strict=False, interpolation=None, delimiters=("=",))
    ini.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    ini.read_string(text)  # raises on anything that is not INI
    unit: Unit = {}
    section = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = unit.setdefault(line.strip("[]"), {})
            continue
        assert section is not None, f"{path.name}: {line!r} before any section"
        key, sep, value = line.partition("=")
        assert sep, f"{path.name}: {line!r} is not KEY=VALUE"
        section.setdefault(key.strip(), []).append(value.strip())
    assert set(unit) == set(ini.sections())
    return unit


def one(unit: Unit, section: str, key: str) -> str:
    values = unit[section].get(key)
    assert values and len(values) == 1, f"[{section}] {key}: {values}"
    return values[0]


@pytest.fixture(params=sorted(COMMANDS))
def unit_file(request: pytest.FixtureRequest) -> Path:
    return UNITS / str(request.param)


def test_the_units_are_shipped() -> None:
    assert sorted(p.name for p in UNITS.glob("*.service")) == sorted(COMMANDS)


def test_a_unit_runs_its_command_as_the_steward_user(unit_file: Path) -> None:
    unit = parse(unit_file)
    assert one(unit, "Unit", "Description")
    assert "network-online.target" in one(unit, "Unit", "After").split()
    assert one(unit, "Unit", "Wants") == "network-online.target"
    assert one(unit, "Service", "Type") == "exec"
    assert one(unit, "Service", "ExecStart") == f"{STEWARD} {COMMANDS[unit_file.name]}"
    assert one(unit, "Service", "User") == "steward"
    assert one(unit, "Service", "Group") == "steward"
    assert unit["Service"]["EnvironmentFile"][0] == "/etc/steward/steward.env"
    assert one(unit, "Install", "WantedBy") == "multi-user.target"


def test_a_unit_restarts_on_failure_and_stops_gracefully(unit_file: Path) -> None:
    unit = parse(unit_file)
    assert one(unit, "Service", "Restart") == "on-failure"
    # A refusal to start (exit 4: bot/cli/preflight.py) is not restarted in a loop.
    assert one(unit, "Service", "RestartPreventExitStatus") == "4"
    assert one(unit, "Service", "KillSignal") == "SIGTERM"
    stop = one(unit, "Service", "TimeoutStopSec")
    assert stop.isdigit() and int(stop) >= 30, "Steward drains for up to 20 s after SIGTERM"


def test_the_receiver_counts_its_sigterm_exit_as_clean() -> None:
    unit = parse(UNITS / "steward-receiver.service")
    assert "143" in one(unit, "Service", "SuccessExitStatus").split()


def test_a_unit_is_hardened(unit_file: Path) -> None:
    service = parse(unit_file)["Service"]
    required = {
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "ProtectHome": "yes",
        "PrivateTmp": "yes",
        "PrivateDevices": "yes",
        "ProtectKernelTunables": "yes",
        "ProtectKernelModules": "yes",
        "ProtectControlGroups": "yes",
        "RestrictSUIDSGID": "yes",
        "RestrictNamespaces": "yes",
        "LockPersonality": "yes",
        "CapabilityBoundingSet": "",
        "AmbientCapabilities": "",
    }
    for key, value in required.items():
        assert service.get(key) == [value], f"{unit_file.name}: {key}={value}"
    assert "@system-service" in service["SystemCallFilter"]
    # With ProtectSystem=strict the venv is read-only: Python must not try to write bytecode there.
    environment = " ".join(service["Environment"]).split()
    assert "PYTHONDONTWRITEBYTECODE=1" in environment


def test_the_worker_template_reads_each_instances_own_settings() -> None:
    unit = parse(UNITS / "steward-worker@.service")
    assert unit["Service"]["EnvironmentFile"] == ["/etc/steward/steward.env", "-/etc/steward/worker-%i.env"]
    assert "%i" in one(unit, "Unit", "Description")


def _example_environment() -> dict[str, str]:
    env: dict[str, str] = {}
    for line in (UNITS / "steward.env.example").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, sep, value = line.partition("=")
            assert sep, line
            env[key] = value
    return env


def test_the_example_environment_names_only_stewards_settings_and_parses() -> None:
    env = _example_environment()
    known = {f"STEWARD_{name.upper()}" for name in Settings.model_fields}
    assert set(env) <= known, set(env) - known
    settings = Settings(**{k.removeprefix("STEWARD_").lower(): v for k, v in env.items()})
    assert settings.host == "127.0.0.1"  # behind a local TLS proxy
    assert not settings.github_token
    assert settings.github_webhook_secrets == []


def test_the_sysusers_file_creates_the_units_user() -> None:
    lines = [
        line.split()
        for line in (UNITS / "steward.sysusers").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert [words[:2] for words in lines] == [["u", "steward"]]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_accepts_the_units(tmp_path: Path) -> None:
    """`systemd-analyze verify`, with ExecStart pointed at a stand-in (it checks the binary exists)."""
    stand_in = tmp_path / "bin" / "steward"
    stand_in.parent.mkdir()
    stand_in.write_text("#!/bin/sh\nexit 0\n")
    stand_in.chmod(0o755)
    paths = []
    for name in COMMANDS:
        # A template is verified through an instance of it.
        target = tmp_path / name.replace("@.", "@1.")
        target.write_text((UNITS / name).read_text().replace(STEWARD, str(stand_in)))
        paths.append(str(target))
    done = subprocess.run(
        ["systemd-analyze", "verify", *paths], capture_output=True, text=True, timeout=60, check=False
    )
    complaints = [line for line in (done.stdout + done.stderr).splitlines() if str(tmp_path) in line]
    assert done.returncode == 0 and not complaints, done.stdout + done.stderr
