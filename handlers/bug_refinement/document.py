"""A bug (or story) markdown document: front matter, block structure (``blocks`` scans it), numbered sections.

Everything here is pure: text in, values out.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import yaml

from .blocks import CodeBlock, Heading, normalise, scan
from .sections import BUG_SECTIONS, STORY_SECTIONS
from .text import fold

__all__ = [
    "BUG_SECTION_NAMES",
    "MAX_REPORT_CHARS",
    "RECIPE_SUBSECTION_NAMES",
    "STORY_SECTION_NAMES",
    "CodeBlock",
    "Document",
    "Heading",
    "Section",
    "clip_report",
    "find_sections",
    "find_subsections",
    "fold",
    "parse_document",
    "strip_html_comments",
]

# The names a section may have, in English and Portuguese (``sections`` holds them); matching folds case and
# accents (see `fold`).
BUG_SECTION_NAMES: Mapping[int, tuple[str, ...]] = {n: pair for n, pair in BUG_SECTIONS.items()}
STORY_SECTION_NAMES: Mapping[int, tuple[str, ...]] = {n: pair for n, pair in STORY_SECTIONS.items()}

# Level-3 sub-sections of section 5, found by their number (`5.2`) or, unnumbered, by one of these names.
RECIPE_SUBSECTION_NAMES: Mapping[str, tuple[str, ...]] = {
    "5.1": ("Environment", "Ambiente"),
    "5.2": ("Steps to Reproduce", "Passos para Reproduzir", "Passos de Reprodução"),
    "5.3": ("Observed vs", "Observed x", "Observado vs", "Observado x"),
    "5.4": ("Artifacts", "Artefatos"),
}

_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)

# How much of a report any of Steward's readers reads: GitHub holds an issue body to 65,536 characters, Gitea
# holds none (its receiver takes 25 MB). Every parser is linear (tests/unit/test_regex_structure.py), and
# this bound keeps the linear cost of one report, read at every event, small; the verdict says when a report
# was cut (issue 35 item 4).
MAX_REPORT_CHARS = 65_536


def clip_report(text: str, limit: int = MAX_REPORT_CHARS) -> tuple[str, tuple[int, int] | None]:
    """`text` cut to at most `limit` characters (``MAX_REPORT_CHARS``), at a line's end where there is one,
    and (characters kept, characters in all) when it was cut. The design forks and the backlog cut an issue's
    body with it too (``api.clip_report``), and ``render.cut_note`` tells the reader."""
    if len(text) <= limit:
        return text, None
    end = text.rfind("\n", 0, limit + 1)
    kept = text[: end if end > 0 else limit]
    return kept, (len(kept), len(text))


def strip_html_comments(text: str) -> str:
    """`text` without HTML comments (an unclosed `<!--` hides the rest, as it does when rendered)."""
    if "<!--" not in text:
        return text
    return _HTML_COMMENT.sub("", text)


@dataclass(frozen=True, slots=True)
class Section:
    key: str  # "4" or "5.3"
    title: str  # the heading text as written
    heading_line: int
    start: int  # first line after the heading
    end: int  # exclusive: the next heading that closes it, or the end of the document


@dataclass(frozen=True)
class Document:
    lines: tuple[str, ...]  # the whole normalised document, front matter included
    body_start: int  # first line after the front matter
    front_matter: Mapping[str, object]
    headings: tuple[Heading, ...]
    blocks: tuple[CodeBlock, ...]  # fenced code, indented code and raw HTML, in document order
    source: str = ""  # the text as given (``lines`` is it normalised)
    _block_starts: list[int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_block_starts", [b.start for b in self.blocks])

    def text(self, start: int, end: int) -> str:
        return "\n".join(self.lines[start:end])

    def section_text(self, section: Section) -> str:
        return self.text(section.start, section.end)

    def is_hidden(self, line: int) -> bool:
        """Whether `line` is inside code or raw HTML, where field lines such as `**Status:**` do not count."""
        k = bisect.bisect_right(self._block_starts, line) - 1
        return k >= 0 and line < self.blocks[k].end


# --- front matter -----------------------------------------------------------------------------------------

_FM_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _split_front_matter(lines: list[str]) -> tuple[dict[str, object], int]:
    if not lines or lines[0].rstrip() != "---":
        return {}, 0
    for j in range(1, len(lines)):
        if lines[j].rstrip() in ("---", "..."):
            try:
                data = yaml.load("\n".join(lines[1:j]), Loader=_FM_LOADER)
            except (yaml.YAMLError, ValueError, TypeError, RecursionError):
                data = None
            if isinstance(data, dict):
                return {str(k): v for k, v in data.items()}, j + 1
            return {}, j + 1
    return {}, 0


# --- parsing ----------------------------------------------------------------------------------------------


# One document per job (DESIGN §2, issue 34 §1): a report is parsed once and its Document passed down to every
# reader (``report.Report`` holds a bug report's); nothing here keeps a parse. A Document never changes.
def parse_document(text: str) -> Document:
    """Parse markdown into its front matter, headings and code/HTML blocks. Never raises on any `str`."""
    source, text = text, normalise(text)
    lines = text.split("\n")
    front_matter, body_start = _split_front_matter(lines)
    headings, blocks = scan(lines, body_start)
    blocks.sort(key=lambda b: b.start)
    return Document(tuple(lines), body_start, front_matter, tuple(headings), tuple(blocks), source)


# --- sections ---------------------------------------------------------------------------------------------

_NUMBERED = re.compile(r"(\d+)(?:\s*[.):\-\u2013\u2014]|\s)\s*")
_SUBNUMBERED = re.compile(r"(\d+\.\d+)(?!\d)\.?\s*")
_DECORATION = re.compile(r"[*_`]")


def _heading_key(text: str) -> str:
    return fold(_DECORATION.sub("", text)).strip()


def _folded_names(
    names: Mapping[int, tuple[str, ...]] | Mapping[str, tuple[str, ...]],
) -> dict[str, list[str]]:
    return {str(k): [fold(n) for n in v] for k, v in names.items()}


def find_sections(
    doc: Document,
    names: Mapping[int, tuple[str, ...]],
    *,
    number_suffices: frozenset[int] = frozenset(),
) -> dict[int, Section]:
    """The level-2 sections `## <n>. <name>` of `doc`, by number; the first heading that matches wins.

    A heading is section n when it has number n (or none) and its name starts with one of `names[n]`;
    for the numbers in `number_suffices` the number alone is enough. A section runs to the next top-level
    level-1 or level-2 heading.
    """
    folded = _folded_names(names)
    top = [h for h in doc.headings if h.top_level and h.level <= 2]
    found: dict[int, Section] = {}
    for idx, h in enumerate(top):
        if h.level != 2:
            continue
        key = _heading_key(h.text)
        m = _NUMBERED.match(key)
        number = int(m.group(1)) if m else None
        name = key[m.end() :] if m else key
        for n, candidates in folded.items():
            num = int(n)
            if num in found or (number is not None and number != num):
                continue
            if (number == num and num in number_suffices) or any(name.startswith(c) for c in candidates):
                end = top[idx + 1].line if idx + 1 < len(top) else len(doc.lines)
                found[num] = Section(n, h.text, h.line, h.end_line, end)
                break
    return found


def find_subsections(
    doc: Document, section: Section, names: Mapping[str, tuple[str, ...]]
) -> dict[str, Section]:
    """The level-3 sub-sections of `section` found by number (`### 5.1 …`) or, failing that, by name."""
    folded = _folded_names(names)
    inner = [
        h for h in doc.headings if h.top_level and h.level <= 3 and section.start <= h.line < section.end
    ]
    found: dict[str, Section] = {}
    for idx, h in enumerate(inner):
        if h.level != 3:
            continue
        key = _heading_key(h.text)
        m = _SUBNUMBERED.match(key)
        chosen: str | None = None
        if m and m.group(1) in folded:
            chosen = m.group(1)
        else:
            name = key[m.end() :] if m else key
            for k, candidates in folded.items():
                if any(name.startswith(c) for c in candidates):
                    chosen = k
                    break
        if chosen is None or chosen in found:
            continue
        end = inner[idx + 1].line if idx + 1 < len(inner) else section.end
        found[chosen] = Section(chosen, h.text, h.line, h.end_line, end)
    return found
