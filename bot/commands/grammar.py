"""The slash-command grammar: which lines of a comment are commands, and what they say.

Pure functions, no I/O. The rules, in the order they are applied:

* **Where a command may be.** A command starts a source line of the comment, after optional blanks
  (spaces, non-breaking and zero-width spaces; a tab or four spaces make it indented code), and that line
  must lie in a markdown *paragraph* as markdown-it-py (CommonMark + tables) parses it. So backtick and
  tilde fences and indented code, HTML blocks, HTML comments (block or inline, single- or multi-line),
  block quotes at any depth (lazy continuation lines included), headings and tables are excluded by
  construction, and so is a line whose start falls
  inside an inline code span, inline HTML, a link or an image that began on an earlier line. A paragraph
  nested in a list item counts, but the item's first line does not: ``- /steward help`` starts with
  ``-`` (as in Prow, a command is a line that *begins* with the slash). A paragraph inside an HTML
  element with blank lines around it (``<details>``) is rendered as markdown, so it counts.
* **Forms.** ``/steward <command> [args…]`` is the canonical form (``steward`` is the ``prefix``
  parameter); ``/<command> [args…]`` is the short form and counts only when ``<command>`` is one of the
  ``known`` names, so ``/usr/bin/env`` or ``/frobnicate`` is just text. An unknown canonical command
  (``/steward frobnicate``) is returned so the caller can answer "unknown command, did you mean …";
  ``/steward`` alone, or followed by something that is not a command name, gives ``name=""`` (the caller
  answers with help). Names are letters, digits and ``-``, matched case-insensitively and returned
  lower-case. The slash word must be followed by a blank or the end of the line (``/steward:`` and
  ``/help.`` are not commands).
* **Arguments** are the rest of the command's line, split like a shell: ``"…"`` and ``'…'`` group words
  (curly double quotes count as ``"``), backslashes are literal (people paste paths and patterns), and a
  line with an unbalanced quote falls back to a plain whitespace split. Splitting never raises.
* **Text** is the rest of the command's line (after the command name) plus the raw source lines that
  follow it, up to the next command line or the end of the command's *block group*, whichever comes
  first, with the whole stripped. A block group is a run of top-level markdown blocks with no blank line
  between them: ``/answer g3 …`` may continue on the next lines, into a list or a fence that directly
  follows, but a blank line followed by new prose (``Thanks!``) ends it. Continuation lines are kept raw
  (markup, HTML comments and all): the caller decides how to render them.
* **Limits.** At most :data:`MAX_COMMANDS` commands are returned per comment; a comment with no line that
  even looks like a command is rejected without parsing markdown, all other work is linear in the size
  of the body, and only its first :data:`MAX_SCAN_CHARS` characters are read.
* **Busy paragraphs.** A line that is not the first of its paragraph, with a character that can open a
  span (`` ` ``, ``<``, ``[``, ``!``) before it, is read as a command only while the paragraphs examined
  so far for spans hold at most :data:`MAX_PARAGRAPH_OPENERS` such characters in all — otherwise it is
  text (fail closed: the bound only ever removes a command). Finding the spans takes markdown-it-py's
  inline parser time proportional to the openers times its nesting limit (``"x " + "![" * 30000`` took
  ~1–4 s, and 300 paragraphs of 400 openers as long); people write a command at the start of a paragraph
  or after ordinary prose, so nothing a person writes is lost. Below the bound the answer is the full
  parse's (tests/unit/test_commands.py compares them on generated inputs).
"""

from __future__ import annotations

import asyncio
import bisect
import difflib
import hashlib
import re
import sys
from collections import Counter, OrderedDict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Final

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline, autolink, backtick, html_inline, image, link
from markdown_it.token import Token

__all__ = [
    "MAX_COMMANDS",
    "MAX_PARAGRAPH_OPENERS",
    "MAX_SCAN_CHARS",
    "OFFLOAD_CHARS",
    "STATS",
    "Command",
    "added_commands",
    "added_commands_async",
    "closest_command",
    "could_hold_command",
    "parse_cached",
    "parse_commands",
    "parse_commands_async",
]

