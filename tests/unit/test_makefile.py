"""`make demo` installs only what Steward runs on; the test toolchain (pytest, hypothesis, schemathesis, mypy,
ruff, hadolint, kubernetes-validate) comes with the first target that needs it (issue 37: the demo spent most
of its minute and a half installing it). Read from `make -n`, which prints what a fresh clone would run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _plan(target: str, tmp_path: Path) -> str:
    """What `make TARGET` would run on a clone without a virtualenv."""
    answer = subprocess.run(
        ["make", "-n", "-C", str(ROOT), target, f"VENV={tmp_path / 'venv'}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return answer.stdout


@pytest.mark.parametrize("target", ["demo", "demo-all", "run", "serve", "worker", "sandbox"])
def test_running_steward_installs_the_runtime_only(target: str, tmp_path: Path) -> None:
    plan = _plan(target, tmp_path)
    assert "pip install --quiet --no-compile -e . -c requirements.lock" in plan
    assert "[test]" not in plan


@pytest.mark.parametrize("target", ["test", "unit", "fast", "lint", "typecheck"])
def test_testing_installs_the_test_toolchain_too(target: str, tmp_path: Path) -> None:
    plan = _plan(target, tmp_path)
    assert "pip install --quiet --no-compile -e '.[test]' -c requirements.lock" in plan


def test_make_test_checks_types_beside_the_tests_and_fails_on_either(tmp_path: Path) -> None:
    """mypy runs while pytest does (issue 37: a fresh clone's mypy is 20-25 s of one core, and pytest leaves
    part of the two cores idle), and `make test` still fails when either fails."""
    plan = _plan("test", tmp_path)
    recipe = plan[plan.index("/mypy > ") :]
    assert recipe.index("& types=$!") < recipe.index("-m pytest -n 3")
    assert "wait $types; typed=$?" in recipe
    assert "if [ $tests -ne 0 ] || [ $typed -ne 0 ]; then exit 1; fi" in recipe
