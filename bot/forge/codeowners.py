"""Code owners of changed files, read with each forge's own rules (issue 39, bugfix reviewers).
Pure: text in, owners out; every match runs in time bounded by the sizes of the pattern and the path (no
backtracking regular expression is ever run on someone's pattern).

GitHub (docs.github.com "About code owners"): the first of `.github/CODEOWNERS`, `CODEOWNERS`,
`docs/CODEOWNERS`; each line `pattern owner…`, `#` starts a comment; gitignore-style patterns — `*` and `?`
within a path segment, `**` across them, a leading `/` anchors at the root, a pattern without an inner `/`
matches at any depth, a trailing `/` names a directory, a directory matches every file under it (a
wildcard last segment, `docs/*`, only the files directly there); `!` and
`[…]` are not supported (such a line is skipped). The **last** matching line decides, and a line without
owners leaves its files without any.

Gitea ≥ 1.21 (models/issues/pull.go GetCodeOwnersFromContent, TokenizeCodeOwnersLine, ParseCodeOwnersLine;
services/issue/pull.go codeOwnerFiles): the first of `CODEOWNERS`, `docs/CODEOWNERS`, `.gitea/CODEOWNERS`
(Forgejo adds `.forgejo/CODEOWNERS`), read on the default branch; a line's first token (`\\` escapes the next
character, `#` ends the line) is a Go regular expression matched against the whole path (`^…$`), `!` before
it negates it (the rule then applies to the files it does **not** match); every other token is an owner
(`@` optional; `org/team` a team). **Every** matching line's owners are requested (there is no "last match").
Go's `regexp` is RE2: linear time. Steward runs the same patterns through a Thompson-NFA matcher of its own
over the RE2 syntax people write in these files (literals, `.`, classes, groups, `|`, `* + ? {m,n}`, `^ $`,
`\\d \\w \\s`); a pattern outside that syntax is reported as unreadable, never guessed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

GITHUB_FILES = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")
GITEA_FILES = ("CODEOWNERS", "docs/CODEOWNERS", ".gitea/CODEOWNERS", ".forgejo/CODEOWNERS")
# Bounds on what is read: the forges cap the file too (GitHub 3 MB, Gitea UI.MaxDisplayFileSize 8 MiB).
MAX_RULES = 2_000
MAX_PATTERN = 1_000
MAX_PATH = 4_096

Flavor = Literal["github", "gitea"]


@dataclass(frozen=True)
class Rule:
    pattern: str
    owners: tuple[str, ...]
    negative: bool = False
    line: int = 0


@dataclass(frozen=True)
class CodeOwners:
    flavor: Flavor
    rules: tuple[Rule, ...] = ()
    # Lines Steward could not read (line number, why), to say so rather than guess.
    skipped: tuple[tuple[int, str], ...] = ()
    _compiled: dict[str, _Regex | None] = field(default_factory=dict, compare=False, repr=False)

    def owners_of(self, path: str) -> tuple[str, ...]:
        """The owners the forge would request for ``path`` (logins and ``org/team``, without ``@``)."""
        if len(path) > MAX_PATH:
            return ()
        if self.flavor == "github":
            found: tuple[str, ...] = ()
            for rule in self.rules:
                if github_match(rule.pattern, path):
                    found = rule.owners  # the last matching line decides
            return found
        owners: dict[str, None] = {}
        for rule in self.rules:
            compiled = self._compiled.get(rule.pattern)
            if compiled is None and rule.pattern not in self._compiled:
                compiled = self._compiled.setdefault(rule.pattern, _compile_or_none(rule.pattern))
            if compiled is None:
                continue
            if compiled.fullmatch(path) != rule.negative:
                owners.update(dict.fromkeys(rule.owners))
        return tuple(owners)


def _owner(token: str) -> str:
    return token.removeprefix("@")


# --- GitHub ---------------------------------------------------------------------------------------------


def parse_github(text: str) -> CodeOwners:
    rules: list[Rule] = []
    skipped: list[tuple[int, str]] = []
    for number, raw in enumerate(text.splitlines()[: MAX_RULES * 4], start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        words = _github_words(line)
        if not words:
            continue
        pattern, owners = words[0], tuple(_owner(w) for w in words[1:] if w.startswith("@") or "@" in w)
        if pattern.startswith("!") or "[" in pattern or len(pattern) > MAX_PATTERN:
            skipped.append((number, "GitHub does not support `!` or `[…]` in CODEOWNERS patterns"))
            continue
        rules.append(Rule(pattern.replace("\\#", "#"), owners, line=number))
        if len(rules) >= MAX_RULES:
            break
    return CodeOwners("github", tuple(rules), tuple(skipped))


def _github_words(line: str) -> list[str]:
    """Whitespace-separated words up to an unescaped `#` (an inline comment)."""
    words: list[str] = []
    for word in line.split():
        if word.startswith("#"):
            break
        words.append(word)
    return words


def _segment_match(pattern: str, name: str) -> bool:
    """`*` (any run without `/`) and `?` (one character) against one path segment, in O(len·len) at worst:
    the classic two-pointer wildcard match that remembers only the last `*`."""
    p = n = 0
    star, mark = -1, 0
    while n < len(name):
        if p < len(pattern) and (pattern[p] == "?" or pattern[p] == name[n]) and pattern[p] != "*":
            p, n = p + 1, n + 1
        elif p < len(pattern) and pattern[p] == "*":
            star, mark, p = p, n, p + 1
        elif star >= 0:
            mark += 1
            p, n = star + 1, mark
        else:
            return False
    while p < len(pattern) and pattern[p] == "*":
        p += 1
    return p == len(pattern)


def github_match(pattern: str, path: str) -> bool:
    """Whether a CODEOWNERS pattern (gitignore rules, as GitHub applies them) covers file ``path``."""
    directory = pattern.endswith("/")
    body = pattern.strip("/")
    if not body:
        return False
    anchored = pattern.startswith("/") or "/" in body
    segs = [s for s in body.split("/") if s]
    if not anchored:
        segs = ["**", *segs]
    names = [s for s in path.strip("/").split("/") if s]
    # reach[j]: the pattern's segments so far match names[:j]; a match of a proper prefix is a directory
    # the file is in (it covers the file), of the whole path the file itself (not for a directory pattern).
    reach = [True] + [False] * len(names)
    for seg in segs:
        nxt = [False] * (len(names) + 1)
        if seg == "**":
            seen = False
            for j in range(len(names) + 1):
                seen = seen or reach[j]
                nxt[j] = seen
        else:
            for j in range(len(names)):
                if reach[j] and _segment_match(seg, names[j]):
                    nxt[j + 1] = True
        reach = nxt
    if reach[len(names)] and not directory:
        return True
    # A directory the file is in: named by a trailing `/`, or by a last segment without wildcards (`apps/`,
    # `/apps/github`, `**/logs`); `docs/*` covers the files directly in docs/ only (GitHub's own example).
    covers = directory or not any(c in segs[-1] for c in "*?") or segs[-1] == "**"
    return covers and any(reach[1 : len(names)])


# --- Gitea ----------------------------------------------------------------------------------------------


def tokenize_gitea(line: str) -> list[str]:
    """TokenizeCodeOwnersLine: tabs are spaces, `\\` takes the next character as it is, `#` ends the line."""
    tokens: list[str] = []
    token, escape = "", False
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
    if token:
        tokens.append(token)
    return tokens


def parse_gitea(text: str) -> CodeOwners:
    rules: list[Rule] = []
    skipped: list[tuple[int, str]] = []
    for number, line in enumerate(text.split("\n")[: MAX_RULES * 4], start=1):
        tokens = tokenize_gitea(line)
        if not tokens:
            continue
        if len(tokens) < 2:
            skipped.append((number, "incorrect format"))
            continue
        negative = tokens[0].startswith("!")
        pattern = tokens[0].removeprefix("!")
        if len(pattern) > MAX_PATTERN or _compile_or_none(pattern) is None:
            skipped.append((number, "a regular expression Steward cannot read"))
            continue
        owners = tuple(o for o in (_owner(t) for t in tokens[1:]) if o and o.count("/") <= 1)
        rules.append(Rule(pattern, owners, negative, number))
        if len(rules) >= MAX_RULES:
            break
    return CodeOwners("gitea", tuple(rules), tuple(skipped))


def parse(flavor: Flavor, text: str) -> CodeOwners:
    return parse_github(text) if flavor == "github" else parse_gitea(text)


# --- a Thompson NFA over RE2's common syntax -------------------------------------------------------------


class Unsupported(ValueError):
    """A pattern outside the syntax this matcher reads."""


# A node: ("char", predicate-set or None for any-but-newline, negated), ("split", a, b), ("jump", a),
# ("bol",), ("eol",), ("match",). States are indexes into one list.
_CharSet = tuple[frozenset[str], tuple[tuple[str, str], ...], bool]  # chars, ranges, negated

_CLASSES = {
    "d": (frozenset(), (("0", "9"),)),
    "w": (frozenset("_"), (("a", "z"), ("A", "Z"), ("0", "9"))),
    "s": (frozenset(" \t\n\r\f\v"), ()),
}
MAX_REPEAT = 1000  # Go's regexp/syntax limit on {m,n}
MAX_STATES = 20_000


@dataclass
class _Regex:
    states: list[tuple[object, ...]]
    start: int

    def fullmatch(self, text: str) -> bool:
        current = self._closure({self.start}, 0, len(text))
        for i, char in enumerate(text):
            step: set[int] = set()
            for s in current:
                node = self.states[s]
                if node[0] == "char" and _accepts(node[1], char):  # type: ignore[arg-type]
                    step.add(int(node[2]))  # type: ignore[call-overload]
            if not step:
                return False
            current = self._closure(step, i + 1, len(text))
        return any(self.states[s][0] == "match" for s in current)

    def _closure(self, seeds: Iterable[int], at: int, end: int) -> set[int]:
        seen: set[int] = set()
        stack = list(seeds)
        while stack:
            s = stack.pop()
            if s in seen:
                continue
            seen.add(s)
            node = self.states[s]
            kind = node[0]
            if kind == "split":
                stack += [int(node[1]), int(node[2])]  # type: ignore[call-overload]
            elif kind == "jump" or (kind == "bol" and at == 0) or (kind == "eol" and at == end):
                stack.append(int(node[1]))  # type: ignore[call-overload]
        return seen


def _accepts(charset: _CharSet | None, char: str) -> bool:
    if charset is None:
        return char != "\n"
    chars, ranges, negated = charset
    inside = char in chars or any(lo <= char <= hi for lo, hi in ranges)
    return inside != negated


class _Parser:
    """Recursive descent over: alternation `|`, concatenation, repetition `* + ? {m} {m,} {m,n}` (a `?` after
    one is laziness, which does not change whether the whole path matches), atoms: literal, `.`, `\\x`
    escapes, `[…]`, `(…)`, `(?:…)`, `^`, `$`. Builds fragments (start, list of dangling exits)."""

    def __init__(self, pattern: str) -> None:
        self.p, self.i = pattern, 0
        self.states: list[list[object]] = []

    def node(self, *parts: object) -> int:
        if len(self.states) >= MAX_STATES:
            raise Unsupported("too large")
        self.states.append(list(parts))
        return len(self.states) - 1

    def patch(self, exits: Sequence[tuple[int, int]], target: int) -> None:
        for state, slot in exits:
            self.states[state][slot] = target

    def parse(self) -> _Regex:
        start, exits = self.alternation()
        if self.i != len(self.p):
            raise Unsupported(f"unexpected {self.p[self.i]!r}")
        self.patch(exits, self.node("match"))
        return _Regex([tuple(s) for s in self.states], start)

    def alternation(self) -> tuple[int, list[tuple[int, int]]]:
        start, exits = self.concatenation()
        while self.i < len(self.p) and self.p[self.i] == "|":
            self.i += 1
            other, more = self.concatenation()
            start = self.node("split", start, other)
            exits = exits + more
        return start, exits

    def concatenation(self) -> tuple[int, list[tuple[int, int]]]:
        pieces: list[tuple[int, list[tuple[int, int]]]] = []
        while self.i < len(self.p) and self.p[self.i] not in "|)":
            pieces.append(self.repetition())
        if not pieces:
            empty = self.node("jump", -1)
            return empty, [(empty, 1)]
        start, exits = pieces[0]
        for nxt, more in pieces[1:]:
            self.patch(exits, nxt)
            exits = more
        return start, exits

    def repetition(self) -> tuple[int, list[tuple[int, int]]]:
        begin = self.i
        frag = self.atom()
        source = self.p[begin : self.i]
        if self.i < len(self.p) and self.p[self.i] in "*+?{":
            char, repeated = self.p[self.i], True
            if char == "{":
                low, high = self.braces()
                repeated = low is not None
                if low is not None:
                    frag = self.counted(source, low, high)
            else:
                self.i += 1
                operator = {"*": self.star, "+": self.plus, "?": self.maybe}[char]
                frag = operator(frag)
            if repeated and self.i < len(self.p) and self.p[self.i] == "?":
                self.i += 1  # lazy: the same language
            if repeated and self.i < len(self.p) and self.p[self.i] in "*+?":
                raise Unsupported("invalid nested repetition operator")
        return frag

    def braces(self) -> tuple[int | None, int | None]:
        end = self.p.find("}", self.i)
        inside = self.p[self.i + 1 : end] if end > 0 else ""
        low_text, comma, high_text = inside.partition(",")
        if not low_text.isdigit() or (high_text and not high_text.isdigit()):
            return None, None
        low = int(low_text)
        high = int(high_text) if high_text else (None if comma else low)
        if low > MAX_REPEAT or (high is not None and (high > MAX_REPEAT or high < low)):
            raise Unsupported("invalid repeat count")
        self.i = end + 1
        return low, high

    def counted(self, source: str, low: int, high: int | None) -> tuple[int, list[tuple[int, int]]]:
        """`x{m,n}`: m copies, then n-m optional ones (or a star): each copy parsed again from its text."""

        def copy() -> tuple[int, list[tuple[int, int]]]:
            saved, self.p, self.i = (self.p, self.i), source, 0
            frag = self.atom()
            self.p, self.i = saved
            return frag

        parts = [copy() for _ in range(low)]
        if high is None:
            parts.append(self.star(copy()))
        else:
            parts += [self.maybe(copy()) for _ in range(high - low)]
        if not parts:
            empty = self.node("jump", -1)
            return empty, [(empty, 1)]
        start, exits = parts[0]
        for nxt, more in parts[1:]:
            self.patch(exits, nxt)
            exits = more
        return start, exits

    def star(self, frag: tuple[int, list[tuple[int, int]]]) -> tuple[int, list[tuple[int, int]]]:
        split = self.node("split", frag[0], -1)
        self.patch(frag[1], split)
        return split, [(split, 2)]

    def plus(self, frag: tuple[int, list[tuple[int, int]]]) -> tuple[int, list[tuple[int, int]]]:
        split = self.node("split", frag[0], -1)
        self.patch(frag[1], split)
        return frag[0], [(split, 2)]

    def maybe(self, frag: tuple[int, list[tuple[int, int]]]) -> tuple[int, list[tuple[int, int]]]:
        split = self.node("split", frag[0], -1)
        return split, [*frag[1], (split, 2)]

    def char_node(self, charset: _CharSet | None) -> tuple[int, list[tuple[int, int]]]:
        state = self.node("char", charset, -1)
        return state, [(state, 2)]

    def atom(self) -> tuple[int, list[tuple[int, int]]]:
        if self.i >= len(self.p):
            raise Unsupported("missing argument to repetition operator")
        char = self.p[self.i]
        self.i += 1
        if char == "(":
            if self.p.startswith("?:", self.i):
                self.i += 2
            elif self.p.startswith("?", self.i):
                raise Unsupported("flags and named groups")
            frag = self.alternation()
            if self.i >= len(self.p) or self.p[self.i] != ")":
                raise Unsupported("missing closing )")
            self.i += 1
            return frag
        if char in "*+?":
            raise Unsupported("missing argument to repetition operator")
        if char == ")":
            raise Unsupported("unexpected )")
        if char == ".":
            return self.char_node(None)
        if char in "^$":
            state = self.node("bol" if char == "^" else "eol", -1)
            return state, [(state, 1)]
        if char == "[":
            return self.char_node(self.bracket())
        if char == "\\":
            return self.char_node(self.escape(in_class=False))
        return self.char_node((frozenset(char), (), False))

    def escape(self, *, in_class: bool) -> _CharSet:
        if self.i >= len(self.p):
            raise Unsupported("trailing backslash")
        char = self.p[self.i]
        self.i += 1
        if char.lower() in _CLASSES:
            chars, ranges = _CLASSES[char.lower()]
            return chars, ranges, char.isupper()
        if char.isalnum():
            named = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v"}
            if char in named:
                return frozenset(named[char]), (), False
            raise Unsupported(f"escape \\{char}")
        return frozenset(char), (), False

    def bracket(self) -> _CharSet:
        negated = self.p.startswith("^", self.i)
        self.i += negated
        chars: set[str] = set()
        ranges: list[tuple[str, str]] = []
        first = True
        while True:
            if self.i >= len(self.p):
                raise Unsupported("missing closing ]")
            char = self.p[self.i]
            if char == "]" and not first:
                self.i += 1
                return frozenset(chars), tuple(ranges), negated
            first = False
            if self.p.startswith("[:", self.i):
                raise Unsupported("POSIX classes")
            if char == "\\":
                self.i += 1
                sub_chars, sub_ranges, sub_negated = self.escape(in_class=True)
                if sub_negated:
                    raise Unsupported("a negated class inside brackets")
                chars |= sub_chars
                ranges += sub_ranges
                continue
            self.i += 1
            if self.i + 1 < len(self.p) and self.p[self.i] == "-" and self.p[self.i + 1] != "]":
                high = self.p[self.i + 1]
                if high == "\\" or high < char:
                    raise Unsupported("invalid character class range")
                ranges.append((char, high))
                self.i += 2
            else:
                chars.add(char)


def compile_gitea(pattern: str) -> _Regex:
    """A CODEOWNERS rule as Gitea compiles it (``^rule$``); ``Unsupported`` outside the syntax read here."""
    return _Parser(f"^(?:{pattern})$").parse()


def _compile_or_none(pattern: str) -> _Regex | None:
    try:
        return compile_gitea(pattern)
    except Unsupported:
        return None