MAX_COMMANDS: Final = 20
# Only the first 128 KiB of a body is read for commands. markdown-it-py parses at roughly 2–8 s a MiB on a
# busy core, on the worker's event loop: a multi-MiB comment (Gitea takes them) read whole stalled every
# job of the worker for seconds. The cap is here, not only in dispatch, so every caller is bounded
# (tests/fuzz/test_parsers_fuzz.py found the backlog's own call reading whole bodies).
MAX_SCAN_CHARS: Final = 128 * 1024
"""Commands returned per comment at most, so a hostile comment stays cheap to answer."""
MAX_PARAGRAPH_OPENERS: Final = 600
"""Span openers the paragraphs examined for spans may hold in all, per body (~30 ms of inline parsing at
worst on a busy core)."""
OFFLOAD_CHARS: Final = 16 * 1024
"""Bodies longer than this are parsed off the event loop (``parse_commands_async``): markdown-it-py's
block parse takes ~0.5–0.9 ms a KiB on a busy core, so a 16 KiB body stays well under the 50 ms a job may
hold the loop."""
CACHE_SIZE: Final = 4096
"""Parses kept (``parse_cached``): a thread's comments are re-read on every sync of its issue."""


class _Stats:
    """How much parsing happened (tests assert these outcomes, not times)."""

    def __init__(self) -> None:
        self.block_parses = 0
        self.inline_parses = 0
        # Span openers in the paragraphs handed to the inline parser (bounded per body).
        self.inline_openers = 0
        self.cache_hits = 0

    def reset(self) -> None:
        self.__init__()  # type: ignore[misc]


STATS: Final = _Stats()


@dataclass(frozen=True)
class Command:
    """One command found in a comment."""

    name: str
    """Lower-case command name, e.g. ``"help"``; ``""`` for a bare ``/steward``."""
    args: tuple[str, ...]
    """The rest of the command's line, split like a shell."""
    text: str
    """The rest of the line after the name, plus continuation lines, stripped."""
    line: int
    """1-based source line of the command."""
    canonical: bool
    """True for ``/steward x``, False for the short ``/x``."""


# Blanks a person can type (or paste) before and between words: Unicode white space (which includes
# no-break spaces) and the zero-width characters, which \s does not cover.
_INVISIBLE: Final = "\u200b\u200c\u200d\u2060\ufeff"
_BLANK: Final = rf"[^\S\n]|[{_INVISIBLE}]"
_NAME: Final = r"[A-Za-z0-9][A-Za-z0-9-]*"
_SLASH_WORD: Final = re.compile(rf"(?:{_BLANK})*/({_NAME})(?=(?:{_BLANK})|$)")
_FIRST_WORD: Final = re.compile(rf"(?:{_BLANK})*({_NAME})(?=(?:{_BLANK})|$)")
_LEADING_BLANKS: Final = re.compile(rf"(?:{_BLANK})*")
_INVISIBLE_RE: Final = re.compile(f"[{_INVISIBLE}]")
_SPACE_RE: Final = re.compile(r"[^\S\n]")
_LEADING_WHITE: Final = re.compile(rf"[\s{_INVISIBLE}]*")
_ARG: Final = re.compile(r"""(?:"[^"]*+"|'[^']*+'|[^\s"'])++""")
_SPAN_OPENER: Final = re.compile(r"[`<\[!]")
_QUOTED: Final = re.compile(r""""([^"]*)"|'([^']*)'""")

# Keys under which the recording inline rules find their paragraph and report what they consumed.
_SRC_KEY: Final = "steward_commands_src"
_SPANS_KEY: Final = "steward_commands_spans"

_InlineRule = Callable[[StateInline, bool], bool]


def _recording(rule: _InlineRule) -> _InlineRule:
    """Wrap an inline rule so that it records the source range it consumes in the parsed paragraph.

    Only ranges of the paragraph being examined are kept (an image's alt text is parsed as a separate
    source string), and only real matches (``silent`` runs are look-ahead for link labels).
    """

    def recorded(state: StateInline, silent: bool) -> bool:
        start = state.pos
        matched = rule(state, silent)
        if matched and not silent and state.src is state.env.get(_SRC_KEY):
            spans = state.env[_SPANS_KEY]
            assert isinstance(spans, list)
            spans.append((start, state.pos))
        return matched

    return recorded


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    # Block structure is all the whole-body parse needs; the inline rules run only on paragraphs that hold
    # a candidate line, and only the ones that can hide a line start are of interest there.
    md.disable(["inline", "emphasis"])
    for name, rule in (
        ("backticks", backtick),
        ("link", link),
        ("image", image),
        ("autolink", autolink),
        ("html_inline", html_inline),
    ):
        md.inline.ruler.at(name, _recording(rule))
    return md


