"""Every path of Steward's own that a reader is sent to exists: the `bot/…`, `handlers/…`, `tests/<suite>/…`,
`bench/…`, `scripts/…`, `docs/…`, `charts/…` and `deploy/…` paths named in the README, `docs/`, the chart,
the Makefile, the Dockerfile, the deployment files and `pyproject.toml`, and every `bot.…`/`handlers.…`
module they name. (A path such as `tests/test_cart.py` in an example is a user's repository, not ours: a
top-level `tests/test_*.py` is not checked.)"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OURS = ("bot", "handlers", "tests", "bench", "scripts", "docs", "charts", "deploy")
PATH = re.compile(r"(?<![\w/.-])((?:" + "|".join(OURS) + r")/[\w./*{}-]*)")
MODULE = re.compile(r"(?<![\w./-])((?:bot|handlers)(?:\.[a-z_]\w*)+)")


def _documents() -> list[Path]:
    found = [ROOT / "README.md", ROOT / "Makefile", ROOT / "Dockerfile", ROOT / "pyproject.toml"]
    found += sorted((ROOT / "docs").glob("*.md"))
    for folder in ("charts", "deploy"):
        # What the tests compile there (`__pycache__`, now that `make unit` writes bytecode) is no document.
        found += sorted(p for p in (ROOT / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return found


def _missing_path(path: str) -> bool:
    path = path.rstrip(".,;:)/`'\"")
    if "*" in path or "{" in path or re.fullmatch(r"tests/test_[\w.]+", path):
        return False
    return not (ROOT / path).exists()


def _missing_module(name: str) -> bool:
    parts = name.split(".")
    if parts[-1] in ("py", "md", "yml", "yaml", "json"):  # a file's name (`bot.py`), not a module
        return False
    for cut in range(len(parts), 1, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(found, attribute):
                return True
            found = getattr(found, attribute)
        return False
    return True


@pytest.mark.parametrize("document", _documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_path_and_module_a_document_names_exists(document: Path) -> None:
    text = document.read_text()
    wrong = []
    for number, line in enumerate(text.splitlines(), 1):
        wrong += [f"{number}: {m}" for m in PATH.findall(line) if _missing_path(m)]
        wrong += [f"{number}: {m}" for m in MODULE.findall(line) if _missing_module(m)]
    assert wrong == [], f"{document.relative_to(ROOT)} names what does not exist"


def test_the_checker_sees_a_path_and_a_module_that_do_not_exist() -> None:
    assert _missing_path("bot/worker.py") and not _missing_path("bot/worker/jobs.py")
    assert _missing_module("bot.outage") and not _missing_module("bot.worker.claims.ResilientWorker")
