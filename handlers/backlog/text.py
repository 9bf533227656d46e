"""Small text helpers shared by the backlog rules. Pure, linear-time, never raising."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Final

__all__ = [
    "Line",
    "fold",
    "language_of",
    "prose_lines",
    "sentences",
    "strip_item",
    "urls",
    "words",
]

_HTML_COMMENT: Final = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_FENCE: Final = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_NON_WORD: Final = re.compile(r"[^0-9a-z#]+")
_ITEM: Final = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
_BOLD_EDGES: Final = re.compile(r"^[*_]{1,3}|[*_]{1,3}$")
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+(?=\S)")
_URL: Final = re.compile(r"https?://[^\s<>()\[\]{}\"'`|]+")
_WORD: Final = re.compile(r"[^\W_]++(?:[-'][^\W_]++)*+")


def fold(text: str) -> str:
    """Case- and accent-insensitive form: ``"Visão"`` and ``"visao"`` fold alike."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def words(text: str) -> list[str]:
    """The folded words of ``text``; punctuation becomes a separator (``non-goals`` → non goals)."""
    return _NON_WORD.sub(" ", fold(text)).split()


@dataclass(frozen=True)
class Line:
    """A source line of an issue body, with whether it sits in a code block."""

    text: str
    in_code: bool


def prose_lines(body: str) -> list[Line]:
    """The body's lines with HTML comments removed (issue templates are full of them) and code marked.

    A fence opened with ``n`` backticks (or tildes) is closed by a line of at least ``n`` of the same
    character, as in CommonMark; an unclosed fence runs to the end.
    """
    text = _HTML_COMMENT.sub("", body.replace("\r\n", "\n").replace("\r", "\n"))
    out: list[Line] = []
    fence: str | None = None
    for raw in text.split("\n"):
        match = _FENCE.match(raw)
        if fence is None:
            if match is not None:
                fence = match.group(1)
                out.append(Line(raw, True))
                continue
            # Indented lines stay prose: in issues they are far more often nested list text than code.
            out.append(Line(raw, False))
        else:
            out.append(Line(raw, True))
            closes = match is not None and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)
            if closes and not raw.strip().strip(fence[0]):
                fence = None
    return out


def strip_item(line: str) -> str:
    """A list item's or a bold line's text without its marker: ``- [ ] **x**`` → ``x``."""
    text = _ITEM.sub("", line, count=1).strip()
    return _BOLD_EDGES.sub("", text).strip()


def sentences(text: str) -> list[str]:
    """Sentences of a paragraph, split after ``.``, ``!`` or ``?`` followed by a blank."""
    flat = " ".join(text.split())
    return [s for s in _SENTENCE_END.split(flat) if s]


def urls(text: str) -> list[str]:
    """Links that appear literally in ``text``, in order, without trailing punctuation, deduplicated."""
    found: list[str] = []
    for match in _URL.finditer(text):
        url = match.group().rstrip(".,;:!?*_")
        if url not in found:
            found.append(url)
    return found


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_PT_WORDS: Final = _word_set(
    "nao para com uma que do da dos das os as em por quero como deve deveria usuario usuarios sistema "
    "quando pagina tela precisa precisamos seja ser esta isso tambem mais sem pelo pela ao aos"
)
_EN_WORDS: Final = _word_set(
    "the and to of is should we for with that it this when user users system page need needs be "
    "are can would will have not an on in as by"
)


def language_of(text: str) -> str:
    """``"pt"`` when Portuguese function words outnumber English ones in ``text``, else ``"en"``."""
    pt = en = 0
    for word in _WORD.findall(fold(text)):
        if word in _PT_WORDS:
            pt += 1
        elif word in _EN_WORDS:
            en += 1
    return "pt" if pt > en else "en"