_MD: Final = _markdown()


@dataclass(frozen=True)
class _Candidate:
    """A source line that looks like a command, before its markdown context is checked."""

    name: str
    rest: str
    canonical: bool


def _candidate(line: str, known: frozenset[str], prefix: str) -> _Candidate | None:
    if "/" not in line:
        return None
    match = _SLASH_WORD.match(line)
    if match is None:
        return None
    word = match.group(1).lower()
    rest = line[match.end() :]
    if word == prefix:
        first = _FIRST_WORD.match(rest)
        if first is None:
            return _Candidate("", rest, True)
        return _Candidate(first.group(1).lower(), rest[first.end() :], True)
    if word in known:
        return _Candidate(word, rest, False)
    return None


def _unquote(quoted: re.Match[str]) -> str:
    inner = quoted.group(1)
    return inner if inner is not None else quoted.group(2)


def _split_args(rest: str) -> tuple[str, ...]:
    """Split like a POSIX shell without escapes; an unbalanced quote falls back to a whitespace split."""
    rest = _SPACE_RE.sub(" ", _INVISIBLE_RE.sub("", rest)).replace("\u201c", '"').replace("\u201d", '"')
    words: list[str] = []
    end = 0
    for match in _ARG.finditer(rest):
        gap = rest[end : match.start()]
        if '"' in gap or "'" in gap:
            return tuple(rest.split())
        words.append(_QUOTED.sub(_unquote, match.group()))
        end = match.end()
    if '"' in rest[end:] or "'" in rest[end:]:
        return tuple(rest.split())
    return tuple(words)


def _strip(text: str) -> str:
    """``str.strip`` that also strips zero-width characters, in linear time."""
    found = _LEADING_WHITE.match(text)
    start = found.end() if found else 0
    end = len(text)
    while end > start and (text[end - 1].isspace() or text[end - 1] in _INVISIBLE):
        end -= 1
    return text[start:end]


def _is_blank(line: str) -> bool:
    return not line.strip(" \t")


def _masked_spans(content: str) -> list[tuple[int, int]]:
    """Ranges of ``content`` (a paragraph) taken by code spans, inline HTML, links, images and autolinks."""
    spans: list[tuple[int, int]] = []
    STATS.inline_parses += 1
    _MD.inline.parse(content, _MD, {_SRC_KEY: content, _SPANS_KEY: spans}, [])
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def _slash_offset(content: str, line_start: int) -> int | None:
    """Where the line of ``content`` starting at ``line_start`` has its ``/`` after blanks, if it has one."""
    blanks = _LEADING_BLANKS.match(content, line_start)
    offset = blanks.end() if blanks is not None else line_start
    return offset if content.startswith("/", offset) else None


def _inside(spans: Sequence[tuple[int, int]], offset: int) -> bool:
    i = bisect.bisect_right(spans, (offset, sys.maxsize)) - 1
    return i >= 0 and spans[i][0] <= offset < spans[i][1]


def _line_starts(content: str) -> list[int]:
    starts = [0]
    find = content.find
    pos = find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = find("\n", pos + 1)
    return starts


def _group_ends(tokens: Sequence[Token], lines: Sequence[str]) -> tuple[list[int], list[int]]:
    """Start lines of the top-level blocks and, for each, the end (exclusive) of its block group."""
    blocks: list[tuple[int, int]] = []
    for token in tokens:
        if token.level == 0 and token.nesting >= 0 and token.map is not None:
            start, end = token.map
            while end > start + 1 and _is_blank(lines[end - 1]):
                end -= 1  # lists and quotes claim the blank lines that follow them
            blocks.append((start, end))
    ends = [end for _, end in blocks]
    for i in range(len(blocks) - 2, -1, -1):
        if blocks[i + 1][0] == blocks[i][1]:
            ends[i] = ends[i + 1]
    return [start for start, _ in blocks], ends


