"""The forges' own reading of CODEOWNERS, for the sandbox's code-owner review requests — written apart from
Steward's reader (``bot.forge.codeowners``, which the sandbox may not import: a sandbox that shares the bot's
code shares its mistakes). The sandbox runs test repositories only, so Python's ``re`` serves here.

GitHub (docs.github.com "About code owners"): the first of `.github/CODEOWNERS`, `CODEOWNERS`,
`docs/CODEOWNERS`; gitignore-style patterns; the last matching line decides. Gitea (services/issue/pull.go,
models/issues/pull.go): the first of `CODEOWNERS`, `docs/CODEOWNERS`, `.gitea/CODEOWNERS`; `^rule$` regular
expressions, `!` negates, every matching line counts.
"""

from __future__ import annotations

import re

GITHUB = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")
GITEA = ("CODEOWNERS", "docs/CODEOWNERS", ".gitea/CODEOWNERS")


def _github_regex(pattern: str) -> re.Pattern[str]:
    directory = pattern.endswith("/")
    body = pattern.strip("/")
    anchored = pattern.startswith("/") or "/" in body
    parts = []
    for seg in body.split("/"):
        if seg == "**":
            parts.append("(?:[^/]+/)*")
            continue
        text = "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in seg)
        parts.append(text + "/")
    core = "".join(parts).removesuffix("/")
    core = core.replace("(?:[^/]+/)*/", "(?:[^/]+/)*")
    prefix = "" if anchored else "(?:[^/]+/)*"
    wildcard_end = any(c in body.rsplit("/", 1)[-1] for c in "*?")
    tail = "/.+" if directory else ("" if wildcard_end else "(?:/.+)?")
    return re.compile(prefix + core + tail)


def _gitea_tokens(line: str) -> list[str]:
    tokens, token, escape = [], "", False
    for char in line.strip().replace("\t", " "):
        if escape:
            token, escape = token + char, False
        elif char == "\\":
            escape = True
        elif char == "#":
            break
        elif char == " ":
            if token:
                tokens.append(token)
            token = ""
        else:
            token += char
    return [*tokens, token] if token else tokens


def owners(flavor: str, text: str, path: str) -> list[str]:
    """The owners (logins and `org/team`, no `@`) the forge requests for a changed ``path``."""
    if flavor == "github":
        found: list[str] = []
        for line in text.splitlines():
            words = line.split("#", 1)[0].split() if not line.lstrip().startswith("\\#") else line.split()
            if not words or words[0].startswith("!") or "[" in words[0]:
                continue
            if _github_regex(words[0]).fullmatch(path):
                found = [w.removeprefix("@") for w in words[1:]]
        return found
    union: list[str] = []
    for line in text.split("\n"):
        tokens = _gitea_tokens(line)
        if len(tokens) < 2:
            continue
        negative, rule = tokens[0].startswith("!"), tokens[0].removeprefix("!")
        try:
            matched = re.fullmatch(rule, path) is not None
        except re.error:
            continue
        if matched != negative:
            union += [t.removeprefix("@") for t in tokens[1:] if t.removeprefix("@") not in union]
    return union
