"""The ``path:line`` recogniser: which places in code a piece of evidence points at. Pure, no I/O.

A location is either

* ``path:line`` (``src/auth/login.py:42``, ``./Makefile:3``, ``pkg/a.b/c.test.ts:7:12`` — a column is
  allowed and dropped, ``path:42-50`` is a range). The path is POSIX-style: it holds a ``/`` or its last
  part has an extension, so ``10:42`` (a time) and ``localhost:8080`` are not locations. Windows-style
  paths (``C:\\src\\a.py:3``, ``src\\a.py:3``, ``C:/src/a.py:3``) are refused: they name a file on
  someone's machine, not in the repository.
* a link to lines on the forge: GitHub ``https://HOST/OWNER/REPO/blob/REF/PATH#L42`` (or ``#L42-L50``,
  with optional ``C<col>``), Gitea/Forgejo ``https://HOST/OWNER/REPO/src/{branch|commit|tag}/REF/PATH#L42``
  (or ``#L42-L50``).

Text is cut into tokens at blanks and at the characters markdown wraps things in (backticks, brackets,
parentheses, quotes, angle brackets); a token is a location only when it is one *whole* (after trailing
punctuation), so a Windows path never yields the ``bar.py:42`` at its end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import unquote, urlsplit

MAX_LINE: Final = 9_999_999
MAX_LOCATIONS: Final = 20
"""Locations kept per piece of evidence at most."""

_SPLIT: Final = re.compile(r"[\s`\[\](){}<>\"'|*]+")
_TRAILING: Final = ".,;:!?"
_PATH_CHARS: Final = r"[A-Za-z0-9._@+~-]"
_PATH_LINE: Final = re.compile(
    rf"^(?P<path>(?:\.{{1,2}}/)*+{_PATH_CHARS}++(?:/{_PATH_CHARS}++)*+)"
    r":(?P<line>[0-9]{1,7})(?:(?:-(?P<end>[0-9]{1,7}))|(?::[0-9]{1,7}))?$"
)
_EXTENSION: Final = re.compile(r"[^./]\.[A-Za-z0-9_+-]{1,12}$")
_DRIVE: Final = re.compile(r"^[A-Za-z]:[\\/]")
_FRAGMENT: Final = re.compile(r"^L(?P<line>[0-9]{1,7})(?:C[0-9]+)?(?:-L(?P<end>[0-9]{1,7})(?:C[0-9]+)?)?$")


@dataclass(frozen=True, order=True)
class Location:
    """A place in code: a file and a line (or a range of lines), and the link it came from, if any."""

    path: str
    line: int
    end: int | None = None
    url: str = ""
    # A link's repository (``owner/name``) and the ref it was taken at (a branch, tag or commit).
    repo: str = field(default="", compare=False)
    ref: str = field(default="", compare=False)

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" + (f"-{self.end}" if self.end is not None else "")


def _lines(line: str, end: str | None) -> tuple[int, int | None] | None:
    first = int(line)
    last = int(end) if end else None
    if first < 1 or first > MAX_LINE or (last is not None and (last < first or last > MAX_LINE)):
        return None
    return first, (last if last is not None and last != first else None)


def _clean_path(path: str) -> str | None:
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


def parse_path_line(token: str) -> Location | None:
    """``token`` as a ``path:line`` location, or None (Windows-style paths are never locations)."""
    if "\\" in token or _DRIVE.match(token):
        return None
    match = _PATH_LINE.match(token)
    if match is None:
        return None
    raw = match.group("path")
    if "/" not in raw.strip("./") and not _EXTENSION.search(raw):
        return None
    path = _clean_path(raw)
    lines = _lines(match.group("line"), match.group("end"))
    if path is None or lines is None:
        return None
    return Location(path, lines[0], lines[1])


def parse_permalink(token: str) -> Location | None:
    """A link to lines of a file on GitHub (``/blob/REF/PATH#L1-L2``) or Gitea/Forgejo
    (``/src/{branch,commit,tag}/REF/PATH#L1-L2``), or None."""
    try:
        parts = urlsplit(token)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    fragment = _FRAGMENT.match(parts.fragment)
    if fragment is None:
        return None
    segments = [unquote(s) for s in parts.path.split("/") if s]
    path_parts: list[str] | None = None
    owner_repo = ref = ""
    for i, segment in enumerate(segments):
        if i < 2:
            continue
        if segment == "blob" and len(segments) > i + 2:
            path_parts, ref = segments[i + 2 :], segments[i + 1]
            owner_repo = f"{segments[i - 2]}/{segments[i - 1]}"
            break
        if segment == "src" and len(segments) > i + 3 and segments[i + 1] in ("branch", "commit", "tag"):
            path_parts, ref = segments[i + 3 :], segments[i + 2]
            owner_repo = f"{segments[i - 2]}/{segments[i - 1]}"
            break
    if not path_parts or any("\\" in p for p in path_parts):
        return None
    path = _clean_path("/".join(path_parts))
    lines = _lines(fragment.group("line"), fragment.group("end"))
    if path is None or lines is None:
        return None
    return Location(path, lines[0], lines[1], token, owner_repo, ref)


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    for raw in _SPLIT.split(text):
        token = raw.rstrip(_TRAILING) if not raw.startswith("http") else raw.rstrip(".,;!?")
        if token:
            out.append(token)
    return out


def find_locations(text: str, limit: int = MAX_LOCATIONS) -> tuple[Location, ...]:
    """The locations ``text`` names, in order, without repeats, at most ``limit``."""
    found: list[Location] = []
    seen: set[str] = set()
    for token in _tokens(text[:20_000]):
        location = parse_permalink(token) if token.startswith(("http://", "https://")) else None
        if location is None and "://" not in token:
            location = parse_path_line(token)
        if location is not None and str(location) not in seen:
            seen.add(str(location))
            found.append(location)
            if len(found) >= limit:
                break
    return tuple(found)