def _command_lines(
    tokens: Sequence[Token], candidates: dict[int, _Candidate], limit: int
) -> list[tuple[int, _Candidate]]:
    """The candidate lines that are command lines, in order, at most ``limit`` of them."""
    found: list[tuple[int, _Candidate]] = []
    lines = sorted(candidates)
    quote_depth = 0
    budget = MAX_PARAGRAPH_OPENERS
    for i, token in enumerate(tokens):
        if token.type == "blockquote_open":
            quote_depth += 1
        elif token.type == "blockquote_close":
            quote_depth -= 1
        elif (
            token.type == "inline"
            and quote_depth == 0
            and token.map is not None
            and i > 0
            and tokens[i - 1].type == "paragraph_open"
        ):
            first, end = token.map
            here = lines[bisect.bisect_left(lines, first) : bisect.bisect_left(lines, end)]
            if not here:
                continue
            content = token.content
            starts = _line_starts(content)
            if len(starts) != end - first:
                continue  # not the line-for-line copy expected; fail closed
            # Only a span that opens before a line can hide its start; most paragraphs have none.
            opener = _SPAN_OPENER.search(content)
            first_opener = opener.start() if opener is not None else len(content)
            cost = _openers(content) if opener is not None else 0
            spans: list[tuple[int, int]] | None = None
            for n in here:
                offset = _slash_offset(content, starts[n - first])
                if offset is None:
                    continue  # not the line-for-line copy expected; fail closed
                if offset > first_opener:
                    if spans is None:
                        if cost > budget:
                            continue  # too many spans could hide it to look (module docstring); fail closed
                        budget -= cost
                        STATS.inline_openers += cost
                        spans = _masked_spans(content)
                    if _inside(spans, offset):
                        continue
                found.append((n, candidates[n]))
                if len(found) >= limit:
                    return found
    return found


def _openers(content: str) -> int:
    return content.count("`") + content.count("<") + content.count("[") + content.count("!")


def _scanned(source: str) -> str:
    """The part of a long body that is read for commands: up to the last blank line within
    :data:`MAX_SCAN_CHARS`. A cut inside a paragraph could leave a code span unclosed and so turn text that
    was code into a command; a paragraph ends at a blank line, and a fence or HTML comment cut open runs to
    the end, which only hides more."""
    if len(source) <= MAX_SCAN_CHARS:
        return source
    cut = source.rfind("\n\n", 0, MAX_SCAN_CHARS)
    return source[:cut] if cut > 0 else ""


def _parse(body: str | None, known: Collection[str], prefix: str, limit: int) -> list[Command]:
    if not body:
        return []
    # The same normalisation markdown-it applies, so its line numbers are ours.
    source = body.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")
    source = _scanned(source)
    lines = source.split("\n")
    names = frozenset(name.lower() for name in known)
    prefix = prefix.lower()
    candidates: dict[int, _Candidate] = {}
    for n, line in enumerate(lines):
        candidate = _candidate(line, names, prefix)
        if candidate is not None:
            candidates[n] = candidate
    if not candidates:
        return []
    STATS.block_parses += 1
    tokens = _MD.parse(source)
    # One more than the cap, so the last command's text still stops at the line of the next one.
    found = _command_lines(tokens, candidates, limit + 1)
    block_starts, group_ends = _group_ends(tokens, lines)
    commands: list[Command] = []
    for k, (n, candidate) in enumerate(found[:limit]):
        block = bisect.bisect_right(block_starts, n) - 1
        end = group_ends[block] if block >= 0 else n + 1
        if k + 1 < len(found):
            end = min(end, found[k + 1][0])
        following = [line.rstrip() for line in lines[n + 1 : max(end, n + 1)]]
        text = _strip("\n".join([candidate.rest, *following]))
        commands.append(
            Command(
                name=candidate.name,
                args=_split_args(candidate.rest),
                text=text,
                line=n + 1,
                canonical=candidate.canonical,
            )
        )
    return commands


def parse_commands(body: str | None, *, known: Collection[str], prefix: str = "steward") -> list[Command]:
    """The commands in a comment body, in order, at most :data:`MAX_COMMANDS` (see the module docstring)."""
    return _parse(body, known, prefix, MAX_COMMANDS)


