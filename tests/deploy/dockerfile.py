"""Just enough of the Dockerfile and .dockerignore formats to check the image's inputs without Docker."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import PurePosixPath


@dataclass(frozen=True)
class Instruction:
    keyword: str
    arguments: str
    line: int


def instructions(text: str) -> list[Instruction]:
    """The Dockerfile's instructions, continuation lines joined, comments and blank lines dropped."""
    out: list[Instruction] = []
    pending = ""
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):  # a comment inside a continued instruction
            continue
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        whole = (pending + stripped).strip()
        pending = ""
        keyword, _, arguments = whole.partition(" ")
        out.append(Instruction(keyword.upper(), arguments.strip(), start))
    return out


@dataclass(frozen=True)
class Copy:
    sources: tuple[str, ...]
    destination: str
    flags: dict[str, str]
    line: int


def copies(text: str) -> list[Copy]:
    """COPY and ADD instructions with their sources, destination and --flags."""
    out: list[Copy] = []
    for instruction in instructions(text):
        if instruction.keyword not in {"COPY", "ADD"}:
            continue
        words = shlex.split(instruction.arguments)
        flags: dict[str, str] = {}
        while words and words[0].startswith("--"):
            name, _, value = words.pop(0)[2:].partition("=")
            flags[name] = value
        rest = " ".join(words)
        if rest.startswith("["):
            words = json.loads(rest)
        out.append(Copy(tuple(words[:-1]), words[-1], flags, instruction.line))
    return out


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    """A .dockerignore pattern as a regex over slash-separated paths (Go's filepath.Match plus `**`)."""
    regex = ""
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**", i):
            i += 2
            if pattern.startswith("/", i):  # `**/` also matches no directory at all
                i += 1
                regex += "(?:.*/)?"
            else:
                regex += ".*"
            continue
        if char == "*":
            regex += "[^/]*"
        elif char == "?":
            regex += "[^/]"
        elif char == "[":
            end = pattern.index("]", i)
            body = pattern[i + 1 : end]
            if body.startswith("^"):
                body = "!" + body[1:]
            regex += "[" + ("^" + body[1:] if body.startswith("!") else body) + "]"
            i = end
        elif char == "\\" and i + 1 < len(pattern):
            i += 1
            regex += re.escape(pattern[i])
        else:
            regex += re.escape(char)
        i += 1
    return re.compile(regex + r"\Z")


class DockerIgnore:
    """Docker's rules: patterns are cleaned paths relative to the context; a pattern that matches a
    parent directory matches what is inside it; `!` lets a path back in; the last match decides."""

    def __init__(self, text: str) -> None:
        self.rules: list[tuple[bool, re.Pattern[str]]] = []
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            exception = line.startswith("!")
            pattern = line[1:].strip() if exception else line
            cleaned = str(PurePosixPath("/" + pattern)).lstrip("/") or "."
            self.rules.append((exception, _pattern_regex(cleaned)))

    def excluded(self, path: str) -> bool:
        parts = PurePosixPath(path).parts
        candidates = ["/".join(parts[: n + 1]) for n in range(len(parts))]
        verdict = False
        for exception, regex in self.rules:
            if any(regex.match(candidate) for candidate in candidates):
                verdict = not exception
        return verdict
