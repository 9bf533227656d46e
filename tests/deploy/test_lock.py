"""requirements.lock: the runtime dependencies the image and the systemd install get, as tested."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements.lock"


def _pins() -> dict[str, Version]:
    pins: dict[str, Version] = {}
    for line in LOCK.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, version = line.partition("==")
        assert sep, f"not an exact pin: {line!r}"
        key = canonicalize_name(name)
        assert key not in pins, f"{name} is pinned twice"
        pins[key] = Version(version)
    return pins


def _runtime_requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [Requirement(line) for line in project["dependencies"]]


def test_the_lock_says_how_to_regenerate_it() -> None:
    header = [line for line in LOCK.read_text().splitlines() if line.startswith("#")]
    assert any("make lock" in line for line in header)


def test_every_runtime_dependency_is_pinned_within_its_range() -> None:
    pins = _pins()
    for requirement in _runtime_requirements():
        key = canonicalize_name(requirement.name)
        assert key in pins, f"{requirement.name} is not in requirements.lock: run `make lock`"
        assert requirement.specifier.contains(pins[key], prereleases=True), (
            f"the lock pins {requirement.name}=={pins[key]}, outside pyproject's {requirement.specifier}"
        )


def test_the_lock_holds_no_test_tool() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {canonicalize_name(r.name) for r in _runtime_requirements()}
    tools = {canonicalize_name(Requirement(line).name) for line in project["optional-dependencies"]["test"]}
    assert not (set(_pins()) & (tools - runtime))


def test_the_lock_is_what_the_tests_run_with() -> None:
    """`make install` holds .venv to the lock, so they only part when someone moved a pin by hand."""
    check = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "lock-requirements"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stderr
