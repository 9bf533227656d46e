"""The probe-scan: does a new answer open new gaps?

An answer opens a gap when it is vague or refers to something the issue never defines. Both rules are
deterministic, run on the folded text (case and accents ignored), and ignore code spans and fences:

* **Vague terms** — a whole-word (or whole-phrase) match of one of :data:`VAGUE_TERMS`.
* **Undefined references** — a phrase that points somewhere the reader cannot see
  (:data:`UNDEFINED_REFERENCES`, e.g. "as discussed", "see above", "como combinado"), or an acronym
  (2–6 capitals, optionally with digits or a trailing ``s``) that appears nowhere in the title, the body
  or the other answers, is not expanded in the answer itself (``SSO (single sign-on)`` or
  ``single sign-on (SSO)``) and is not one of the :data:`COMMON_ACRONYMS`.

The result is one new OPEN row per rule that fired, in the answered row's dimension, whose question
quotes the words that triggered it; or ``No new gaps`` with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from handlers.backlog.text import fold

__all__ = [
    "COMMON_ACRONYMS",
    "UNDEFINED_REFERENCES",
    "VAGUE_TERMS",
    "ProbeFinding",
    "probe_answer",
    "undefined_references",
    "vague_terms",
]

# English then Portuguese; matched on folded text, so "rápido" and "rapido" are one entry.
VAGUE_TERMS: Final[tuple[str, ...]] = (
    # English
    "fast",
    "quick",
    "quickly",
    "user-friendly",
    "user friendly",
    "easy",
    "etc",
    "and so on",
    "some",
    "tbd",
    "tbc",
    "as needed",
    "if needed",
    "if possible",
    "robust",
    "intuitive",
    "appropriate",
    "appropriately",
    "as appropriate",
    "reasonable",
    "flexible",
    "scalable",
    "efficient",
    "seamless",
    "somehow",
    # Portuguese
    "rapido",
    "rapida",
    "rapidamente",
    "amigavel",
    "facil",
    "facil de usar",
    "e assim por diante",
    "algum",
    "alguma",
    "alguns",
    "algumas",
    "a definir",
    "conforme necessario",
    "quando necessario",
    "se necessario",
    "se possivel",
    "robusto",
    "robusta",
    "intuitivo",
    "intuitiva",
    "adequado",
    "adequada",
    "apropriado",
    "apropriada",
    "razoavel",
    "flexivel",
    "escalavel",
    "eficiente",
    "de alguma forma",
)

UNDEFINED_REFERENCES: Final[tuple[str, ...]] = (
    "as discussed",
    "as agreed",
    "as before",
    "like before",
    "see above",
    "see below",
    "the usual way",
    "the other ticket",
    "the other issue",
    "same as the other",
    "you know",
    "como discutido",
    "como combinado",
    "como antes",
    "ver acima",
    "veja acima",
    "do jeito de sempre",
    "como sempre",
    "o outro ticket",
    "a outra issue",
    "voce sabe",
)


def _upper_words(text: str) -> frozenset[str]:
    return frozenset(text.split())


COMMON_ACRONYMS: Final = _upper_words(
    "API APIS UI UX URL URLS URI HTTP HTTPS JSON YAML XML HTML CSS CSV PDF SQL DB ID IDS CI CD CLI "
    "PR PRS OK TBD TBC FAQ SDK OS IO CPU RAM GB MB KB MS UTC UUID REST JWT SSH TLS SSL DNS IP TCP UDP "
    "AWS GCP README TODO AC REQ EARS MVP QA PT EN BR US UK EU "
    # Capitalised words, not acronyms: EARS and Gherkin keywords and emphasis, in English and Portuguese.
    "WHEN WHILE WHERE IF THE SYSTEM SHALL SHOULD MUST NOT NEVER ALL ANY AND OR THEN GIVEN NO YES "
    "QUANDO ENQUANTO SE SISTEMA DEVE DEVERA NAO SIM NUNCA TODOS OU ENTAO DADO"
)

_CODE: Final = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)|`[^`\n]*`", re.DOTALL)
_ACRONYM: Final = re.compile(r"(?<![\w/-])([A-Z][A-Z0-9]{1,5})s?(?![\w/-])")


def _phrase_re(phrases: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = sorted({re.escape(p) for p in phrases}, key=len, reverse=True)
    return re.compile(r"(?<![\w-])(?:" + "|".join(alternatives) + r")(?![\w-])")


_VAGUE_RE: Final = _phrase_re(VAGUE_TERMS)
_REFERENCE_RE: Final = _phrase_re(UNDEFINED_REFERENCES)


def _without_code(text: str) -> str:
    return _CODE.sub(" ", text)


def vague_terms(answer: str) -> list[str]:
    """The vague terms in ``answer``, folded, in order of first appearance, each once."""
    found: list[str] = []
    for match in _VAGUE_RE.finditer(fold(_without_code(answer))):
        if match.group() not in found:
            found.append(match.group())
    return found


def undefined_references(answer: str, context: str) -> list[str]:
    """Pointers to something undefined in ``answer``: reference phrases, and acronyms that ``context``
    (title, body and the other answers) never mentions and the answer does not expand."""
    plain = _without_code(answer)
    found: list[str] = []
    for match in _REFERENCE_RE.finditer(fold(plain)):
        if match.group() not in found:
            found.append(match.group())
    known = set(_ACRONYM.findall(_without_code(context)))
    for match in _ACRONYM.finditer(plain):
        acronym = match.group(1)
        if acronym in COMMON_ACRONYMS or acronym in known or acronym in found:
            continue
        expanded_after = re.search(rf"\b{re.escape(acronym)}s?\s*\(\s*[^)\s][^)]*\)", plain)
        expanded_before = re.search(rf"[^\W\d_][\w' -]*\s\(\s*{re.escape(acronym)}s?\s*\)", plain)
        if expanded_after is None and expanded_before is None:
            found.append(acronym)
    return found


@dataclass(frozen=True)
class ProbeFinding:
    """A new gap an answer raised: which rule, the words that triggered it, and the question to ask."""

    rule: str  # "vague" or "undefined"
    terms: tuple[str, ...]
    question: str


def _quoted(terms: tuple[str, ...]) -> str:
    return ", ".join(f"“{t}”" for t in terms)


def probe_answer(row_id: str, answer: str, context: str, language: str = "en") -> list[ProbeFinding]:
    """The new gaps ``answer`` (to row ``row_id``) opens; empty when it opens none."""
    findings: list[ProbeFinding] = []
    vague = tuple(vague_terms(answer))
    if vague:
        question = (
            f"A resposta a {row_id} usa {_quoted(vague)}: o que isso significa aqui, concretamente "
            "(um número, uma lista ou um teste)?"
            if language == "pt"
            else f"The answer to {row_id} says {_quoted(vague)}: what does that mean here, concretely "
            "(a number, a list or a test)?"
        )
        findings.append(ProbeFinding("vague", vague, question))
    undefined = tuple(undefined_references(answer, context))
    if undefined:
        question = (
            f"A resposta a {row_id} menciona {_quoted(undefined)}, que não está definido na issue: "
            "o que é, ou onde está descrito?"
            if language == "pt"
            else f"The answer to {row_id} refers to {_quoted(undefined)}, which the issue does not define: "
            "what is it, or where is it described?"
        )
        findings.append(ProbeFinding("undefined", undefined, question))
    return findings
