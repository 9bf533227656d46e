"""RA9's section names in English and Portuguese, and which language a document uses.

One table, so every comment and report names a section the same way: in the document's own language,
or, by default, in English with the Portuguese name beside it (``label``). Pure data and string work;
no parsing here (``document`` parses, ``rules`` decides).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final, Literal

from .text import fold

Language = Literal["en", "pt"]

# (English, Portuguese) for each numbered section of a bug report.
BUG_SECTIONS: Final[Mapping[int, tuple[str, str]]] = {
    1: ("Vision", "Visão"),
    2: ("Persona & Usage Scenario", "Persona & Cenário de Uso"),
    3: ("Value Delivery", "Entrega de Valor"),
    4: ("Acceptance Criteria", "Critérios de Aceite"),
    5: ("Reproduction Recipe", "Receita de Reprodução"),
    6: ("Root-Cause Hypothesis", "Hipótese de Causa Raiz"),
    7: ("Regression Test Slot", "Slot de Teste de Regressão"),
    8: ("Dependencies", "Dependências"),
    9: ("Decision History", "Histórico de Decisão"),
}

# A story's section 7 is its dependencies (not the bug's regression slot).
STORY_SECTIONS: Final[Mapping[int, tuple[str, str]]] = {
    1: BUG_SECTIONS[1],
    4: BUG_SECTIONS[4],
    5: BUG_SECTIONS[5],
    7: BUG_SECTIONS[8],
}

# (English, Portuguese) for the recipe's sub-sections, as written in a heading `### 5.1 Environment`.
RECIPE_SUBSECTIONS: Final[Mapping[str, tuple[str, str]]] = {
    "5.1": ("Environment", "Ambiente"),
    "5.2": ("Steps to Reproduce", "Passos para Reproduzir"),
    "5.3": ("Observed vs Expected", "Observado vs Esperado"),
    "5.4": ("Artifacts", "Artefatos"),
}

FIELDS: Final[Mapping[str, tuple[str, str]]] = {
    "observed": ("Observed", "Observado"),
    "expected": ("Expected", "Esperado"),
    "given": ("Given", "Dado"),
    "when": ("When", "Quando"),
    "then": ("Then", "Então"),
}


def _pick(pair: tuple[str, str], language: Language) -> str:
    return pair[1] if language == "pt" else pair[0]


def name(n: int, language: Language = "en", *, story: bool = False) -> str:
    return _pick((STORY_SECTIONS if story else BUG_SECTIONS)[n], language)


def heading(n: int, language: Language = "en", *, story: bool = False) -> str:
    """The heading as it is written in a document: ``## 5. Reproduction Recipe``."""
    return f"## {n}. {name(n, language, story=story)}"


def label(n: int, language: Language = "en", *, story: bool = False) -> str:
    """How a comment names a section: in the document's language; in English with the Portuguese
    alternative beside it by default."""
    if language == "pt":
        return f"`{heading(n, 'pt', story=story)}`"
    portuguese = (STORY_SECTIONS if story else BUG_SECTIONS)[n][1]
    return f"`{heading(n, 'en', story=story)}` (or `{portuguese}`)"


def subsection(key: str, language: Language = "en") -> str:
    return f"### {key} {_pick(RECIPE_SUBSECTIONS[key], language)}"


def field(key: str, language: Language = "en") -> str:
    return _pick(FIELDS[key], language)


def language_of(titles: Iterable[str]) -> Language:
    """The language of a document from the titles of its RA9 sections: Portuguese when more of them use
    the Portuguese name than the English one, else English."""
    pt = en = 0
    for title in titles:
        folded = fold(title)
        for english, portuguese in BUG_SECTIONS.values():
            if fold(portuguese) in folded and fold(english) not in folded:
                pt += 1
                break
            if fold(english) in folded:
                en += 1
                break
    return "pt" if pt > en else "en"