def could_hold_command(body: str | None, *, known: Collection[str], prefix: str = "steward") -> bool:
    """Whether some line of ``body`` looks like a command (no markdown is parsed: linear and cheap). False
    means :func:`parse_commands` finds nothing."""
    if not body or "/" not in body:
        return False
    names = frozenset(name.lower() for name in known)
    source = _scanned(body.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd"))
    return any(_candidate(line, names, prefix.lower()) is not None for line in source.split("\n"))


# Parses by (key, digest of the body, known names, prefix); the least recently used are dropped. In the
# process, not in Redis: a parse is a few milliseconds at most (the bounds above), a Redis round trip and
# the (de)serialisation of the answer cost about as much, and what repeats is one worker re-reading one
# thread on every sync of its issue — a process-local cache answers that, and is empty after a restart
# at the cost of one parse per comment.
_CACHE: OrderedDict[tuple[object, ...], tuple[Command, ...]] = OrderedDict()


def parse_cached(
    body: str | None, *, known: Collection[str], prefix: str = "steward", key: object = None
) -> list[Command]:
    """:func:`parse_commands`, remembered. ``key`` names the text (a comment's ``(id, updated_at)``); the
    body's digest is part of the cache key as well, since the forges keep ``updated_at`` to the second and
    two edits within it would otherwise share an entry."""
    if not body or not could_hold_command(body, known=known, prefix=prefix):
        return []
    digest = hashlib.blake2b(body.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    cache_key = (key, digest, frozenset(k.lower() for k in known), prefix.lower())
    found = _CACHE.get(cache_key)
    if found is not None:
        _CACHE.move_to_end(cache_key)
        STATS.cache_hits += 1
        return list(found)
    parsed = parse_commands(body, known=known, prefix=prefix)
    _CACHE[cache_key] = tuple(parsed)
    if len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return parsed


async def parse_commands_async(
    body: str | None, *, known: Collection[str], prefix: str = "steward", key: object = None
) -> list[Command]:
    """:func:`parse_cached` without holding the event loop: a body longer than :data:`OFFLOAD_CHARS` is
    parsed in a worker thread. A thread, not a process: the parse is pure Python, so it shares the GIL,
    but CPython hands the GIL over every 5 ms (``sys.getswitchinterval``), so the loop keeps running other
    jobs while a parse is under way, and nothing needs pickling or a process to start."""
    if body is None or len(body) <= OFFLOAD_CHARS:
        return parse_cached(body, known=known, prefix=prefix, key=key)
    return await asyncio.to_thread(parse_cached, body, known=known, prefix=prefix, key=key)


def added_commands(
    old_body: str | None, new_body: str | None, *, known: Collection[str], prefix: str = "steward"
) -> list[Command]:
    """For an edited comment, the commands of ``new_body`` that ``old_body`` did not already hold.

    Commands are compared by ``(name, args)`` as a multiset: fixing a typo elsewhere runs nothing, and a
    command written once more than before runs once. Short and canonical forms of one command are equal.
    """
    before = Counter((c.name, c.args) for c in parse_commands(old_body, known=known, prefix=prefix))
    added: list[Command] = []
    for command in parse_commands(new_body, known=known, prefix=prefix):
        key = (command.name, command.args)
        if before[key] > 0:
            before[key] -= 1
        else:
            added.append(command)
    return added


async def added_commands_async(
    old_body: str | None, new_body: str | None, *, known: Collection[str], prefix: str = "steward"
) -> list[Command]:
    """:func:`added_commands` without holding the event loop (both bodies parsed as
    :func:`parse_commands_async` does)."""
    before = Counter(
        (c.name, c.args) for c in await parse_commands_async(old_body, known=known, prefix=prefix)
    )
    added: list[Command] = []
    for command in await parse_commands_async(new_body, known=known, prefix=prefix):
        key = (command.name, command.args)
        if before[key] > 0:
            before[key] -= 1
        else:
            added.append(command)
    return added


def closest_command(name: str, known: Collection[str]) -> str | None:
    """The known command name most like ``name`` (for "did you mean …?"), or None if none is close."""
    if not name:
        return None
    matches = difflib.get_close_matches(name.lower(), sorted({k.lower() for k in known}), n=1, cutoff=0.6)
    return matches[0] if matches else None
