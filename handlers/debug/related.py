"""Seed 004's related sessions: when a board opens, the earlier boards and closed bugs that cite the same
files or share the symptom's words — what each report says happened (its observed behaviour, read by bug
refinement's report parser, which ``effects`` hands in), not its title. Pure, no I/O (``effects`` lists the
candidates once, when the board is made)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from bot.forge import CIReport, Issue
from handlers.debug.grounding import find_paths
from handlers.debug.locations import find_locations

MAX_RELATED: Final = 5
MIN_SHARED_WORDS: Final = 2
# A bounded read: each candidate's report is read for its symptom up to this many characters, and at most
# MAX_READ candidates are read (newest first) — a repository's closed bugs may be many.
SYMPTOM_CHARS: Final = 16_384
MAX_READ: Final = 200
_WORD: Final = re.compile(r"[a-zà-ÿ0-9]{4,}")
_ACRONYM: Final = re.compile(r"\b[A-Z]{3,5}\b")
# Words that say nothing about a symptom (English and Portuguese report templates use them).
_COMMON: Final = frozenset(
    (
        "when",
        "with",
        "from",
        "that",
        "this",
        "then",
        "after",
        "before",
        "does",
        "doesn",
        "shows",
        "show",
        "error",
        "errors",
        "issue",
        "issues",
        "problem",
        "quando",
        "como",
        "para",
        "após",
        "antes",
        "erro",
        "erros",
        "problema",
        "should",
        "would",
        "could",
        "there",
        "their",
        "have",
        "been",
        "being",
        "into",
        # Words of any report about anything (measured on tests/debug/data/related/corpus.yaml: they made
        # most of the false links): where, when and how often, not what happened.
        "again",
        "every",
        "even",
        "says",
        "said",
        "never",
        "none",
        "instead",
        "still",
        "some",
        "each",
        "only",
        "also",
        "just",
        "like",
        "same",
        "other",
        "back",
        "first",
        "shown",
        "seen",
        "while",
        "what",
        "which",
        "page",
        "pages",
        "time",
        "times",
        "happens",
        "happened",
        "bug",
        "bugs",
        "report",
        "fails",
        "fail",
        "failing",
        "failed",
        "works",
        "work",
        "working",
        # The labels of a report's observed-behaviour field (and of the expected one, on the same line).
        "observed",
        "observado",
        "expected",
        "esperado",
        "actual",
        "behavior",
        "behaviour",
        "comportamento",
    )
)


@dataclass(frozen=True)
class Related:
    number: int
    title: str
    why: str

    def to_json(self) -> list[Any]:
        return [self.number, self.title, self.why]

    @classmethod
    def from_json(cls, raw: Any) -> Related | None:
        if not isinstance(raw, list) or len(raw) != 3 or not isinstance(raw[0], int):
            return None
        return cls(raw[0], str(raw[1])[:120], str(raw[2])[:120])


def files_of(text: str) -> set[str]:
    """The repository files a text cites (``path:line`` places and bare paths)."""
    return {loc.path for loc in find_locations(text)} | set(find_paths(text))


def words_of(text: str) -> set[str]:
    """The words of ``text`` that may say what happened: four letters or more, and the short capitalised
    names a symptom often is (PDF, CSV, OOM); the everyday words of any report (``_COMMON``) left out."""
    words = {w for w in _WORD.findall(text.casefold()) if w not in _COMMON}
    return words | {a.casefold() for a in _ACRONYM.findall(text) if a.casefold() not in _COMMON}


def stem(word: str) -> str:
    """``word`` without the endings its other forms add (images, exported, exporting → imag, export), so
    two reports of one symptom match in whichever form each used. Crude and language-blind on purpose: a
    stem only ever meets another stem."""
    if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)]
            break
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    return word


def symptom_words(issue: Issue, observed: Callable[[str], str]) -> set[str]:
    """The words of what ``issue``'s report says happened (``observed``: its observed behaviour, "" when the
    report says none, read from its first ``SYMPTOM_CHARS`` characters); its title's when it says none."""
    return words_of(observed(issue.body[:SYMPTOM_CHARS]) or issue.title)


def related(
    bug: Issue, cited: Iterable[str], candidates: Sequence[Issue], observed: Callable[[str], str]
) -> tuple[Related, ...]:
    """Up to ``MAX_RELATED`` of ``candidates`` (other boards, closed bugs) that cite a file ``bug`` or its
    board cites (``cited``), or whose symptom shares at least two words with its symptom
    (``symptom_words``); newest first, at most ``MAX_READ`` read."""
    files = set(cited) | files_of(bug.body[:SYMPTOM_CHARS])
    words = {stem(w): w for w in sorted(symptom_words(bug, observed))}
    found: list[Related] = []
    others = [o for o in candidates if o.number != bug.number and not o.is_pull_request]
    for other in sorted(others, key=lambda i: -i.number)[:MAX_READ]:
        same = sorted(files & files_of(other.body[:SYMPTOM_CHARS]))
        shared = sorted(words[w] for w in words.keys() & {stem(o) for o in symptom_words(other, observed)})
        if same:
            why = "cites " + ", ".join(f"`{f}`" for f in same[:2])
        elif len(shared) >= MIN_SHARED_WORDS:
            why = "a similar symptom: " + ", ".join(shared[:4])
        else:
            continue
        found.append(Related(other.number, other.title[:120], why))
        if len(found) >= MAX_RELATED:
            break
    return tuple(found)


def related_to_json(found: Sequence[Related]) -> list[list[Any]]:
    return [r.to_json() for r in found]


def related_from_json(raw: Any) -> tuple[Related, ...]:
    if not isinstance(raw, list):
        return ()
    return tuple(r for r in (Related.from_json(x) for x in raw[:MAX_RELATED]) if r is not None)


MAX_SYMPTOMS: Final = 3


def ci_symptoms(
    reports: Sequence[CIReport], path: str, cases: Iterable[str], *, where: str
) -> tuple[str, ...]:
    """CI failures at ``where`` that name the bug's regression test (its file ``path`` or one of its
    ``cases``), each as a sentence: the context, what matched, the report's first words and its link."""
    names = [n for n in (path, *cases) if n]
    out: list[str] = []
    for report in reports:
        if report.outcome not in ("failure", "failed", "error"):
            continue
        said = "\n".join(
            [report.title, report.summary, report.text, *(a.message for a in report.annotations)]
        )
        matched = next((n for n in names if n in said), None)
        if matched is None:
            continue
        line = next((x.strip() for x in said.splitlines() if matched in x), "")[:160]
        link = f" ({report.url})" if report.url else ""
        out.append(f"CI `{report.context}` reports `{matched}` failing at {where}: {line}{link}")
        if len(out) >= MAX_SYMPTOMS:
            break
    return tuple(out)
