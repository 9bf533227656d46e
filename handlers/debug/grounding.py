"""Whether evidence points at code that exists: each ``path:line`` checked against the file the repository
holds at a commit. Pure, no I/O (``handlers.debug.effects.Grounder`` reads the files).

A location is *grounded* when the file exists at the commit and has that line (every line of a range). A
location that is not is refused with the reason and, where there is one, the nearest match (the file's last
line when the line is past its end). What a grounded location pointed at is kept in the board's record
(``Ground``: the file's blob sha, the commit it was read at, the cited line's text), so the board can show
the line beside the location and say when the file changed since.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from handlers.debug.locations import Location

LINE_CHARS: Final = 80
"""The cited line's text is kept to this many characters."""
MAX_GROUNDS: Final = 40
"""Grounded locations the board's record keeps (the newest): bounded so the data block fits a comment."""
SHA_CHARS: Final = 12
"""Blob and commit shas are kept this long (enough to tell a change, short enough to keep many)."""

_AT: Final = re.compile(r"(?:^|\s)--at(?:=|\s+)([0-9a-fA-F]{7,40})(?=\s|$)")


def named_commit(text: str) -> tuple[str | None, str]:
    """The commit a person named with ``--at <sha>`` (7 to 40 hex digits), and ``text`` without it."""
    match = _AT.search(text)
    if match is None:
        return None, text
    rest = text[: match.start()].rstrip() + " " + text[match.end() :].lstrip()
    return match.group(1).lower(), rest.strip()


@dataclass(frozen=True)
class Ground:
    """What a grounded location pointed at: the file's blob ``blob`` at ``commit``, and the cited line."""

    location: str
    path: str
    blob: str
    commit: str
    text: str

    def to_json(self) -> list[str]:
        return [self.path, self.blob, self.commit, self.text]

    @classmethod
    def from_json(cls, location: str, raw: Any) -> Ground | None:
        if not isinstance(raw, list) or len(raw) != 4 or not all(isinstance(x, str) for x in raw):
            return None
        return cls(location, raw[0], raw[1][:SHA_CHARS], raw[2][:SHA_CHARS], raw[3][:LINE_CHARS])


@dataclass(frozen=True)
class Problem:
    """A location that does not point at code that exists, and why (``nearest``: a location that does)."""

    location: str
    reason: str
    nearest: str = ""

    def sentence(self) -> str:
        near = f"; the nearest is `{self.nearest}`" if self.nearest else ""
        return f"`{self.location}`: {self.reason}{near}"


def _short(sha: str) -> str:
    return sha[:7]


def moved_to(path: str, files: Sequence[str]) -> str | None:
    """Where a file that is not at ``path`` may have gone: of the ``files`` with its name, the one whose
    folders end most like ``path``'s (then the shortest path); None when no file has its name."""
    name = path.rsplit("/", 1)[-1]
    same = [f for f in files if f.rsplit("/", 1)[-1] == name and f != path]
    if not same:
        return None
    wanted = path.split("/")[::-1]

    def shared(candidate: str) -> int:
        n = 0
        for a, b in zip(candidate.split("/")[::-1], wanted, strict=False):
            if a != b:
                break
            n += 1
        return n

    return min(same, key=lambda f: (-shared(f), len(f), f))


def check(
    location: Location,
    content: bytes | None,
    *,
    blob: str,
    commit: str,
    where: str,
    moved: tuple[str, int] | None = None,
) -> Ground | Problem:
    """``location`` against the file's ``content`` at ``commit`` (None: no such file there). ``where`` names
    the commit for people (``main at 1a2b3c4``). ``moved``: for a file that is not there, a file of the same
    name elsewhere at that commit and its line count (``moved_to``) — named as the nearest match."""
    name = str(location)
    if content is None:
        if moved is not None:
            path, count = moved
            line = min(location.line, count) if count else 0
            return Problem(
                name,
                f"there is no file `{location.path}` at {where} — was it moved? `{path}` has the same name",
                f"{path}:{line}" if line else path,
            )
        return Problem(name, f"there is no file `{location.path}` at {where}")
    lines = content.decode("utf-8", errors="replace").splitlines()
    last = location.end or location.line
    if last > len(lines):
        if not lines:
            return Problem(name, f"`{location.path}` is empty at {where}")
        return Problem(
            name,
            f"`{location.path}` has {len(lines)} line{'s' if len(lines) != 1 else ''} at {where}",
            f"{location.path}:{len(lines)}",
        )
    text = " ".join(lines[location.line - 1].split())
    if len(text) > LINE_CHARS:
        text = text[: LINE_CHARS - 1].rstrip() + "…"
    return Ground(name, location.path, blob[:SHA_CHARS], commit[:SHA_CHARS], text)


def refusal(problems: Sequence[Problem], prefix: str) -> str:
    """The answer to a command whose evidence names places that do not exist."""
    listed = "; ".join(p.sentence() for p in problems[:5])
    more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
    return (
        f"your evidence points at code that does not exist — {listed}{more}. Cite a file and line the "
        "repository has (checked at the default branch's head; name another commit with `--at <sha>`), "
        f"e.g. `/{prefix} evidence H1 for --at 1a2b3c4 src/auth/login.py:42 …`."
    )


def merge(
    grounds: Mapping[str, Ground], new: Sequence[Ground], *, limit: int = MAX_GROUNDS
) -> dict[str, Ground]:
    """``grounds`` with ``new`` added (a location cited again is replaced by its newest reading), keeping the
    ``limit`` newest."""
    out = {k: v for k, v in grounds.items() if k not in {g.location for g in new}}
    out.update({g.location: g for g in new})
    items = list(out.items())[-limit:]
    return dict(items)


def grounds_to_json(grounds: Mapping[str, Ground]) -> dict[str, list[str]]:
    return {k: g.to_json() for k, g in grounds.items()}


def grounds_from_json(raw: Any) -> dict[str, Ground]:
    if not isinstance(raw, dict):
        return {}
    out: dict[str, Ground] = {}
    for key, value in list(raw.items())[-MAX_GROUNDS:]:
        ground = Ground.from_json(str(key), value)
        if ground is not None:
            out[str(key)] = ground
    return out


_BARE_PATH: Final = re.compile(r"^(?:\./)?[A-Za-z0-9._@+~-]++(?:/[A-Za-z0-9._@+~-]++)++$")
_SPLIT: Final = re.compile(r"[\s`\[\](){}<>\"'|*,;]+")


def find_paths(text: str, limit: int = 40) -> tuple[str, ...]:
    """Repository paths ``text`` names without a line (``src/auth/login.py``): a token with a ``/`` whose last
    part has an extension; links and ``path:line`` places are left to ``locations``."""
    found: list[str] = []
    for raw in _SPLIT.split(text[:20_000]):
        token = raw.rstrip(".:!?")
        if "://" in raw or ":" in token or not _BARE_PATH.match(token):
            continue
        last = token.rsplit("/", 1)[-1]
        if "." not in last.strip(".") or ".." in token.split("/"):
            continue
        token = token.removeprefix("./")
        if token not in found:
            found.append(token)
            if len(found) >= limit:
                break
    return tuple(found)
