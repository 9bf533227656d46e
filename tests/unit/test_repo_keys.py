"""A repository's state in Redis is keyed by its id, through one function (``bot.forge.repo_key``), so that it
follows the repository across a rename or a transfer (issue 38): no Redis key, lock or memo is built from a
repository's full name. A key a new module builds from ``full_name`` fails here, naming the line."""

from __future__ import annotations

import re
from pathlib import Path

from bot.forge import RepoRef, repo_key

ROOT = Path(__file__).resolve().parents[2]
# A Redis key, a lock or a memo whose text names the repository by its full name.
_BY_NAME = re.compile(
    r"""(f["']steward:[^"']*\{[^}]*full_name|\.(hold|first|once)\(f["'][^"']*\{[^}]*full_name|"""
    r"""(digest|sha256)\([^)]*full_name)"""
)


def test_no_redis_key_names_a_repository_by_its_full_name() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for folder in ("bot", "handlers")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if "sandbox" not in path.parts
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if _BY_NAME.search(line)
    ]
    assert found == [], "key it with bot.forge.repo_key(forge, repo):\n" + "\n".join(found)


def test_the_key_is_the_id_when_known_and_the_name_until_then() -> None:
    assert repo_key("github", RepoRef("Acme", "App", 42)) == repo_key(
        "github", RepoRef("acme", "renamed", 42)
    )
    assert repo_key("github", RepoRef("Acme", "App", 42)) == "github:#42"
    assert repo_key("gitea", RepoRef("Acme", "App")) == "gitea:acme/app"
    assert repo_key("github", RepoRef("o", "r", 42)) != repo_key("gitea", RepoRef("o", "r", 42))
